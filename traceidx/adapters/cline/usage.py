"""Cline token usage: an assistant message's ``metrics`` in the contract's units.

Cline CLI stores one ``metrics`` object per model response: ``inputTokens`` (the prompt, cache
reads INCLUDED, and for Anthropic's API cache writes too: Cline adds them to the wire's
``input_tokens``), ``outputTokens`` (reasoning included), ``cacheReadTokens``,
``cacheWriteTokens`` and, where Cline knows the model's price, ``cost``. In the contract's
units: input = ``inputTokens`` as stored (adding the cache counts it twice), cached =
``cacheReadTokens``, cache_write = ``cacheWriteTokens``, output = ``outputTokens``; reasoning
is never recorded (absent, never 0). ``cost`` is not usage: prices come from the pricing table.
"""

from __future__ import annotations

from typing import Any

from traceidx.domain.rules import UsageSample, usage_sample


def usage_of(metrics: Any) -> UsageSample | None:
    """One response's usage; None when ``metrics`` states no input or output count."""
    if not isinstance(metrics, dict):
        return None
    return usage_sample(
        input=metrics.get("inputTokens"),
        output=metrics.get("outputTokens"),
        cached=metrics.get("cacheReadTokens"),
        cache_write=metrics.get("cacheWriteTokens"),
        input_includes_cache=True,
    )
