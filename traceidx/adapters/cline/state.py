"""Cline adapter state: the session, its Loops and their run phase, the final answer.

Cline writes no turn markers. A prompt (or, in a sub-agent's or teammate's session, a task)
opens a Loop; the next one bounds it. A response without tool calls ends generation and its
last text is the final answer unless another response follows in the same Loop. The error
message Cline stores when a turn fails ends the Loop ``failed``; a command aborted by an
interrupt ends it ``interrupted``; either is undone if a response follows.
"""

from __future__ import annotations

from typing import Any

from traceidx.adapters.base import Adapter
from traceidx.adapters.cline.wire import LEAD, parent_of, working_directory
from traceidx.adapters.values import nonempty_str
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop, DraftSession


class ClineState(Adapter):
    """What a session document's adapter keeps between records."""

    def __init__(self) -> None:
        super().__init__()
        self.lead = True  # the session of the agent the user talks to
        self.loops: list[DraftLoop] = []
        self.loop: DraftLoop | None = None  # the most recently opened Loop
        self.final: DraftItem | None = None  # the current Loop's final answer, if any
        self.call_loops: dict[str, DraftLoop] = {}  # tool call id -> its Loop
        self.legacy = False  # a VS Code extension task file (`legacy`)
        self.pending_command: tuple[str, DraftItem] | None = None  # its last command, unanswered
        self.command_output: DraftItem | None = None  # the output of its last command

    def finish(self) -> Draft:
        return Draft(self.session, self.loops, self.items, self.unknown)

    # -- session -------------------------------------------------------------------------------

    def _head(self, head: dict[str, Any]) -> None:
        """The document's head: the session's id, its parent, its working directory."""
        native = nonempty_str(head.get("sessionId"))
        if native is None or self.session is not None:
            return
        session = DraftSession(native, self.position)
        self.lead = head.get("agent") == LEAD
        parent = parent_of(head)
        if parent is not None and parent != native:
            session.delegated_from = (parent, self.position)
        session.working_directory = working_directory(head.get("system_prompt"))
        self.session = session

    def _note_time(self) -> None:
        session = self.session
        if session is not None and session.created_at is None and self.time is not None:
            session.created_at = self.time

    # -- loops ---------------------------------------------------------------------------------

    def _open_loop(self) -> DraftLoop:
        """A new Loop at the current record; the previous one ends here if it had not ended."""
        previous = self.loop
        if previous is not None and previous.end is None:
            previous.end = self.position
        loop = DraftLoop(start=self.position)
        self.loops.append(loop)
        self.loop = loop
        self.final = None
        return loop

    def _current(self) -> DraftLoop:
        """The Loop a message belongs to (one opened here when none is)."""
        return self.loop if self.loop is not None else self._open_loop()

    def _end(self, outcome: str) -> None:
        """The current Loop ends at this record with `outcome`, unless a response follows."""
        loop = self.loop
        if loop is not None:
            loop.end, loop.outcome = self.position, outcome

    def _response_loop(self) -> DraftLoop:
        """The Loop a model response belongs to: the run went on, so an end written before it
        is undone and an earlier final answer is commentary."""
        loop = self._current()
        if loop.end is not None and loop.outcome is not None:
            loop.end, loop.outcome = None, None
        final = self.final
        if final is not None and final.loop is loop:
            final.role, final.strength = "agent.commentary", "structural"
        self.final = None
        return loop
