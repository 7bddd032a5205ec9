"""Gemini CLI token usage: a ``gemini`` message's ``tokens`` to the contract's units.

The CLI keeps one ``tokens`` object per model response, the API's final ``usageMetadata``:
``input`` = promptTokenCount (cached content included), ``cached`` = cachedContentTokenCount,
``output`` = candidatesTokenCount (thoughts excluded), ``thoughts`` = thoughtsTokenCount,
``tool`` = toolUsePromptTokenCount, ``total`` = the sum of input, output, thoughts and tool.
In the contract's units: input = ``input`` + ``tool`` (tool-use prompt tokens are prompt-side
input the API bills), cached = ``cached``, output = ``output`` + ``thoughts``, reasoning =
``thoughts``; cache writes are not reported (absent, never 0). ``thoughts`` and ``tool`` are
optional in the CLI's type: when one is absent its share is not known (``reasoning`` absent;
``input`` as reported).
"""

from __future__ import annotations

from typing import Any

from traceidx.adapters.values import int_or_none
from traceidx.domain.rules import UsageSample, usage_sample


def usage_of(tokens: Any) -> UsageSample | None:
    """One response's usage, or None when ``tokens`` states no input or output count."""
    if not isinstance(tokens, dict):
        return None
    inp, out = int_or_none(tokens.get("input")), int_or_none(tokens.get("output"))
    if inp is None or out is None or inp < 0 or out < 0:
        return None
    tool = int_or_none(tokens.get("tool"))
    thoughts = int_or_none(tokens.get("thoughts"))
    if tool is not None and tool >= 0:
        inp += tool
    if thoughts is not None and thoughts >= 0:
        out += thoughts
    else:
        thoughts = None
    return usage_sample(
        input=inp,
        output=out,
        cached=tokens.get("cached"),
        reasoning=thoughts,
        input_includes_cache=True,
    )
