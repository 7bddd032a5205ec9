"""Claude Code token usage: an assistant line's ``message.usage`` in the contract's units.

Claude's ``input_tokens`` excludes the cache reads (``cache_read_input_tokens``) and writes
(``cache_creation_input_tokens``); the contract's input includes both.
``output_tokens_details.thinking_tokens`` is the reasoning, part of ``output_tokens``. Every
content block of a response is its own line repeating the response's usage as it streams: the
line with the largest ``output_tokens`` counts (see "Usage" in ``docs/runtimes/claude_code.md``).
"""

from __future__ import annotations

from typing import Any

from traceidx.domain.rules import UsageSample, usage_sample


def output_tokens(usage: Any) -> int | None:
    """A line's ``output_tokens``, the count that tells which line of a response counts."""
    if not isinstance(usage, dict):
        return None
    output = usage.get("output_tokens")
    return output if isinstance(output, int) and not isinstance(output, bool) else None


def usage_of(usage: Any) -> UsageSample | None:
    """One response's usage as a line states it; None without an input or output count."""
    if not isinstance(usage, dict):
        return None
    details = usage.get("output_tokens_details")
    thinking = details.get("thinking_tokens") if isinstance(details, dict) else None
    return usage_sample(
        input=usage.get("input_tokens"),
        output=usage.get("output_tokens"),
        cached=usage.get("cache_read_input_tokens"),
        cache_write=usage.get("cache_creation_input_tokens"),
        reasoning=thinking,
        input_includes_cache=False,
    )
