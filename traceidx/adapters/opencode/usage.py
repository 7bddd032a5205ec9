"""OpenCode token usage: an assistant message's ``tokens`` in the contract's units."""

from __future__ import annotations

from typing import Any

from traceidx.adapters.values import dict_or_empty, int_or_none
from traceidx.domain.rules import UsageSample, usage_sample


def call_usage(tokens: Any, attempt: bool = False) -> UsageSample | None:
    """The usage of one model request from its message's ``tokens``; None when it states none,
    or only zeros for a request that is not a failed `attempt` (a step cut when the process
    died keeps zeros: its usage was never written).

    OpenCode stores every provider's usage in one shape: ``input`` without cache reads and
    writes (Anthropic reports it so; for an OpenAI-compatible provider OpenCode subtracts the
    cached tokens), ``output`` without ``reasoning`` (for an OpenAI-compatible provider it
    subtracts the reasoning tokens; Anthropic reports none apart), and ``cache.read`` /
    ``cache.write``. The contract's input includes both caches, its output the reasoning.
    """
    if not isinstance(tokens, dict):
        return None
    cache = dict_or_empty(tokens.get("cache"))
    inp, out = int_or_none(tokens.get("input")), int_or_none(tokens.get("output"))
    reasoning = int_or_none(tokens.get("reasoning"))
    read, write = int_or_none(cache.get("read")), int_or_none(cache.get("write"))
    if inp is None or out is None:
        return None
    if inp == out == 0 and not (reasoning or read or write) and not attempt:
        return None
    return usage_sample(
        input=inp,
        output=out + reasoning if reasoning is not None and reasoning >= 0 else out,
        cached=read,
        cache_write=write,
        reasoning=reasoning,
        input_includes_cache=False,
    )
