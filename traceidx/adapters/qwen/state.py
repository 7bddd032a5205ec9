"""Qwen Code adapter state: the session, Loops and their run phase, the final answer, draining.

Qwen Code writes no turn markers. The run phase of the current Loop follows its records (see
"Loops" in ``docs/runtimes/qwen.md``): a prompt makes the agent await a model response
(`MODEL`); a response with function calls makes it await their results (`TOOLS`), after which
it awaits the next response; a response without function calls ends generation (`STOPPED`);
a cancelled tool call or a failed request ends the Loop unless a response follows (`ENDED`).
"""

from __future__ import annotations

from typing import Any, Final

from traceidx.adapters.base import Adapter
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop, DraftSession

IDLE: Final = "idle"  # no run in progress
MODEL: Final = "model"  # a run awaits its next model response
TOOLS: Final = "tools"  # a run awaits the results of function calls
STOPPED: Final = "stopped"  # a response without function calls ended generation
ENDED: Final = "ended"  # interrupted or failed: over unless a response follows


class QwenState(Adapter):
    """What a chat file's adapter keeps between records."""

    def __init__(self) -> None:
        super().__init__()
        self.subagent = False
        self.loops: list[DraftLoop] = []  # the Loops not drained yet, in order
        self.loop: DraftLoop | None = None  # the most recently opened Loop
        self.phase = IDLE
        self.waiting: set[str] = set()  # function call ids of the run still without a result
        self.final: DraftItem | None = None  # the current Loop's final answer, if any
        self.call_loops: dict[str, DraftLoop] = {}  # call id -> its Loop, until its result
        self.timings: dict[str, tuple[int, int]] = {}  # call id -> (record, duration_ms)

    # -- framing callbacks -------------------------------------------------------------------

    def drain(self) -> tuple[list[DraftLoop], list[DraftItem]]:
        """Every Loop but the last, and the items before the current final answer while a later
        response may still demote it; nothing before the session is known."""
        if self.session is None:
            return [], []
        loops = self.loops[:-1]
        del self.loops[:-1]
        held = self.final if self._final_open() else None
        cut = 0
        for item in self.items:
            if item is held:
                break
            cut += 1
        items = self.items[:cut]
        del self.items[:cut]
        if held is None:
            self.final = None
        return loops, items

    def finish(self) -> Draft:
        return Draft(self.session, self.loops, self.items, self.unknown)

    def _final_open(self) -> bool:
        """Whether a later response may still demote the final answer."""
        final = self.final
        return final is not None and final.loop is self.loop and self.phase == STOPPED

    # -- session -------------------------------------------------------------------------------

    def _session_facts(self, obj: dict[str, Any]) -> None:
        session = self.session
        if session is None:
            native = obj.get("sessionId")
            if not isinstance(native, str) or not native:
                return
            agent = obj.get("agentId")
            if obj.get("isSidechain") is True and isinstance(agent, str) and agent:
                # a subagent's transcript: its records carry the parent's session id
                self.subagent = True
                session = DraftSession(agent, self.position)
                session.delegated_from = (native, self.position)
            else:
                session = DraftSession(native, self.position)
            self.session = session
        if session.created_at is None and self.time is not None:
            session.created_at = self.time
        cwd = obj.get("cwd")
        if session.working_directory is None and isinstance(cwd, str) and cwd:
            session.working_directory = cwd
        branch = obj.get("gitBranch")
        if session.branch is None and isinstance(branch, str) and branch:
            session.branch = branch

    # -- loops ---------------------------------------------------------------------------------

    def _open_loop(self) -> DraftLoop:
        """A new Loop at the current record; the previous one ends here if it had not ended."""
        previous = self.loop
        if previous is not None and previous.end is None:
            previous.end = self.position  # the next Loop's start bounds it; no outcome
        loop = DraftLoop(start=self.position)
        self.loops.append(loop)
        self.loop = loop
        self.phase = MODEL
        self.waiting = set()
        self.final = None
        return loop

    def _running(self) -> DraftLoop | None:
        """The Loop a runtime fact written now belongs to, if a run is in progress."""
        return self.loop if self.phase in (MODEL, TOOLS, ENDED) else None

    def _end(self, outcome: str) -> None:
        """The current Loop ends at this record with `outcome`, unless a response follows."""
        loop = self.loop
        if loop is not None:
            loop.end, loop.outcome = self.position, outcome
            self.phase = ENDED

    def _response_loop(self) -> DraftLoop:
        """The Loop a model response belongs to; the run goes on if it had ended or stopped."""
        loop = self.loop
        if loop is None or self.phase == IDLE:  # a run without a recorded prompt
            return self._open_loop()
        if self.phase == ENDED:  # the runtime retried or went on: the Loop had not ended
            loop.end, loop.outcome = None, None
        final = self.final
        if self.phase == STOPPED and final is not None and final.loop is loop:
            final.role, final.strength = "agent.commentary", "structural"
        self.final = None
        return loop
