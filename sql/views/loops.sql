-- loops: one row per outer agent execution; session_position is dense per session and follows
-- the loops' start times (a loop without one takes the nearest known start time before it in
-- its source, else after it); ties keep source order, then the loop's order in its source.
-- started_at / ended_at are the runtime times written on the start and end records (absent
-- when a record has none).
CREATE OR REPLACE VIEW loops AS
WITH placed AS (
    SELECT l.*,
        coalesce(
            l.started_at,
            last_value(l.started_at IGNORE NULLS) OVER (
                PARTITION BY l.session_id, l.source_id ORDER BY l.session_position
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
            first_value(l.started_at IGNORE NULLS) OVER (
                PARTITION BY l.session_id, l.source_id ORDER BY l.session_position
                ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)
        ) AS placed_at
    FROM _loops AS l
)
SELECT
    l.loop_id, l.session_id, l.source_id,
    (row_number() OVER (
        PARTITION BY l.session_id
        ORDER BY l.placed_at NULLS LAST, l.source_id, l.session_position) - 1
    )::BIGINT AS session_position,
    l.native_id, l.start_record_id, l."end", l.model, l.usage, l.started_at, l.ended_at
FROM placed AS l;
