"""OpenCode adapter state: the session, the message being read, turns, usage, draining."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from traceidx.adapters.base import Adapter
from traceidx.adapters.opencode.usage import call_usage
from traceidx.adapters.opencode.wire import ABORTED, CONTINUING, DEFAULT_TITLES
from traceidx.adapters.values import dict_or_empty, nonempty_str, str_or_none
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop, DraftSession
from traceidx.domain.model import LOOP_BOUND_ROLES
from traceidx.domain.rules import UsageSample


@dataclass(slots=True)
class Message:
    """The message whose parts are being read (a message row is followed by its parts)."""

    native_id: str | None
    role: str | None
    position: int
    #: the Loop its facts belong to; for a user message, None until a part decides it
    loop: DraftLoop | None = None
    decided: bool = False
    opened: bool = False  # a user message that started a turn
    #: an assistant message: whether its text may be the turn's final answer, whether it is a
    #: compaction summary, the working directory it states
    final: bool = False
    summary: bool = False
    cwd: str | None = None
    #: a user message: the items drafted from its parts (held: a later part may re-home them)
    items: list[DraftItem] = field(default_factory=list)
    request: DraftItem | None = None
    images: bool = False


class OpenCodeState(Adapter):
    """What an OpenCode session's adapter keeps between rows, and the turn lifecycle."""

    def __init__(self) -> None:
        super().__init__()
        self.loops: list[DraftLoop] = []
        self.child = False  # a subagent's session: its prompts come from the parent agent
        self.git = True  # its project is a repository (not OpenCode's ``global`` project)
        self.loop: DraftLoop | None = None  # the Loop of the latest turn
        self.message: Message | None = None
        self.user_loops: dict[str, DraftLoop | None] = {}  # user message id -> its Loop
        self.final: DraftItem | None = None  # the latest turn's final answer, while open
        self.outside: list[UsageSample] = []  # model calls outside any Loop

    # -- session -------------------------------------------------------------------------------

    def _session(self, row: dict[str, Any]) -> None:
        native = nonempty_str(row.get("id"))
        if native is None or self.session is not None:
            self.count_unknown("session (no id)" if native is None else "session (a second)")
            return
        session = DraftSession(native, self.position, created_at=self.time)
        session.working_directory = nonempty_str(row.get("directory"))
        title = nonempty_str(row.get("title"))
        if title is not None and DEFAULT_TITLES.match(title) is None:
            session.name = title
        parent = nonempty_str(row.get("parent_id"))
        if parent is not None and parent != native:
            session.delegated_from = (parent, self.position)
            self.child = True
        self.git = row.get("project_id") != "global"
        self.session = session

    # -- turns ---------------------------------------------------------------------------------

    def _open_loop(self, start: int) -> DraftLoop:
        """A new turn at `start`: the previous turn's Loop ends there (no outcome stated)."""
        previous = self.loop
        if previous is not None and previous.end is None:
            previous.end = start
        loop = DraftLoop(start=start)
        self.loops.append(loop)
        self.loop = loop
        self.final = None  # the previous turn's final answer is settled
        return loop

    def _decide(self, message: Message, how: str) -> DraftLoop | None:
        """The Loop of a user message, decided by the parts that tell what it is: a prompt
        (`how` = ``opens``) starts a turn (items of its earlier parts join it); a message the
        runtime wrote while it worked (``joins``) belongs to the running turn; one written by
        a command of the user's (``outside``, a manual compaction) to none."""
        if how == "opens" and not message.opened:
            loop = self._open_loop(message.position)
            for item in message.items:
                item.loop = loop
            message.loop, message.decided, message.opened = loop, True, True
        elif not message.decided:
            message.loop, message.decided = (self.loop if how == "joins" else None), True
        if message.native_id is not None:
            self.user_loops[message.native_id] = message.loop
        return message.loop

    def _assistant(self, message: Message, data: dict[str, Any]) -> None:
        """An assistant message: one model request (step) of the turn its parent opened."""
        parent = str_or_none(data.get("parentID"))
        loop = self.loop
        if parent is not None and parent in self.user_loops:
            mapped = self.user_loops[parent]
            loop = mapped if mapped is None or mapped is self.loop else self.loop
        message.loop = loop
        agent = data.get("agent")
        message.summary = data.get("summary") is True or agent == "compaction"
        error = data.get("error")
        finish = str_or_none(data.get("finish"))
        message.final = finish is not None and finish not in CONTINUING
        message.final = message.final and error is None and not message.summary
        path = dict_or_empty(data.get("path"))
        message.cwd = nonempty_str(path.get("cwd"))
        session = self.session
        root = nonempty_str(path.get("root"))
        if session is not None and session.git_root is None and self.git and root != "/":
            session.git_root = root
        if not message.summary and self.final is not None and self.final.loop is loop:
            self.final.role, self.final.strength = "agent.commentary", "structural"
            self.final = None  # the turn went on: that answer was not its last
        model, provider = nonempty_str(data.get("modelID")), nonempty_str(data.get("providerID"))
        if loop is not None:
            if loop.model_id is None and model is not None:
                loop.model_id = model
            if loop.outcome is not None and error is None:  # a step after an error: it went on
                loop.end, loop.outcome = None, None
        sample = call_usage(data.get("tokens"), attempt=isinstance(error, dict))
        if sample is not None:
            sample = sample.located((self.position,), self.time, model, provider)
            if isinstance(error, dict):  # a failed attempt (its zeros: it billed nothing)
                aborted = error.get("name") == ABORTED
                sample = msgspec.structs.replace(sample, outcome="aborted" if aborted else "error")
            (loop.usage if loop is not None else self.outside).append(sample)
        if isinstance(error, dict):
            self._error(error, loop)

    def _error(self, error: dict[str, Any], loop: DraftLoop | None) -> None:
        """The message of a step that failed: the turn ends there (aborted by the user, or
        failed), and the runtime's error is a notice."""
        name = nonempty_str(error.get("name"))
        text = nonempty_str(dict_or_empty(error.get("data")).get("message")) or name
        if loop is not None:
            loop.end = self.position
            loop.outcome = "interrupted" if name == ABORTED else "failed"
        self.emit("runtime.notice", "structural", {"text": text, "has_images": False}, loop)

    def _agent_text(self, message: Message, text: str) -> None:
        """A text part of an assistant message: a compaction summary, the turn's final answer
        while no later step follows, or commentary."""
        loop = message.loop
        if message.summary:
            self.emit("runtime.compaction_summary", "structural", {"summary": text}, loop)
            return
        role = "agent.final_answer" if message.final else "agent.commentary"
        if loop is None and role in LOOP_BOUND_ROLES:
            return  # no turn to belong to: the row stays a Record
        value = {"text": text, "has_images": False}
        final = self.final
        if message.final and final is not None and final.loop is loop:
            final.role = "agent.commentary"  # an earlier text of the same message
        item = self.emit(role, "structural", value, loop)
        if message.final:
            self.final = item

    # -- draining -------------------------------------------------------------------------------

    def drain(self) -> tuple[list[DraftLoop], list[DraftItem]]:
        """Every Loop but the latest, and the items before the first one a later row may still
        change: the latest turn's final answer (demoted when the turn goes on) and the items of
        the user message being read (a later part may open a turn they join, or add an image).
        """
        if self.session is None:
            return [], []
        loops = self.loops[:-1]
        del self.loops[:-1]
        held: set[int] = set()
        if self.final is not None:
            held.add(id(self.final))
        if self.message is not None:
            held.update(id(item) for item in self.message.items)
        cut = 0
        for item in self.items:
            if id(item) in held:
                break
            cut += 1
        items = self.items[:cut]
        del self.items[:cut]
        return loops, items

    def finish(self) -> Draft:
        return Draft(self.session, self.loops, self.items, self.unknown, self.outside)
