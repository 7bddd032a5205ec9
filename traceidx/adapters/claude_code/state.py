"""Claude Code adapter state: the session, Loops, API responses and their usage, draining."""

from __future__ import annotations

from collections import deque
from typing import Any, Final

from traceidx.adapters.base import Adapter
from traceidx.adapters.claude_code.usage import output_tokens, usage_of
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop, DraftSession, among, unheld_prefix
from traceidx.domain.rules import UsageSample

_FINAL_STOP_REASONS: Final = frozenset({"end_turn", "stop_sequence"})


class Turn:
    """A Loop not yet drained, with the API responses that count towards its usage."""

    __slots__ = ("last", "loop", "responses", "settled")

    def __init__(self, loop: DraftLoop) -> None:
        self.loop = loop
        self.responses: list[Response] = []  # in creation order
        self.last: Response | None = None  # the latest one: its text may be the final answer
        self.settled = False  # usage and final answer are fixed: the Loop may be drained


class Response:
    """One API response assembled from its per-block lines."""

    __slots__ = (
        "key",
        "model",
        "output",
        "records",
        "sample",
        "stop_reason",
        "text",
        "time",
        "turn",
    )

    def __init__(self, key: tuple[str, str], turn: Turn) -> None:
        self.key = key
        self.turn = turn
        self.sample: UsageSample | None = None
        self.records: list[int] = []  # the lines of the response, in order
        self.time: int | None = None  # the runtime time of its first timed line
        self.model: str | None = None
        self.output = -1
        self.stop_reason: str | None = None
        self.text: DraftItem | None = None  # its latest text while it is its Loop's latest


class Lane:
    """The Loop state of one inline sidechain (Claude Code 1.0.x): a subagent's run written
    inside the main transcript, whose Loops are its own, apart from the parent agent's."""

    __slots__ = ("loop", "open", "pending_start", "turn")

    def __init__(self) -> None:
        self.loop: DraftLoop | None = None
        self.turn: Turn | None = None
        self.open = False
        self.pending_start: int | None = None


def _closable(key: tuple[str, str]) -> bool:
    """Whether lines of this response stop once a later Loop starts (it has a message id)."""
    return key[0] != "None" and key[0] != ""


class ClaudeCodeState(Adapter):
    """What a transcript's adapter keeps between records: the Loops, responses and held items."""

    def __init__(self) -> None:
        super().__init__()
        self.parent_session: str | None = None
        self.subagent = False
        self.turns: deque[Turn] = deque()  # the Loops not drained yet, in order
        self.turn: Turn | None = None  # the current Loop's
        self.loop: DraftLoop | None = None  # the current Loop
        self.open = False  # whether the current Loop may still receive work
        self.pending_start: int | None = None  # runtime input that may start agent work
        self.responses: dict[tuple[str, str], Response] = {}  # responses still open
        self.calls: dict[str, str] = {}  # tool_use id -> tool name
        self.delegations: dict[str, DraftItem] = {}  # call id -> call awaiting its subagent
        # the items that may still change, and those of them held until the next Loop starts:
        # kept as the objects (compared by identity), since a checkpoint pickles this state
        # and an id() would not name the same item once it is unpickled
        self.held: list[DraftItem] = []
        self.waiting: list[DraftItem] = []
        self.agent_tasks: dict[str, str] = {}  # task/agent id -> kind ("agent" | call id)
        self.chains: dict[str, Lane] = {}  # uuid of an inline sidechain record -> its lane
        self.in_sidechain = False  # whether the record being fed is an inline sidechain's

    # -- framing callbacks -------------------------------------------------------------------
    def drain(self) -> tuple[list[DraftLoop], list[DraftItem]]:
        if self.session is None:
            return [], []
        loops: list[DraftLoop] = []
        turns = self.turns
        while turns and turns[0].settled:
            loops.append(turns.popleft().loop)
        return loops, unheld_prefix(self.items, self.held)

    def finish(self) -> Draft:
        for turn in self.turns:
            if not turn.settled:
                self._settle(turn)
        loops = [turn.loop for turn in self.turns]
        return Draft(self.session, loops, self.items, self.unknown)

    # -- drafts that may still change --------------------------------------------------------

    def _hold(self, item: DraftItem, until_next_loop: bool = False) -> None:
        if not among(item, self.held):
            self.held.append(item)
        if until_next_loop and not among(item, self.waiting):
            self.waiting.append(item)

    def _release(self, item: DraftItem) -> None:
        self.held = [other for other in self.held if other is not item]
        self.waiting = [other for other in self.waiting if other is not item]

    def _settle(self, turn: Turn) -> None:
        """Fix a Loop's usage and final answer (nothing can change them any more)."""
        for response in turn.responses:
            if response.sample is not None:
                records = tuple(response.records)
                call = response.sample.located(records, response.time, response.model)
                turn.loop.usage.append(call)
        last = turn.last
        if last is not None:
            self._promote_final(last)
            if last.text is not None:
                self._release(last.text)
                last.text = None
        turn.responses, turn.last, turn.settled = [], None, True

    def _close_turn(self, turn: Turn, release: bool = True) -> None:
        """A later Loop started: close the responses of `turn` and settle it if it can be.

        `release`: the main Loop ended, so what waits for the next Loop is released too."""
        open_response = False
        for response in turn.responses:
            if _closable(response.key):
                self.responses.pop(response.key, None)
            else:
                open_response = True
        if not open_response:
            self._settle(turn)
        if not release:
            return
        waiting = self.waiting
        self.held = [item for item in self.held if not among(item, waiting)]
        self.waiting = []
        self.delegations.clear()

    # -- session -------------------------------------------------------------------------------

    def _session_facts(self, obj: dict[str, Any]) -> None:
        session = self.session
        native = obj.get("sessionId")
        if session is None:
            if not isinstance(native, str) or not native:
                return
            agent = obj.get("agentId")
            self.subagent = obj.get("isSidechain") is True and isinstance(agent, str)
            if self.subagent:
                assert isinstance(agent, str)
                session = DraftSession(agent, self.position)
                session.delegated_from = (native, self.position)
            else:
                session = DraftSession(native, self.position)
            self.session = session
        if session.created_at is None and self.time is not None:
            session.created_at = self.time
        branch = obj.get("gitBranch")
        if session.branch is None and isinstance(branch, str) and branch:
            session.branch = branch
        cwd = obj.get("cwd")
        if session.working_directory is None and isinstance(cwd, str) and cwd:
            session.working_directory = cwd

    # -- loops ---------------------------------------------------------------------------------

    def _start_loop(self, position: int) -> DraftLoop:
        previous = self.loop
        if previous is not None and previous.end is None:
            previous.end = position  # the next Loop's start bounds it; no outcome
        if self.turn is not None:
            self._close_turn(self.turn, release=not self.in_sidechain)
        if not self.in_sidechain and self.chains:
            self._bound_sidechains(position)
        loop = DraftLoop(start=position)
        self.turn = Turn(loop)
        self.turns.append(self.turn)
        self.loop, self.open, self.pending_start = loop, True, None
        return loop

    # -- inline sidechains (Claude Code 1.0.x) ----------------------------------------------

    def _sidechain_lane(self, obj: dict[str, Any]) -> Lane:
        """The lane of an inline sidechain record: its parent record's (the runtime's own
        ``parentUuid`` chain), else a new one (a sidechain's root, its task prompt)."""
        parent = obj.get("parentUuid")
        lane = self.chains.get(parent) if isinstance(parent, str) else None
        if lane is None:
            lane = Lane()
        uuid = obj.get("uuid")
        if isinstance(uuid, str):
            self.chains[uuid] = lane
        return lane

    def _swap(self, lane: Lane) -> None:
        """Exchange the current Loop state with `lane`'s (entering or leaving a sidechain)."""
        loop, turn, running, pending = self.loop, self.turn, self.open, self.pending_start
        self.loop, self.turn, self.open, self.pending_start = (
            lane.loop,
            lane.turn,
            lane.open,
            lane.pending_start,
        )
        lane.loop, lane.turn, lane.open, lane.pending_start = loop, turn, running, pending
        self.in_sidechain = not self.in_sidechain

    def _bound_sidechains(self, position: int) -> None:
        """The parent agent's next Loop starts: every sidechain run of the last one is over."""
        lanes = {id(lane): lane for lane in self.chains.values()}
        for lane in lanes.values():
            if lane.loop is not None and lane.loop.end is None:
                lane.loop.end = position
            if lane.turn is not None:
                self._close_turn(lane.turn, release=False)
        self.chains.clear()

    def _end_loop(self, outcome: str | None) -> None:
        loop = self.loop
        if loop is not None and self.open:
            loop.end, loop.outcome = self.position, outcome
            self.open = False

    def _bound_loop(self) -> None:
        """This record shows the running Loop is over (no outcome is known)."""
        if self.loop is not None and self.open:
            self.loop.end = self.position
            self.open = False

    def _working_loop(self) -> DraftLoop:
        """The Loop agent activity belongs to, opening one if no Loop is running."""
        if self.loop is None or not self.open:
            start = self.pending_start if self.pending_start is not None else self.position
            return self._start_loop(start)
        return self.loop

    def _current(self) -> DraftLoop | None:
        """The Loop a runtime fact falls in: the running one, else none (session level)."""
        return self.loop if self.open else None

    # -- user records -----------------------------------------------------------------------
    def _response(self, obj: dict[str, Any], message: dict[str, Any], loop: DraftLoop) -> Any:
        key = (str(message.get("id")), str(obj.get("requestId")))
        response = self.responses.get(key)
        if response is None:
            turn = self.turn
            assert turn is not None and turn.loop is loop
            previous = turn.last
            if previous is not None and previous.text is not None:
                self._release(previous.text)  # no longer a final-answer candidate
                previous.text = None
            response = self.responses[key] = Response(key, turn)
            turn.responses.append(response)
            turn.last = response
        response.records.append(self.position)
        if response.time is None:
            response.time = self.time
        model = message.get("model")
        if response.model is None and isinstance(model, str) and model:
            response.model = model
        if loop.model_id is None and isinstance(model, str) and model:
            loop.model_id = model
        effort = obj.get("effort", message.get("effort"))
        if loop.effort is None and isinstance(effort, str) and effort:
            loop.effort = effort
        if isinstance(message.get("stop_reason"), str):
            response.stop_reason = message["stop_reason"]
        usage = message.get("usage")
        output = output_tokens(usage)
        if output is not None and output > response.output:  # the largest line counts
            response.output = output
            response.sample = usage_of(usage)
        return response

    def _promote_final(self, response: Response) -> None:
        if response.stop_reason in _FINAL_STOP_REASONS and response.text is not None:
            response.text.role = "agent.final_answer"

    # -- other records ----------------------------------------------------------------------
