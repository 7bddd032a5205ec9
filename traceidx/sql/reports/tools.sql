-- tools: per tool and per shell program: calls, failures and failure rate (over calls whose
-- outcome is known), exit code mix, and duration median / p90 / max by the best known duration
-- of each call: the one the runtime reported, else the time between the call's and its
-- output's records (with_duration counts the calls with either, duration_reported those whose
-- runtime reported it). A shell command's outcome counts for every program it runs.
-- detail (hidden first in a narrow table): with_status, exit_codes, with_duration, duration_reported, duration_ms_p90
WITH invocations AS (
    SELECT item_id, unnest(statement.invocations).program AS name
    FROM shell_statements
    WHERE item_id IN (SELECT item_id FROM report_calls)
),
per_program AS (
    SELECT DISTINCT c.item_id, i.name, c.failed, c.exit_code, c.duration_ms, c.elapsed_ms
    FROM report_calls AS c
    JOIN invocations AS i USING (item_id)
),
rows AS (
    SELECT 'tool' AS kind, coalesce(tool_name, '') AS name, failed, exit_code,
           coalesce(duration_ms, elapsed_ms) AS duration_ms, duration_ms AS reported_ms
    FROM report_calls
    UNION ALL
    SELECT 'program', name, failed, exit_code, coalesce(duration_ms, elapsed_ms), duration_ms
    FROM per_program
),
codes AS (
    SELECT kind, name,
           string_agg(exit_code || '×' || n, ' ' ORDER BY n DESC, exit_code) AS exit_codes
    FROM (SELECT kind, name, exit_code, count(*) AS n FROM rows
          WHERE exit_code IS NOT NULL GROUP BY ALL)
    GROUP BY ALL
)
SELECT
    r.kind,
    r.name,
    count(*) AS calls,
    count(*) FILTER (WHERE r.failed) AS failures,
    count(r.failed) AS with_status,
    round(count(*) FILTER (WHERE r.failed) / nullif(count(r.failed), 0), 4) AS failure_rate,
    any_value(c.exit_codes) AS exit_codes,
    count(r.duration_ms) AS with_duration,
    count(r.reported_ms) AS duration_reported,
    round(median(r.duration_ms), 1) AS duration_ms_median,
    round(quantile_cont(r.duration_ms, 0.9), 1) AS duration_ms_p90,
    max(r.duration_ms) AS duration_ms_max
FROM rows AS r
LEFT JOIN codes AS c USING (kind, name)
GROUP BY r.kind, r.name
ORDER BY r.kind DESC, calls DESC, r.name
