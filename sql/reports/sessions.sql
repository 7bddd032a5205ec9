-- sessions: one row per session with loops in scope: runtime, native id, working directory,
-- start (local time), loops, tokens, tool calls and failures, and its subagent sessions (all
-- descendants through delegation) with their tokens, tool calls and failures attributed to it
-- (the sums of their rows in `report subagents`). tokens includes session_tokens: what the
-- session's own usage total exceeds its calls by (a runtime that keeps one: Mistral Vibe),
-- counted once as the usage report counts it; a session in scope by that alone has 0 loops.
-- detail (hidden first in a narrow table): working_directory, started, session_tokens, subagent_tool_calls, subagent_failures
WITH RECURSIVE tree(root, sid, depth) AS (
    SELECT session_id, session_id, 0 FROM sessions
    UNION ALL
    SELECT t.root, s.session_id, t.depth + 1
    FROM tree AS t
    JOIN sessions AS s ON s.delegated_from.session_id = t.sid
    WHERE t.depth < 32
),
looped AS (
    SELECT session_id, count(*) AS loops, sum(total)::BIGINT AS tokens
    FROM report_loops GROUP BY session_id
),
excess AS (
    SELECT session_id, sum(total)::BIGINT AS session_tokens
    FROM report_session_excess GROUP BY session_id
),
own AS (
    SELECT session_id, coalesce(l.loops, 0) AS loops, x.session_tokens,
           CASE WHEN l.tokens IS NOT NULL OR x.session_tokens IS NOT NULL
                THEN coalesce(l.tokens, 0) + coalesce(x.session_tokens, 0) END AS tokens
    FROM looped AS l
    FULL JOIN excess AS x USING (session_id)
),
calls AS (
    SELECT session_id, count(*) AS tool_calls, count(*) FILTER (WHERE failed) AS failures
    FROM report_calls GROUP BY session_id
),
sub AS (
    SELECT t.root, count(DISTINCT t.sid) AS subagent_sessions,
           sum(o.tokens)::BIGINT AS subagent_tokens,
           sum(coalesce(k.tool_calls, 0))::BIGINT AS subagent_tool_calls,
           sum(coalesce(k.failures, 0))::BIGINT AS subagent_failures
    FROM tree AS t
    LEFT JOIN own AS o ON o.session_id = t.sid
    LEFT JOIN calls AS k ON k.session_id = t.sid
    WHERE t.depth > 0
    GROUP BY t.root
)
SELECT
    s.runtime,
    s.native_id,
    s.working_directory,
    strftime(timezone(getvariable('tz'), s.created_at), '%Y-%m-%d %H:%M:%S') AS started,
    o.loops,
    o.tokens,
    o.session_tokens,
    coalesce(c.tool_calls, 0) AS tool_calls,
    coalesce(c.failures, 0) AS failures,
    coalesce(sub.subagent_sessions, 0) AS subagent_sessions,
    sub.subagent_tokens,
    coalesce(sub.subagent_tool_calls, 0) AS subagent_tool_calls,
    coalesce(sub.subagent_failures, 0) AS subagent_failures,
    CASE WHEN o.tokens IS NOT NULL OR sub.subagent_tokens IS NOT NULL
         THEN coalesce(o.tokens, 0) + coalesce(sub.subagent_tokens, 0) END
        AS tokens_with_subagents
FROM sessions AS s
JOIN own AS o USING (session_id)
LEFT JOIN calls AS c USING (session_id)
LEFT JOIN sub ON sub.root = s.session_id
ORDER BY s.created_at NULLS LAST, s.native_id
