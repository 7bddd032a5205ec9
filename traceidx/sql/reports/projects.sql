-- projects: per project (the working directory its sessions ran in): sessions, loops, tokens,
-- cost where priced, tool calls and failures. Sessions with no known working directory share
-- the row with an empty project; loops_with_usage and priced_loops say what the sums cover.
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
    coalesce(s.working_directory, '') AS project,
    string_agg(DISTINCT s.runtime, ',' ORDER BY s.runtime) AS runtimes,
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
ORDER BY tokens DESC NULLS LAST, project
