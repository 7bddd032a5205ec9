"""Copilot CLI adapter state: the session, the Loops of each agent lane, final answers, draining.

A session log interleaves the main agent's records with those of the subagents it runs inline
(records with a top-level ``agentId``). Each agent is a *lane*: ``""`` for the main agent, the
``agentId`` for a subagent. A lane has at most one running Loop; a record joins the running
Loop of its own lane, so a subagent's work never counts towards its parent's Loop.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from traceidx.adapters.base import Adapter
from traceidx.adapters.values import dict_or_empty, nonempty_str
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop, DraftSession, unheld_prefix
from traceidx.domain.rules import UsageSample
from traceidx.domain.timestamps import rfc3339_ms


class Turn:
    """A Loop not drained yet, with what may still change about it."""

    __slots__ = ("candidate", "interactions", "lane", "loop", "messages", "open", "settled")

    def __init__(self, loop: DraftLoop, lane: str) -> None:
        self.loop = loop
        self.lane = lane  # "" for the main agent, else the subagent's agentId
        self.open = True  # no end seen yet: the run may still receive work
        self.settled = False  # end, usage and final answer fixed: the Loop may be drained
        self.messages: list[str] = []  # messageIds of its inputs (the prompt, steering)
        #: the runtime's interaction ids of the run (its input's, and a steering input's)
        self.interactions: list[str] = []
        #: the text of the latest response when that response has no phase and no tool
        #: requests: the final answer if nothing follows it before the Loop ends
        self.candidate: DraftItem | None = None


class Queued:
    """A prompt the user queued while a run was going on: it opens its own Loop when its run
    starts (a record names its interaction), at the position it was written."""

    __slots__ = ("interaction", "message", "position", "time", "value")

    def __init__(
        self,
        position: int,
        time: int | None,
        value: dict[str, Any],
        interaction: str,
        message: str | None,
    ) -> None:
        self.position = position
        self.time = time
        self.value = value  # the human.request value (None: no text or image to publish)
        self.interaction = interaction
        self.message = message


class CopilotState(Adapter):
    """What a session log's adapter keeps between records."""

    def __init__(self) -> None:
        super().__init__()
        self.lane = ""  # the agent of the record being fed
        self.turns: deque[Turn] = deque()  # the Loops not drained yet, in order
        self.lanes: dict[str, Turn] = {}  # each agent's Turn while it is not settled
        self.calls: dict[str, str] = {}  # toolCallId -> tool name, of every call drafted
        self.loose: list[UsageSample] = []  # model calls outside any Loop (a /compact)
        self.held: list[DraftItem] = []  # final-answer candidates (compared by identity)
        self.queued: list[Queued] = []  # prompts queued while the main agent's run went on
        self.modes: dict[str, str] = {}  # task call id -> the subagent's execution mode

    # -- framing callbacks -------------------------------------------------------------------

    def drain(self) -> tuple[list[DraftLoop], list[DraftItem]]:
        """The settled Loops at the head, and the items before the first held one.

        A Loop settles when its end is seen (its usage and final answer are then fixed: no
        later record joins an ended Loop). The only item that may still change is a Loop's
        final-answer candidate (see `Turn.candidate`), held until its Loop settles.
        """
        if self.session is None:
            return [], []
        loops: list[DraftLoop] = []
        turns = self.turns
        while turns and turns[0].settled:
            loops.append(turns.popleft().loop)
        return loops, unheld_prefix(self.items, self.held)

    def finish(self) -> Draft:
        for turn in list(self.turns):
            if not turn.settled:
                self._settle(turn)  # no end seen: no final answer is chosen by position
        loops = [turn.loop for turn in self.turns]
        return Draft(self.session, loops, self.items, self.unknown, self.loose)

    # -- session -------------------------------------------------------------------------------

    def _session_start(self, data: dict[str, Any]) -> None:
        native = nonempty_str(data.get("sessionId"))
        if self.session is not None:
            self.count_unknown("session.start (a second one)")
            return
        if native is None:
            return
        session = DraftSession(native, self.position)
        session.created_at = rfc3339_ms(data.get("startTime")) or self.time
        self.session = session
        self._context(data)

    def _context(self, data: dict[str, Any]) -> None:
        """Working directory and git facts a ``session.start``/``session.resume`` states (the
        first stated value of each stays)."""
        session = self.session
        if session is None:
            return
        context = dict_or_empty(data.get("context"))
        session.working_directory = session.working_directory or nonempty_str(context.get("cwd"))
        session.git_root = session.git_root or nonempty_str(context.get("gitRoot"))
        session.branch = session.branch or nonempty_str(context.get("branch"))

    # -- loops ---------------------------------------------------------------------------------

    def _running(self) -> Turn | None:
        """The running Turn of the current record's lane."""
        turn = self.lanes.get(self.lane)
        return turn if turn is not None and turn.open else None

    def _current(self) -> DraftLoop | None:
        """The Loop a fact of the current record falls in: its lane's running one, else none
        (session level)."""
        turn = self._running()
        return turn.loop if turn is not None else None

    def _open(self, interaction: str | None) -> Turn:
        """A new Loop of the current lane starting at this record (the lane's running Loop,
        if any, is bounded here without an outcome); its native id is the interaction's."""
        previous = self._running()
        if previous is not None:
            self._close(previous, None)
        turn = Turn(DraftLoop(start=self.position), self.lane)
        self._join(turn, interaction)
        self.turns.append(turn)
        self.lanes[self.lane] = turn
        return turn

    def _join(self, turn: Turn, interaction: str | None) -> None:
        """Count `interaction` as one of the run's (the first one names the Loop)."""
        if interaction is not None and interaction not in turn.interactions:
            turn.interactions.append(interaction)
            if turn.loop.native_id is None:
                turn.loop.native_id = interaction

    def _working(self, interaction: str | None = None) -> Turn:
        """The Turn agent activity of this record belongs to: the lane's running one unless
        the record names an interaction that is not the run's (a run the log shows no input
        for), else a new one starting here."""
        turn = self._running()
        if turn is None or (
            interaction is not None and turn.interactions and interaction not in turn.interactions
        ):
            queued = next((q for q in self.queued if q.interaction == interaction), None)
            if queued is not None and not self.lane:
                return self._open_queued(queued)
            return self._open(interaction)
        self._join(turn, interaction)
        return turn

    def _open_queued(self, queued: Queued) -> Turn:
        """The run of a queued prompt starts: its Loop starts at the prompt (the running Loop
        is bounded where the new run shows)."""
        self.queued = [q for q in self.queued if q is not queued]
        turn = self._open(queued.interaction)
        turn.loop.start = queued.position
        if queued.message is not None:
            turn.messages.append(queued.message)
        if queued.value["text"] is not None or queued.value["has_images"]:
            request = DraftItem(
                "human.request",
                "heuristic",
                queued.value,
                [queued.position],
                turn.loop,
                queued.time,
            )
            self.items.append(request)
        return turn

    def _close(self, turn: Turn, outcome: str | None) -> None:
        """End a running Loop at this record (with the outcome the runtime states, if any)."""
        if not turn.open:
            return
        turn.loop.end, turn.loop.outcome = self.position, outcome
        turn.open = False
        self._settle(turn)

    def _close_all(self, outcome: str | None, lanes: bool = True) -> None:
        """End the running Loop of the main agent and (with `lanes`) of every subagent."""
        for lane, turn in list(self.lanes.items()):
            if lane == "" or lanes:
                self._close(turn, outcome)

    def _settle(self, turn: Turn) -> None:
        """Fix a Loop's final answer: the candidate, if the Loop ended without interruption
        or failure; a Loop never seen to end chooses none by position."""
        candidate = turn.candidate
        if candidate is not None:
            if not turn.open and turn.loop.outcome in (None, "completed"):
                candidate.role = "agent.final_answer"
            self._release(candidate)
            turn.candidate = None
        turn.settled = True
        if self.lanes.get(turn.lane) is turn:
            del self.lanes[turn.lane]

    # -- drafts that may still change --------------------------------------------------------

    def _hold(self, turn: Turn, item: DraftItem) -> None:
        if turn.candidate is not None:
            self._release(turn.candidate)
        turn.candidate = item
        self.held.append(item)

    def _release(self, item: DraftItem) -> None:
        self.held = [other for other in self.held if other is not item]
