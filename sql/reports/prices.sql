-- prices: every model of the model calls in scope with the price entry it matched (source:
-- genai-prices or override; the entry's provider and id; the first and last local date of
-- its calls), and every unpriced one (no entry) with its calls and tokens, listed last.
-- provider is the one the trace states for the calls (a model may appear under several).
-- session_tokens: what the model's sessions' own usage totals exceed their calls by (a runtime
-- that keeps one: Mistral Vibe), never priced (not in cost_usd); a model only such a total
-- names has a row of its own with no calls and no entry.
-- detail (hidden first in a narrow table): source, provider, first_call, input, output
WITH excess AS (
    SELECT model, sum(total)::BIGINT AS session_tokens
    FROM report_session_excess GROUP BY model
),
priced AS (
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
SELECT coalesce(p.model, x.model) AS model,
    p.provider, p.source, p.matched_provider, p.entry, p.first_call, p.last_call,
    coalesce(p.calls, 0) AS calls, p.input, p.output, p.total, p.cost_usd,
    -- a model's session tokens on its first row (by provider) only
    CASE WHEN p.model IS NULL OR row_number() OVER (
             PARTITION BY p.model ORDER BY p.provider NULLS FIRST) = 1
         THEN x.session_tokens END AS session_tokens
FROM priced AS p
FULL JOIN excess AS x ON x.model IS NOT DISTINCT FROM p.model
ORDER BY entry IS NULL, model NULLS LAST, provider NULLS FIRST
