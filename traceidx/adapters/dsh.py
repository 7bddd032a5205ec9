"""dsh (DeepSeek Harness) adapter: the event-sourced session log, formats v0 to v4.

Checked against dsh 0.1.0-rc.8 (generated corpus: multi-frame zstd logs written through the
CLI, web API, JSON-RPC and ACP front ends), the project's own snapshot logs at 0.1.1-rc.2
(format v0, including pre-release shapes), two runtime-written v4 logs and hand-made v0–v4
fixtures. zstd framing is undone before this adapter sees a line (`traceidx.sourceio`).

Detection: the first record is the header ``{"type": "session", "id": <str>, "createdAt":
<epoch ms int>, …}`` (Pi headers carry an RFC 3339 ``timestamp`` instead of ``createdAt``).

Envelope: ``{type, seq, time, data, [surfaceOp], [sourceEventSeqs]}``. ``time`` is the record
time. Snapshot logs had ``seq``/``time`` stripped: there seqs are counted (an event is one seq,
a packed ``*-chunks`` row ``seq0`` is one seq per member), which reproduces the logged values.
Range-encoded ``sourceEventSeqs`` (``[start, end]`` members, v1+) are expanded where used.

Session: native id = header ``id``; ``created_at`` = ``createdAt``; ``working_directory`` =
``cwd``. A header with ``parentSession`` links the parent: ``delegated_from`` when it is a
subagent child (``origin: "subagent"`` or ``delegationDepth`` ≥ 1), ``forked_from`` when it
inherited the parent's events (``seedLength`` > 0 or ``isSeeded``); a forked subagent has both.
A ``parentSession`` with neither mark (very early v0 logs) is a lineage this adapter cannot
classify and links nothing. Titles (``session/title``) are generated from the first prompt or
by a model, not names a person gave: no ``name``.

Sources of one Session that disagree: dsh keeps one canonical log per session directory (older
generations are superseded at discovery), so two sources claiming one id are copies or
redacted snapshots (``{{sessionId}}`` placeholders, taken literally). Each source reports the
facts of its own header; the dataset merges them by the shared rule of the ``sessions`` view
(earliest ``created_at``; identity record, directory and links from the lowest source id) and
keeps each source's Loops in source order, so every merged fact still points to a record.

Inherited prefix: a forked child replays its parent's events before the inherited cut — seq
``seedLength`` (v0/v1), or the last ``session/end-seed`` with ``data.inherited: true`` when
the header says ``isSeeded`` (v2+). Records before the cut stay Records; no Loop, Item or usage
comes from them. An untagged ``session/end-seed`` (written mid-file when a session is resumed)
is not a cut.

Loops: one per ``turn/start`` … ``turn/end``; ``native_id`` = the turn number. A ``turn/start``
while a turn is open bounds it without an outcome. ``turn/end.reason.kind`` → outcome:
``completed`` and ``max-tokens`` (a step hit its output cap but the turn otherwise ended
normally: dsh lets it take precedence only over ``completed``) → completed; ``aborted``,
``interrupted`` (crash recovery), ``disposed`` and ``rejected``/``blocked`` (a policy veto
before the first step, which the ACP bridge reports as cancelled) → interrupted; ``error`` →
failed (a legacy ``{error}`` without ``kind`` too); ``forked`` (the turn was cut by a fork) and
unknown kinds end the Loop without an outcome. An error end also yields a runtime.notice.

Inputs (``user/message``; pre-release ``steering/message``, ``context/message``; log-only
``prompt/blocked``), by ``source.kind``:

* ``user``: the turn's first message (unless ``turn/start.trigger.kind`` is ``injection``) is
  its human.request; later ones, and ``steering/message``, are human.steering. A program may
  have written them (SDK, web API, ACP), so both are heuristic. In a subagent child they come
  from the parent: agent.delegation naming the child itself. Outside a turn: no Item.
* a turn whose first message has another source was opened by an injection (subagent
  settlement, goal round, relay): not a human request.
* ``runtime-context`` / ``@deepseek-ai/dsh-system-prompt`` → runtime.context (environment);
  ``agent-instructions`` → runtime.instructions (project); ``skill-catalog`` /
  ``dsh-tool-skill`` → runtime.instructions (tool_catalog); ``goal`` → runtime.instructions;
  hook plugins → runtime.context; ``ptc-mode`` / ``tools-code-mode`` → runtime.context
  (file); ``subagent-settled`` / ``subagent-report`` → subagent.report from
  ``senderSessionId``; ``coordinator`` from the header's parent → agent.delegation, from
  another session → subagent.activity; other sources with ``form: "notice"`` →
  runtime.notice; anything else → runtime.unknown. v3 ``plugin`` sources and their v4
  producer-owned kinds map alike.
* a ``surfaceOp`` replace after ``compaction/summary`` (or ``compact/summary``), or from the
  compaction producer, is the checkpoint: one runtime.compaction_summary supported by both
  records, holding the summary the summariser wrote, in the Loop of the turn it happened in.

Model output: ``assistant/message`` (``data.message`` or the flat pre-release ``data.content``)
is authoritative; ``assistant/chunk`` and packed chunk rows are evidence only. ``reasoning``
blocks → agent.reasoning; ``text`` blocks → agent.commentary, except that the last text block
of a turn's last message is agent.final_answer when the turn ended (``turn/end``) and that
message has no tool call, is not ``interrupted`` and its step finished ``stop`` (or, with no
finish recorded, the turn completed). ``tool-call`` blocks → agent.tool_call (the later
``tool/call`` record supports the same Item); the ``bash`` tool's ``command`` is the declared
shell command; ``subagent*`` tools are agent.delegation (the ``prompt`` argument).

Tool results: one Item per call, paired on the call id, from the three shapes: the V3 user-role
wrapper holding exactly one ``tool-result`` block, the V4 ``tool``-role message (top-level
``toolCallId``/``isError``) and the flat pre-release ``{callId, content, isError}``. A wrapper
with a nested ``tool-result`` block, several blocks, a non-array content or a different call
id is refused as the V3→V4 conversion refuses it (so is a V4 message holding a wrapper): the
Record stays, no Item. ``failed`` = ``isError`` (else the
presence of ``data.error``, whose failure identity stays in the Record); ``exit_code`` only
from the trailing ``[exit code: N]`` line dsh appends to a ``bash``/``pwsh`` result (dsh keeps
``isError`` false for a non-zero exit: failed follows the exit code); ``runtime_truncated``
from ``meta.truncated``. No durations (dsh records none). A later replacement result for the
same call (tool-result pruning) supports the existing Item, as the ``tool/call`` record does the
call's, until a turn closes (see Draining); after that it stays a Record. A ``subagent*``
result is a subagent.report, or subagent.activity when the call ran ``run_in_background``;
with no such argument the report is heuristic (front ends differ in their default). Code-mode
dispatches (``tool/code-dispatch[-start]``, ``tool/ptc-dispatch[-start]``) are tool calls with
outputs.

Runtime facts: ``todo/write``, ``permission/preset``, ``sandbox/mode``, ``approval/policy``,
``plan/mode``, ``goal/change`` and ``approval/decided`` → runtime.state; ``approval/asked``,
``llm/retry`` and ``command/done`` → runtime.notice; ``command/run`` (a slash command) →
runtime.context (internal); v3+ ``system/message`` → runtime.instructions. Bookkeeping
(requests, titles, inbox splices, hooks, descriptors, workflow markers, step boundaries) stays
Records.

Usage: one sample per model call. A completed step's usage is on ``assistant/message`` (and
repeated on its ``usage`` chunk, or in its embedded ``stream``): counted once, from the
message. A failed attempt has no message: its ``usage`` chunk (v0/v1; not among the next
message's ``sourceEventSeqs``) or its ``assistant/attempt`` stream (v2+) counts. The
summariser call of a compaction inside a turn reports ``usage`` on ``compaction/summary``: it
counts for that turn. dsh counts are disjoint (input excludes cache reads and writes; reasoning
is part of output): normalised by ``rules.usage_sample``. Model = the message's
``source.model`` (flat: ``provenance.model``), else the route a request of the turn named;
effort = ``request/header`` ``config.reasoningEffort``; context window = ``request/context``
``contextWindow`` for that model.

Draining: a turn's close (``turn/end``, or the ``turn/start`` that bounds it) settles every Loop
and Item drafted so far: later records no longer change them (a late ``tool/call`` or pruning
replacement stays a Record, as above). ``drain`` returns the settled ones once the inherited
cut is final (``seedLength`` logs: once the record crossing it is read), an output read before
its call only with that call. ``isSeeded`` logs keep everything until ``finish``, since a later
tagged end-seed would move the cut; drain only discards what precedes the current cut. Per-call
bookkeeping (id, name, background flag) stays for the whole source.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec
from mypy_extensions import mypyc_attr

from traceidx.adapters import register
from traceidx.adapters.base import (
    Adapter,
    Draft,
    DraftItem,
    DraftLoop,
    DraftSession,
    RecordFacts,
)
from traceidx.model import LOOP_BOUND_ROLES
from traceidx.rules import UsageSample, exit_code_from_header, type_tag, usage_sample

_EXIT_CODE: Final = re.compile(r"\[exit code: (-?\d+)\]\Z")
_SHELL_TOOLS: Final = frozenset({"bash"})
_EXIT_CODE_TOOLS: Final = frozenset({"bash", "pwsh"})
_DELEGATION_TOOLS: Final = frozenset(
    {"subagent", "subagent_fork", "subagent_codex", "subagent_claude_code"}
)
_PACKED_ROWS: Final = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})
_DISPATCH_START: Final = frozenset({"tool/code-dispatch-start", "tool/ptc-dispatch-start"})
_DISPATCH_END: Final = frozenset({"tool/code-dispatch", "tool/ptc-dispatch"})
_INPUT_EVENTS: Final = frozenset(
    {"user/message", "steering/message", "context/message", "prompt/blocked"}
)

#: turn/end reason.kind -> outcome (None: the Loop ends without a stated outcome)
_OUTCOMES: Final[dict[str, str | None]] = {
    "completed": "completed",
    "max-tokens": "completed",
    "aborted": "interrupted",
    "interrupted": "interrupted",
    "disposed": "interrupted",
    "rejected": "interrupted",
    "blocked": "interrupted",
    "error": "failed",
    "forked": None,
}

#: message source (kind, or the v3 plugin name) -> (role, category)
_SOURCES: Final[dict[str, tuple[str, str | None]]] = {
    "runtime-context": ("runtime.context", "environment"),
    "@deepseek-ai/dsh-system-prompt": ("runtime.context", "environment"),
    "time-context": ("runtime.context", "environment"),
    "tmux-context": ("runtime.context", "environment"),
    "agent-instructions": ("runtime.instructions", "project"),
    "skill-catalog": ("runtime.instructions", "tool_catalog"),
    "dsh-tool-skill": ("runtime.instructions", "tool_catalog"),
    "skill-invocation": ("runtime.instructions", "skill"),
    "goal": ("runtime.instructions", None),
    "hooks-claude-code": ("runtime.context", None),
    "hooks-codex": ("runtime.context", None),
    "ptc-mode": ("runtime.context", "file"),
    "tools-code-mode": ("runtime.context", "file"),
    "tools-ptc": ("runtime.context", "file"),
    "session-reference": ("runtime.context", "session_reference"),
}
_REPORT_SOURCES: Final = frozenset({"subagent-settled", "subagent-report"})
_COMPACTION_SOURCES: Final = frozenset({"compact", "compact-checkpoint", "compact-basic"})

_KNOWN_TYPES: Final = frozenset(
    {
        "session",
        "turn/start",
        "turn/end",
        "step/start",
        "step/end",
        "user/message",
        "steering/message",
        "context/message",
        "prompt/blocked",
        "assistant/message",
        "assistant/chunk",
        "assistant/attempt",
        "system/message",
        "developer/message",
        "tool/call",
        "tool/result",
        "request/header",
        "request/header-delta",
        "request/context",
        "agent/inbox/spliced",
        "session/title",
        "session/title-llm-request",
        "session/end-seed",
        "todo/write",
        "llm/retry",
        "llm/retry-started",
        "approval/policy",
        "approval/asked",
        "approval/decided",
        "sandbox/mode",
        "permission/preset",
        "plan/mode",
        "goal/change",
        "command/run",
        "command/done",
        "hook/invoked",
        "hook/result",
        "subagent/descriptor",
        "subagent/catalog",
        "image/offload",
        "workspace/changes",
        "schedule/change",
        "tool-workflow/run-start",
        "tool-workflow/run-end",
        "tool-workflow/agent-start",
        "tool-workflow/agent-end",
        "compaction/start",
        "compaction/summary",
        "compaction/end",
        "compaction/prune",
        "compact/start",
        "compact/summary",
        "compact/end",
        "compact/prune",
        *_PACKED_ROWS,
        *_DISPATCH_START,
        *_DISPATCH_END,
    }
)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _step_key(data: dict[str, Any]) -> tuple[Any, Any]:
    """The (turn, step) a step's facts belong to, hashable whatever JSON values they are."""
    turn, step = data.get("turn"), data.get("step")
    return (
        msgspec.json.encode(turn) if isinstance(turn, dict | list) else turn,
        msgspec.json.encode(step) if isinstance(step, dict | list) else step,
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _time(value: Any) -> int | None:
    number = _int(value)
    return number if number is not None and number >= 0 else None


def _blocks(value: Any) -> list[dict[str, Any]]:
    return [b for b in value if isinstance(b, dict)] if isinstance(value, list) else []


def _text(blocks: list[dict[str, Any]]) -> tuple[str, bool]:
    """(joined non-empty text blocks, has images) of a content array."""
    texts = [b["text"] for b in blocks if b.get("type") == "text" and _str(b.get("text"))]
    images = any(b.get("type") == "image" for b in blocks)
    return "\n".join(texts), images


def _seqs(value: Any) -> set[int]:
    """Expanded ``sourceEventSeqs``: members are seqs or inclusive ``[start, end]`` runs."""
    out: set[int] = set()
    if isinstance(value, list):
        for member in value:
            if _int(member) is not None:
                out.add(member)
            elif (
                isinstance(member, list)
                and len(member) == 2
                and _int(member[0]) is not None
                and _int(member[1]) is not None
            ):
                out.update(range(member[0], member[1] + 1))
    return out


def _sample(usage: Any) -> UsageSample | None:
    if not isinstance(usage, dict):
        return None
    return usage_sample(
        input=usage.get("inputTokens"),
        output=usage.get("outputTokens"),
        cached=usage.get("cacheReadTokens"),
        cache_write=usage.get("cacheWriteTokens"),
        reasoning=usage.get("reasoningTokens"),
        input_includes_cache=False,
    )


def _stream_facts(stream: Any) -> tuple[UsageSample | None, str | None]:
    """(usage, finish reason kind) of an embedded v2+ ``stream``."""
    sample: UsageSample | None = None
    finish: str | None = None
    for member in _blocks(stream):
        chunk = _dict(member.get("chunk"))
        if chunk.get("type") == "usage":
            sample = _sample(chunk.get("usage")) or sample
        elif chunk.get("type") == "finish":
            finish = _str(_dict(chunk.get("reason")).get("kind")) or finish
    return sample, finish


def _arguments(raw: Any) -> tuple[str | None, dict[str, Any]]:
    """(JSON text, parsed object) of a call's arguments; text only when it is valid JSON."""
    if isinstance(raw, dict):
        return msgspec.json.encode(raw).decode(), raw
    if isinstance(raw, str):
        try:
            parsed = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            return None, {}
        return raw, parsed if isinstance(parsed, dict) else {}
    return None, {}


def _error_text(reason: dict[str, Any], data: dict[str, Any]) -> str | None:
    for holder in (_dict(reason.get("error")), _dict(reason.get("failure")), reason):
        message = _str(holder.get("message"))
        if message:
            code = _str(holder.get("code"))
            return f"{code}: {message}" if code else message
    return _str(data.get("error"))


def _native_type(kind: str, data: dict[str, Any]) -> str:
    if kind == "assistant/chunk":
        refinement = _str(_dict(data.get("chunk")).get("type"))
        return f"{kind}/{refinement}" if refinement else kind
    return kind


@mypyc_attr(serializable=True)  # pickled in checkpoints
@dataclass(slots=True)
class _Message:
    """The latest model response of a turn, as far as the final answer needs it."""

    texts: list[DraftItem]
    tool_calls: bool
    interrupted: bool
    key: tuple[Any, Any]


@mypyc_attr(serializable=True)  # pickled in checkpoints
@dataclass(slots=True)
class _Turn:
    """An open turn."""

    loop: DraftLoop
    trigger: str | None
    seen_input: bool = False
    last: _Message | None = None
    route_model: str | None = None


@mypyc_attr(serializable=True)  # pickled in checkpoints
@dataclass(slots=True)
class _Call:
    """A drafted call; `item` / `output` are dropped once settled (a turn closed since)."""

    name: str | None
    item: DraftItem | None
    background: Any  # the ``run_in_background`` argument
    index: int  # the call Item's emission index in the source
    dispatched: bool = False
    answered: bool = False
    output: DraftItem | None = field(default=None)


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)  # see base.py
class DshAdapter(Adapter):
    """Projects one dsh session log."""

    runtime = "dsh"

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        first = next((o for o in head if isinstance(o, dict)), None)
        return (
            first is not None
            and first.get("type") == "session"
            and isinstance(first.get("id"), str)
            and _int(first.get("createdAt")) is not None
            and "timestamp" not in first
        )

    def __init__(self) -> None:
        self.session: DraftSession | None = None
        self.parent: str | None = None
        self.child = False  # a subagent child: its "user" inputs come from the parent
        self.seed_length: int | None = None
        self.seeded = False
        self.cut: int | None = None  # first record position after the inherited prefix
        self.loops: list[DraftLoop] = []
        self.items: list[DraftItem] = []
        self.unknown: dict[str, int] = {}
        self.turn: _Turn | None = None
        self.calls: dict[str, _Call] = {}
        self.pending_usage: list[tuple[int, UsageSample]] = []  # failed-attempt candidates
        self.finishes: dict[tuple[Any, Any], str] = {}  # (turn, step) -> finish reason kind
        self.compaction: tuple[int, str | None, int | None, DraftLoop | None] | None = None
        self.approvals: dict[str, str] = {}  # approval id -> tool name
        self.effort: tuple[str | None, str] | None = None  # (model, effort) of the last header
        self.window: tuple[str | None, int] | None = None  # (model, context window)
        self.next_seq = 0
        self.position = 0
        self.time: int | None = None
        # draining: emission indexes (over the whole source) of the first item still held and
        # of the first not settled; likewise for loops
        self.item_base = 0
        self.item_ready = 0
        self.loop_base = 0
        self.loop_ready = 0
        self.fresh: list[_Call] = []  # calls whose item or output is not settled yet
        self.forward: deque[tuple[int, str]] = deque()  # outputs read before their call
        self.discarded: int | None = None  # the cut an isSeeded log was last discarded to

    # -- framing callbacks -------------------------------------------------------------------

    def feed(self, position: int, obj: Any) -> RecordFacts:
        self.position = position
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            self.unknown["<no type>"] = self.unknown.get("<no type>", 0) + 1
            return RecordFacts(None, None)
        kind: str = obj["type"]
        if kind == "session" and self.session is None:
            self.time = _time(obj.get("createdAt"))
            self._header(obj)
            return RecordFacts(self.time, kind)
        self.time = _time(obj.get("time", obj.get("time0")))
        data = _dict(obj.get("data"))
        self._count_seq(obj, kind, data)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, obj, data)
        elif kind.startswith(("compaction/", "compact/")):
            self._compaction(kind.split("/", 1)[1], data)
        elif kind not in _KNOWN_TYPES:
            self.unknown[kind] = self.unknown.get(kind, 0) + 1
        return RecordFacts(self.time, _native_type(kind, data))

    def drain(self) -> tuple[list[DraftLoop], list[DraftItem]]:
        """The Loops and Items settled since the last call (see Draining above)."""
        if self.session is None or (self.seed_length is not None and self.cut is None):
            return [], []  # the id or the inherited cut is not final yet
        if self.seeded and self.seed_length is None:
            if self.cut is not None and self.cut != self.discarded:
                self.loops, self.items = _inherited_dropped(self.cut, self.loops, self.items)
                self.discarded = self.cut  # only ever moves later: dropped now, dropped then
            return [], []  # a later tagged end-seed may still move the cut
        end = self.item_ready
        while self.forward and self.forward[0][0] < end:
            index, call_id = self.forward[0]
            call = self.calls.get(call_id)
            if call is None or call.index >= end:
                end = index  # the output waits for its call
                break
            self.forward.popleft()
        items = self.items[: end - self.item_base]
        loops = self.loops[: self.loop_ready - self.loop_base]
        if not items and not loops:
            return [], []
        del self.items[: len(items)]
        del self.loops[: len(loops)]
        self.item_base += len(items)
        self.loop_base += len(loops)
        if self.cut is not None:
            loops, items = _inherited_dropped(self.cut, loops, items)
        return loops, items

    def finish(self) -> Draft:
        self._flush_usage()
        if self.compaction is not None:
            self._emit_compaction(None)
        if self.cut is not None:
            self.loops, self.items = _inherited_dropped(self.cut, self.loops, self.items)
        return Draft(self.session, self.loops, self.items, self.unknown)

    # -- header, seqs and the inherited prefix -----------------------------------------------

    def _header(self, obj: dict[str, Any]) -> None:
        session = DraftSession(str(obj["id"]), self.position, created_at=self.time)
        session.working_directory = _str(obj.get("cwd"))
        depth = _int(obj.get("delegationDepth")) or 0
        self.child = obj.get("origin") == "subagent" or depth >= 1
        self.parent = _str(obj.get("parentSession"))
        seed_length = _int(obj.get("seedLength"))
        self.seed_length = seed_length if seed_length and seed_length > 0 else None
        self.seeded = obj.get("isSeeded") is True
        if self.parent is not None:
            if self.child:
                session.delegated_from = (self.parent, self.position)
            if self.seed_length is not None or self.seeded:
                session.forked_from = (self.parent, self.position)
        self.session = session

    def _count_seq(self, obj: dict[str, Any], kind: str, data: dict[str, Any]) -> None:
        if kind in _PACKED_ROWS:
            members = data.get("texts", data.get("args"))
            width = len(members) if isinstance(members, list) and members else 1
            seq = _int(obj.get("seq0"))
        else:
            width = 1
            seq = _int(obj.get("seq"))
        seq = self.next_seq if seq is None else seq
        self.next_seq = seq + width
        if self.seed_length is not None and self.cut is None and seq + width > self.seed_length:
            self.cut = self.position if seq >= self.seed_length else self.position + 1

    def _end_seed(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        if self.seeded and self.seed_length is None and data.get("inherited") is True:
            self.cut = self.position  # the last tagged marker wins

    def _settle(self) -> None:
        """A turn closed: everything drafted so far is final (see Draining)."""
        self.item_ready = self.item_base + len(self.items)
        self.loop_ready = self.loop_base + len(self.loops)
        for call in self.fresh:
            call.item = call.output = None
        self.fresh = []

    # -- emission ----------------------------------------------------------------------------

    def _loop(self) -> DraftLoop | None:
        return self.turn.loop if self.turn is not None else None

    def _state(self, text: str) -> None:
        self.emit("runtime.state", "structural", {"text": text, "has_images": False}, self._loop())

    def _notice(self, text: str, loop: DraftLoop | None) -> None:
        self.emit("runtime.notice", "structural", {"text": text, "has_images": False}, loop)

    # -- turns -------------------------------------------------------------------------------

    def _turn_start(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        self._flush_usage()
        if self.turn is not None:
            self.turn.loop.end = self.position  # bounded by the next turn, no outcome
            self._settle()
        number = _int(data.get("turn"))
        loop = DraftLoop(start=self.position, native_id=None if number is None else str(number))
        self.loops.append(loop)
        trigger = _str(_dict(data.get("trigger")).get("kind"))
        self.turn = _Turn(loop, trigger)

    def _turn_end(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        self._flush_usage()
        turn = self.turn
        if turn is None:
            return
        reason = _dict(data.get("reason"))
        kind = _str(reason.get("kind"))
        if kind is None and "error" in data:
            kind = "error"  # legacy end without a reason kind
        outcome = _OUTCOMES.get(kind or "")
        loop = turn.loop
        loop.end, loop.outcome = self.position, outcome
        if kind == "error":
            text = _error_text(reason, data)
            if text:
                self._notice(text, loop)
        if loop.model_id is None and turn.route_model is not None:
            loop.model_id = turn.route_model
            self._loop_route(loop)
        self._promote_final(turn, kind)
        self.turn = None
        self._settle()

    def _promote_final(self, turn: _Turn, kind: str | None) -> None:
        last = turn.last
        if last is None or not last.texts or last.tool_calls or last.interrupted:
            return
        finish = self.finishes.get(last.key)
        if finish == "stop" or (finish is None and kind == "completed"):
            last.texts[-1].role = "agent.final_answer"

    def _step(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        self._flush_usage()

    # -- usage -------------------------------------------------------------------------------

    def _count(self, sample: UsageSample | None, loop: DraftLoop | None) -> None:
        if sample is not None and loop is not None:
            loop.usage.append(sample)

    def _flush_usage(self) -> None:
        """Usage chunks no message claimed belong to failed attempts: they count."""
        for _, sample in self.pending_usage:
            self._count(sample, self._loop())
        self.pending_usage = []

    def _loop_model(self, loop: DraftLoop, model: str | None) -> None:
        if loop.model_id is None and model is not None:
            loop.model_id = model
            self._loop_route(loop)

    def _loop_route(self, loop: DraftLoop) -> None:
        if self.effort is not None and self.effort[0] in (None, loop.model_id):
            loop.effort = loop.effort or self.effort[1]
        if self.window is not None and self.window[0] in (None, loop.model_id):
            loop.context_window = loop.context_window or self.window[1]

    def _request_header(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        config = _dict(_dict(data.get("header")).get("config"))
        model = _str(config.get("model"))
        effort = _str(config.get("reasoningEffort"))
        if effort is not None:
            self.effort = (model, effort)
        if self.turn is not None and model is not None:
            self.turn.route_model = model

    def _request_context(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        model = _str(data.get("model"))
        window = _int(data.get("contextWindow"))
        if window is not None and window > 0:
            self.window = (model, window)
        if self.turn is not None and model is not None:
            self.turn.route_model = model

    def _chunk(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        chunk = _dict(data.get("chunk"))
        kind = type_tag(chunk.get("type"))
        if kind == "usage":
            sample = _sample(chunk.get("usage"))
            seq = self.next_seq - 1
            if sample is not None:
                self.pending_usage.append((seq, sample))
        elif kind == "finish":
            reason = _str(_dict(chunk.get("reason")).get("kind"))
            if reason is not None:
                self.finishes[_step_key(data)] = reason

    def _attempt(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        sample, finish = _stream_facts(data.get("stream"))
        self._count(sample, self._loop())
        if finish is not None:
            self.finishes[_step_key(data)] = finish

    def _retry(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        self._flush_usage()
        failure = _dict(data.get("failure"))
        text = _error_text(failure, {})
        if text:
            self._notice(text, self._loop())

    # -- model output --------------------------------------------------------------------------

    def _assistant(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        message = data.get("message")
        flat = not isinstance(message, dict)
        msg = data if flat else _dict(message)
        loop = self._loop()
        key = _step_key(data)
        # usage: the message's own; a chunk it was built from is the same call
        sample = _sample(data.get("usage"))
        stream_sample, finish = _stream_facts(data.get("stream"))
        if finish is not None:
            self.finishes[key] = finish
        claimed = _seqs(obj.get("sourceEventSeqs"))
        pending = self.pending_usage
        # trusted only when they point before this event (redacted snapshots renumbered some)
        if claimed and max(claimed) < self.next_seq - 1:
            own = [s for q, s in pending if q in claimed]
            failed = [s for q, s in pending if q not in claimed]
        else:
            own = [s for _, s in pending[-1:]]
            failed = [s for _, s in pending[:-1]]
        self.pending_usage = []
        for earlier in failed:
            self._count(earlier, loop)
        self._count(sample or stream_sample or (own[-1] if own else None), loop)
        source = _dict(msg.get("source")) if not flat else _dict(data.get("provenance"))
        if loop is not None:
            self._loop_model(loop, _str(source.get("model")))
        texts: list[DraftItem] = []
        calls = False
        for block in _blocks(msg.get("content")):
            kind = type_tag(block.get("type"))
            if kind == "text" and _str(block.get("text")) and loop is not None:
                value = {"text": block["text"], "has_images": False}
                texts.append(self.emit("agent.commentary", "structural", value, loop))
            elif kind == "reasoning":
                thought = _str(block.get("text"))
                value = (
                    {"representation": "full", "text": thought}
                    if thought
                    else {"representation": "unavailable"}
                )
                self.emit("agent.reasoning", "structural", value, loop)
            elif kind == "tool-call":
                calls = True
                self._call(_str(block.get("id")), _str(block.get("name")), block.get("arguments"))
        if self.turn is not None:
            self.turn.last = _Message(texts, calls, data.get("interrupted") is True, key)

    def _call(self, call_id: str | None, name: str | None, raw: Any) -> DraftItem:
        text, args = _arguments(raw)
        loop = self._loop()
        if name in _DELEGATION_TOOLS:
            value = {"text": _str(args.get("prompt")), "has_images": False}
            item = self.emit("agent.delegation", "structural", value, loop, call_id=call_id)
        else:
            command = args.get("command") if name in _SHELL_TOOLS else None
            value = {"tool_name": name, "arguments": text}
            item = self.emit(
                "agent.tool_call",
                "structural",
                value,
                loop,
                call_id=call_id,
                shell_command=command if isinstance(command, str) else None,
            )
        if call_id is not None:
            index = self.item_base + len(self.items) - 1
            call = _Call(name, item, args.get("run_in_background"), index)
            self.calls[call_id] = call
            self.fresh.append(call)
        return item

    def _tool_call(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        call_id = _str(data.get("callId"))
        call = self.calls.get(call_id) if call_id is not None else None
        if call is not None and not call.dispatched:
            call.dispatched = True
            if call.item is not None:  # else settled: the Record stays
                call.item.records.append(self.position)
            return
        self._call(call_id, _str(data.get("name")), data.get("arguments"))
        if call_id is not None:
            self.calls[call_id].dispatched = True

    def _system_message(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        text, _ = _text(_blocks(_dict(data.get("message")).get("content")))
        if text:
            self.emit("runtime.instructions", "structural", {"text": text}, self._loop())

    # -- tool results ------------------------------------------------------------------------

    def _tool_result(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        shape = _result_shape(data)
        if shape is None:
            return  # refused (nested or malformed wrapper): the Record stays
        call_id, blocks, is_error = shape
        call = self.calls.get(call_id)
        if call is not None and call.answered:
            if call.output is not None:  # else settled: the Record stays
                call.output.records.append(self.position)  # a replacement of the same result
            return
        text, _ = _text(blocks)
        loop = self._loop()
        if call is not None and call.name in _DELEGATION_TOOLS:
            background = call.background
            role = "subagent.activity" if background is True else "subagent.report"
            strength = "structural" if isinstance(background, bool) else "heuristic"
            value = {"text": text or None, "has_images": False}
            call.output = self.emit(role, strength, value, loop)
            call.answered = True
            self.fresh.append(call)
            return
        failed: bool | None = is_error
        if failed is None and isinstance(data.get("error"), dict):
            failed = True
        output: dict[str, Any] = {"text": text if blocks else None}
        if call is not None and call.name in _EXIT_CODE_TOOLS and text:
            last_line = text.rstrip("\n").rsplit("\n", 1)[-1]
            code = exit_code_from_header(last_line, _EXIT_CODE)
            if code is not None:
                output["exit_code"] = code
                failed = True if code != 0 else failed
        output["failed"] = failed
        truncated = _dict(data.get("meta")).get("truncated")
        if isinstance(truncated, bool):
            output["runtime_truncated"] = truncated
        item = self.emit("tool.output", "structural", output, loop, output_of=call_id)
        if call is not None:
            call.output, call.answered = item, True
            self.fresh.append(call)
        else:
            self.forward.append((self.item_base + len(self.items) - 1, call_id))

    def _dispatch_start(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        self._call(_str(data.get("subCallId")), _str(data.get("name")), data.get("arguments"))

    def _dispatch_end(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        call_id = _str(data.get("subCallId"))
        if call_id is not None and call_id not in self.calls:
            self._dispatch_start(obj, data)
        text, _ = _text(_blocks(data.get("content")))
        failed = data.get("isError") if isinstance(data.get("isError"), bool) else None
        value = {"text": text or None, "failed": failed}
        self.emit("tool.output", "structural", value, self._loop(), output_of=call_id)

    # -- inputs --------------------------------------------------------------------------------

    def _input(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        kind: str = obj["type"]
        source = _dict(data.get("source"))
        source_kind = _str(source.get("kind"))
        plugin = _str(source.get("plugin")) if source_kind == "plugin" else None
        producer = plugin or source_kind
        blocks = _blocks(data.get("content"))
        text, images = _text(blocks)
        replace = isinstance(obj.get("surfaceOp"), dict) and obj["surfaceOp"].get("op") == "replace"
        turn = self.turn
        first = turn is not None and not turn.seen_input
        if turn is not None:
            turn.seen_input = True
        if replace and (self.compaction is not None or producer in _COMPACTION_SOURCES):
            self._emit_compaction(text)
            return
        if source_kind == "user" or (kind == "steering/message" and source_kind is None):
            self._human(kind, data, blocks, first)
        else:
            self._injected(kind, source, producer, text, images)
        if kind == "prompt/blocked" and _str(data.get("reason")):
            self._notice(f"prompt blocked: {data['reason']}", self._loop())

    def _injected(
        self, kind: str, source: dict[str, Any], producer: str | None, text: str, images: bool
    ) -> None:
        if not text and not images:
            return
        value: dict[str, Any] = {"text": text or None, "has_images": images}
        loop = self._loop()
        if producer in _REPORT_SOURCES:
            sender = _str(source.get("senderSessionId"))
            self.emit("subagent.report", "structural", value, loop, session_ref=sender)
        elif producer == "coordinator":
            sender = _str(source.get("senderSessionId"))
            if sender is not None and sender == self.parent and self.session is not None:
                ref = self.session.native_id
                self.emit("agent.delegation", "structural", value, loop, session_ref=ref)
            else:
                self.emit("subagent.activity", "structural", value, loop, session_ref=sender)
        elif producer in _SOURCES or (kind == "context/message" and producer is None):
            role, category = _SOURCES.get(producer or "", ("runtime.context", None))
            if category is not None:
                value["category"] = category
            if role == "runtime.instructions":
                value.pop("has_images")
            self.emit(role, "structural", value, loop)
        elif source.get("form") == "notice":
            self.emit("runtime.notice", "structural", value, loop)
        else:
            self.emit("runtime.unknown", "structural", value, loop)

    def _human(
        self, kind: str, data: dict[str, Any], blocks: list[dict[str, Any]], first: bool
    ) -> None:
        turn = self.turn
        if turn is None:
            return  # a human input outside any turn has no Loop to belong to
        display = _blocks(_dict(data.get("envelope")).get("displayContent")) or blocks
        text, images = _text(display)
        if not text and not images:
            return
        value = {"text": text or None, "has_images": images}
        if self.child and self.session is not None:
            ref = self.session.native_id
            self.emit("agent.delegation", "structural", value, turn.loop, session_ref=ref)
        elif first and kind != "steering/message" and turn.trigger != "injection":
            self.emit("human.request", "heuristic", value, turn.loop)
        else:
            self.emit("human.steering", "heuristic", value, turn.loop)

    # -- compaction ----------------------------------------------------------------------------

    def _compaction(self, phase: str, data: dict[str, Any]) -> None:
        if phase == "summary":
            if self.compaction is not None:
                self._emit_compaction(None)
            text, _ = _text(_blocks(data.get("summary")))
            self.compaction = (self.position, text or None, self.time, self._loop())
            if self.turn is not None:  # the summariser's own model call
                self._count(_sample(data.get("usage")), self.turn.loop)
        elif phase == "end" and self.compaction is not None:
            self._emit_compaction(None)

    def _emit_compaction(self, replacement: str | None) -> None:
        """One runtime.compaction_summary from the summary record and/or its replacement."""
        records = [self.position] if replacement is not None else []
        summary, at, loop = replacement, self.time, self._loop()
        if self.compaction is not None:
            position, text, at, loop = self.compaction
            records.insert(0, position)
            summary = text or replacement
            self.compaction = None
        item = DraftItem(
            "runtime.compaction_summary", "structural", {"summary": summary}, records, loop, at
        )
        self.items.append(item)

    # -- runtime state ------------------------------------------------------------------------

    def _todo(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        lines = [
            f"[{_str(todo.get('status')) or '?'}] {todo.get('content')}"
            for todo in _blocks(data.get("todos"))
        ]
        self._state("\n".join(lines) if lines else "(empty todo list)")

    def _mode(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        kind: str = obj["type"]
        if kind == "plan/mode" and isinstance(data.get("active"), bool):
            self._state(f"plan mode: {'on' if data['active'] else 'off'}")
            return
        field_name = {"permission/preset": "preset", "sandbox/mode": "mode"}.get(kind, "policy")
        value = _str(data.get(field_name))
        if value is not None:
            self._state(f"{kind.replace('/', ' ')}: {value}")

    def _approval(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        approval = _str(data.get("id"))
        if obj["type"] == "approval/asked":
            tool = _str(data.get("toolName")) or "a tool"
            if approval is not None:
                self.approvals[approval] = tool
            reason = _str(data.get("reason"))
            self._notice(
                f"approval asked for {tool}" + (f": {reason}" if reason else ""), self._loop()
            )
            return
        outcome = _str(data.get("outcome"))
        if outcome is not None:
            tool = self.approvals.get(approval or "", "a tool")
            self._state(f"approval for {tool}: {outcome}")

    def _goal(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        operation = _str(data.get("operation"))
        objective = _str(_dict(data.get("goal")).get("objective"))
        if operation is not None:
            self._state(f"goal {operation}" + (f": {objective}" if objective else ""))

    def _command(self, obj: dict[str, Any], data: dict[str, Any]) -> None:
        loop = self._loop()
        if obj["type"] == "command/run":
            name = _str(data.get("name"))
            if name is not None:
                args = data.get("args") if isinstance(data.get("args"), str) else ""
                value = {"text": f"/{name}{args}", "has_images": False, "category": "internal"}
                self.emit("runtime.context", "structural", value, loop)
        elif _str(data.get("text")):
            self._notice(data["text"], loop)


def _inherited_dropped(
    cut: int, loops: list[DraftLoop], items: list[DraftItem]
) -> tuple[list[DraftLoop], list[DraftItem]]:
    """Loops and items without what comes from the inherited prefix (before record `cut`).

    An item after the cut in an inherited Loop loses its Loop, or is dropped when its role
    needs one.
    """
    kept: list[DraftItem] = []
    for item in items:
        if min(item.records) < cut:
            continue
        if item.loop is not None and item.loop.start < cut:
            if item.role in LOOP_BOUND_ROLES:
                continue
            item.loop = None
        kept.append(item)
    return [loop for loop in loops if loop.start >= cut], kept


def _result_shape(data: dict[str, Any]) -> tuple[str, list[dict[str, Any]], bool | None] | None:
    """(call id, result blocks, isError) of a tool result in any of its three shapes.

    None when the shape is refused: a V3 wrapper must hold exactly one ``tool-result`` block
    naming the message's call, with an array content that holds no further ``tool-result``.
    """
    message = data.get("message")
    if not isinstance(message, dict):  # flat pre-release shape
        call_id = _str(data.get("callId"))
        content = data.get("content")
        if call_id is None or not isinstance(content, list):
            return None
        flag = data.get("isError")
        return call_id, _blocks(content), flag if isinstance(flag, bool) else None
    source_call = _str(_dict(message.get("source")).get("callId"))
    content = message.get("content")
    if not isinstance(content, list):
        return None
    if message.get("role") == "tool":  # V4 native
        call_id = _str(message.get("toolCallId")) or source_call
        blocks = _blocks(content)
        if call_id is None or any(b.get("type") == "tool-result" for b in blocks):
            return None
        flag = message.get("isError")
        return call_id, blocks, flag if isinstance(flag, bool) else None
    if len(content) != 1 or not isinstance(content[0], dict):
        return None
    wrapper = content[0]
    inner = wrapper.get("content")
    call_id = _str(wrapper.get("toolCallId"))
    if (
        wrapper.get("type") != "tool-result"
        or call_id is None
        or (source_call is not None and source_call != call_id)
        or not isinstance(inner, list)
        or any(isinstance(b, dict) and b.get("type") == "tool-result" for b in inner)
    ):
        return None
    flag = wrapper.get("isError")
    return call_id, _blocks(inner), flag if isinstance(flag, bool) else None


_HANDLERS: Final = {
    "turn/start": DshAdapter._turn_start,
    "turn/end": DshAdapter._turn_end,
    "step/start": DshAdapter._step,
    "step/end": DshAdapter._step,
    "session/end-seed": DshAdapter._end_seed,
    "request/header": DshAdapter._request_header,
    "request/context": DshAdapter._request_context,
    "assistant/chunk": DshAdapter._chunk,
    "assistant/attempt": DshAdapter._attempt,
    "assistant/message": DshAdapter._assistant,
    "llm/retry": DshAdapter._retry,
    "tool/call": DshAdapter._tool_call,
    "tool/result": DshAdapter._tool_result,
    "system/message": DshAdapter._system_message,
    "developer/message": DshAdapter._system_message,
    "todo/write": DshAdapter._todo,
    "permission/preset": DshAdapter._mode,
    "sandbox/mode": DshAdapter._mode,
    "approval/policy": DshAdapter._mode,
    "plan/mode": DshAdapter._mode,
    "approval/asked": DshAdapter._approval,
    "approval/decided": DshAdapter._approval,
    "goal/change": DshAdapter._goal,
    "command/run": DshAdapter._command,
    "command/done": DshAdapter._command,
    **dict.fromkeys(_INPUT_EVENTS, DshAdapter._input),
    **dict.fromkeys(_DISPATCH_START, DshAdapter._dispatch_start),
    **dict.fromkeys(_DISPATCH_END, DshAdapter._dispatch_end),
}


register(DshAdapter)  # not a decorator: mypyc makes decorated classes Python classes
