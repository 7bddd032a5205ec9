"""Rules every adapter shares, decided once (see docs/rules.md).

* Human or not: a channel named "user" proves nothing. An input is ``human.*`` only when the
  runtime's own structure says a person typed it (interactive prompt markers); inputs a program
  may have written (SDK / print-mode prompts) are ``human.*`` with ``heuristic`` strength;
  anything the runtime injected is ``runtime.*``; if authorship is unsettled the Record stays
  and no Item is made. A delegation is the parent's item (its delegating call); the task a
  subagent receives opens its Loop and stays a Record.
* What opens a Loop: an outer agent execution: a prompt the agent works on, a runtime
  notification that starts agent work, a subagent's run. Commands the runtime handles itself
  (slash commands, a user's own ``!cmd``) open no Loop; their facts are runtime Items.
* Exit codes: only from a structured field or from the fixed line a runtime itself writes at a
  fixed place of a tool result (`exit_code_from_header`). Never an implied 0.
* Failed: from the runtime's own flag or a non-zero exit code obtained as above; never words.
* Durations: ``duration_ms`` only as the runtime reports it; views add ``elapsed_ms`` from
  timestamps under that separate name.
* Usage: per model call, normalised so that ``input`` includes cache reads and writes,
  ``cached``/``cache_write`` are subsets of input and ``reasoning`` of output. A Loop's optional
  member is present only if every counted call of the Loop reported it. Messages a runtime
  synthesises itself are not model calls.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from traceidx.domain.model import CallOutcome, Usage


def type_tag(value: object) -> str | None:
    """A record's type tag (its ``type``, ``role``…) as read: the string, None when absent,
    else a marker naming the JSON type it holds (``<list>``), so that an odd value reads as an
    unknown type instead of failing a lookup."""
    if value is None or isinstance(value, str):
        return value
    return f"<{type(value).__name__}>"


class UsageSample(msgspec.Struct, frozen=True, gc=False):
    """One model call: its usage, already normalised to the contract, and (once `located`)
    the record positions that state it, its time, and the model and provider it names."""

    input: int
    output: int
    cached: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None
    records: tuple[int, ...] = ()
    occurred_at: int | None = None
    model: str | None = None
    provider: str | None = None
    outcome: CallOutcome = "ok"

    def located(
        self,
        records: tuple[int, ...],
        occurred_at: int | None,
        model: str | None = None,
        provider: str | None = None,
    ) -> UsageSample:
        """The same call with where and when it is stated, and the model and provider."""
        return msgspec.structs.replace(
            self, records=records, occurred_at=occurred_at, model=model, provider=provider
        )


#: the integers a published column holds (Arrow int64): a larger value in a trace is not
#: believable evidence and reads as absent (the raw record keeps it)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def in_int64(value: int) -> bool:
    """Whether `value` fits a published integer column."""
    return INT64_MIN <= value <= INT64_MAX


def _count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= INT64_MAX:
        return None
    return value


def usage_sample(
    *,
    input: object,
    output: object,
    cached: object = None,
    cache_write: object = None,
    reasoning: object = None,
    input_includes_cache: bool,
) -> UsageSample | None:
    """Normalise one call's native counts; None when input or output is not reported.

    When the runtime's input excludes cache reads/writes they are added to it. Subsets that
    exceed their parent are dropped (absent), never clamped.
    """
    inp, out = _count(input), _count(output)
    if inp is None or out is None:
        return None
    cr, cw, rs = _count(cached), _count(cache_write), _count(reasoning)
    if not input_includes_cache:
        inp += (cr or 0) + (cw or 0)
    return UsageSample(
        input=inp,
        output=out,
        cached=cr if cr is not None and cr <= inp else None,
        cache_write=cw if cw is not None and cw <= inp else None,
        reasoning=rs if rs is not None and rs <= out else None,
    )


def billed(sample: UsageSample) -> bool:
    """Whether a call billed tokens: it was answered, or it is a failed or aborted attempt that
    still states usage (a stream cut after the provider counted it). A failed attempt stating
    only zeros (Pi's message for an HTTP 500) billed nothing: its usage is absent, not 0."""
    if sample.outcome == "ok":
        return True
    return bool(sample.input or sample.output or sample.cached or sample.cache_write)


def sum_usage(samples: list[UsageSample]) -> Usage | None:
    """A Loop's usage: the sums over its billed calls (`billed`); an optional member
    survives only if every such call has it. A Loop whose calls billed nothing has none."""
    samples = [s for s in samples if billed(s)]
    if not samples:
        return None

    def total(name: str) -> int | None:
        values = [getattr(s, name) for s in samples]
        return None if any(v is None for v in values) else sum(values)

    return Usage(
        input=sum(s.input for s in samples),
        output=sum(s.output for s in samples),
        cached=total("cached"),
        cache_write=total("cache_write"),
        reasoning=total("reasoning"),
    )


def exit_code_from_header(text: str, pattern: re.Pattern[str]) -> int | None:
    """An exit code from the fixed line a runtime writes, anchored where it writes it.

    `pattern` must be anchored (``^`` at the start of the text, or a full fixed line) and
    have one group capturing a possibly signed integer.
    """
    match = pattern.match(text)
    return int(match.group(1)) if match else None


def message_text(content: Any) -> tuple[str, bool]:
    """(non-empty ``text`` blocks joined by newlines, has ``image`` blocks) of a message's
    content in the Anthropic shape Claude Code and Pi both write (or a plain string)."""
    if isinstance(content, str):
        return content, False
    texts: list[str] = []
    images = False
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str) and block["text"]:
                texts.append(block["text"])
            elif kind == "image":
                images = True
    return "\n".join(texts), images
