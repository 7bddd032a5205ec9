"""Copilot CLI token usage: one sample per ``session.usage_record``, and a compaction's.

Copilot's counts are already in the contract's shape: ``inputTokens`` includes
``cacheReadTokens`` (OpenAI style; for the Anthropic provider Copilot adds cache reads and
writes back to Anthropic's ``input_tokens``) and ``reasoningTokens`` is part of
``outputTokens``. A member the record leaves out or writes as ``null`` (``reasoningTokens`` of
every Anthropic call, ``inputTokens`` of a cut stream) is unknown, never 0; a call whose input
is unknown is a failed attempt without usage (`unanswered`).
"""

from __future__ import annotations

from typing import Any

from traceidx.adapters.values import int_or_none, nonempty_str
from traceidx.domain.rules import UsageSample, usage_sample


def usage_of(usage: Any) -> UsageSample | None:
    """The sample of a usage record's ``usage`` (or a compaction's ``compactionTokensUsed``)."""
    if not isinstance(usage, dict):
        return None
    return usage_sample(
        input=usage.get("inputTokens"),
        output=usage.get("outputTokens"),
        cached=usage.get("cacheReadTokens"),
        cache_write=usage.get("cacheWriteTokens"),
        reasoning=usage.get("reasoningTokens"),
        input_includes_cache=True,
    )


def unanswered(usage: Any) -> UsageSample | None:
    """The call of a usage record that states no input count: a stream cut before the
    provider's usage arrived (Copilot writes ``outputTokens: 0`` and an ``inputTokens`` that is
    ``null``, or left out where the count was never set). It ran but its usage is unknown: a
    failed attempt (``error``) that states no billed tokens, so it is published without usage,
    never as 0."""
    if isinstance(usage, dict) and usage.get("inputTokens") is None:
        return UsageSample(input=0, output=0, outcome="error")
    return None


def call_facts(usage: Any) -> tuple[str | None, str | None, str | None, int | None]:
    """(model, provider, reasoning effort, prompt-token limit) a usage record states."""
    if not isinstance(usage, dict):
        return None, None, None, None
    return (
        nonempty_str(usage.get("model")),
        nonempty_str(usage.get("providerType")),
        nonempty_str(usage.get("reasoningEffort")),
        int_or_none(usage.get("maxPromptTokens")),
    )
