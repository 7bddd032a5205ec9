"""Codex token usage: per-call samples from usage records and cumulative token counts."""

from __future__ import annotations

from typing import Any, Final

from traceidx.adapters.values import int_or_none
from traceidx.domain.rules import UsageSample, usage_sample

USAGE_KEYS: Final = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
)


def total_key(total: object) -> tuple[int, ...] | None:
    if not isinstance(total, dict):
        return None
    values = tuple(int_or_none(total.get(k)) or 0 for k in USAGE_KEYS)
    return values if int_or_none(total.get("input_tokens")) is not None else None


def usage_of(usage: object) -> UsageSample | None:
    if not isinstance(usage, dict):
        return None
    return usage_sample(
        input=usage.get("input_tokens"),
        output=usage.get("output_tokens"),
        cached=usage.get("cached_input_tokens"),
        cache_write=usage.get("cache_write_input_tokens"),
        reasoning=usage.get("reasoning_output_tokens"),
        input_includes_cache=True,
    )


def usage_growth(total: dict[str, Any], previous: tuple[int, ...] | None) -> UsageSample | None:
    """One call's usage as the growth of the cumulative totals (when no per-call usage)."""
    before = dict(zip(USAGE_KEYS, previous or (0,) * len(USAGE_KEYS), strict=True))
    delta: dict[str, object] = {}
    for key in USAGE_KEYS:
        value = int_or_none(total.get(key))
        delta[key] = None if value is None else value - before[key]
    return usage_of(delta)
