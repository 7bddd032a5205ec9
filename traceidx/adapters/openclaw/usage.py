"""OpenClaw token usage: Pi's ``usage`` (``input`` excludes the cache reads and writes) with the
reasoning tokens stated apart (``reasoningTokens``, within ``output``; absent on the Anthropic
messages wire, where the call's reasoning is then unknown)."""

from __future__ import annotations

from typing import Any

from traceidx.adapters.openclaw.wire import REASONING
from traceidx.adapters.pi.usage import usage_of as pi_usage_of
from traceidx.domain.rules import UsageSample


def usage_of(message: dict[str, Any]) -> UsageSample | None:
    """The call of an assistant message (Pi's reading, with reasoning tokens)."""
    return pi_usage_of(message, REASONING)
