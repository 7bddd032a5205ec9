-- projects: per project (the repository its sessions worked in, as sessions.project and
-- --group-by project name it: the git top-level's name where the trace states it, else the
-- working directory's last part): sessions, loops, tokens, cost where priced, tool calls and
-- failures; working_directory is its sessions' directory (the first, when there are several:
-- directories counts them). Sessions with no known project share the row of an unknown (null)
-- project; loops_with_usage and priced_loops say what the sums cover.
-- detail (hidden first in a narrow table): working_directory, directories, loops_with_usage, priced_loops
WITH own AS (
    SELECT session_id, count(*) AS loops, count(total) AS with_usage,
           sum(total)::BIGINT AS tokens, count(cost_usd) AS priced, sum(cost_usd) AS cost_usd
    FROM report_loops GROUP BY session_id
),
calls AS (
    SELECT session_id, count(*) AS tool_calls, count(*) FILTER (WHERE failed) AS failures
    FROM report_calls GROUP BY session_id
)
SELECT
    s.project,
    string_agg(DISTINCT s.runtime, ',' ORDER BY s.runtime) AS runtimes,
    min(s.working_directory) AS working_directory,
    count(DISTINCT s.working_directory) AS directories,
    count(*) AS sessions,
    sum(o.loops)::BIGINT AS loops,
    sum(o.with_usage)::BIGINT AS loops_with_usage,
    sum(o.tokens)::BIGINT AS tokens,
    sum(o.priced)::BIGINT AS priced_loops,
    round(sum(o.cost_usd), 6) AS cost_usd,
    sum(coalesce(c.tool_calls, 0))::BIGINT AS tool_calls,
    sum(coalesce(c.failures, 0))::BIGINT AS failures
FROM sessions AS s
JOIN own AS o USING (session_id)
LEFT JOIN calls AS c USING (session_id)
GROUP BY 1
ORDER BY tokens DESC NULLS LAST, project NULLS LAST
