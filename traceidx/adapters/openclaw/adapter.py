"""The OpenClaw adapter: Pi's dispatch of each entry, read from a JSON-lines file or from the
rows of OpenClaw's database."""

from __future__ import annotations

from typing import Any

from traceidx.adapters.openclaw.tools import OpenClawTools
from traceidx.adapters.openclaw.wire import (
    EVENTS,
    MIRROR_API,
    WINDOWS,
    entry_of,
    is_transcript,
    is_window,
)
from traceidx.adapters.pi.adapter import PiAdapter
from traceidx.adapters.pi.state import STOPPED
from traceidx.adapters.values import int_or_none
from traceidx.domain.drafts import RecordFacts


class OpenClawAdapter(OpenClawTools, PiAdapter):
    """Projects one OpenClaw session: a transcript file (up to 2026.7) or a session of
    ``openclaw-agent.sqlite`` (from 2026.8); the format: ``docs/runtimes/openclaw.md``."""

    runtime = "openclaw"

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        """A database session's ``session_windows`` row, or a Pi-format transcript holding
        an entry only OpenClaw writes."""
        first = head[0] if head else None
        return is_window(first) or is_transcript(head)

    # -- framing callbacks -------------------------------------------------------------------

    def feed(self, position: int, obj: Any) -> RecordFacts:
        table = obj.get("table") if isinstance(obj, dict) and "row" in obj else None
        if table is None and not self.window:
            return super().feed(position, obj)  # a line of a transcript file
        row = obj.get("row") if isinstance(obj, dict) else None
        if not isinstance(row, dict):
            self.position = position
            self.count_unknown("<not a row>")
            return RecordFacts(None, None)
        if table == EVENTS:
            entry = entry_of(row)
            if entry is not None:
                return super().feed(position, entry)
            self.position = position
            self.count_unknown(f"{EVENTS} (no entry)")
            return RecordFacts(int_or_none(row.get("created_at")), EVENTS)
        self.position = position
        if table == WINDOWS and not self.window:
            self.window = True  # the session itself comes from its header event
        else:
            self.count_unknown(f"table/{table}")
        return RecordFacts(int_or_none(row.get("created_at")), str(table))

    # -- messages --------------------------------------------------------------------------------

    def _assistant(self, message: dict[str, Any]) -> None:
        """Pi's reading, but the mirror OpenClaw writes after an aborted run is no call and
        says nothing new: its text is the run's and its usage the run's calls' sum."""
        if message.get("api") == MIRROR_API:
            return
        super()._assistant(message)
        loop = self.loop
        if self.phase == STOPPED and loop is not None:
            # an OpenClaw run ends with a response that ends generation: input arriving during
            # a run joins it only at a tool boundary (steering), else it starts the next run
            loop.end, loop.outcome = self.position, "completed"
