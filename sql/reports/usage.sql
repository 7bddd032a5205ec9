-- usage: token usage by period × runtime × model. A loop counts in the period of its start
-- time in the chosen timezone (day YYYY-MM-DD, ISO week = its Monday's date, month YYYY-MM);
-- loops with an unknown start time share the row with an empty period. Sums cover the loops
-- that reported the member; loops_without_usage counts those that reported none; cost_usd
-- is empty for unpriced models (unpriced_loops says how many), never 0.
-- detail (hidden first in a narrow table): cached, cache_write, reasoning, loops_without_usage, unpriced_loops
SELECT
    coalesce(period, '') AS period,
    runtime,
    model,
    count(*) AS loops,
    sum(input)::BIGINT AS input,
    sum(cached)::BIGINT AS cached,
    sum(cache_write)::BIGINT AS cache_write,
    sum(output)::BIGINT AS output,
    sum(reasoning)::BIGINT AS reasoning,
    sum(total)::BIGINT AS total,
    count(*) FILTER (WHERE input IS NULL AND output IS NULL) AS loops_without_usage,
    round(sum(cost_usd), 6) AS cost_usd,
    count(*) FILTER (WHERE cost_usd IS NULL AND total IS NOT NULL) AS unpriced_loops
FROM report_loops
GROUP BY ALL
ORDER BY period, runtime, model NULLS LAST
