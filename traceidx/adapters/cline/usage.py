"""Cline token usage: an assistant message's ``metrics`` in the contract's units.

Cline CLI stores one ``metrics`` object per model response: ``inputTokens`` (the prompt, cache
reads INCLUDED, and for Anthropic's API cache writes too: Cline adds them to the wire's
``input_tokens``), ``outputTokens`` (reasoning included), ``cacheReadTokens``,
``cacheWriteTokens`` and, where Cline knows the model's price, ``cost``. In the contract's
units: input = ``inputTokens`` as stored (adding the cache counts it twice), cached =
``cacheReadTokens``, cache_write = ``cacheWriteTokens``, output = ``outputTokens``; reasoning
is never recorded (absent, never 0). ``cost`` is not usage: prices come from the pricing table.

The VS Code extension's task files (and Roo Code's, Kilo Code's) state a request's usage in
the JSON text of its ``api_req_started`` message: ``tokensIn``, ``tokensOut``, ``cacheReads``,
``cacheWrites``, ``cost`` and, in Roo Code and Kilo Code, ``apiProtocol``. ``tokensIn``
excludes the cache for Anthropic's protocol (the extensions' own totals add ``cacheReads`` and
``cacheWrites`` to it) and includes it for the OpenAI protocol (their totals do not add them);
Cline's extension names no protocol, and its tokens are read as Anthropic's.
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


def task_usage_of(info: Any) -> UsageSample | None:
    """One ``api_req_started`` message's usage (its text, decoded); None before the extension
    wrote the counts (a request still running, or one that failed before any)."""
    if not isinstance(info, dict):
        return None
    return usage_sample(
        input=info.get("tokensIn"),
        output=info.get("tokensOut"),
        cached=info.get("cacheReads"),
        cache_write=info.get("cacheWrites"),
        input_includes_cache=info.get("apiProtocol") == "openai",
    )
