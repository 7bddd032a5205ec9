-- model_calls: one row per model call (API response) the trace records usage for. usage has
-- the members of loops.usage (input includes cache reads and writes; absent stays absent);
-- a loop's usage is the sum of its calls'. outcome: ok (answered), error (a failed attempt),
-- aborted (cut by the user); a failed attempt that billed nothing has no usage. A call outside
-- any loop (e.g. a compaction summary requested between loops) has no loop_id and still
-- counts in its session's usage. cost_usd: the call priced at its own time (else its loop's
-- start, else its session's creation) by the genai-prices entry (or the --prices override)
-- its (model, provider) matched: the last of the entry's price periods active then (else its
-- first), in the band of the call's input tokens; empty for an unpriced call or one without
-- usage, never 0 for want of a price.
CREATE OR REPLACE VIEW model_calls AS
WITH calls AS (
    SELECT c.*,
        coalesce(c.occurred_at, l.started_at, s.created_at, now()) AS priced_at
    FROM _model_calls AS c
    LEFT JOIN _loops AS l ON l.loop_id = c.loop_id
    LEFT JOIN (SELECT session_id, min(created_at) AS created_at FROM _sessions GROUP BY 1) AS s
        ON s.session_id = c.session_id
),
rated AS (
    SELECT c.call_id,
        arg_max(r, CASE WHEN (r.kind = 'always'
            OR (r.kind = 'from_date' AND c.priced_at::DATE >= r.start_date)
            OR (r.kind = 'time_of_day' AND (
                CASE WHEN r.end_s < r.start_s
                     THEN (epoch_ms(c.priced_at) % 86400000) / 1000.0 >= r.start_s
                          OR (epoch_ms(c.priced_at) % 86400000) / 1000.0 < r.end_s
                     ELSE (epoch_ms(c.priced_at) % 86400000) / 1000.0 >= r.start_s
                          AND (epoch_ms(c.priced_at) % 86400000) / 1000.0 < r.end_s END)))
                        THEN [1, r.ordinal, r.above] ELSE [0, -r.ordinal, r.above] END) AS rate
    FROM calls AS c
    JOIN price_rates AS r
      ON r.model = c.model AND r.provider IS NOT DISTINCT FROM c.provider
     AND (r.above = 0 OR c.usage.input > r.above)
    WHERE c.usage IS NOT NULL
    GROUP BY c.call_id
)
SELECT c.call_id, c.session_id, c.loop_id, c.occurred_at, c.model, c.provider, c.outcome,
    c.usage,
    CASE WHEN t.rate IS NOT NULL AND c.usage IS NOT NULL THEN
        t.rate.per_call
        + (c.usage.input - coalesce(c.usage.cached, 0) - coalesce(c.usage.cache_write, 0))
          * t.rate.input
        + coalesce(c.usage.cached, 0) * t.rate.cached
        + coalesce(c.usage.cache_write, 0) * t.rate.cache_write
        + c.usage.output * t.rate.output
    END AS cost_usd,
    c.record_ids, c.source_id
FROM calls AS c
LEFT JOIN rated AS t USING (call_id);
