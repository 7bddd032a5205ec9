-- projects: per project (the repository its sessions worked in, as sessions.project and
-- --group-by project name it: the git top-level's name where the trace states it, else the
-- working directory's last part): sessions, loops, tokens, cost where priced, tool calls and
-- failures; working_directory is its sessions' directory (the first, when there are several:
-- directories counts them). Sessions with no known project share the row of an unknown (null)
-- project; loops_with_usage and priced_loops say what the sums cover. tokens includes
-- session_tokens: what its sessions' own usage totals exceed their calls by (a runtime that
-- keeps one: Mistral Vibe), counted once as the usage report counts it, and unpriced.
-- detail (hidden first in a narrow table): working_directory, directories, loops_with_usage, session_tokens, priced_loops
WITH looped AS (
    SELECT session_id, count(*) AS loops, count(total) AS with_usage,
           sum(total)::BIGINT AS tokens, count(cost_usd) AS priced, sum(cost_usd) AS cost_usd
    FROM report_loops GROUP BY session_id
),
excess AS (
    SELECT session_id, sum(total)::BIGINT AS session_tokens
    FROM report_session_excess GROUP BY session_id
),
own AS (
    SELECT session_id, coalesce(l.loops, 0) AS loops, coalesce(l.with_usage, 0) AS with_usage,
           l.priced, l.cost_usd, x.session_tokens,
           CASE WHEN l.tokens IS NOT NULL OR x.session_tokens IS NOT NULL
                THEN coalesce(l.tokens, 0) + coalesce(x.session_tokens, 0) END AS tokens
    FROM looped AS l
    FULL JOIN excess AS x USING (session_id)
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
    sum(o.session_tokens)::BIGINT AS session_tokens,
    sum(o.priced)::BIGINT AS priced_loops,
    round(sum(o.cost_usd), 6) AS cost_usd,
    sum(coalesce(c.tool_calls, 0))::BIGINT AS tool_calls,
    sum(coalesce(c.failures, 0))::BIGINT AS failures
FROM sessions AS s
JOIN own AS o USING (session_id)
LEFT JOIN calls AS c USING (session_id)
GROUP BY 1
ORDER BY tokens DESC NULLS LAST, project NULLS LAST
