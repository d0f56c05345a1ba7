-- Players' statistics, as poker trackers define them (docs/room.md cites the definitions).
--
-- hand_player_facts: one row per seat dealt into a hand, with the player the floor had seated there (the last
-- seating of that seat before the hand's history; null: nobody named, or a seat cleared) and what the statistics
-- count. player_statistics: those counts summed per player over all time, per day and per session (one seating of
-- a player at a table: from player_seated to the next seating or clearing of that seat).

CREATE VIEW hand_player_facts AS
SELECT h.id AS hand_id, h.table_id, h.epoch, h.hand, h.ended_at,
       (h.ended_at AT TIME ZONE current_setting('TimeZone'))::date AS day,  -- in the connection's time zone
       p.seat, p.name, s.player_id, s.seq AS session_seq,
       p.put_in, p.won, p.won - p.put_in AS net,
       -- a preflop decision of its own (not a walk: a big blind everyone folded to has none)
       EXISTS (SELECT 1 FROM actions a WHERE a.hand_id = h.id AND a.seat = p.seat AND a.street = 'Preflop'
               AND a.action IN ('Fold', 'Check', 'Call', 'Bet', 'Raise')) AS acted_preflop,
       EXISTS (SELECT 1 FROM actions a WHERE a.hand_id = h.id AND a.seat = p.seat AND a.street = 'Preflop'
               AND a.action IN ('Call', 'Bet', 'Raise')) AS vpip,
       EXISTS (SELECT 1 FROM actions a WHERE a.hand_id = h.id AND a.seat = p.seat AND a.street = 'Preflop'
               AND a.action IN ('Bet', 'Raise')) AS pfr,
       (SELECT count(*) FROM actions a WHERE a.hand_id = h.id AND a.seat = p.seat
               AND a.street IN ('Flop', 'Turn', 'River') AND a.action IN ('Bet', 'Raise')) AS postflop_aggressive,
       (SELECT count(*) FROM actions a WHERE a.hand_id = h.id AND a.seat = p.seat
               AND a.street IN ('Flop', 'Turn', 'River') AND a.action = 'Call') AS postflop_calls,
       -- saw the flop: a flop was turned and the seat had not folded before it
       (EXISTS (SELECT 1 FROM cards c WHERE c.hand_id = h.id AND c.board = 1 AND c.position = 3)
        AND NOT EXISTS (SELECT 1 FROM actions a WHERE a.hand_id = h.id AND a.seat = p.seat
                        AND a.street = 'Preflop' AND a.action = 'Fold')) AS saw_flop,
       EXISTS (SELECT 1 FROM actions a WHERE a.hand_id = h.id AND a.seat = p.seat
               AND a.street = 'Showdown') AS showdown
FROM hands h
JOIN hand_players p ON p.hand_id = h.id
LEFT JOIN LATERAL (SELECT st.player_id, st.seq FROM seatings st
                   WHERE st.table_id = h.table_id AND st.epoch = h.epoch AND st.seat = p.seat AND st.seq < h.seq
                   ORDER BY st.seq DESC LIMIT 1) s ON true;

CREATE VIEW player_statistics AS
SELECT CASE WHEN GROUPING(f.day) = 0 THEN 'day' WHEN GROUPING(f.session_seq) = 0 THEN 'session' ELSE 'all' END
           AS scope,
       f.player_id, f.day, f.table_id, f.epoch, f.session_seq,
       count(*) AS hands,
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
