-- scope: the loops, tool calls and sessions a report covers, and what they cost.
-- Parameters are session variables set by traceidx.reports: tz (IANA zone), period
-- (day|week|month), since/until (local dates, both inclusive; NULL = unbounded), runtimes and
-- models (lists; NULL = all). A loop is placed by its start time in tz; a loop whose start
-- time is unknown has an empty period and is left out when since or until is given.
CREATE OR REPLACE TEMP VIEW report_loops AS
WITH placed AS (
    SELECT u.*, timezone(getvariable('tz'), u.started_at) AS local_start
    FROM loop_usage AS u
),
priced AS (
    SELECT p.*,
        (SELECT struct_pack(input := r.input, cached_input := r.cached_input,
                            cache_write := r.cache_write, output := r.output)
         FROM prices AS r
         WHERE p.model IS NOT NULL AND regexp_matches(p.model, r.pattern)
         ORDER BY r.priority LIMIT 1) AS price
    FROM placed AS p
)
SELECT
    l.* EXCLUDE (price),
    CASE getvariable('period')
        WHEN 'day' THEN strftime(l.local_start, '%Y-%m-%d')
        WHEN 'week' THEN strftime(date_trunc('week', l.local_start), '%Y-%m-%d')
        WHEN 'month' THEN strftime(l.local_start, '%Y-%m')
    END AS period,
    CASE WHEN l.ended_at >= l.started_at
         THEN (epoch_ms(l.ended_at) - epoch_ms(l.started_at)) / 1000.0 END AS wall_s,
    CASE WHEN l.price IS NOT NULL AND l.input IS NOT NULL AND l.output IS NOT NULL THEN
        ((l.input - coalesce(l.cached, 0) - coalesce(l.cache_write, 0)) * l.price.input
         + coalesce(l.cached, 0) * l.price.cached_input
         + coalesce(l.cache_write, 0) * l.price.cache_write
         + l.output * l.price.output) / 1e6
    END AS cost_usd
FROM priced AS l
WHERE (getvariable('runtimes') IS NULL OR list_contains(getvariable('runtimes'), l.runtime))
  AND (getvariable('models') IS NULL OR list_contains(getvariable('models'), l.model))
  AND (getvariable('since') IS NULL OR l.local_start >= getvariable('since')::TIMESTAMP)
  AND (getvariable('until') IS NULL
       OR l.local_start < getvariable('until')::TIMESTAMP + INTERVAL 1 DAY);

-- Tool calls of the loops in scope; a call outside any loop is in scope when its session's
-- runtime is, no model is asked for, and its own time falls in the range.
CREATE OR REPLACE TEMP VIEW report_calls AS
SELECT c.*, s.runtime, timezone(getvariable('tz'), c.started_at) AS local_start
FROM tool_calls AS c
JOIN sessions AS s USING (session_id)
WHERE c.loop_id IN (SELECT loop_id FROM report_loops)
   OR (c.loop_id IS NULL
       AND (getvariable('runtimes') IS NULL OR list_contains(getvariable('runtimes'), s.runtime))
       AND getvariable('models') IS NULL
       AND (getvariable('since') IS NULL
            OR timezone(getvariable('tz'), c.started_at) >= getvariable('since')::TIMESTAMP)
       AND (getvariable('until') IS NULL
            OR timezone(getvariable('tz'), c.started_at)
               < getvariable('until')::TIMESTAMP + INTERVAL 1 DAY));
