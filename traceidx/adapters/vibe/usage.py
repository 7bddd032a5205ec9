"""Mistral Vibe token usage in the contract's units.

A 3.x completion's usage (``action_result`` → ``result.result.usage``) has ``input_tokens``,
which already includes cache reads and writes, ``cached_input_tokens``, ``cache_write_tokens``,
``output_tokens`` (reasoning included) and ``reasoning_tokens``: the contract's units as
stored. The same object is echoed in the next ``core_input``; only the ``action_result`` is
counted. The session's ``tokenUsage`` (``inputTokens`` with cache, ``cachedInputTokens``,
``outputTokens``) and the 1.x/2.x ``stats`` (``session_prompt_tokens`` with cache,
``session_cached_tokens``, ``session_completion_tokens``) are session totals: published as
the session's usage, never spread over calls.
"""

from __future__ import annotations

from typing import Any

from traceidx.adapters.values import dict_or_empty
from traceidx.domain.rules import UsageSample, usage_sample


def completion_usage(result: Any) -> UsageSample | None:
    """A succeeded completion's usage (None when it states none)."""
    usage = dict_or_empty(dict_or_empty(result).get("usage"))
    if not usage:
        return None
    return usage_sample(
        input=usage.get("input_tokens"),
        output=usage.get("output_tokens"),
        cached=usage.get("cached_input_tokens"),
        cache_write=usage.get("cache_write_tokens"),
        reasoning=usage.get("reasoning_tokens"),
        input_includes_cache=True,
    )


def session_total(token_usage: Any) -> UsageSample | None:
    """A 3.x session's cumulative ``tokenUsage``."""
    usage = dict_or_empty(token_usage)
    if not usage:
        return None
    return usage_sample(
        input=usage.get("inputTokens"),
        output=usage.get("outputTokens"),
        cached=usage.get("cachedInputTokens"),
        input_includes_cache=True,
    )


def legacy_total(stats: Any) -> UsageSample | None:
    """A 1.x/2.x session's totals (``meta.json`` ``stats``)."""
    usage = dict_or_empty(stats)
    if not usage:
        return None
    return usage_sample(
        input=usage.get("session_prompt_tokens"),
        output=usage.get("session_completion_tokens"),
        cached=usage.get("session_cached_tokens"),
        input_includes_cache=True,
    )
