"""OpenClaw adapter state: Pi's, with a database session's rows and OpenClaw's usage."""

from __future__ import annotations

from typing import Any

from traceidx.adapters.openclaw.usage import usage_of
from traceidx.adapters.pi.state import STOPPED, PiState
from traceidx.domain.drafts import DraftLoop
from traceidx.domain.rules import UsageSample


class OpenClawState(PiState):
    """What an OpenClaw session's adapter keeps between records (Pi's chain, Loops, phases)."""

    def __init__(self) -> None:
        super().__init__()
        #: the session's ``session_windows`` row was read (a database session)
        self.window = False

    def _usage(self, message: dict[str, Any]) -> UsageSample | None:
        return usage_of(message)

    def _assistant_loop(self) -> DraftLoop:
        """Pi's choice of the Loop; a run that goes on after a response that ended generation
        (which OpenClaw's reading took for the run's end) takes that end back."""
        loop = self.loop
        if loop is not None and self.phase == STOPPED and self.trigger is None:
            loop.end, loop.outcome = None, None
        return super()._assistant_loop()
