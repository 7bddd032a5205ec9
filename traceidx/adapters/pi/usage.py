"""Pi token usage: an assistant message's ``usage`` in the contract's units.

``usage`` is one call's usage, never cumulative. ``input`` excludes the cache reads
(``cacheRead``) and writes (``cacheWrite``); the contract's input includes both. Reasoning
tokens are not reported apart. Pi writes usage on error and abort messages too (zeros when no
usage arrived): such a call is an attempt that ended without an answer, with the usage it
billed.
"""

from __future__ import annotations

from typing import Any

import msgspec

from traceidx.adapters.pi.wire import CALL_FAILURES
from traceidx.domain.rules import UsageSample, type_tag, usage_sample


def usage_of(message: dict[str, Any], reasoning: str | None = None) -> UsageSample | None:
    """The call of an assistant message, with its outcome when it failed; None when the
    message states no usage (or no input or output count). `reasoning`: the ``usage`` member
    counting the reasoning tokens within ``output``, in a format that states them apart
    (OpenClaw's ``reasoningTokens``)."""
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None
    sample = usage_sample(
        input=usage.get("input"),
        output=usage.get("output"),
        cached=usage.get("cacheRead"),
        cache_write=usage.get("cacheWrite"),
        reasoning=usage.get(reasoning) if reasoning is not None else None,
        input_includes_cache=False,
    )
    if sample is None:
        return None
    ended = type_tag(message.get("stopReason"))
    if ended in CALL_FAILURES:  # an attempt Pi wrote with the usage it billed
        sample = msgspec.structs.replace(sample, outcome=CALL_FAILURES[ended])
    return sample
