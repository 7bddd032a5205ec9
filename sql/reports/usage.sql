-- usage: token usage and cost by period × the --group-by dimensions (runtime, model by
-- default; also project, branch, agent, origin). Tokens and costs fall in the period of each model
-- call's own time in the chosen timezone (so a loop crossing midnight splits across days); a
-- loop counts in the period of its start (day YYYY-MM-DD, ISO week = its Monday's date, month
-- YYYY-MM); rows without a known time have an empty period. Sums cover the calls that
-- reported the member; loops_without_usage counts loops whose trace reports no usage;
-- cost_usd sums the calls' costs, each priced on its own, exactly (as decimals of 15 places;
-- rounded to 6 once summed), so any grouping of the rows adds up to the same cost
-- (unpriced_calls counts the calls no price matched; a row of only those has an empty cost,
-- never 0). A session whose runtime keeps a session total beside fewer per-call rows (Mistral
-- Vibe keeps per-call usage of a resumed session's last run only) adds what its total exceeds
-- its calls by, member by member, in the period of the session's creation, as neither a call
-- nor a loop, and unpriced (its cost is not in cost_usd): the session's tokens are counted
-- once, never spread over its calls or loops.
-- detail (hidden first in a narrow table): calls, cached, cache_write, reasoning, loops_without_usage, unpriced_calls
WITH rows AS (
    SELECT period_of(c.local_at) AS period, d.runtime, c.model,
        d.* EXCLUDE (session_id, created_at, runtime),
        0 AS loops, 0 AS loops_without_usage, 1 AS calls,
        c.input, c.cached, c.cache_write, c.output, c.reasoning, c.total,
        c.cost_usd::DECIMAL(38, 15) AS cost_usd
    FROM report_model_calls AS c
    JOIN session_dimensions AS d USING (session_id)
    UNION ALL BY NAME
    SELECT period_of(l.local_start) AS period, d.runtime, l.model,
        d.* EXCLUDE (session_id, created_at, runtime),
        1 AS loops, (l.total IS NULL)::INT AS loops_without_usage, 0 AS calls
    FROM report_loops AS l
    JOIN session_dimensions AS d USING (session_id)
    UNION ALL BY NAME
    SELECT period_of(x.local_at) AS period, x.runtime, x.model,
        d.* EXCLUDE (session_id, created_at, runtime),
        0 AS loops, 0 AS loops_without_usage, 0 AS calls,
        x.input, x.cached, x.output, x.total
    FROM report_session_excess AS x
    JOIN session_dimensions AS d USING (session_id)
)
SELECT
    coalesce(period, '') AS period,
    COLUMNS(lambda name: list_contains(getvariable('group_by'), name)),
    sum(loops)::BIGINT AS loops,
    sum(calls)::BIGINT AS calls,
    sum(input)::BIGINT AS input,
    sum(cached)::BIGINT AS cached,
    sum(cache_write)::BIGINT AS cache_write,
    sum(output)::BIGINT AS output,
    sum(reasoning)::BIGINT AS reasoning,
    sum(total)::BIGINT AS total,
    sum(loops_without_usage)::BIGINT AS loops_without_usage,
    round(sum(cost_usd), 6)::DOUBLE AS cost_usd,
    count(*) FILTER (WHERE calls = 1 AND cost_usd IS NULL) AS unpriced_calls
FROM rows
GROUP BY ALL
ORDER BY ALL NULLS LAST
