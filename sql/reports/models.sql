-- models: models side by side: loops, tokens per loop (median, p90), output/input ratio,
-- cache hit share (cached / input), tool calls per loop, tool failure rate (over calls whose
-- outcome is known), the loop outcome mix (no_outcome: loops whose runtime did not state how
-- they ended; runtimes_with_outcome: the runtimes that stated it for some loop), median loop
-- wall time where the loop's start and end times are known (loops_with_wall_time says for how
-- many), the median tool call duration (the best known: reported, else between the call's and
-- its output's records; calls_with_duration says over how many calls), and cost where priced.
-- session_tokens: what the model's sessions' own usage totals exceed their calls by (a runtime
-- that keeps one: Mistral Vibe; the usage report counts them the same way), in no loop's
-- figures and unpriced; a model only such a total names has a row of its own with no loops.
-- detail (hidden first in a narrow table): loops_with_usage, output_input_ratio, completed, interrupted, failed, no_outcome, runtimes_with_outcome, median_wall_s, loops_with_wall_time, tool_duration_ms_median, calls_with_duration, cost_per_loop_usd, session_tokens
WITH calls AS (
    SELECT loop_id, count(*) AS calls,
           count(*) FILTER (WHERE failed) AS failures, count(failed) AS with_status
    FROM report_calls
    WHERE loop_id IS NOT NULL
    GROUP BY loop_id
),
durations AS (
    SELECT l.model, median(coalesce(c.duration_ms, c.elapsed_ms)) AS tool_ms_median,
           count(coalesce(c.duration_ms, c.elapsed_ms)) AS calls_with_duration
    FROM report_calls AS c
    JOIN report_loops AS l USING (loop_id)
    GROUP BY l.model
),
per_loop AS (
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
    string_agg(DISTINCT l.runtime, ',' ORDER BY l.runtime) FILTER (WHERE l.outcome IS NOT NULL)
        AS runtimes_with_outcome,
    round(median(l.wall_s), 3) AS median_wall_s,
    count(l.wall_s) AS loops_with_wall_time,
    round(any_value(d.tool_ms_median), 1) AS tool_duration_ms_median,
    coalesce(any_value(d.calls_with_duration), 0) AS calls_with_duration,
    round(sum(l.cost_usd), 6) AS cost_usd,
    round(sum(l.cost_usd) / nullif(count(l.cost_usd), 0), 6) AS cost_per_loop_usd
FROM report_loops AS l
LEFT JOIN calls AS c USING (loop_id)
LEFT JOIN durations AS d ON d.model IS NOT DISTINCT FROM l.model
GROUP BY l.model
),
excess AS (
    SELECT model, string_agg(DISTINCT runtime, ',' ORDER BY runtime) AS runtimes,
           sum(total)::BIGINT AS session_tokens
    FROM report_session_excess GROUP BY model
)
SELECT coalesce(p.model, x.model) AS model, coalesce(p.runtimes, x.runtimes) AS runtimes,
    coalesce(p.loops, 0) AS loops, p.* EXCLUDE (model, runtimes, loops), x.session_tokens
FROM per_loop AS p
FULL JOIN excess AS x ON x.model IS NOT DISTINCT FROM p.model
ORDER BY loops DESC, model NULLS LAST
