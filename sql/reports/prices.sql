-- prices: every model of the model calls in scope with the price entry it matched (source:
-- genai-prices or override; the entry's provider and id; the first and last local date of
-- its calls), and every unpriced one (no entry) with its calls and tokens, listed last.
-- provider is the one the trace states for the calls (a model may appear under several).
-- detail (hidden first in a narrow table): source, provider, first_call, input, output
SELECT * FROM (
SELECT
    c.model,
    c.provider,
    m.source,
    m.matched_provider,
    m.entry,
    strftime(min(c.local_at), '%Y-%m-%d') AS first_call,
    strftime(max(c.local_at), '%Y-%m-%d') AS last_call,
    count(*) AS calls,
    sum(c.input)::BIGINT AS input,
    sum(c.output)::BIGINT AS output,
    sum(c.total)::BIGINT AS total,
    round(sum(c.cost_usd), 6) AS cost_usd
FROM report_model_calls AS c
LEFT JOIN price_matches AS m
  ON m.model = c.model AND m.provider IS NOT DISTINCT FROM c.provider
GROUP BY ALL
)
ORDER BY entry IS NULL, model NULLS LAST, provider NULLS FIRST
