"""Kimi adapter state: the session a wire file is, its Loops, model calls and draining.

A wire file is one agent's log: the main agent's (the session) or a subagent's (a child
session of its own). It never names its session: the locator does (`wire.native_ids`), so
the session is drafted at the first record once `locate` gave the locator. A turn is a Loop;
it ends where the runtime says it ended (``turn.ended``, legacy ``TurnEnd``), or where the
next turn starts.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from traceidx.adapters.base import Adapter
from traceidx.adapters.kimi.usage import failed_attempt
from traceidx.adapters.kimi.wire import native_ids
from traceidx.adapters.values import dicts_in, nonempty_str
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop, DraftSession, unheld_prefix
from traceidx.domain.model import CallOutcome
from traceidx.domain.rules import UsageSample


class Request:
    """A model request (``llm.request``) whose usage or failure is still to come."""

    __slots__ = ("alias", "position", "provider")

    def __init__(self, position: int, provider: str | None, alias: str | None) -> None:
        self.position = position
        self.provider = provider
        self.alias = alias  # the model alias of the runtime's config (usage.record's `model`)


def input_text(parts: Any) -> tuple[str, bool]:
    """(the text parts joined by newlines, whether an image part is among them) of a prompt's
    input: a list of content parts, or (legacy) a plain string."""
    if isinstance(parts, str):
        return parts, False
    texts: list[str] = []
    images = False
    for part in dicts_in(parts):
        kind = part.get("type")
        text = part.get("text")
        if kind == "text" and isinstance(text, str) and text:
            texts.append(text)
        elif isinstance(kind, str) and kind.startswith("image"):
            images = True
    return "\n".join(texts), images


class KimiState(Adapter):
    """What a wire file's adapter keeps between records."""

    def __init__(self) -> None:
        super().__init__()
        self.native: str | None = None  # the session's native id (from the locator)
        self.parent: str | None = None  # a subagent's parent session
        self.pending: deque[DraftLoop] = deque()  # Loops not drained yet, in order
        self.loop: DraftLoop | None = None  # the running Loop
        self.candidate: DraftItem | None = None  # the final answer if the turn completes next
        self.held: list[DraftItem] = []  # items that may still change (compared by identity)
        self.loose: list[UsageSample] = []  # model calls outside any Loop
        self.request: Request | None = None  # the latest model request not yet answered
        self.model: str | None = None  # the model alias the agent's profile binds
        self.instructions: str | None = None  # the system prompt last published
        self.calls: dict[str, str] = {}  # tool call id -> tool name
        self.delegations: dict[str, DraftItem] = {}  # Agent call id -> its delegation item
        self.legacy = False  # a legacy ``kimi-cli`` file (nested messages, inline subagents)
        self.counted: set[str] = set()  # legacy: message ids whose usage was counted

    def locate(self, locator: str) -> None:
        self.native, self.parent = native_ids(locator)

    # -- framing callbacks -------------------------------------------------------------------

    def drain(self) -> tuple[list[DraftLoop], list[DraftItem]]:
        """The ended Loops at the head (their usage and final answer are fixed: no later
        record joins an ended Loop), and the items before the first held one (a final-answer
        candidate, a delegation whose child is not named yet)."""
        if self.session is None:
            return [], []
        loops: list[DraftLoop] = []
        while self.pending and self.pending[0] is not self.loop:
            loops.append(self.pending.popleft())
        return loops, unheld_prefix(self.items, self.held)

    def finish(self) -> Draft:
        if self.loop is not None:
            self._release(self.candidate)  # no end seen: no final answer is chosen
            self.candidate, self.loop = None, None
        for item in self.delegations.values():
            self._release(item)
        self.delegations = {}
        return Draft(self.session, list(self.pending), self.items, self.unknown, self.loose)

    # -- the session -------------------------------------------------------------------------

    def _session(self, created_at: int | None) -> None:
        """Draft the session at the first record (its identity record)."""
        if self.session is not None or self.native is None:
            return
        session = DraftSession(self.native, self.position)
        session.created_at = created_at if created_at is not None else self.time
        if self.parent is not None:
            session.delegated_from = (self.parent, self.position)
        self.session = session

    def _folder(self) -> str | None:
        """The native id of the session folder (the main agent's session), which names the
        subagents of every agent in it."""
        return self.parent if self.parent is not None else self.native

    # -- Loops -------------------------------------------------------------------------------

    def _open(self) -> DraftLoop:
        """A turn starts here; a running one ends here (its end not stated)."""
        self._close(None)
        loop = DraftLoop(start=self.position)
        self.pending.append(loop)
        self.loop = loop
        return loop

    def _current(self) -> DraftLoop | None:
        return self.loop

    def _close(self, outcome: str | None) -> None:
        """End the running Loop at this record; the last text of a completed turn (no tool
        call after it) is its final answer."""
        loop = self.loop
        if loop is None:
            return
        loop.end, loop.outcome = self.position, outcome
        candidate = self.candidate
        if candidate is not None and outcome == "completed":
            candidate.role = "agent.final_answer"
        self._release(candidate)
        self.candidate, self.loop = None, None

    def _hold(self, item: DraftItem) -> None:
        self.held.append(item)

    def _release(self, item: DraftItem | None) -> None:
        if item is not None:
            self.held = [other for other in self.held if other is not item]

    def _text(self, text: str, loop: DraftLoop | None) -> None:
        """Agent text: commentary, and the final-answer candidate of its turn."""
        item = self.emit(
            "agent.commentary", "structural", {"text": text, "has_images": False}, loop
        )
        if loop is not None:
            self._release(self.candidate)
            self.candidate = item
            self._hold(item)

    def _no_answer_yet(self) -> None:
        """The turn goes on (a tool call): the text before it is not its final answer."""
        self._release(self.candidate)
        self.candidate = None

    # -- model calls -------------------------------------------------------------------------

    def _call(self, sample: UsageSample, records: tuple[int, ...], model: str | None) -> None:
        """One model call, in the running Loop (else outside any)."""
        provider = self.request.provider if self.request is not None else None
        located = sample.located(records, self.time, model, provider)
        loop = self.loop
        if loop is None:
            self.loose.append(located)
            return
        loop.usage.append(located)
        if loop.model_id is None and model is not None:
            loop.model_id = model

    def _answered(self, sample: UsageSample | None, model: str | None) -> None:
        """A request's usage record: the call it billed."""
        if sample is not None:
            model = model or (self.request.alias if self.request else None) or self.model
            self._call(sample, (self.position,), model)
        self.request = None

    def _failed_request(self, outcome: CallOutcome = "error") -> None:
        """A request that ended with no usage record: a failed attempt (``error``), or one the
        user cut (``aborted``); its usage is not known."""
        request = self.request
        if request is None:
            return
        model = request.alias or self.model
        self._call(failed_attempt(outcome), (request.position, self.position), model)
        self.request = None

    def _notice(self, text: str | None) -> None:
        if text:
            value = {"text": text, "has_images": False}
            self.emit("runtime.notice", "structural", value, self._current())


def error_text(error: Any) -> str | None:
    """The message of a ``turn.ended`` error object (its code first, when it names one)."""
    if not isinstance(error, dict):
        return None
    message = nonempty_str(error.get("message"))
    code = nonempty_str(error.get("code"))
    if message is not None and code is not None:
        return f"[{code}] {message}"
    return message
