-- subagents: one row per child session (a session whose log names its parent): its parent
-- session, runtime, kind, agent type (as the delegation names it, where the runtime records one),
-- `kind` says how the child came to run: `delegated` when a delegation links it; else, for
-- Claude Code, `compaction` (the runtime's compaction agent, agent id `acompact-…`) or
-- `warmup` (the runtime's cache warm-up, task `Warmup`); else `undelegated` (its parent
-- records nothing that delegates it). Then its
-- models, loops, tokens, tool calls and their failures, failed loops, and wall time (first
-- loop start to last loop end). Counts cover the child's loops in scope (its own tool calls,
-- not its descendants'); `report sessions` rolls these rows up per parent. tokens includes
-- what the child's own usage total exceeds its calls by (a runtime that keeps one: Mistral
-- Vibe), counted once as the usage report counts it.
-- detail (hidden first in a narrow table): started, failed_loops
WITH children AS (
    SELECT s.session_id, s.runtime, s.native_id, s.created_at,
           s.delegated_from.session_id AS parent_id, s.task.value AS task
    FROM sessions AS s
    WHERE s.delegated_from IS NOT NULL
      AND (getvariable('runtimes') IS NULL OR list_contains(getvariable('runtimes'), s.runtime))
),
delegating AS (
    SELECT DISTINCT i.semantic.delegation.child_session_id AS session_id
    FROM items AS i
    WHERE i.semantic.role = 'agent.delegation'
      AND i.semantic.delegation.child_session_id IS NOT NULL
),
typed AS (
    SELECT coalesce(i.semantic.delegation.child_session_id, i.linked_session_id) AS session_id,
           arg_min(i.semantic.delegation.agent_type,
                   (i.session_id = coalesce(i.semantic.delegation.child_session_id,
                                            i.linked_session_id))::INT)
               FILTER (WHERE i.semantic.delegation.agent_type IS NOT NULL) AS agent_type
    FROM items AS i
    WHERE i.semantic.role = 'agent.delegation'
    GROUP BY 1
),
own AS (
    SELECT session_id, count(*) AS loops, sum(total)::BIGINT AS tokens,
           count(*) FILTER (WHERE outcome = 'failed') AS failed_loops,
           string_agg(DISTINCT model, ',' ORDER BY model) AS models,
           min(started_at) AS first_start, max(coalesce(ended_at, started_at)) AS last_end
    FROM report_loops GROUP BY session_id
),
calls AS (
    SELECT session_id, count(*) AS tool_calls, count(*) FILTER (WHERE failed) AS failures
    FROM report_calls GROUP BY session_id
),
excess AS (
    SELECT session_id, sum(total)::BIGINT AS session_tokens
    FROM report_session_excess GROUP BY session_id
)
SELECT
    p.native_id AS parent_session,
    c.runtime,
    c.native_id AS session,
    CASE WHEN d.session_id IS NOT NULL THEN 'delegated'
         WHEN c.runtime = 'claude_code' AND c.native_id LIKE 'acompact-%' THEN 'compaction'
         WHEN c.runtime = 'claude_code' AND c.task = 'Warmup' THEN 'warmup'
         ELSE 'undelegated' END AS kind,
    t.agent_type,
    o.models AS model,
    strftime(timezone(getvariable('tz'), c.created_at), '%Y-%m-%d %H:%M:%S') AS started,
    coalesce(o.loops, 0) AS loops,
    CASE WHEN o.tokens IS NOT NULL OR x.session_tokens IS NOT NULL
         THEN coalesce(o.tokens, 0) + coalesce(x.session_tokens, 0) END AS tokens,
    coalesce(k.tool_calls, 0) AS tool_calls,
    coalesce(k.failures, 0) AS failures,
    coalesce(o.failed_loops, 0) AS failed_loops,
    CASE WHEN o.last_end >= o.first_start
         THEN (epoch_ms(o.last_end) - epoch_ms(o.first_start)) / 1000.0 END AS wall_s
FROM children AS c
JOIN sessions AS p ON p.session_id = c.parent_id
LEFT JOIN delegating AS d ON d.session_id = c.session_id
LEFT JOIN typed AS t ON t.session_id = c.session_id
LEFT JOIN own AS o ON o.session_id = c.session_id
LEFT JOIN calls AS k ON k.session_id = c.session_id
LEFT JOIN excess AS x ON x.session_id = c.session_id
ORDER BY c.created_at NULLS LAST, p.native_id, c.native_id
