"""dsh token usage: samples from messages, usage chunks and embedded streams."""

from __future__ import annotations

from typing import Any

from traceidx.adapters.values import dict_or_empty, dicts_in, nonempty_str
from traceidx.domain.rules import UsageSample, usage_sample


def usage_of(usage: Any) -> UsageSample | None:
    if not isinstance(usage, dict):
        return None
    return usage_sample(
        input=usage.get("inputTokens"),
        output=usage.get("outputTokens"),
        cached=usage.get("cacheReadTokens"),
        cache_write=usage.get("cacheWriteTokens"),
        reasoning=usage.get("reasoningTokens"),
        input_includes_cache=False,
    )


def stream_facts(stream: Any) -> tuple[UsageSample | None, str | None]:
    """(usage, finish reason kind) of an embedded v2+ ``stream``."""
    sample: UsageSample | None = None
    finish: str | None = None
    for member in dicts_in(stream):
        chunk = dict_or_empty(member.get("chunk"))
        if chunk.get("type") == "usage":
            sample = usage_of(chunk.get("usage")) or sample
        elif chunk.get("type") == "finish":
            finish = nonempty_str(dict_or_empty(chunk.get("reason")).get("kind")) or finish
    return sample, finish
