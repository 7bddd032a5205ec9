-- tools: per tool kind and per shell program (entry says which): calls, failures and failure rate (over calls
-- whose outcome is known), exit code mix, and duration median / p90 / max by the best known
-- duration of each call: the one the runtime reported, else the time between the call's and its
-- output's records (with_duration counts the calls with either, duration_reported those whose
-- runtime reported it). A kind's row names its tools with the runtimes that call them (kinds:
-- see the tool_kinds view; ask_user is time spent waiting for the person). A shell command's
-- failure counts against the program whose status the command returned: the last one it runs
-- (the last of a pipeline, the last link of a && or || chain), every program of that pipeline
-- under set -o pipefail; each program on the line counts a call.
-- detail (hidden first in a narrow table): tools, with_status, exit_codes, with_duration, duration_reported, duration_ms_p90
WITH statements AS (
    SELECT s.item_id, s.statement_position AS pos, s.statement.pipeline.id AS pipeline,
           s.statement.invocations[1].program AS program
    FROM shell_statements AS s
    WHERE s.fragment_position = 0 AND s.item_id IN (SELECT item_id FROM report_calls)
      AND len(s.statement.invocations) > 0
),
last_run AS (  -- the last statement that runs a program, and its pipeline
    SELECT item_id, max(pos) AS pos, arg_max(pipeline, pos) AS pipeline
    FROM statements GROUP BY item_id
),
status AS (  -- the programs whose status is the command's
    SELECT DISTINCT st.item_id, st.program
    FROM statements AS st
    JOIN last_run AS l USING (item_id)
    JOIN report_calls AS c USING (item_id)
    WHERE st.pos = l.pos
       OR (l.pipeline IS NOT NULL AND st.pipeline = l.pipeline
           AND contains(coalesce(c.command, ''), 'pipefail'))
),
per_program AS (
    SELECT DISTINCT c.item_id, st.program AS name,
           CASE WHEN c.failed AND s.program IS NULL THEN false ELSE c.failed END AS failed,
           c.exit_code, c.duration_ms, c.elapsed_ms
    FROM report_calls AS c
    JOIN statements AS st USING (item_id)
    LEFT JOIN status AS s ON s.item_id = st.item_id AND s.program = st.program
),
named AS (  -- each kind's tools with the runtimes that call them
    SELECT kind, string_agg(tool || ' (' || runtimes || ')', ', ' ORDER BY n DESC, tool) AS tools
    FROM (SELECT kind, coalesce(tool_name, '') AS tool, count(*) AS n,
                 string_agg(DISTINCT runtime, ', ' ORDER BY runtime) AS runtimes
          FROM report_calls GROUP BY ALL)
    GROUP BY kind
),
rows AS (
    SELECT 'tool kind' AS row_type, kind AS name, failed, exit_code,
           coalesce(duration_ms, elapsed_ms) AS duration_ms, duration_ms AS reported_ms
    FROM report_calls
    UNION ALL
    SELECT 'program', name, failed, exit_code, coalesce(duration_ms, elapsed_ms), duration_ms
    FROM per_program
),
codes AS (
    SELECT row_type, name,
           string_agg(exit_code || '×' || n, ' ' ORDER BY n DESC, exit_code) AS exit_codes
    FROM (SELECT row_type, name, exit_code, count(*) AS n FROM rows
          WHERE exit_code IS NOT NULL GROUP BY ALL)
    GROUP BY ALL
)
SELECT
    r.row_type AS entry,
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
    max(r.duration_ms) AS duration_ms_max,
    CASE WHEN r.row_type = 'tool kind' THEN any_value(n.tools) END AS tools
FROM rows AS r
LEFT JOIN codes AS c USING (row_type, name)
LEFT JOIN named AS n ON r.row_type = 'tool kind' AND n.kind = r.name
GROUP BY r.row_type, r.name
ORDER BY r.row_type DESC, calls DESC, r.name
