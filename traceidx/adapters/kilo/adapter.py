"""The Kilo Code adapter: OpenCode's, for the rows of Kilo's own (marked) database."""

from __future__ import annotations

from typing import Any

from traceidx.adapters.kilo.tools import KiloTools
from traceidx.adapters.kilo.wire import DATABASE_MARK, transient
from traceidx.adapters.opencode.adapter import OpenCodeAdapter
from traceidx.adapters.opencode.state import Message


class KiloAdapter(KiloTools, OpenCodeAdapter):
    """Projects one session of a Kilo Code database (the format: ``docs/runtimes/kilo.md``)."""

    runtime = "kilo"

    database_mark = DATABASE_MARK

    def _user_part(self, message: Message, kind: str | None, data: dict[str, Any]) -> None:
        if not transient(data):
            super()._user_part(message, kind, data)

    def _assistant_part(self, message: Message, kind: str | None, data: dict[str, Any]) -> None:
        """A part of an assistant message, except Kilo's transient progress text (the spinner
        a run killed during start-up leaves as its only part): a Record, no item."""
        if not transient(data):
            super()._assistant_part(message, kind, data)
