-- scope: the model calls, loops, tool calls and sessions a report covers, and what they cost.
-- Parameters are session variables set by traceidx.reports: tz (IANA zone), period
-- (day|week|month), since/until (local dates, both inclusive; NULL = unbounded), runtimes and
-- models (lists; NULL = all). A loop is placed by its start time in tz; a loop whose start
-- time is unknown has an empty period and is left out when since or until is given.
-- The billed model calls of the dataset (those with usage) with their cost: the model_calls
-- view's cost_usd (price tables from traceidx.pricing), so a report's cost is a sum of that
-- column. Dimensions a usage report can group by are columns here (see
-- traceidx.reports.DIMENSIONS); agent is main, or the subagent type the delegation names;
-- origin is the origin of the session's first source.
-- Both are tables: computed once per report (every report reads them through report_loops).
CREATE OR REPLACE TEMP TABLE session_dimensions AS
WITH agents AS (
    SELECT coalesce(i.semantic.delegation.child_session_id, i.linked_session_id) AS session_id,
           max(i.semantic.delegation.agent_type) AS agent_type
    FROM items AS i
    WHERE i.semantic.role = 'agent.delegation'
      AND list_contains(getvariable('group_by'), 'agent')  -- else the items are not read
    GROUP BY 1
)
-- (read from the stored rows: a session another delegated to is a subagent whether or not
-- its parent is in the dataset)
-- (each single-valued column from the first source stating it, as in the sessions view)
SELECT s.session_id,
    arg_min(s.runtime, s.first_key) AS runtime,
    min(s.created_at) AS created_at,
    arg_min(s.project, s.first_key) FILTER (WHERE s.project IS NOT NULL) AS project,
    arg_min(s.branch, s.first_key) FILTER (WHERE s.branch IS NOT NULL) AS branch,
    arg_min(o.origin, s.first_key) FILTER (WHERE o.origin IS NOT NULL) AS origin,
    CASE WHEN bool_or(s.delegated_from.session_id IS DISTINCT FROM s.session_id
                      AND s.delegated_from IS NOT NULL)
         THEN coalesce(any_value(a.agent_type), 'subagent') ELSE 'main' END AS agent
FROM _session_sources AS s
LEFT JOIN agents AS a USING (session_id)
LEFT JOIN _sources AS o ON o.source_id = s.source_ids[1]
GROUP BY s.session_id;

CREATE OR REPLACE TEMP TABLE priced_calls AS
SELECT c.call_id, c.session_id, c.loop_id, c.occurred_at, c.model, c.provider,
       c.usage.input AS input, c.usage.cached AS cached,
       c.usage.cache_write AS cache_write, c.usage.output AS output,
       c.usage.reasoning AS reasoning,
       c.usage.input + c.usage.output AS total,
       d.* EXCLUDE (session_id, created_at),
       c.cost_usd
FROM model_calls AS c
JOIN session_dimensions AS d USING (session_id)
WHERE c.usage IS NOT NULL;  -- a failed attempt that billed nothing is no billed call

-- The model calls a report covers, placed by their own time in tz (a call without one by
-- its loop's start): runtimes / models (the call's model) / since / until filter them.
CREATE OR REPLACE TEMP VIEW report_model_calls AS
SELECT c.*,
    timezone(getvariable('tz'), coalesce(c.occurred_at, l.started_at)) AS local_at
FROM priced_calls AS c
LEFT JOIN _loops AS l USING (loop_id)
WHERE (getvariable('runtimes') IS NULL OR list_contains(getvariable('runtimes'), c.runtime))
  AND (getvariable('models') IS NULL OR list_contains(getvariable('models'), c.model))
  AND (getvariable('since') IS NULL OR local_at >= getvariable('since')::TIMESTAMP)
  AND (getvariable('until') IS NULL
       OR local_at < getvariable('until')::TIMESTAMP + INTERVAL 1 DAY);

-- Loops in scope: placed by their start time in tz; cost_usd sums their calls' costs (empty
-- when any of its calls is unpriced).
CREATE OR REPLACE TEMP VIEW report_loops AS
WITH placed AS (
    SELECT u.*, timezone(getvariable('tz'), u.started_at) AS local_start
    FROM loop_usage AS u
),
costs AS (
    SELECT loop_id, sum(cost_usd) AS cost_usd,
           count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced_calls
    FROM priced_calls WHERE loop_id IS NOT NULL GROUP BY loop_id
)
SELECT
    l.*,
    CASE WHEN l.ended_at >= l.started_at
         THEN (epoch_ms(l.ended_at) - epoch_ms(l.started_at)) / 1000.0 END AS wall_s,
    CASE WHEN k.unpriced_calls = 0 THEN k.cost_usd END AS cost_usd
FROM placed AS l
LEFT JOIN costs AS k USING (loop_id)
WHERE (getvariable('runtimes') IS NULL OR list_contains(getvariable('runtimes'), l.runtime))
  AND (getvariable('models') IS NULL OR list_contains(getvariable('models'), l.model))
  AND (getvariable('since') IS NULL OR l.local_start >= getvariable('since')::TIMESTAMP)
  AND (getvariable('until') IS NULL
       OR l.local_start < getvariable('until')::TIMESTAMP + INTERVAL 1 DAY);

-- What a session's own usage total (sessions.session_usage: a runtime that keeps one, Mistral
-- Vibe) exceeds the usage of all its billed calls by, member by member, for the sessions in
-- scope: placed by the session's creation in tz, filtered by its runtime and its total's model.
-- Neither a call nor a loop, and unpriced: a report adds it so that a session's tokens are
-- counted once, never left out and never spread over its calls or loops.
CREATE OR REPLACE TEMP VIEW report_session_excess AS
WITH calls AS (
    SELECT session_id, sum(input) AS input, sum(cached) AS cached, sum(output) AS output
    FROM priced_calls GROUP BY session_id
)
SELECT s.session_id, d.runtime, s.session_usage_model AS model,
    timezone(getvariable('tz'), s.created_at) AS local_at,
    s.session_usage.input - coalesce(k.input, 0) AS input,
    s.session_usage.cached - coalesce(k.cached, 0) AS cached,
    s.session_usage.output - coalesce(k.output, 0) AS output,
    s.session_usage.input - coalesce(k.input, 0)
        + s.session_usage.output - coalesce(k.output, 0) AS total
FROM sessions AS s
JOIN session_dimensions AS d USING (session_id)
LEFT JOIN calls AS k USING (session_id)
WHERE s.session_usage IS NOT NULL
  AND (s.session_usage.input > coalesce(k.input, 0)
       OR s.session_usage.output > coalesce(k.output, 0))
  AND (getvariable('runtimes') IS NULL OR list_contains(getvariable('runtimes'), d.runtime))
  AND (getvariable('models') IS NULL
       OR list_contains(getvariable('models'), s.session_usage_model))
  AND (getvariable('since') IS NULL
       OR timezone(getvariable('tz'), s.created_at) >= getvariable('since')::TIMESTAMP)
  AND (getvariable('until') IS NULL
       OR timezone(getvariable('tz'), s.created_at)
          < getvariable('until')::TIMESTAMP + INTERVAL 1 DAY);

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

-- A period label of a local time (day YYYY-MM-DD, ISO week = its Monday's date, month
-- YYYY-MM).
CREATE OR REPLACE TEMP MACRO period_of(t) AS CASE getvariable('period')
    WHEN 'day' THEN strftime(t, '%Y-%m-%d')
    WHEN 'week' THEN strftime(date_trunc('week', t), '%Y-%m-%d')
    WHEN 'month' THEN strftime(t, '%Y-%m')
END;
