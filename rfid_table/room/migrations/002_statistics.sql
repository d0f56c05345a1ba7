-- Players' statistics, as poker trackers define them (docs/room.md cites the definitions).
--
-- hand_player_facts: one row per seat dealt into a hand, with the player the floor had seated there (the last
-- seating of that seat before the hand's history; null: nobody named, or a seat cleared) and what the statistics
-- count (seat_facts). player_statistics: those counts summed per player over all time, per day and per session (one seating of
-- a player at a table: from player_seated to the next seating or clearing of that seat).

-- What the statistics count of each seat's play in a hand, written with the hand in its transaction
-- (rfid_table/room/records.py, seat_facts: from the hand's actions and board): counted once, not at every query.
CREATE TABLE seat_facts (
    hand_id             bigint  NOT NULL REFERENCES hands (id) ON DELETE CASCADE,
    seat                integer NOT NULL,
    acted_preflop       boolean NOT NULL,  -- a preflop decision of its own (a walk's big blind has none)
    vpip                boolean NOT NULL,  -- called, bet or raised preflop (blinds, antes, straddles are forced)
    pfr                 boolean NOT NULL,  -- bet or raised preflop
    postflop_aggressive integer NOT NULL,  -- bets and raises on the flop, turn and river
    postflop_calls      integer NOT NULL,
    saw_flop            boolean NOT NULL,  -- a flop was turned and the seat had not folded before it
    showdown            boolean NOT NULL,  -- showed or mucked at the showdown
    PRIMARY KEY (hand_id, seat)
);

CREATE VIEW hand_player_facts AS
SELECT h.id AS hand_id, h.table_id, h.epoch, h.hand, h.ended_at,
       (h.ended_at AT TIME ZONE current_setting('TimeZone'))::date AS day,  -- in the connection's time zone
       p.seat, p.name, s.player_id, s.seq AS session_seq, p.starting_stack,
       p.put_in, p.won, p.won - p.put_in AS net,
       f.acted_preflop, f.vpip, f.pfr, f.postflop_aggressive, f.postflop_calls, f.saw_flop, f.showdown
FROM hands h
JOIN hand_players p ON p.hand_id = h.id
JOIN seat_facts f ON f.hand_id = h.id AND f.seat = p.seat
LEFT JOIN LATERAL (SELECT st.player_id, st.seq FROM seatings st
                   WHERE st.table_id = h.table_id AND st.epoch = h.epoch AND st.seat = p.seat AND st.seq < h.seq
                   ORDER BY st.seq DESC LIMIT 1) s ON true;

CREATE VIEW player_statistics AS
SELECT CASE WHEN GROUPING(f.day) = 0 THEN 'day' WHEN GROUPING(f.session_seq) = 0 THEN 'session' ELSE 'all' END
           AS scope,
       f.player_id, f.day, f.table_id, f.epoch, f.session_seq,
       count(*) AS hands,
       max(f.ended_at) AS last_hand_at,
       count(*) FILTER (WHERE f.acted_preflop) AS preflop_decisions,
       count(*) FILTER (WHERE f.vpip) AS vpip_hands,
       count(*) FILTER (WHERE f.pfr) AS pfr_hands,
       sum(f.postflop_aggressive)::bigint AS postflop_bets_raises,
       sum(f.postflop_calls)::bigint AS postflop_calls,
       count(*) FILTER (WHERE f.saw_flop) AS saw_flop,
       count(*) FILTER (WHERE f.saw_flop AND f.showdown) AS went_to_showdown,
       count(*) FILTER (WHERE f.saw_flop AND f.showdown AND f.won > 0) AS won_at_showdown,
       sum(f.net)::bigint AS net,
       round(100.0 * count(*) FILTER (WHERE f.vpip) / nullif(count(*) FILTER (WHERE f.acted_preflop), 0), 1)
           AS vpip_pct,
       round(100.0 * count(*) FILTER (WHERE f.pfr) / nullif(count(*) FILTER (WHERE f.acted_preflop), 0), 1)
           AS pfr_pct,
       round(sum(f.postflop_aggressive)::numeric / nullif(sum(f.postflop_calls), 0), 2) AS aggression_factor,
       round(100.0 * count(*) FILTER (WHERE f.saw_flop AND f.showdown)
             / nullif(count(*) FILTER (WHERE f.saw_flop), 0), 1) AS wtsd_pct,
       round(100.0 * count(*) FILTER (WHERE f.saw_flop AND f.showdown AND f.won > 0)
             / nullif(count(*) FILTER (WHERE f.saw_flop AND f.showdown), 0), 1) AS wsd_pct
FROM hand_player_facts f
WHERE f.player_id IS NOT NULL
GROUP BY GROUPING SETS ((f.player_id), (f.player_id, f.day), (f.player_id, f.table_id, f.epoch, f.session_seq));
