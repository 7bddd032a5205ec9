"""Pi adapter state: the session, the chain being written and its branches, Loops and their run
phase, the items a later entry may still change, draining.

Pi writes no turn markers. The run phase of the chain being written follows its entries (see
"Entries and the tree" in ``docs/runtimes/pi.md``): a prompt makes the agent await a model
response (`MODEL`); a response with tool calls makes it await their results (`TOOLS`), after
which it awaits the next response; a response that ends generation stops the run unless queued
input follows (`STOPPED`); an error stops it unless Pi retries the request (`RETRY`).
"""

from __future__ import annotations

from typing import Any, Final

from traceidx.adapters.base import Adapter
from traceidx.adapters.pi.wire import parent_native_id
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop, DraftSession

# Run phases of the current chain.
IDLE: Final = "idle"  # no run in progress
STOPPED: Final = (
    "stopped"  # generation ended (stop/length); the run ends unless queued input follows
)
MODEL: Final = "model"  # a run awaits its next model response
TOOLS: Final = "tools"  # a run awaits the results of tool calls
RETRY: Final = "retry"  # a run stopped on an error; Pi may retry it


class PiState(Adapter):
    """What a session file's adapter keeps between entries."""

    def __init__(self) -> None:
        super().__init__()
        self.loops: list[DraftLoop] = []
        # state of the chain being written (see "Entries and the tree" in docs/runtimes/pi.md)
        self.last_key: str | None = None
        self.entries = 0
        self.loop: DraftLoop | None = None  # the most recently opened Loop
        self.phase = IDLE
        self.waiting: set[str] = set()  # tool call ids still without a result
        self.trigger: DraftItem | None = None  # extension message written while idle
        self.final: DraftItem | None = None  # the final answer of the current Loop, if any
        self.limbo: list[DraftItem] = []  # items written while a retry may follow
        self.effort: str | None = None
        self.call_loops: dict[str, DraftLoop] = {}

    # -- framing callbacks -------------------------------------------------------------------

    def drain(self) -> tuple[list[DraftLoop], list[DraftItem]]:
        """Every Loop but the last, and the items before the first one still open to change.

        Later records change only the most recent Loop (its end, model, usage and outcome) and
        three kinds of item: the current Loop's final answer (demoted when the run goes on), an
        extension message written while idle (it joins the Loop of a run it triggers) and,
        after an ``error``, the items written while a retry may follow (they join the retried
        Loop). A branch changes nothing written before it. The cost is the number of drafts
        returned: the scan stops at the first held item.
        """
        if self.session is None:  # nothing is drafted before the header
            return [], []
        loops = self.loops[:-1]
        del self.loops[:-1]
        held = {id(item) for item in self._held()}
        cut = 0
        for item in self.items:
            if id(item) in held:
                break
            cut += 1
        items = self.items[:cut]
        del self.items[:cut]
        # drop references no later record can use to change anything: demoting an answer no
        # longer the current Loop's final answer, or re-homing limbo outside a retry, is a no-op
        if not self._final_open():
            self.final = None
        if self.phase != RETRY:
            self.limbo = []
        return loops, items

    def _final_open(self) -> bool:
        """Whether a later assistant message may still demote the final answer."""
        final = self.final
        return final is not None and final.loop is self.loop and final.role == "agent.final_answer"

    def _held(self) -> list[DraftItem]:
        """The drafted items a later record may still change."""
        held: list[DraftItem] = []
        if self.trigger is not None:
            held.append(self.trigger)
        if self.phase == RETRY:
            held += self.limbo[:1]
        if self.final is not None and self._final_open():
            held.append(self.final)
        return held

    def finish(self) -> Draft:
        return Draft(self.session, self.loops, self.items, self.unknown)

    # -- session -------------------------------------------------------------------------------

    def _header(self, obj: dict[str, Any]) -> None:
        session = DraftSession(obj["id"], self.position)
        session.created_at = self.time
        cwd = obj.get("cwd")
        session.working_directory = cwd if isinstance(cwd, str) and cwd else None
        parent = parent_native_id(obj.get("parentSession") or obj.get("branchedFrom"))
        if parent is not None and parent != session.native_id:
            session.forked_from = (parent, self.position)
        level = obj.get("thinkingLevel")
        self.effort = level if isinstance(level, str) and level else None
        self.session = session

    # -- the chain -----------------------------------------------------------------------------

    def _branch(self) -> None:
        """The leaf moved: Pi was idle, so nothing written next continues a running Loop."""
        self.phase = IDLE
        self.waiting = set()
        self.trigger = None
        self.limbo = []

    # -- loops ---------------------------------------------------------------------------------

    def _open_loop(self, start: int) -> DraftLoop | None:
        """A new Loop at `start`; None when a Loop already starts there (joined line)."""
        previous = self.loop
        if previous is not None and previous.start == start:
            return None
        if previous is not None and previous.end is None:
            previous.end = start  # the next Loop's start bounds it; no outcome
        loop = DraftLoop(start=start, effort=self.effort)
        self.loops.append(loop)
        self.loop = loop
        self.limbo = []
        return loop

    def _running(self, during_tools: bool = True) -> DraftLoop | None:
        """The Loop a runtime fact written now belongs to, if a run is in progress."""
        phases = (MODEL, TOOLS) if during_tools else (MODEL,)
        return self.loop if self.phase in phases else None

    def _runtime_item(
        self,
        role: str,
        value: dict[str, Any],
        during_tools: bool = True,
        session_ref: str | None = None,
    ) -> DraftItem:
        loop = self._running(during_tools)
        item = self.emit(role, "structural", value, loop, session_ref=session_ref)
        if self.phase == RETRY:
            self.limbo.append(item)
        return item

    def _assistant_loop(self) -> DraftLoop:
        """The Loop an assistant message belongs to, opening one for a run without a prompt."""
        loop = self.loop
        if loop is not None and self.phase in (MODEL, TOOLS):
            return loop
        if loop is not None and self.phase == STOPPED and self.trigger is None:
            final = self.final  # the run went on: the earlier answer was intermediate
            if final is not None and final.loop is loop:
                final.role, final.strength = "agent.commentary", "structural"
            return loop
        if loop is not None and self.phase == RETRY:  # Pi retried the failed request
            loop.end, loop.outcome = None, None
            for item in self.limbo:
                item.loop = loop
            self.limbo = []
            return loop
        trigger = self.trigger
        start = min(trigger.records) if trigger is not None else self.position
        opened = self._open_loop(start)
        if opened is None:
            assert loop is not None
            return loop
        if trigger is not None:
            trigger.loop = opened
        return opened
