-- models: models side by side: loops, tokens per loop (median, p90), output/input ratio,
-- cache hit share (cached / input), tool calls per loop, tool failure rate (over calls whose
-- outcome is known), the loop outcome mix, median loop wall time where the loop's start and
-- end times are known (loops_with_wall_time says for how many), and cost where priced.
WITH calls AS (
    SELECT loop_id, count(*) AS calls,
           count(*) FILTER (WHERE failed) AS failures, count(failed) AS with_status
    FROM report_calls
    WHERE loop_id IS NOT NULL
    GROUP BY loop_id
)
SELECT
    l.model,
    string_agg(DISTINCT l.runtime, ',' ORDER BY l.runtime) AS runtimes,
    count(*) AS loops,
    count(l.total) AS loops_with_usage,
    round(median(l.total), 1) AS tokens_per_loop_median,
    round(quantile_cont(l.total, 0.9), 1) AS tokens_per_loop_p90,
    round(sum(l.output) FILTER (WHERE l.input IS NOT NULL)
          / nullif(sum(l.input) FILTER (WHERE l.output IS NOT NULL), 0), 4) AS output_input_ratio,
    round(sum(l.cached) / nullif(sum(l.input) FILTER (WHERE l.cached IS NOT NULL), 0), 4)
        AS cache_hit_share,
    round(sum(coalesce(c.calls, 0)) / count(*), 2) AS tool_calls_per_loop,
    round(sum(c.failures) / nullif(sum(c.with_status), 0), 4) AS tool_failure_rate,
    count(*) FILTER (WHERE l.outcome = 'completed') AS completed,
    count(*) FILTER (WHERE l.outcome = 'interrupted') AS interrupted,
    count(*) FILTER (WHERE l.outcome = 'failed') AS failed,
    count(*) FILTER (WHERE l.outcome IS NULL) AS no_outcome,
    round(median(l.wall_s), 3) AS median_wall_s,
    count(l.wall_s) AS loops_with_wall_time,
    round(sum(l.cost_usd), 6) AS cost_usd,
    round(sum(l.cost_usd) / nullif(count(l.cost_usd), 0), 6) AS cost_per_loop_usd
FROM report_loops AS l
LEFT JOIN calls AS c USING (loop_id)
GROUP BY l.model
ORDER BY loops DESC, l.model NULLS LAST
