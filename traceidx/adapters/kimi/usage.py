"""Kimi token usage: ``usage.record`` (Kimi Code) and ``StatusUpdate.token_usage`` (legacy).

Both dialects state one response's usage in four members that split the prompt: Kimi Code
``{inputOther, output, inputCacheRead, inputCacheCreation}``, legacy ``kimi-cli``
``{input_other, output, input_cache_read, input_cache_creation}``. ``inputOther`` EXCLUDES the
cache (Chat Completions ``prompt_tokens - cached_tokens``; Anthropic ``input_tokens``), so in
the contract's units input = inputOther + inputCacheRead + inputCacheCreation, cached =
inputCacheRead, cache_write = inputCacheCreation, output = output (reasoning included where the
provider counts it there). Reasoning tokens are never recorded: absent, never 0.
"""

from __future__ import annotations

from typing import Any

from traceidx.domain.model import CallOutcome
from traceidx.domain.rules import UsageSample, usage_sample


def usage_of(usage: Any) -> UsageSample | None:
    """The sample of a Kimi Code ``usage`` object, or None when it states no input or output."""
    if not isinstance(usage, dict):
        return None
    return usage_sample(
        input=usage.get("inputOther"),
        output=usage.get("output"),
        cached=usage.get("inputCacheRead"),
        cache_write=usage.get("inputCacheCreation"),
        input_includes_cache=False,
    )


def legacy_usage_of(usage: Any) -> UsageSample | None:
    """The sample of a legacy ``token_usage`` object, or None when it states no counts."""
    if not isinstance(usage, dict):
        return None
    return usage_sample(
        input=usage.get("input_other"),
        output=usage.get("output"),
        cached=usage.get("input_cache_read"),
        cache_write=usage.get("input_cache_creation"),
        input_includes_cache=False,
    )


def failed_attempt(outcome: CallOutcome = "error") -> UsageSample:
    """A request that got no usage record (the provider answered with an error, or the user cut
    it): it ran, and what it billed is not known; published without usage, never as 0."""
    return UsageSample(input=0, output=0, outcome=outcome)
