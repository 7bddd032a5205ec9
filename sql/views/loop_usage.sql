-- loop_usage: one row per loop with its model, times, outcome, usage members and total.
-- total = input + output (input already includes cache reads and writes).
CREATE OR REPLACE VIEW loop_usage AS
SELECT
    l.loop_id, l.session_id, s.runtime,
    l.model.id AS model,
    rs.occurred_at AS started_at,
    re.occurred_at AS ended_at,
    l."end".outcome AS outcome,
    l.usage.input AS input, l.usage.cached AS cached, l.usage.cache_write AS cache_write,
    l.usage.output AS output, l.usage.reasoning AS reasoning,
    l.usage.input + l.usage.output AS total
FROM loops AS l
JOIN sessions AS s USING (session_id)
LEFT JOIN records AS rs ON rs.record_id = l.start_record_id
LEFT JOIN records AS re ON re.record_id = l."end".record_id;
