"""Claude Code adapter: session transcripts (main and subagent files) to draft facts.

Checked against Claude Code 1.0.98, 1.0.108, 2.0.64, 2.0.76, 2.1.4–2.1.39, 2.1.145 (public
corpus) and 2.1.332 (generated corpus).

Detection: a record among the first few carries a string ``sessionId`` and a string ``type``
(Claude stamps it on almost every record), or the file opens with a ``summary`` record with
``leafUuid``. Files whose records lack ``sessionId`` (e.g. ``claude -p`` stdout streams, which
say ``session_id``) are not claimed.

Session: one per file. Native id = ``sessionId``; in a subagent transcript (its first
identified record is ``isSidechain: true`` with ``agentId``) the native id is the ``agentId``
and ``delegated_from`` names the parent ``sessionId``. ``created_at`` = first timestamp,
``working_directory`` = first ``cwd``.

Loops (Claude writes no turn records):

* A human prompt record (``user`` text that is not a tool result, not ``isMeta``, not a
  compaction summary, not a runtime wrapper) starts a new Loop; so does a task notification
  that starts a turn (``origin.kind: task-notification`` / ``<task-notification>`` text) and,
  in a subagent transcript, the task prompt (the subagent's run). A queued prompt
  (``queued_command`` attachment) delivered while a Loop is open is steering of that Loop.
* Assistant activity with no open Loop (e.g. after a slash command that runs the agent such as
  ``/init``) opens a Loop at the runtime input that triggered it, else at the response itself.
* End: ``system/turn_duration`` ends the Loop (no outcome); an interrupt marker
  (``[Request interrupted by user…`` or ``interruptedMessageId``) ends it ``interrupted``; a
  synthetic API-error message (``isApiErrorMessage``) ends it ``failed``; otherwise the next
  Loop's start bounds it without an outcome. A model stop reason alone never ends a Loop.
* Final answer: the last non-empty text block of the Loop's last model response when that
  response stopped with ``end_turn``/``stop_sequence`` (Claude Code's loop returns exactly such
  a response); every other assistant text is commentary.

Usage: every content block is its own ``assistant`` line repeating the response's usage;
lines are grouped by (``message.id``, ``requestId``) and the line with the largest
``output_tokens`` counts once. Claude input excludes cache reads/writes (normalised).
``output_tokens_details.thinking_tokens`` is reasoning. ``<synthetic>`` messages are not calls.

Tool results: ``failed`` from ``is_error`` (omitted means false in the Messages API);
``exit_code`` only from the ``Exit code N`` line Claude writes at the start of an error
result; ``duration_ms`` from ``toolUseResult.durationMs`` / ``totalDurationMs``;
``runtime_truncated`` from ``toolUseResult.truncated``. The ``Bash`` tool's ``command`` is the
declared shell command. ``Agent``/``Task`` calls are delegations; their results are subagent
reports (or activity while the subagent runs in the background).

Drain: a Loop settles when the next Loop starts: its usage is summed and its final answer
chosen then, and lines of a response (same ``message.id``) are taken not to recur after that
(a response without ``message.id`` stays open, so its Loop waits for ``finish``). Items leave
in emission order up to the first one that may still change: the latest text of an
unsettled Loop's latest response (a final-answer candidate), a delegation call awaiting its
result (which names its subagent), or a tool result whose call is not in the transcript yet;
the latter two are held at most until the next Loop starts. Nothing leaves before the
session id is known.
"""

from __future__ import annotations

import re
from collections import deque
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
    members,
)
from traceidx.rules import (
    UsageSample,
    exit_code_from_header,
    message_text,
    type_tag,
    usage_sample,
)
from traceidx.timestamps import rfc3339_ms

#: the members of a record the adapter reads (`obj` in this module; `tests/test_decoding.py`
#: checks that every key looked up on it is here), and of its ``toolUseResult`` (`facts`) only
#: the facts taken from it, not the file contents, output and patches the runtime repeats there
_READS: Final = (  # in the order the runtime writes them (each lookup starts after the last match)
    "operation", "isSidechain", "cwd", "sessionId", "agentId", "content", "type", "message",
    "requestId", "subtype", "isCompactSummary", "compactMetadata", "isMeta", "error",
    "isApiErrorMessage", "interruptedMessageId", "attachment", "toolUseResult", "taskId",
    "timestamp", "sourceToolUseID", "promptSource", "origin", "effort",
)  # fmt: skip
_TOOL_USE_RESULT: Final = (
    "durationMs", "totalDurationMs", "truncated", "backgroundTaskId", "taskId", "agentId",
    "status", "isAsync",
)  # fmt: skip
_RECORD: Final = members(
    "ClaudeCodeRecord", _READS, {"toolUseResult": members("ToolUseResult", _TOOL_USE_RESULT)}
)

_EXIT_CODE: Final = re.compile(r"Exit code (-?\d+)(?:\n|$)")
_INTERRUPT_PREFIX: Final = "[Request interrupted by user"
_DELEGATION_TOOLS: Final = frozenset({"Agent", "Task"})
_SHELL_TOOLS: Final = frozenset({"Bash"})
_TOOL_USE_BLOCKS: Final = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_HUMAN_PROMPT_SOURCES: Final = {"typed": "structural", "queued": "structural", "sdk": "heuristic"}
_HUMAN_PROMPT_SOURCES["suggestion_accepted"] = "structural"
_FINAL_STOP_REASONS: Final = frozenset({"end_turn", "stop_sequence"})

#: leading markers of runtime-written user text -> (role, category, opens-agent-work)
_USER_MARKERS: Final[tuple[tuple[str, str, str | None, bool], ...]] = (
    ("<command-name>", "runtime.context", "internal", True),
    ("<command-message>", "runtime.context", "internal", True),
    ("<command-args>", "runtime.context", "internal", True),
    ("<local-command-stdout>", "runtime.notice", None, False),
    ("<local-command-stderr>", "runtime.notice", None, False),
    ("<local-command-caveat>", "runtime.notice", None, False),
    ("Caveat: The messages below were generated by the user", "runtime.notice", None, False),
    ("<bash-input>", "runtime.context", "internal", False),
    ("<bash-stdout>", "runtime.context", "internal", False),
    ("<bash-stderr>", "runtime.context", "internal", False),
    ("<system-reminder>", "runtime.context", None, False),
    ("<user-memory-input>", "runtime.context", "memory", False),
)

#: attachment.type -> (role, category); unlisted types with text become runtime.unknown
_ATTACHMENTS: Final[dict[str, tuple[str, str | None]]] = {
    "task_reminder": ("runtime.notice", None),
    "date_change": ("runtime.notice", None),
    "goal_status": ("runtime.notice", None),
    "read_truncation_notice": ("runtime.notice", None),
    "max_turns_reached": ("runtime.notice", None),
    "hook_system_message": ("runtime.notice", None),
    "hook_success": ("runtime.notice", None),
    "hook_cancelled": ("runtime.notice", None),
    "hook_blocking_error": ("runtime.notice", None),
    "hook_additional_context": ("runtime.context", None),
    "total_tokens_reminder": ("runtime.state", None),
    "edited_text_file": ("runtime.state", None),
    "plan_mode": ("runtime.state", None),
    "plan_mode_exit": ("runtime.state", None),
    "auto_mode": ("runtime.state", None),
    "auto_mode_exit": ("runtime.state", None),
    "file": ("runtime.context", "file"),
    "compact_file_reference": ("runtime.context", "file"),
    "plan_file_reference": ("runtime.context", "file"),
    "opened_file_in_ide": ("runtime.context", "file"),
    "selected_lines_in_ide": ("runtime.context", "file"),
    "nested_memory": ("runtime.context", "memory"),
    "environment": ("runtime.context", "environment"),
    "date": ("runtime.context", "environment"),
    "session_context": ("runtime.context", "environment"),
    "model": ("runtime.context", "environment"),
    "command_permissions": ("runtime.instructions", "permission"),
    "invoked_skills": ("runtime.instructions", "skill"),
    "skill_listing": ("runtime.instructions", "tool_catalog"),
    "agent_listing_delta": ("runtime.instructions", "tool_catalog"),
    "deferred_tools_delta": ("runtime.instructions", "tool_catalog"),
    "mcp_instructions_delta": ("runtime.instructions", "tool_catalog"),
    "queued_command": ("runtime.context", "internal"),
}
#: attachments that only snapshot what other records already state: Record only
_BOOKKEEPING_ATTACHMENTS: Final = frozenset({"prompt_snapshot", "remote_session_change"})

_KNOWN_TYPES: Final = frozenset(
    {
        "user",
        "assistant",
        "system",
        "attachment",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "permission-mode",
        "ai-title",
        "custom-title",
        "last-prompt",
        "mode",
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "atis-latch",
        "cost-state",
        "tools-used",
        "started",
        "result",
        "agent-name",
        "tag",
    }
)

_NOTIFICATION_TAGS: Final = ("task-id", "tool-use-id", "status", "result", "summary")


def _text_blocks(content: Any) -> tuple[str, bool, list[dict[str, Any]]]:
    """(joined non-empty text, has images, tool_result blocks) of a message content."""
    text, images = message_text(content)
    blocks = content if isinstance(content, list) else []
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    return text, images, results


def _result_text(block: dict[str, Any]) -> tuple[str | None, bool]:
    content = block.get("content")
    if content is None:
        return None, False
    text, images, _ = _text_blocks(content)
    return text, images


def _tags(text: str) -> dict[str, str]:
    """The fields of a ``<task-notification>`` text."""
    found = {}
    for tag in _NOTIFICATION_TAGS:
        match = re.search(f"<{tag}>(.*?)</{tag}>", text, re.S)
        if match:
            found[tag] = match.group(1).strip()
    return found


def _attachment_text(att: dict[str, Any]) -> str | None:
    for key in ("text", "prompt", "snippet", "reason", "message", "content"):
        value = att.get(key)
        if isinstance(value, str) and value.strip():
            return value
    for key in ("addedLines", "addedBlocks"):
        value = att.get(key)
        if isinstance(value, list) and value:
            return "\n".join(str(v) for v in value)
    file = att.get("content")
    if isinstance(file, dict) and isinstance(file.get("file"), dict):
        inner = file["file"].get("content")
        if isinstance(inner, str):
            return inner
    skills = att.get("skills")
    if isinstance(skills, list):
        parts = [s["content"] for s in skills if isinstance(s, dict) and s.get("content")]
        if parts:
            return "\n\n".join(str(p) for p in parts)
    for key in ("displayPath", "filename"):
        value = att.get(key)
        if isinstance(value, str) and value:
            return value
    if isinstance(att.get("date"), str):
        return str(att["date"])
    return None


def _native_type(obj: dict[str, Any]) -> str | None:
    kind = obj.get("type")
    if not isinstance(kind, str):
        return None
    refinement: object = None
    if kind == "system":
        refinement = obj.get("subtype")
    elif kind == "attachment" and isinstance(obj.get("attachment"), dict):
        refinement = obj["attachment"].get("type")
    elif kind == "queue-operation":
        refinement = obj.get("operation")
    elif kind in ("user", "assistant") and isinstance(obj.get("message"), dict):
        content = obj["message"].get("content")
        if isinstance(content, str):
            refinement = "text"
        elif isinstance(content, list) and content and isinstance(content[0], dict):
            refinement = content[0].get("type")
    return f"{kind}/{refinement}" if isinstance(refinement, str) else kind


@mypyc_attr(serializable=True)  # pickled in checkpoints
class _Turn:
    """A Loop not yet drained, with the API responses that count towards its usage."""

    __slots__ = ("last", "loop", "responses", "settled")

    def __init__(self, loop: DraftLoop) -> None:
        self.loop = loop
        self.responses: list[_Response] = []  # in creation order
        self.last: _Response | None = None  # the latest one: its text may be the final answer
        self.settled = False  # usage and final answer are fixed: the Loop may be drained


@mypyc_attr(serializable=True)  # pickled in checkpoints
class _Response:
    """One API response assembled from its per-block lines."""

    __slots__ = ("key", "output", "sample", "stop_reason", "text", "turn")

    def __init__(self, key: tuple[str, str], turn: _Turn) -> None:
        self.key = key
        self.turn = turn
        self.sample: UsageSample | None = None
        self.output = -1
        self.stop_reason: str | None = None
        self.text: DraftItem | None = None  # its latest text while it is its Loop's latest


def _closable(key: tuple[str, str]) -> bool:
    """Whether lines of this response stop once a later Loop starts (it has a message id)."""
    return key[0] != "None" and key[0] != ""


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)  # see base.py
class ClaudeCodeAdapter(Adapter):
    """Projects one Claude Code transcript."""

    runtime = "claude_code"
    record_type = _RECORD

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        dicts = [o for o in head if isinstance(o, dict)]
        if dicts and dicts[0].get("type") == "summary" and "leafUuid" in dicts[0]:
            return True
        return any(
            isinstance(o.get("sessionId"), str) and isinstance(o.get("type"), str) for o in dicts
        )

    def __init__(self) -> None:
        self.session: DraftSession | None = None
        self.parent_session: str | None = None
        self.subagent = False
        self.turns: deque[_Turn] = deque()  # the Loops not drained yet, in order
        self.turn: _Turn | None = None  # the current Loop's
        self.items: list[DraftItem] = []  # the items not drained yet, in order
        self.loop: DraftLoop | None = None  # the current Loop
        self.open = False  # whether the current Loop may still receive work
        self.pending_start: int | None = None  # runtime input that may start agent work
        self.responses: dict[tuple[str, str], _Response] = {}  # responses still open
        self.calls: dict[str, str] = {}  # tool_use id -> tool name
        self.delegations: dict[str, DraftItem] = {}  # call id -> call awaiting its subagent
        self.held: set[int] = set()  # id() of the items that may still change
        self.waiting: dict[int, DraftItem] = {}  # held until the next Loop starts
        self.agent_tasks: dict[str, str] = {}  # task/agent id -> kind ("agent" | call id)
        self.unknown: dict[str, int] = {}
        self.position = 0
        self.time: int | None = None

    # -- framing callbacks -------------------------------------------------------------------

    def feed(self, position: int, obj: Any) -> RecordFacts:
        self.position = position
        if not isinstance(obj, dict):
            self.unknown["<not an object>"] = self.unknown.get("<not an object>", 0) + 1
            return RecordFacts(None, None)
        self.time = rfc3339_ms(obj.get("timestamp"))
        self._session_facts(obj)
        kind = type_tag(obj.get("type"))
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            handler(self, obj)
        elif not isinstance(kind, str) or kind not in _KNOWN_TYPES:
            name = str(kind)
            self.unknown[name] = self.unknown.get(name, 0) + 1
        return RecordFacts(self.time, _native_type(obj))

    def drain(self) -> tuple[list[DraftLoop], list[DraftItem]]:
        if self.session is None:
            return [], []
        loops: list[DraftLoop] = []
        turns = self.turns
        while turns and turns[0].settled:
            loops.append(turns.popleft().loop)
        items, held = self.items, self.held
        count = 0
        while count < len(items) and id(items[count]) not in held:
            count += 1
        if count == 0:
            return loops, []
        settled = items[:count]
        del items[:count]
        return loops, settled

    def finish(self) -> Draft:
        for turn in self.turns:
            if not turn.settled:
                self._settle(turn)
        loops = [turn.loop for turn in self.turns]
        return Draft(self.session, loops, self.items, self.unknown)

    # -- drafts that may still change --------------------------------------------------------

    def _hold(self, item: DraftItem, until_next_loop: bool = False) -> None:
        self.held.add(id(item))
        if until_next_loop:
            self.waiting[id(item)] = item

    def _release(self, item: DraftItem) -> None:
        self.held.discard(id(item))
        self.waiting.pop(id(item), None)

    def _settle(self, turn: _Turn) -> None:
        """Fix a Loop's usage and final answer (nothing can change them any more)."""
        for response in turn.responses:
            if response.sample is not None:
                turn.loop.usage.append(response.sample)
        last = turn.last
        if last is not None:
            self._promote_final(last)
            if last.text is not None:
                self._release(last.text)
                last.text = None
        turn.responses, turn.last, turn.settled = [], None, True

    def _close_turn(self, turn: _Turn) -> None:
        """A later Loop started: close the responses of `turn` and settle it if it can be."""
        open_response = False
        for response in turn.responses:
            if _closable(response.key):
                self.responses.pop(response.key, None)
            else:
                open_response = True
        if not open_response:
            self._settle(turn)
        for item in self.waiting.values():
            self.held.discard(id(item))
        self.waiting.clear()
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
        cwd = obj.get("cwd")
        if session.working_directory is None and isinstance(cwd, str) and cwd:
            session.working_directory = cwd

    # -- loops ---------------------------------------------------------------------------------

    def _start_loop(self, position: int) -> DraftLoop:
        previous = self.loop
        if previous is not None and previous.end is None:
            previous.end = position  # the next Loop's start bounds it; no outcome
        if self.turn is not None:
            self._close_turn(self.turn)
        loop = DraftLoop(start=position)
        self.turn = _Turn(loop)
        self.turns.append(self.turn)
        self.loop, self.open, self.pending_start = loop, True, None
        return loop

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

    def _user(self, obj: dict[str, Any]) -> None:
        message = obj.get("message")
        if not isinstance(message, dict):
            return
        text, images, results = _text_blocks(message.get("content"))
        if results:
            loop = self._current() or self.loop
            for block in results:
                self._tool_result(obj, block, loop)
        if isinstance(obj.get("interruptedMessageId"), str):
            self._end_loop("interrupted")
        if not text and not images:
            return
        self._user_text(obj, text, images, bool(results))

    def _user_text(self, obj: dict[str, Any], text: str, images: bool, in_result: bool) -> None:
        value = {"text": text or None, "has_images": images}
        origin = obj.get("origin")
        origin_kind = origin.get("kind") if isinstance(origin, dict) else None
        if obj.get("isCompactSummary") is True:
            self.emit("runtime.compaction_summary", "structural", {"summary": text}, None)
        elif origin_kind == "task-notification" or text.startswith("<task-notification>"):
            strength = "structural" if origin_kind == "task-notification" else "heuristic"
            self._notification(text, strength, self._start_loop(self.position))
        elif text.startswith(_INTERRUPT_PREFIX):
            self.emit("runtime.notice", "heuristic", value, self._current() or self.loop)
            self._end_loop("interrupted")
        elif obj.get("isMeta") is True:
            self._meta(obj, text, images)
        elif (marker := _marker(text)) is not None:
            role, category, starts_work = marker
            if category is not None:
                value["category"] = category
            if starts_work:  # a command typed at the prompt: no turn is running any more
                self._bound_loop()
                self.pending_start = self.position
            self.emit(role, "heuristic", value, self._current())
        elif obj.get("isSidechain") is True or self.subagent:
            self._subagent_input(value)
        elif in_result:
            self.emit("runtime.context", "heuristic", value, self._current())
        else:
            self._human_prompt(obj, value, origin_kind)

    def _human_prompt(self, obj: dict[str, Any], value: dict[str, Any], origin: object) -> None:
        source = type_tag(obj.get("promptSource"))
        if origin == "human":
            strength = "structural"
        elif isinstance(origin, str) or source == "system":
            self.emit("runtime.notice", "structural", value, self._current())
            return
        else:
            strength = _HUMAN_PROMPT_SOURCES.get(source, "heuristic") if source else "heuristic"
        loop = self._start_loop(self.position)
        self.emit("human.request", strength, value, loop)

    def _subagent_input(self, value: dict[str, Any]) -> None:
        session = self.session
        ref = session.native_id if session is not None and self.subagent else None
        if self.subagent:
            loop = self.loop if self.open else self._start_loop(self.position)
            self.emit("agent.delegation", "structural", value, loop, session_ref=ref)
        else:  # inline sidechain (Claude Code 1.0.x): a subagent's input inside the main file
            self.emit("subagent.activity", "structural", value, self._current())

    def _meta(self, obj: dict[str, Any], text: str, images: bool) -> None:
        call = self.calls.get(str(obj.get("sourceToolUseID")))
        loop = self._current()
        value: dict[str, Any]
        if call == "Skill":
            value = {"text": text or None, "category": "skill"}
            self.emit("runtime.instructions", "structural", value, loop)
        elif images:
            value = {"text": text or None, "has_images": True, "category": "file"}
            self.emit("runtime.context", "structural", value, loop)
        else:
            self.emit("runtime.notice", "structural", {"text": text}, loop)
            if not self.open:
                self.pending_start = self.position

    def _notification(self, text: str, strength: str, loop: DraftLoop) -> None:
        tags = _tags(text)
        task, call_id, status = tags.get("task-id"), tags.get("tool-use-id"), tags.get("status")
        body = tags.get("result") or tags.get("summary") or text
        if task is not None and self.agent_tasks.get(task) == "agent":
            report = {"text": body, "has_images": False}
            self.emit("subagent.report", strength, report, loop, session_ref=task)
        elif call_id is not None and call_id in self.calls:
            failed = {"completed": False, "failed": True}.get(status or "")
            output = {"text": body, "failed": failed}
            self.emit("tool.output", strength, output, loop, output_of=call_id)
        else:
            self.emit("runtime.notice", strength, {"text": text}, loop)

    def _tool_result(self, obj: dict[str, Any], block: dict[str, Any], loop: Any) -> None:
        call_id = block.get("tool_use_id")
        call = self.calls.get(call_id) if isinstance(call_id, str) else None
        text, images = _result_text(block)
        extra = obj.get("toolUseResult")
        facts = extra if isinstance(extra, dict) else {}
        if call in _DELEGATION_TOOLS:
            self._delegation_result(block, facts, text, images, loop)
            return
        value: dict[str, Any] = {"text": text}
        # The Messages API defines an omitted ``is_error`` as false: that is a reported fact.
        is_error = block.get("is_error", False)
        if isinstance(is_error, bool):
            value["failed"] = is_error
            if is_error and text:
                value["exit_code"] = exit_code_from_header(text, _EXIT_CODE)
        duration = facts.get("durationMs", facts.get("totalDurationMs"))
        if isinstance(duration, int | float) and not isinstance(duration, bool) and duration >= 0:
            value["duration_ms"] = int(duration)
        if isinstance(facts.get("truncated"), bool):
            value["runtime_truncated"] = facts["truncated"]
        task = facts.get("backgroundTaskId") or facts.get("taskId")
        if isinstance(task, str) and isinstance(call_id, str):
            self.agent_tasks[task] = call_id
        ref = call_id if isinstance(call_id, str) else None
        output = self.emit("tool.output", "structural", value, loop, output_of=ref)
        if ref is not None and call is None:  # its call may still come: keep them in order
            self._hold(output, until_next_loop=True)

    def _delegation_result(
        self,
        block: dict[str, Any],
        facts: dict[str, Any],
        text: str | None,
        images: bool,
        loop: Any,
    ) -> None:
        agent = facts.get("agentId")
        call_id = block.get("tool_use_id")
        call = self.delegations.pop(str(call_id), None)  # a call has one result
        if isinstance(agent, str):
            self.agent_tasks[agent] = "agent"
            if call is not None:
                call.session_ref = agent
        if call is not None:
            self._release(call)
        value = {"text": text, "has_images": images}
        ref = agent if isinstance(agent, str) else None
        running = facts.get("status") in ("async_launched", "running") or facts.get("isAsync")
        role = "subagent.activity" if running else "subagent.report"
        self.emit(role, "structural", value, loop, session_ref=ref)

    # -- assistant records ------------------------------------------------------------------

    def _assistant(self, obj: dict[str, Any]) -> None:
        message = obj.get("message")
        if not isinstance(message, dict):
            return
        content = message.get("content")
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        if isinstance(content, str):
            blocks = [{"type": "text", "text": content}]
        model = message.get("model")
        if obj.get("isApiErrorMessage") is True or model == "<synthetic>":
            self._synthetic(blocks, obj.get("isApiErrorMessage") is True)
            return
        loop = self._working_loop()
        response = self._response(obj, message, loop)
        sidechain = obj.get("isSidechain") is True and not self.subagent
        cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) else None
        for block in blocks:
            self._assistant_block(block, loop, response, sidechain, cwd)

    def _synthetic(self, blocks: list[dict[str, Any]], api_error: bool) -> None:
        loop = self._current() or self.loop
        for block in blocks:
            if block.get("type") == "text" and block.get("text"):
                self.emit("runtime.notice", "structural", {"text": block["text"]}, loop)
        if api_error:
            self._end_loop("failed")

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
            response = self.responses[key] = _Response(key, turn)
            turn.responses.append(response)
            turn.last = response
        model = message.get("model")
        if loop.model_id is None and isinstance(model, str) and model:
            loop.model_id = model
        effort = obj.get("effort", message.get("effort"))
        if loop.effort is None and isinstance(effort, str) and effort:
            loop.effort = effort
        if isinstance(message.get("stop_reason"), str):
            response.stop_reason = message["stop_reason"]
        usage = message.get("usage")
        if isinstance(usage, dict):
            output = usage.get("output_tokens")
            if (
                isinstance(output, int)
                and not isinstance(output, bool)
                and output > response.output
            ):
                details = usage.get("output_tokens_details")
                thinking = details.get("thinking_tokens") if isinstance(details, dict) else None
                response.output = output
                response.sample = usage_sample(
                    input=usage.get("input_tokens"),
                    output=output,
                    cached=usage.get("cache_read_input_tokens"),
                    cache_write=usage.get("cache_creation_input_tokens"),
                    reasoning=thinking,
                    input_includes_cache=False,
                )
        return response

    def _assistant_block(
        self,
        block: dict[str, Any],
        loop: DraftLoop,
        response: _Response,
        sidechain: bool,
        cwd: str | None,
    ) -> None:
        kind = type_tag(block.get("type"))
        if kind == "text":
            text = block.get("text") if isinstance(block.get("text"), str) else ""
            if not text:
                return
            value = {"text": text, "has_images": False}
            if sidechain:
                self.emit("subagent.activity", "structural", value, loop)
                return
            item = self.emit("agent.commentary", "structural", value, loop)
            if response.turn.last is response and not response.turn.settled:
                if response.text is not None:
                    self._release(response.text)
                response.text = item
                self._hold(item)
        elif kind in ("thinking", "redacted_thinking"):
            thought = block.get("thinking") if kind == "thinking" else None
            if isinstance(thought, str) and thought.strip():
                value = {"representation": "full", "text": thought}
            else:
                value = {"representation": "unavailable"}
            self.emit("agent.reasoning", "structural", value, loop)
        elif kind in _TOOL_USE_BLOCKS:
            self._tool_use(block, loop, cwd)

    def _tool_use(self, block: dict[str, Any], loop: DraftLoop, cwd: str | None) -> None:
        name = block.get("name") if isinstance(block.get("name"), str) else None
        call_id = block.get("id") if isinstance(block.get("id"), str) else None
        args = block.get("input")
        if name in _DELEGATION_TOOLS and isinstance(args, dict):
            prompt = args.get("prompt") if isinstance(args.get("prompt"), str) else None
            value = {"text": prompt, "has_images": False}
            item = self.emit("agent.delegation", "structural", value, loop, call_id=call_id)
        else:
            value = {"tool_name": name, "working_directory": cwd}
            if args is not None:
                value["arguments"] = msgspec.json.encode(args).decode()
            command = args.get("command") if isinstance(args, dict) else None
            shell = command if name in _SHELL_TOOLS and isinstance(command, str) else None
            item = self.emit(
                "agent.tool_call", "structural", value, loop, call_id=call_id, shell_command=shell
            )
        if call_id is not None and name is not None:
            self.calls[call_id] = name
            replaced = self.delegations.pop(call_id, None)
            if replaced is not None:
                self._release(replaced)
            if name in _DELEGATION_TOOLS:  # its result names the subagent
                self.delegations[call_id] = item
                self._hold(item, until_next_loop=True)

    def _promote_final(self, response: _Response) -> None:
        if response.stop_reason in _FINAL_STOP_REASONS and response.text is not None:
            response.text.role = "agent.final_answer"

    # -- other records ----------------------------------------------------------------------

    def _system(self, obj: dict[str, Any]) -> None:
        subtype = obj.get("subtype")
        if subtype == "turn_duration":
            self._end_loop(None)
            return
        metadata = obj.get("compactMetadata")
        manual = isinstance(metadata, dict) and metadata.get("trigger") == "manual"
        if subtype == "compact_boundary" and manual:  # /compact runs between turns
            self._bound_loop()
        content = obj.get("content")
        text = content if isinstance(content, str) and content else None
        if text is None:
            error = obj.get("error")
            text = error if isinstance(error, str) else str(subtype or "system")
        self.emit("runtime.notice", "structural", {"text": text}, self._current())

    def _attachment(self, obj: dict[str, Any]) -> None:
        att = obj.get("attachment")
        if not isinstance(att, dict):
            return
        kind = att.get("type")
        if not isinstance(kind, str) or kind in _BOOKKEEPING_ATTACHMENTS:
            return
        if kind == "queued_command":
            mode = att.get("commandMode")
            prompt = att.get("prompt")
            if mode == "task-notification" and isinstance(prompt, str):
                running = self.loop if self.loop is not None and self.open else None
                self._notification(prompt, "structural", running or self._start_loop(self.position))
                return
            if mode in (None, "prompt"):
                self._queued_prompt(att)
                return
        text = _attachment_text(att)
        if text is None:
            return
        role, category = _ATTACHMENTS.get(kind, ("runtime.unknown", None))
        value: dict[str, Any] = {"text": text}
        if role in ("runtime.context", "runtime.instructions") and category is not None:
            value["category"] = category
        if role in ("runtime.context", "runtime.state", "runtime.notice", "runtime.unknown"):
            value["has_images"] = False
        self.emit(role, "structural", value, self._current())

    def _queued_prompt(self, att: dict[str, Any]) -> None:
        prompt = att.get("prompt")
        text, images, _ = _text_blocks(prompt)
        if not text and not images:
            return
        origin = att.get("origin")
        human = isinstance(origin, dict) and origin.get("kind") == "human"
        strength = "structural" if human else "heuristic"
        value = {"text": text or None, "has_images": images}
        if self.loop is not None and self.open:
            self.emit("human.steering", strength, value, self.loop)
        else:
            self.emit("human.request", strength, value, self._start_loop(self.position))

    def _control(self, obj: dict[str, Any]) -> None:
        agent = obj.get("agentId") or obj.get("taskId")
        role = "subagent.activity" if obj.get("type") == "started" else "subagent.report"
        value = {"text": str(obj.get("type")), "has_images": False}
        ref = agent if isinstance(agent, str) else None
        self.emit(role, "structural", value, self._current(), session_ref=ref)


def _marker(text: str) -> tuple[str, str | None, bool] | None:
    stripped = text.lstrip()
    for prefix, role, category, starts_work in _USER_MARKERS:
        if stripped.startswith(prefix):
            return role, category, starts_work
    return None


_HANDLERS: Final = {
    "user": ClaudeCodeAdapter._user,
    "assistant": ClaudeCodeAdapter._assistant,
    "system": ClaudeCodeAdapter._system,
    "attachment": ClaudeCodeAdapter._attachment,
    "started": ClaudeCodeAdapter._control,
    "result": ClaudeCodeAdapter._control,
}


register(ClaudeCodeAdapter)  # not a decorator: mypyc makes decorated classes Python classes
