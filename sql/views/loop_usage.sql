-- loop_usage: one row per loop with its model, times, outcome, usage members and total.
-- total = input + output (input already includes cache reads and writes).
CREATE OR REPLACE VIEW loop_usage AS
SELECT
    l.loop_id, l.session_id, s.runtime,
    l.model.id AS model,
    l.started_at,
    l.ended_at,
    l."end".outcome AS outcome,
    l.usage.input AS input, l.usage.cached AS cached, l.usage.cache_write AS cache_write,
    l.usage.output AS output, l.usage.reasoning AS reasoning,
    l.usage.input + l.usage.output AS total
FROM loops AS l
JOIN sessions AS s USING (session_id);
