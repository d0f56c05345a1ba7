-- The statistics of a few players (a table's seated ones, published after each of its hands) without summing every
-- hand of the room. 002's views worked out every hand's player, then summed every player, then kept the few asked
-- for: 0.2-0.4 s a query at 200 hands (rfid-table soak --room), growing with the room. Here a player's hands are
-- found from the player's seatings, and player_statistics_of(ids) sums only theirs; the view player_statistics is
-- the same function for every player, so the sums are written once.

DROP VIEW player_statistics;

-- One row per seating of a seat: its player from the seating's seq until the seat's next seating or clearing.
CREATE VIEW sessions AS
SELECT table_id, epoch, seat, seq, player_id, name, at,
       lead(seq) OVER (PARTITION BY table_id, epoch, seat ORDER BY seq) AS until_seq
FROM seatings;

CREATE INDEX hands_table_seq ON hands (table_id, epoch, seq);

-- As in 002: a hand's player at a seat is the last seating of that seat before the hand's history.
CREATE OR REPLACE VIEW hand_player_facts AS
SELECT h.id AS hand_id, h.table_id, h.epoch, h.hand, h.ended_at,
       (h.ended_at AT TIME ZONE current_setting('TimeZone'))::date AS day,  -- in the connection's time zone
       p.seat, p.name, s.player_id, s.seq AS session_seq, p.starting_stack,
       p.put_in, p.won, p.won - p.put_in AS net,
       f.acted_preflop, f.vpip, f.pfr, f.postflop_aggressive, f.postflop_calls, f.saw_flop, f.showdown
FROM hands h
JOIN hand_players p ON p.hand_id = h.id
JOIN seat_facts f ON f.hand_id = h.id AND f.seat = p.seat
LEFT JOIN sessions s ON s.table_id = h.table_id AND s.epoch = h.epoch AND s.seat = p.seat AND s.seq < h.seq
                    AND (s.until_seq IS NULL OR h.seq < s.until_seq);

-- ids: the players to sum (null: every player). A SQL function the planner inlines: the players' filter comes
-- before the sums.
CREATE FUNCTION player_statistics_of(ids text[])
RETURNS TABLE (scope text, player_id text, day date, table_id text, epoch text, session_seq bigint, hands bigint,
               last_hand_at timestamptz, preflop_decisions bigint, vpip_hands bigint, pfr_hands bigint,
               postflop_bets_raises bigint, postflop_calls bigint, saw_flop bigint, went_to_showdown bigint,
               won_at_showdown bigint, net bigint, vpip_pct numeric, pfr_pct numeric, aggression_factor numeric,
               wtsd_pct numeric, wsd_pct numeric)
LANGUAGE sql STABLE AS $$
SELECT CASE WHEN GROUPING(f.day) = 0 THEN 'day' WHEN GROUPING(f.session_seq) = 0 THEN 'session' ELSE 'all' END,
       f.player_id, f.day, f.table_id, f.epoch, f.session_seq,
       count(*),
       max(f.ended_at),
       count(*) FILTER (WHERE f.acted_preflop),
       count(*) FILTER (WHERE f.vpip),
       count(*) FILTER (WHERE f.pfr),
       sum(f.postflop_aggressive)::bigint,
       sum(f.postflop_calls)::bigint,
       count(*) FILTER (WHERE f.saw_flop),
       count(*) FILTER (WHERE f.saw_flop AND f.showdown),
       count(*) FILTER (WHERE f.saw_flop AND f.showdown AND f.won > 0),
       sum(f.net)::bigint,
       round(100.0 * count(*) FILTER (WHERE f.vpip) / nullif(count(*) FILTER (WHERE f.acted_preflop), 0), 1),
       round(100.0 * count(*) FILTER (WHERE f.pfr) / nullif(count(*) FILTER (WHERE f.acted_preflop), 0), 1),
       round(sum(f.postflop_aggressive)::numeric / nullif(sum(f.postflop_calls), 0), 2),
       round(100.0 * count(*) FILTER (WHERE f.saw_flop AND f.showdown)
             / nullif(count(*) FILTER (WHERE f.saw_flop), 0), 1),
       round(100.0 * count(*) FILTER (WHERE f.saw_flop AND f.showdown AND f.won > 0)
             / nullif(count(*) FILTER (WHERE f.saw_flop AND f.showdown), 0), 1)
FROM hand_player_facts f
WHERE f.player_id IS NOT NULL AND (ids IS NULL OR f.player_id = ANY(ids))
GROUP BY GROUPING SETS ((f.player_id), (f.player_id, f.day), (f.player_id, f.table_id, f.epoch, f.session_seq))
$$;

CREATE VIEW player_statistics AS SELECT * FROM player_statistics_of(NULL);
