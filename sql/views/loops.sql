-- loops: one row per outer agent execution; session_position is dense per session
-- (ordered by supporting source, then the loop's order in it). started_at / ended_at are the
-- runtime times written on the start and end records (absent when a record has none).
CREATE OR REPLACE VIEW loops AS
SELECT
    l.loop_id, l.session_id, l.source_id,
    (row_number() OVER (
        PARTITION BY l.session_id ORDER BY l.source_id, l.session_position) - 1
    )::BIGINT AS session_position,
    l.native_id, l.start_record_id, l."end", l.model, l.usage, l.started_at, l.ended_at
FROM _loops AS l;
