"""Qwen Code token usage: an assistant record's ``usageMetadata`` in the contract's units.

Qwen Code writes every provider's usage in the Gemini ``usageMetadata`` shape.
``promptTokenCount`` includes the cached prompt tokens (``cachedContentTokenCount``): it is
the contract's input. Whether ``candidatesTokenCount`` includes the reasoning tokens
(``thoughtsTokenCount``) depends on the provider: OpenAI-compatible APIs (the default)
report completion tokens that include them, so ``totalTokenCount`` = prompt + candidates;
the Gemini API reports them apart, so ``totalTokenCount`` = prompt + candidates + thoughts.
The total written beside them tells which: output is the candidates plus the thoughts only
when the total says they are apart. Cache writes are not reported (absent, not 0).
"""

from __future__ import annotations

from typing import Any

from traceidx.adapters.values import int_or_none
from traceidx.domain.rules import UsageSample, usage_sample


def usage_of(meta: Any) -> UsageSample | None:
    """One model call's usage; None when the record states no prompt or candidate count."""
    if not isinstance(meta, dict):
        return None
    prompt = int_or_none(meta.get("promptTokenCount"))
    candidates = int_or_none(meta.get("candidatesTokenCount"))
    thoughts = int_or_none(meta.get("thoughtsTokenCount"))
    total = int_or_none(meta.get("totalTokenCount"))
    output = candidates
    if (
        prompt is not None
        and candidates is not None
        and thoughts is not None
        and thoughts > 0
        and total == prompt + candidates + thoughts
    ):
        output = candidates + thoughts
    return usage_sample(
        input=prompt,
        output=output,
        cached=meta.get("cachedContentTokenCount"),
        reasoning=thoughts,
        input_includes_cache=True,
    )
