-- loops: one row per outer agent execution; session_position is dense per session
-- (ordered by supporting source, then the position of the start record in it).
CREATE OR REPLACE VIEW loops AS
SELECT
    l.loop_id, l.session_id, l.source_id,
    (row_number() OVER (
        PARTITION BY l.session_id ORDER BY r.source_id, r.source_position) - 1
    )::BIGINT AS session_position,
    l.native_id, l.start_record_id, l."end", l.model, l.usage
FROM _loops AS l
JOIN _records AS r ON r.record_id = l.start_record_id;
