"""OpenAI Codex adapter: rollout files (CLI, TUI, exec and Desktop) to draft facts.

Checked against: the legacy pre-wrapper rollout (Sep 2025), Codex Desktop 0.104.0-alpha.1,
codex-tui 0.125.0, Codex Desktop 0.128 / 0.140 / 0.142 (with subagent children) from the
public corpus, and codex-cli 0.171.0 (``codex exec``, generated corpus with ground truth).

Eras and detection (by structure, never by file name):

* wrapped rollouts: every line is ``{timestamp, type, payload}`` with ``type`` one of
  ``session_meta``, ``response_item``, ``event_msg``, ``turn_context``, ``compacted``,
  ``token_usage_record``, ``world_state``; 0.171 adds an ``ordinal`` per line and the
  ``event_msg/item_completed`` envelope (``UserMessage``, ``AgentMessage``, ``Reasoning``,
  ``CommandExecution``, ``FileChange``) in place of ``user_message`` / ``agent_message`` /
  ``exec_command_end``.
* legacy (pre-wrapper) rollouts: the first line is a bare header ``{id, timestamp,
  instructions}`` (no ``type``); then bare Responses-API items and ``{record_type: state}``
  lines, with no lifecycle events, no UI track and no per-line time.

Session: the first ``session_meta`` (legacy: the header). Native id ``payload.id`` (newest
builds also ``session_id``), ``created_at`` = ``payload.timestamp`` else the line's time,
``working_directory`` = ``payload.cwd``. ``forked_from`` = ``payload.forked_from_id``.
A subagent child (``thread_source: subagent`` or ``source.subagent``) is ``delegated_from``
``parent_thread_id`` (else ``source.subagent.thread_spawn.parent_thread_id``). A later
``session_meta`` naming another id is a replayed ancestor header: ``runtime.context``
(``session_reference``) at session level.

Inherited history: when the header declares ``subagent_history_start_ordinal`` (forks and
subagents that copy the parent's history), every later record whose ``ordinal`` (default:
its line position) is below it is the parent's history replayed: it stays a Record and
projects nothing (no Item, no Loop, no usage). Older forks copy the parent's items without
declaring where they end; those items are kept and published again in the child (lineage-wide
sums over such undeclared copies count the copied part twice; follow ``forked_from``). No
boundary is ever guessed from equal text.

Loops:

* ``event_msg/task_started`` (alias ``turn_started``) starts a Loop with native id
  ``turn_id``; it bounds an unfinished previous Loop (``end`` without outcome).
* ``turn_context`` is a per-request settings snapshot: it sets the Loop's model (``model``,
  ``effort`` or ``collaboration_mode.settings.reasoning_effort``). It starts a Loop only when
  it names a ``turn_id`` other than the current Loop's, or when no Loop is open (rollouts
  that never persisted ``task_started``). Such rollouts write the turn_context after the
  turn's human input, so inputs that followed the previous Loop's last agent output move into
  the new Loop.
* ``task_complete`` (alias ``turn_complete``) ends the Loop it names (``turn_id``, else the
  current one): outcome ``failed`` when it carries a non-null ``error`` (how Codex records a
  failed turn), else ``completed``. ``turn_aborted`` ends it ``interrupted`` (``failed`` when
  the reason is ``error``).
* Without any lifecycle records (legacy rollouts, stripped fixtures) a human input starts a
  Loop; such inputs are ``heuristic`` (steering cannot be told from a new request there).
* Context window: ``task_started.model_context_window``, else ``turn_context`` /
  ``token_count.info.model_context_window`` (the latest report).

Messages (Codex writes most of them twice: a UI event and the model-input ``response_item``):

* Human input only where the trace proves it: ``event_msg/user_message`` or
  ``item_completed`` of a ``UserMessage``. The model-input copy (``response_item`` message,
  role ``user``) is the same Item (two record_ids), paired within the Loop with the latest
  unpaired candidate of equal text (or one containing the other), else the candidate on the
  adjacent line (sanitised files rewrite the two copies differently). The first human input
  of a Loop with no agent output yet is ``human.request``, later ones ``human.steering``.
  In a subagent child the "user" input is the parent agent's task: ``agent.delegation``
  linked to the child's own Session.
* A model-input user message no UI event claims is runtime-injected: its leading marker
  chooses the role (``<environment_context>`` context/environment, ``# AGENTS.md
  instructions`` project instructions, ``<user_instructions>`` user instructions,
  ``<turn_aborted>`` notice, ``<subagent_notification>`` subagent report, …; ``heuristic``);
  an unmarked one is ``runtime.unknown`` (``structural``: the UI track proves it is not
  human). In legacy rollouts (no UI track exists) an unmarked one is the human prompt,
  ``heuristic``.
* Developer-role messages are ``runtime.instructions`` (category from the leading tag,
  ``heuristic``; none when untagged, ``structural``).
* Assistant text: ``phase: final_answer`` is ``agent.final_answer``, any other phase
  ``agent.commentary`` (``structural``). Unphased text is commentary (``heuristic``); it
  becomes the final answer (``heuristic``) when ``task_complete.last_agent_message`` equals
  it and the Loop has no phased final answer. UI ``agent_message`` / ``AgentMessage`` and the
  model-input message are one Item (paired by item id, else text, else adjacency).
* Reasoning: ``response_item/reasoning`` with summary text is ``summary``; without it
  ``unavailable`` (encrypted). UI twins (``agent_reasoning``, ``item_completed/Reasoning``)
  add their records to it. Codex never exposes full reasoning here.

Tool calls (``function_call``, ``custom_tool_call``, ``local_shell_call``, ``web_search_call``,
``tool_search_call``, ``image_generation_call``): ``agent.tool_call`` with the runtime's
name and arguments (JSON text; a freeform tool's raw ``input`` as ``{"input": …}``). Declared shell
tools set the shell command: ``exec_command.cmd``, ``shell_command.command``, legacy
``shell.command`` / ``local_shell_call.action.command`` argv — ``[<shell>, -c|-lc, script]``
(``<shell>`` one of a fixed list of interpreter names) is the script, any other argv is
joined with POSIX quoting. ``write_stdin``, ``apply_patch``, MCP tools (``server__tool``,
``mcp__server__tool``) and the rest stay ``agent.tool_call``. ``workdir`` is the working
directory. ``spawn_agent`` is ``agent.delegation`` (text = its ``message``), linked to the
child through the ``agent_id`` its output returns; that output is ``subagent.activity``.

Tool outputs (``function_call_output``, ``custom_tool_call_output``, ``tool_search_output``)
are ``tool.output`` linked by ``call_id``. Facts:

* structured end events are authoritative: ``exec_command_end`` / ``item_completed`` of a
  ``CommandExecution`` (``exit_code``, ``duration``, ``status``), ``patch_apply_end`` /
  ``FileChange`` (``success`` / ``status``), ``mcp_tool_call_end`` (``duration``,
  ``result.Err`` / ``isError``); they join the output's Item as a second record whichever
  comes first. A negative exit code is Codex's "no exit status" sentinel (killed or aborted):
  not published, the status still says failed. Such an event for a call that never got an
  output stays a Record.
* the legacy ``{"output", "metadata": {exit_code, duration_seconds}}`` envelope;
* the header Codex writes before ``Output:`` — ``Process exited with code N`` after the
  ``Chunk ID`` / ``Wall time`` lines, or a leading ``Exit code: N`` — gives the exit code;
  ``Wall time: S seconds`` the duration; ``Original token count: N`` the runtime's output size.
  ``failed`` is a non-zero exit code or the runtime's status / success flag, never words.

Usage (no double counting): one sample per model call, assigned to its Loop.

* ``token_usage_record`` (0.171+: one per response, ``usage``, ``turn_id``) is authoritative;
  a Loop with any of them uses only them (the ``token_count`` written beside each is the same
  call).
* otherwise ``event_msg/token_count``: a record counts only when its cumulative
  ``info.total_token_usage`` differs from the previous record's (rate-limit-only updates and
  ``info: null`` repeat or omit it); the call's usage is ``last_token_usage`` (else the
  difference of the totals).
* Codex input already includes cached tokens (``cached_input_tokens`` ⊆ ``input_tokens``,
  ``reasoning_output_tokens`` ⊆ ``output_tokens``): normalised by ``rules.usage_sample``.
* replayed parent counters inside a declared inherited prefix are not counted (see above).

Not modelled (Record only): ``world_state``, ``thread_settings_applied``, ``web_search_end``,
``sub_agent_activity`` / ``collab_*`` events and ``inter_agent_communication`` (absent from
every real rollout we have), an ``mcp_tool_call_end`` whose call never got an output, UI
reasoning events without a model-input reasoning item.

Compaction: ``compacted`` is ``runtime.compaction_summary`` (summary = ``message`` when
non-empty); the ``context_compacted`` event right after joins it (alone it is a summary-less
compaction). ``replacement_history`` is never expanded (copies of earlier messages).
``event_msg/error`` / ``stream_error`` are ``runtime.notice``.

Draining (bounded memory): a Loop is sealed when the next Loop starts; from then on no record
changes it or its items (records naming a sealed turn change nothing, end events and spawn
outputs no longer join its items, unclaimed session-level user inputs settle as
``runtime.unknown``), and `drain` returns it with its usage. Within a Loop, later records join
a draft only within ``_JOIN_WINDOW`` records (message twins, end events, spawn outputs, the
final-answer marker, an output's late call). Items are returned in emission order up to the
first one a later record may still change: an unpaired message copy or human input, unphased
assistant text before the final answer, inputs a turn_context may still move, a compaction
within two lines, a spawn or tool output still joinable, a tool output whose call has not
appeared (a call appearing after it settled is not linked). Nothing is returned before the
session's native id is known.
"""

from __future__ import annotations

import json
import re
import shlex
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
from traceidx.rules import UsageSample, exit_code_from_header, type_tag, usage_sample
from traceidx.timestamps import rfc3339_ms

_WRAPPED_TYPES: Final = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "token_usage_record",
        "world_state",
    }
)
_KNOWN_TYPES: Final = _WRAPPED_TYPES | {
    "inter_agent_communication",
    "inter_agent_communication_metadata",
}
_RESPONSE_ITEM_TYPES: Final = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "tool_search_output",
        "image_generation_call",
    }
)
_PROVIDER_TOOL_NAMES: Final = {
    "web_search_call": "web_search",
    "tool_search_call": "tool_search",
    "image_generation_call": "image_generation",
    "local_shell_call": "local_shell",
}
#: records during which a draft may still be joined by a later record (the other track's copy
#: of a message, end events of a tool output, a spawn's output, an output's call, a final-answer
#: marker), within one Loop: what lets `drain` settle the start of a long Loop
_JOIN_WINDOW: Final = 512
#: argv[0] names (basename) of shells whose ``-c`` argument is a script
_SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
_SCRIPT_FLAGS: Final = frozenset({"-c", "-lc"})
#: event_msg types persisted only as records (bookkeeping or repeats of other records)
_QUIET_EVENTS: Final = frozenset(
    {
        "thread_settings_applied",
        "web_search_end",
        "collab_waiting_end",
        "collab_agent_spawn_end",
        "turn_diff",
        "exec_command_begin",
        "patch_apply_begin",
        "mcp_tool_call_begin",
        "thread_rolled_back",
        "undo_completed",
        "entered_review_mode",
        "exited_review_mode",
        "plan_update",
        "sub_agent_activity",
        "view_image_tool_call",
    }
)

_EXEC_EXIT: Final = re.compile(
    r"(?:Chunk ID: [^\n]*\n)?(?:Wall time: [^\n]*\n)?Process exited with code (-?\d+)\n"
)
_LEADING_EXIT: Final = re.compile(r"Exit code: (-?\d+)\n")
_WALL_TIME: Final = re.compile(r"^Wall time: ([0-9]+(?:\.[0-9]+)?) seconds$", re.M)
_TOKEN_COUNT: Final = re.compile(r"^Original token count: (\d+)$", re.M)

#: leading markers of runtime-injected user-role text -> (role, category)
_USER_MARKERS: Final[tuple[tuple[str, str, str | None], ...]] = (
    ("<environment_context>", "runtime.context", "environment"),
    ("# AGENTS.md instructions", "runtime.instructions", "project"),
    ("<INSTRUCTIONS>", "runtime.instructions", "project"),
    ("<user_instructions>", "runtime.instructions", "user"),
    ("<skills_instructions>", "runtime.instructions", "skill"),
    ("<skill>", "runtime.instructions", "skill"),
    ("<permissions instructions>", "runtime.instructions", "permission"),
    ("<collaboration_mode>", "runtime.instructions", "collaboration"),
    ("<plugins_instructions>", "runtime.instructions", "plugin"),
    ("<turn_aborted>", "runtime.notice", None),
    ("<model_switch>", "runtime.notice", None),
    ("<subagent_notification>", "subagent.report", None),
    ("<user_shell_command>", "runtime.context", "internal"),
    ("<user_action>", "runtime.context", "internal"),
    ("<codex_internal_context>", "runtime.context", "internal"),
    ("<goal_context>", "runtime.context", "internal"),
    ("<image", "runtime.context", None),
    ("</image>", "runtime.context", None),
)
#: leading tags of developer-role text -> instruction category
_DEVELOPER_TAGS: Final[tuple[tuple[str, str | None], ...]] = (
    ("<permissions instructions>", "permission"),
    ("<skills_instructions>", "skill"),
    ("<collaboration_mode>", "collaboration"),
    ("<multi_agent_mode>", "collaboration"),
    ("<plugins_instructions>", "plugin"),
    ("<recommended_plugins>", "plugin"),
    ("<apps_instructions>", None),
    ("<personality_spec>", None),
    ("<tools>", "tool_catalog"),
    ("<user_instructions>", "user"),
    ("# AGENTS.md instructions", "project"),
)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _content(content: object) -> tuple[str, bool]:
    """(joined text, has images) of a message content list (or a plain string)."""
    if isinstance(content, str):
        return content, False
    texts: list[str] = []
    images = False
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = str(block.get("type"))
            text = block.get("text")
            if "image" in kind:
                images = True
            elif isinstance(text, str) and text:
                texts.append(text)
    return "\n".join(texts), images


def _texts_match(a: str, b: str) -> bool:
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    return len(short.encode()) >= 8 and short in long


def _duration_ms(value: object) -> int | None:
    if not isinstance(value, dict):
        return None
    secs, nanos = _int(value.get("secs")), _int(value.get("nanos"))
    if secs is None or secs < 0:
        return None
    return secs * 1000 + (nanos or 0) // 1_000_000


def _shell_script(argv: object) -> str | None:
    """The command of a legacy argv: the script of ``[shell, -c|-lc, script]``, else argv."""
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return None
    if len(argv) == 3 and argv[0].rsplit("/", 1)[-1] in _SHELLS and argv[1] in _SCRIPT_FLAGS:
        return str(argv[2])
    return shlex.join(argv)


def _json_text(value: object) -> str | None:
    """Tool arguments as JSON text: a JSON string argument is kept verbatim when valid."""
    if value is None:
        return None
    if isinstance(value, str):
        if _loads(value, _INVALID) is _INVALID:
            return json.dumps(value, ensure_ascii=False)
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_INVALID: Final = object()  # `_loads` of text that is not JSON
_decode_json = msgspec.json.Decoder().decode


def _parsed(value: object) -> Any:
    """JSON text parsed (None if it is not JSON); any other value as it is."""
    return _loads(value, None) if isinstance(value, str) else value


def _loads(text: str, invalid: object) -> Any:
    """The value JSON `text` holds, or `invalid`."""
    try:  # msgspec first: the json module runs three interpreted frames a call
        return _decode_json(text)
    except ValueError:
        pass
    try:  # what msgspec refuses and the json module takes (NaN, Infinity)
        return json.loads(text)
    except ValueError:
        return invalid


def _native_type(obj: dict[str, Any]) -> str | None:
    kind = obj.get("type")
    payload = obj.get("payload")
    if isinstance(kind, str) and isinstance(payload, dict):
        sub = payload.get("type")
        if kind == "event_msg" and sub == "item_completed":
            item = payload.get("item")
            inner = item.get("type") if isinstance(item, dict) else None
            return f"{kind}/{sub}/{inner}" if isinstance(inner, str) else f"{kind}/{sub}"
        return f"{kind}/{sub}" if isinstance(sub, str) else kind
    if isinstance(kind, str):
        return kind
    if "record_type" in obj:
        return f"record_type/{obj['record_type']}"
    return "header" if "id" in obj else None


@mypyc_attr(serializable=True)  # pickled in checkpoints
@dataclass(slots=True)
class _Loop:
    """Adapter-side state of one Loop."""

    draft: DraftLoop
    open: bool = True
    humans: int = 0
    agent_output: bool = False
    tail_humans: list[DraftItem] = field(default_factory=list)  # since the last agent output
    final: bool = False
    unphased: list[DraftItem] = field(default_factory=list)
    record_usage: list[UsageSample] = field(default_factory=list)
    count_usage: list[UsageSample] = field(default_factory=list)
    sealed: bool = False  # a later Loop started: nothing changes this one any more


@mypyc_attr(serializable=True)  # pickled in checkpoints
@dataclass(slots=True)
class _Message:
    """A message seen on one track that the other track may still claim."""

    item: DraftItem
    position: int
    text: str
    native_id: str | None
    track: str  # "ui" | "model"


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)  # see base.py
class CodexAdapter(Adapter):
    """Projects one Codex rollout."""

    runtime = "codex"

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        dicts = [o for o in head if isinstance(o, dict)]
        if not dicts:
            return False
        first = dicts[0]
        if (
            "type" not in first
            and isinstance(first.get("id"), str)
            and isinstance(first.get("timestamp"), str)
            and "instructions" in first
        ):
            return True  # legacy pre-wrapper header
        return any(
            type_tag(o.get("type")) in _WRAPPED_TYPES and isinstance(o.get("payload"), dict)
            for o in dicts
        )

    def __init__(self) -> None:
        self.session: DraftSession | None = None
        self.legacy = False
        self.subagent = False
        self.history_start: int | None = None
        self.loops: list[_Loop] = []
        self.by_turn: dict[str, _Loop] = {}
        self.items: list[DraftItem] = []
        self.loop: _Loop | None = None
        self.lifecycle = False  # task markers or turn ids seen in this file
        self.task_markers = False  # task_started / task_complete seen in this file
        self.pending_users: list[_Message] = []  # model-input user messages, unclaimed
        self.ui_humans: list[_Message] = []  # UI human inputs whose model copy may follow
        self.pending_agent: list[_Message] = []  # assistant messages awaiting their twin
        self.ui_reasoning: list[int] = []
        # joinable within the current Loop (and `_JOIN_WINDOW`), in emission order for `drain`
        self.outputs: dict[str, DraftItem] = {}
        self.output_order: deque[DraftItem] = deque()
        self.ends: dict[str, tuple[int, dict[str, Any]]] = {}
        self.end_order: deque[tuple[int, str]] = deque()
        self.spawns: dict[str, DraftItem | None] = {}  # None: no longer joinable
        self.spawn_order: deque[tuple[str, DraftItem]] = deque()
        self.loop_calls: set[str] = set()  # call ids drafted in the current Loop
        self.awaiting_call: dict[str, DraftItem] = {}  # outputs whose call has not appeared
        self.unlinked: set[str] = set()  # call ids of outputs settled before their call
        self.sealed_turns: set[str] = set()
        self.children: set[str] = set()
        self.last_total: tuple[int, ...] | None = None
        self.last_compaction: DraftItem | None = None
        self.unknown: dict[str, int] = {}
        self.position = 0
        self.time: int | None = None

    # -- framing callbacks -------------------------------------------------------------------

    def feed(self, position: int, obj: Any) -> RecordFacts:
        self.position = position
        if not isinstance(obj, dict):
            self._unknown("<not an object>")
            return RecordFacts(None, None)
        self.time = rfc3339_ms(obj.get("timestamp"))
        kind = type_tag(obj.get("type"))
        payload = obj.get("payload")
        if position == 0 and self.session is None and kind is None and "instructions" in obj:
            self._legacy_header(obj)
        elif isinstance(payload, dict) and isinstance(kind, str):
            if self._inherited(obj):
                pass
            elif kind == "session_meta":
                self._session_meta(payload)
            elif kind == "response_item":
                self._response_item(payload)
            elif kind == "event_msg":
                self._event(payload)
            elif kind == "turn_context":
                self._turn_context(payload)
            elif kind == "compacted":
                self._compacted(payload)
            elif kind == "token_usage_record":
                self._usage_record(payload)
            elif kind not in _KNOWN_TYPES:
                self._unknown(kind)
        elif self.legacy and kind in _RESPONSE_ITEM_TYPES:
            self._response_item(obj)
        elif not (self.legacy and "record_type" in obj):
            self._unknown(str(kind))
        return RecordFacts(self.time, _native_type(obj))

    def drain(self) -> tuple[list[DraftLoop], list[DraftItem]]:
        """Sealed Loops, and the items before the first one a later record may still change."""
        if self.session is None:
            return [], []
        loops: list[DraftLoop] = []
        while self.loops and self.loops[0].sealed:
            loops.append(self.loops.pop(0).draft)
        held = self._held_from()
        count = 0
        for item in self.items:
            if held is not None and item.records[0] >= held:
                break
            count += 1
        items = self.items[:count]
        del self.items[:count]
        return loops, items

    def _held_from(self) -> int | None:
        """The first record position of the items a later record may still change."""
        position = self.position
        first: list[int] = []
        users = self.pending_users  # beyond the window no UI input can claim them
        while users and users[0].position + _JOIN_WINDOW < position + 1:
            self._settle_unclaimed(users.pop(0))
        for messages in (self.pending_users, self.ui_humans, self.pending_agent):
            while messages and messages[0].position + _JOIN_WINDOW < position + 1:
                del messages[0]
            if messages:
                first.append(messages[0].item.records[0])
        state = self.loop
        if state is not None:
            unphased = state.unphased
            while unphased and unphased[0].records[0] + _JOIN_WINDOW < position + 1:
                del unphased[0]
            if not state.final and unphased:
                first.append(unphased[0].records[0])
            if not self.task_markers and state.tail_humans:
                first.append(min(item.records[0] for item in state.tail_humans))
        outputs = self.output_order
        while outputs and not self._joinable(outputs[0], self.outputs, position + 1):
            stale = outputs.popleft()
            if self.outputs.get(str(stale.output_of)) is stale:
                del self.outputs[str(stale.output_of)]
        if outputs:
            first.append(outputs[0].records[0])
        spawns = self.spawn_order
        while spawns and not self._joinable(spawns[0][1], self.spawns, position + 1, spawns[0][0]):
            call_id, stale = spawns.popleft()
            if self.spawns.get(call_id) is stale:
                self.spawns[call_id] = None
        if spawns:
            first.append(spawns[0][1].records[0])
        ends = self.end_order
        while ends and ends[0][0] + _JOIN_WINDOW < position + 1:
            at, call_id = ends.popleft()
            if self.ends.get(call_id, (None,))[0] == at:
                del self.ends[call_id]
        while self.awaiting_call:  # outputs whose call did not appear: rare
            call_id, output = next(iter(self.awaiting_call.items()))
            if output.records[0] + _JOIN_WINDOW >= position + 1:
                first.append(output.records[0])
                break
            del self.awaiting_call[call_id]
            self.unlinked.add(call_id)
        compaction = self.last_compaction
        if compaction is not None:
            if position <= compaction.records[-1] + 1:
                first.append(compaction.records[0])
            else:
                self.last_compaction = None  # no later context_compacted can join it
        return min(first, default=None)

    @staticmethod
    def _joinable(
        item: DraftItem, index: dict[str, Any], position: int, call_id: str | None = None
    ) -> bool:
        """Whether a record at `position` may still join `item` (registered in `index`)."""
        key = call_id if call_id is not None else item.output_of
        return (
            key is not None
            and index.get(key) is item
            and position - item.records[0] <= _JOIN_WINDOW
        )

    def finish(self) -> Draft:
        for message in self.pending_users:
            self._settle_unclaimed(message)
        self.pending_users = []
        self._flush_ui_reasoning()
        for state in self.loops:
            if not state.sealed:
                state.draft.usage = state.record_usage or state.count_usage
        return Draft(self.session, [s.draft for s in self.loops], self.items, self.unknown)

    def _unknown(self, name: str) -> None:
        self.unknown[name] = self.unknown.get(name, 0) + 1

    def _inherited(self, obj: dict[str, Any]) -> bool:
        """Whether a record lies in the declared inherited (replayed parent) prefix."""
        if self.history_start is None or self.position == 0:
            return False
        ordinal = _int(obj.get("ordinal"))
        return (ordinal if ordinal is not None else self.position) < self.history_start

    # -- session -------------------------------------------------------------------------------

    def _legacy_header(self, obj: dict[str, Any]) -> None:
        self.legacy = True
        native = _str(obj.get("id"))
        if native:
            self.session = DraftSession(native, self.position, created_at=self.time)

    def _session_meta(self, payload: dict[str, Any]) -> None:
        native = _str(payload.get("id")) or _str(payload.get("session_id"))
        if self.session is not None:
            if native and native != self.session.native_id:
                value = {"text": native, "category": "session_reference", "has_images": False}
                self._emit("runtime.context", "structural", value, None)
            return
        if not native:
            return
        created = rfc3339_ms(payload.get("timestamp"))
        session = DraftSession(native, self.position, created_at=created or self.time)
        session.working_directory = _str(payload.get("cwd")) or None
        forked = _str(payload.get("forked_from_id"))
        if forked:
            session.forked_from = (forked, self.position)
        source = payload.get("source")
        spawned = source.get("subagent") if isinstance(source, dict) else None
        self.subagent = payload.get("thread_source") == "subagent" or spawned is not None
        parent = _str(payload.get("parent_thread_id"))
        if parent is None and isinstance(spawned, dict):
            spawn = spawned.get("thread_spawn")
            parent = _str(spawn.get("parent_thread_id")) if isinstance(spawn, dict) else None
        parent = parent or _str(payload.get("parent_session_id"))
        if self.subagent and parent:
            session.delegated_from = (parent, self.position)
        start = _int(payload.get("subagent_history_start_ordinal"))
        if start is not None and start >= 0:
            self.history_start = start
        self.session = session

    # -- loops ---------------------------------------------------------------------------------

    def _start_loop(self, native: str | None, start: int | None = None) -> _Loop:
        start = self.position if start is None else start
        self._close_current(bound=True, at=start)
        if self.loop is not None:
            self._seal(self.loop)
        state = _Loop(DraftLoop(start=start, native_id=native))
        self.loops.append(state)
        self.loop = state
        if native:
            self.by_turn[native] = state
            self.sealed_turns.discard(native)
        return state

    def _seal(self, state: _Loop) -> None:
        """The next Loop starts: fix this one and settle whatever could still join it."""
        state.sealed = True
        state.draft.usage = state.record_usage or state.count_usage
        state.record_usage, state.count_usage = [], []
        state.unphased, state.tail_humans = [], []  # rebound: `_new_turn` holds the old list
        native = state.draft.native_id
        if native and self.by_turn.get(native) is state:
            del self.by_turn[native]
            self.sealed_turns.add(native)
        for message in self.pending_users:  # session-level ones no Loop claimed
            self._settle_unclaimed(message)
        self.pending_users, self.pending_agent, self.ui_humans = [], [], []
        self.outputs, self.ends, self.spawns = {}, {}, {}
        self.output_order.clear()
        self.end_order.clear()
        self.spawn_order.clear()
        self.loop_calls = set()
        self.unlinked.update(self.awaiting_call)
        self.awaiting_call = {}

    def _sealed_turn(self, turn: str | None) -> bool:
        """Whether a record names the turn of a sealed Loop (it then changes nothing)."""
        return turn is not None and turn not in self.by_turn and turn in self.sealed_turns

    def _close_current(self, *, bound: bool, at: int) -> None:
        state = self.loop
        if state is not None and state.open:
            if bound and state.draft.end is None:
                state.draft.end = at  # the next Loop's start bounds it
            state.open = False
            self._close_loop(state)

    def _close_loop(self, state: _Loop) -> None:
        self._flush_ui_reasoning()
        for message in [m for m in self.pending_users if m.item.loop is state.draft]:
            self.pending_users.remove(message)
            self._settle_unclaimed(message)
        self.pending_agent = [m for m in self.pending_agent if m.item.loop is not state.draft]
        self.ui_humans = [m for m in self.ui_humans if m.item.loop is not state.draft]

    def _current(self) -> _Loop | None:
        """The running Loop, if any."""
        return self.loop if self.loop is not None and self.loop.open else None

    def _working(self) -> _Loop | None:
        """The Loop agent activity belongs to: the running one, else the last one."""
        return self.loop

    def _task_started(self, payload: dict[str, Any]) -> None:
        self.lifecycle = self.task_markers = True
        turn = _str(payload.get("turn_id"))
        current = self._current()
        if current is not None and turn and current.draft.native_id == turn:
            return
        state = self._start_loop(turn)
        window = _int(payload.get("model_context_window"))
        if window is not None:
            state.draft.context_window = window

    def _turn_context(self, payload: dict[str, Any]) -> None:
        turn = _str(payload.get("turn_id"))
        current = self._current()
        state = self.by_turn.get(turn) if turn else None
        if turn:
            self.lifecycle = True
        if self._sealed_turn(turn):
            return
        if state is None:
            if current is None or (turn and current.draft.native_id not in (None, turn)):
                state = self._new_turn(turn, current)
            else:
                state = current
                if turn and state.draft.native_id is None:
                    state.draft.native_id = turn
                    self.by_turn[turn] = state
        loop = state.draft
        model = _str(payload.get("model"))
        if model:
            loop.model_id = model
        effort = _str(payload.get("effort"))
        mode = payload.get("collaboration_mode")
        settings = mode.get("settings") if isinstance(mode, dict) else None
        if effort is None and isinstance(settings, dict):
            effort = _str(settings.get("reasoning_effort"))
        if effort:
            loop.effort = effort
        window = _int(payload.get("model_context_window"))
        if window is not None:
            loop.context_window = window

    def _new_turn(self, turn: str | None, previous: _Loop | None) -> _Loop:
        """A Loop started by a turn_context. Rollouts without task markers write it after the
        turn's human input: inputs that followed the previous Loop's last agent output belong
        to this turn and move into it."""
        moved = previous.tail_humans if previous is not None and not self.task_markers else []
        start = min(item.records[0] for item in moved) if moved else None
        state = self._start_loop(turn, start)
        for item in moved:
            item.loop = state.draft
            self._make_human(item, state, item.strength)
        return state

    def _task_end(self, payload: dict[str, Any], outcome: str) -> None:
        self.lifecycle = self.task_markers = True
        turn = _str(payload.get("turn_id"))
        if self._sealed_turn(turn):
            return
        state = self.by_turn.get(turn) if turn else None
        state = state or self._current() or self.loop
        if state is None:
            state = self._start_loop(turn)
        state.draft.end, state.draft.outcome = self.position, outcome
        last = _str(payload.get("last_agent_message"))
        if outcome == "completed" and last and not state.final:
            for item in reversed(state.unphased):
                if self.position - item.records[0] > _JOIN_WINDOW:
                    break
                if item.value.get("text") == last:
                    item.role, item.records = "agent.final_answer", [*item.records, self.position]
                    state.final = True
                    break
        if state.open:
            state.open = False
            self._close_loop(state)

    # -- items ---------------------------------------------------------------------------------

    def _emit(
        self,
        role: str,
        strength: str,
        value: dict[str, Any],
        loop: _Loop | None,
        **links: Any,
    ) -> DraftItem:
        item = self.emit(role, strength, value, loop.draft if loop is not None else None, **links)
        if loop is not None and role.startswith(("agent.", "tool.")):
            loop.agent_output = True
            loop.tail_humans = []
        return item

    # -- event_msg -----------------------------------------------------------------------------

    def _event(self, payload: dict[str, Any]) -> None:
        kind = type_tag(payload.get("type"))
        if kind in ("task_started", "turn_started"):
            self._task_started(payload)
        elif kind in ("task_complete", "turn_complete"):
            failed = payload.get("error") is not None
            self._task_end(payload, "failed" if failed else "completed")
        elif kind == "turn_aborted":
            self._task_end(payload, "failed" if payload.get("reason") == "error" else "interrupted")
        elif kind == "user_message":
            text = _str(payload.get("message")) or ""
            images = bool(payload.get("images")) or bool(payload.get("local_images"))
            self._ui_user(text, images)
        elif kind == "agent_message":
            text = _str(payload.get("message")) or ""
            self._agent_message(text, False, _str(payload.get("phase")), None, "ui")
        elif kind == "agent_reasoning":
            self.ui_reasoning.append(self.position)
        elif kind == "item_completed":
            self._item_completed(payload)
        elif kind == "token_count":
            self._token_count(payload)
        elif kind in ("exec_command_end", "patch_apply_end", "mcp_tool_call_end"):
            self._end_event(payload.get("call_id"), payload)
        elif kind == "context_compacted":
            if self.last_compaction is not None and self.last_compaction.records[-1] >= (
                self.position - 2
            ):
                self.last_compaction.records.append(self.position)
            else:
                self._emit("runtime.compaction_summary", "structural", {}, self._current())
            self.last_compaction = None
        elif kind in ("error", "stream_error"):
            text = _str(payload.get("message")) or str(kind)
            self._emit("runtime.notice", "structural", {"text": text}, self._current())
        elif kind not in _QUIET_EVENTS and kind != "agent_reasoning_raw_content":
            self._unknown(f"event_msg/{kind}")

    def _item_completed(self, payload: dict[str, Any]) -> None:
        item = payload.get("item")
        if not isinstance(item, dict):
            return
        kind = type_tag(item.get("type"))
        if kind == "UserMessage":
            text, images = _content(item.get("content"))
            self._ui_user(text, images)
        elif kind == "AgentMessage":
            text, images = _content(item.get("content"))
            self._agent_message(text, images, _str(item.get("phase")), _str(item.get("id")), "ui")
        elif kind == "Reasoning":
            self.ui_reasoning.append(self.position)
        elif kind in ("CommandExecution", "FileChange"):
            self._end_event(item.get("id"), item)

    # -- human and injected messages -----------------------------------------------------------

    def _ui_user(self, text: str, images: bool) -> None:
        """A human submission (UI track): claims its model-input copy or stands alone.

        With lifecycle records the running Loop receives it; without them (no task_started
        ever written) an input after agent output starts a new Loop, heuristically.
        """
        current = self._current()
        fresh = current is None or (not self.lifecycle and current.agent_output)
        twin = self._claim_user(text, current.draft if current is not None else None)
        strength = "structural" if self.lifecycle and not fresh else "heuristic"
        if fresh:
            start = min(twin.position, self.position) if twin is not None else self.position
            current = self._start_loop(None, start)
        assert current is not None
        if twin is not None:
            item = twin.item
            item.records.append(self.position)
            item.loop = current.draft
        else:
            value = {"text": text or None, "has_images": images}
            item = self._emit("human.request", strength, value, current)
            self.ui_humans.append(_Message(item, self.position, text, None, "ui"))
            del self.ui_humans[:-8]
        self._make_human(item, current, strength)

    def _claim_user(self, text: str, loop: DraftLoop | None) -> _Message | None:
        """The model-input copy of a UI human input: same Loop (or session level), equal
        text, else the adjacent line."""
        pool = [
            m
            for m in self.pending_users
            if (m.item.loop is loop or m.item.loop is None) and self._recent(m)
        ]
        chosen = next((m for m in reversed(pool) if _texts_match(m.text, text)), None)
        if chosen is None:
            chosen = next((m for m in pool if abs(m.position - self.position) == 1), None)
        if chosen is not None:
            self.pending_users.remove(chosen)
        return chosen

    def _recent(self, message: _Message) -> bool:
        """Whether the current record may still pair with `message` (`_JOIN_WINDOW`)."""
        return self.position - message.position <= _JOIN_WINDOW

    def _state_of(self, draft: DraftLoop | None) -> _Loop | None:
        return next((s for s in reversed(self.loops) if s.draft is draft), None)

    def _make_human(self, item: DraftItem, state: _Loop, strength: str) -> None:
        session = self.session
        if self.subagent and session is not None:
            item.role, item.strength = "agent.delegation", "structural"
            item.session_ref = session.native_id
        else:
            first = state.humans == 0 and not state.agent_output
            item.role = "human.request" if first else "human.steering"
            item.strength = strength
            state.tail_humans.append(item)
        state.humans += 1

    def _user_input(self, payload: dict[str, Any]) -> None:
        text, images = _content(payload.get("content"))
        if not text and not images:
            return
        marker = _user_marker(text)
        if marker is not None:
            self._injection(marker, text, images)
            return
        if self.legacy:
            state = self._start_loop(None)
            value = {"text": text or None, "has_images": images}
            item = self._emit("human.request", "heuristic", value, state)
            self._make_human(item, state, "heuristic")
            return
        current = self._current()
        loop = current.draft if current is not None else None
        pool = [m for m in self.ui_humans if m.item.loop is loop and self._recent(m)]
        twin = next((m for m in reversed(pool) if _texts_match(m.text, text)), None)
        if twin is None:
            twin = next((m for m in pool if abs(m.position - self.position) == 1), None)
        if twin is not None:  # the model-input copy of a UI input already seen
            self.ui_humans.remove(twin)
            twin.item.records.append(self.position)
            return
        value = {"text": text or None, "has_images": images}
        item = self._emit("runtime.unknown", "structural", value, current)
        self.pending_users.append(_Message(item, self.position, text, None, "model"))

    def _settle_unclaimed(self, message: _Message) -> None:
        """A model-input user message no UI event claimed: runtime-injected, unknown purpose."""
        value = message.item.value
        message.item.value = {"text": value.get("text"), "has_images": value.get("has_images")}

    def _injection(self, marker: tuple[str, str | None], text: str, images: bool) -> None:
        role, category = marker
        loop = self._current()
        value: dict[str, Any] = {"text": text}
        if role == "subagent.report":
            self._notification(text, loop)
            return
        if role == "runtime.context":
            value["has_images"] = images
        if category is not None:
            value["category"] = category
        self._emit(role, "heuristic", value, loop)

    def _notification(self, text: str, loop: _Loop | None) -> None:
        body = text.strip().removeprefix("<subagent_notification>")
        body = body.removesuffix("</subagent_notification>").strip()
        data = _parsed(body)
        ref = None
        if isinstance(data, dict):
            path = _str(data.get("agent_path")) or _str(data.get("agent_id"))
            ref = path if path in self.children else None
        value = {"text": text, "has_images": False}
        self._emit("subagent.report", "heuristic", value, loop, session_ref=ref)

    # -- assistant messages and reasoning -------------------------------------------------------

    def _agent_message(
        self, text: str, images: bool, phase: str | None, native: str | None, track: str
    ) -> None:
        if not text and not images:
            return
        state = self._working()
        twin = self._claim_agent(text, native, track, state)
        if twin is not None:
            item = twin.item
            item.records.append(self.position)
            if item.occurred_at is None:
                item.occurred_at = self.time
            if phase is not None and item.strength == "heuristic":  # the twin states the phase
                item.role, item.strength = _phase_role(phase)
                owner = self._state_of(item.loop)
                if owner is not None:
                    owner.unphased = [u for u in owner.unphased if u is not item]
                    owner.final = owner.final or item.role == "agent.final_answer"
            return
        if state is None:
            state = self._start_loop(None)
        role, strength = _phase_role(phase)
        item = self._emit(role, strength, {"text": text or None, "has_images": images}, state)
        if role == "agent.final_answer":
            state.final = True
        if phase is None:
            state.unphased.append(item)
        self.pending_agent.append(_Message(item, self.position, text, native, track))
        del self.pending_agent[:-8]

    def _claim_agent(
        self, text: str, native: str | None, track: str, state: _Loop | None
    ) -> _Message | None:
        """The other track's copy: same item id when both have one, else equal text, else the
        adjacent line."""
        loop = state.draft if state is not None else None
        pool = [
            m
            for m in self.pending_agent
            if m.track != track and m.item.loop is loop and self._recent(m)
        ]
        chosen = None
        if native is not None:
            chosen = next((m for m in pool if m.native_id == native), None)
        open_pool = [m for m in pool if m.native_id is None or native is None]
        if chosen is None:
            chosen = next((m for m in reversed(open_pool) if m.text == text), None)
        if chosen is None:
            chosen = next((m for m in open_pool if abs(m.position - self.position) == 1), None)
        if chosen is not None:
            self.pending_agent.remove(chosen)
        return chosen

    def _reasoning(self, payload: dict[str, Any]) -> None:
        parts = payload.get("summary")
        texts = (
            [
                p["text"]
                for p in parts
                if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"]
            ]
            if isinstance(parts, list)
            else []
        )
        value: dict[str, Any]
        if texts:
            value = {"representation": "summary", "text": "\n".join(texts)}
        else:
            value = {"representation": "unavailable"}
        state = self._working() or self._start_loop(None)
        item = self._emit("agent.reasoning", "structural", value, state)
        item.records.extend(self.ui_reasoning)
        self.ui_reasoning = []

    def _flush_ui_reasoning(self) -> None:
        """UI reasoning events no model-input reasoning item took: Records only (they repeat
        summaries the model-input track normally carries; alone they add no verified fact)."""
        self.ui_reasoning = []

    # -- response items --------------------------------------------------------------------------

    def _response_item(self, payload: dict[str, Any]) -> None:
        kind = type_tag(payload.get("type"))
        if kind == "message":
            role = type_tag(payload.get("role"))
            if role == "user":
                self._user_input(payload)
            elif role == "assistant":
                text, images = _content(payload.get("content"))
                phase = _str(payload.get("phase"))
                self._agent_message(text, images, phase, _str(payload.get("id")), "model")
            elif role in ("developer", "system"):
                self._developer(payload)
        elif kind == "reasoning":
            self._reasoning(payload)
        elif kind in (
            "function_call",
            "custom_tool_call",
            "local_shell_call",
            "web_search_call",
            "tool_search_call",
            "image_generation_call",
        ):
            self._tool_call(str(kind), payload)
        elif kind in ("function_call_output", "custom_tool_call_output", "tool_search_output"):
            self._tool_output(str(kind), payload)
        elif kind not in _RESPONSE_ITEM_TYPES and kind not in (
            "compaction",
            "ghost_snapshot",
            None,
        ):
            self._unknown(f"response_item/{kind}")

    def _developer(self, payload: dict[str, Any]) -> None:
        text, _ = _content(payload.get("content"))
        if not text:
            return
        stripped = text.lstrip()
        value: dict[str, Any] = {"text": text}
        strength = "structural"
        for tag, category in _DEVELOPER_TAGS:
            if stripped.startswith(tag):
                strength = "heuristic"
                if category is not None:
                    value["category"] = category
                break
        self._emit("runtime.instructions", strength, value, self._current())

    def _tool_call(self, kind: str, payload: dict[str, Any]) -> None:
        name = _str(payload.get("name")) or _PROVIDER_TOOL_NAMES.get(kind)
        call_id = _str(payload.get("call_id")) or _str(payload.get("id"))
        raw: object = None
        if kind == "function_call":
            raw = payload.get("arguments")
        elif kind == "custom_tool_call":
            raw = {"input": payload["input"]} if "input" in payload else None
        elif kind in ("web_search_call", "local_shell_call"):
            raw = payload.get("action")
        elif kind == "tool_search_call":
            raw = payload.get("arguments")
        elif kind == "image_generation_call":
            prompt = {k: payload[k] for k in ("prompt", "revised_prompt") if k in payload}
            raw = prompt or None
        arguments = _json_text(raw)
        args = _parsed(raw)
        state = self._working() or self._start_loop(None)
        if name == "spawn_agent" and kind == "function_call":
            message = args.get("message") if isinstance(args, dict) else None
            text = message if isinstance(message, str) else arguments
            value = {"text": text, "has_images": False}
            item = self._emit("agent.delegation", "structural", value, state)
            if call_id:
                self.spawns[call_id] = item
                self.spawn_order.append((call_id, item))
            return
        shell: str | None = None
        workdir: str | None = None
        if isinstance(args, dict):
            workdir = _str(args.get("workdir")) or _str(args.get("working_directory"))
            if name == "exec_command":
                shell = _str(args.get("cmd"))
            elif name == "shell_command":
                shell = _str(args.get("command"))
            elif name == "shell" or kind == "local_shell_call":
                shell = _shell_script(args.get("command"))
        value = {"tool_name": name, "arguments": arguments, "working_directory": workdir}
        self._emit(
            "agent.tool_call",
            "structural",
            value,
            state,
            call_id=self._linkable(call_id),
            shell_command=shell or None,
        )

    def _linkable(self, call_id: str | None) -> str | None:
        """A call's id, unless an output naming it was settled before it (never linked then)."""
        if call_id is None:
            return None
        waiting = self.awaiting_call.pop(call_id, None)
        if waiting is not None and self.position - waiting.records[0] > _JOIN_WINDOW:
            self.unlinked.add(call_id)
        if call_id in self.unlinked:
            return None
        self.loop_calls.add(call_id)
        return call_id

    def _tool_output(self, kind: str, payload: dict[str, Any]) -> None:
        call_id = _str(payload.get("call_id"))
        state = self._working() or self._start_loop(None)
        if call_id is not None and call_id in self.spawns:
            self._spawn_output(call_id, payload, state)
            return
        value: dict[str, Any]
        if kind == "tool_search_output":
            tools = payload.get("tools")
            value = {"text": _json_text(tools) if tools is not None else None}
        else:
            value = _output_facts(payload.get("output"))
        item = self._emit("tool.output", "structural", value, state, output_of=call_id)
        if call_id is not None:
            self.outputs[call_id] = item
            self.output_order.append(item)
            if call_id not in self.loop_calls:
                self.awaiting_call.setdefault(call_id, item)
            pending = self.ends.pop(call_id, None)
            if pending is not None and self.position - pending[0] <= _JOIN_WINDOW:
                _apply_end(item, pending[0], pending[1])

    def _spawn_output(self, call_id: str, payload: dict[str, Any], state: _Loop) -> None:
        text, _ = _content(payload.get("output"))
        data = _parsed(text)
        child = _str(data.get("agent_id")) if isinstance(data, dict) else None
        spawn = self.spawns[call_id]
        if child:
            self.children.add(child)
            if spawn is not None and self.position - spawn.records[0] <= _JOIN_WINDOW:
                spawn.session_ref = child
        value = {"text": text or None, "has_images": False}
        self._emit("subagent.activity", "structural", value, state, session_ref=child)

    def _end_event(self, call_id: object, payload: dict[str, Any]) -> None:
        if not isinstance(call_id, str):
            return
        item = self.outputs.get(call_id)
        if item is not None and self.position - item.records[0] <= _JOIN_WINDOW:
            _apply_end(item, self.position, payload)
        else:
            self.ends[call_id] = (self.position, _end_facts(payload))
            self.end_order.append((self.position, call_id))

    # -- usage -------------------------------------------------------------------------------------

    def _usage_record(self, payload: dict[str, Any]) -> None:
        sample = _sample(payload.get("usage"))
        if sample is None:
            return
        turn = _str(payload.get("turn_id"))
        if self._sealed_turn(turn):
            return
        state = (self.by_turn.get(turn) if turn else None) or self.loop
        if state is not None:
            state.record_usage.append(sample)

    def _token_count(self, payload: dict[str, Any]) -> None:
        info = payload.get("info")
        if not isinstance(info, dict):
            return
        state = self.loop
        window = _int(info.get("model_context_window"))
        if state is not None and window is not None:
            state.draft.context_window = window
        model = _str(info.get("model"))
        if state is not None and model and state.draft.model_id is None:
            state.draft.model_id = model
        total = info.get("total_token_usage")
        key = _usage_key(total)
        if key is None or key == self.last_total:
            return  # a repeat (rate-limit update) or no cumulative count
        previous, self.last_total = self.last_total, key
        sample = _sample(info.get("last_token_usage"))
        if sample is None and isinstance(total, dict):
            sample = _difference(total, previous)
        if sample is not None and state is not None:
            state.count_usage.append(sample)

    # -- compaction --------------------------------------------------------------------------------

    def _compacted(self, payload: dict[str, Any]) -> None:
        summary = _str(payload.get("message")) or _str(payload.get("summary"))
        value = {"summary": summary or None}
        item = self._emit("runtime.compaction_summary", "structural", value, self._current())
        self.last_compaction = item


_USAGE_KEYS: Final = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
)


def _usage_key(total: object) -> tuple[int, ...] | None:
    if not isinstance(total, dict):
        return None
    values = tuple(_int(total.get(k)) or 0 for k in _USAGE_KEYS)
    return values if _int(total.get("input_tokens")) is not None else None


def _sample(usage: object) -> UsageSample | None:
    if not isinstance(usage, dict):
        return None
    return usage_sample(
        input=usage.get("input_tokens"),
        output=usage.get("output_tokens"),
        cached=usage.get("cached_input_tokens"),
        cache_write=usage.get("cache_write_input_tokens"),
        reasoning=usage.get("reasoning_output_tokens"),
        input_includes_cache=True,
    )


def _difference(total: dict[str, Any], previous: tuple[int, ...] | None) -> UsageSample | None:
    """One call's usage as the growth of the cumulative totals (when no per-call usage)."""
    before = dict(zip(_USAGE_KEYS, previous or (0,) * len(_USAGE_KEYS), strict=True))
    delta: dict[str, object] = {}
    for key in _USAGE_KEYS:
        value = _int(total.get(key))
        delta[key] = None if value is None else value - before[key]
    return _sample(delta)


def _phase_role(phase: str | None) -> tuple[str, str]:
    if phase == "final_answer":
        return "agent.final_answer", "structural"
    if phase is not None:
        return "agent.commentary", "structural"
    return "agent.commentary", "heuristic"


def _user_marker(text: str) -> tuple[str, str | None] | None:
    stripped = text.lstrip()
    for prefix, role, category in _USER_MARKERS:
        if stripped.startswith(prefix):
            return role, category
    return None


def _output_facts(output: object) -> dict[str, Any]:
    """Text and runtime-reported facts of a tool output payload."""
    value: dict[str, Any] = {}
    if isinstance(output, dict):  # {content, success} shape
        text, _ = _content(output.get("content"))
        value["text"] = text or None
        if isinstance(output.get("success"), bool):
            value["failed"] = not output["success"]
        return value
    if isinstance(output, list):
        text, _ = _content(output)
        value["text"] = text or None
        return value
    if not isinstance(output, str):
        return value
    envelope = _parsed(output) if output.startswith("{") else None
    if isinstance(envelope, dict) and isinstance(envelope.get("metadata"), dict):
        inner = envelope.get("output")
        value["text"] = inner if isinstance(inner, str) else output
        meta = envelope["metadata"]
        code = _int(meta.get("exit_code"))
        if code is not None:
            value["exit_code"], value["failed"] = code, code != 0
        seconds = meta.get("duration_seconds")
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds >= 0:
            value["duration_ms"] = round(seconds * 1000)
        return value
    value["text"] = output or None
    header = output.split("\nOutput:\n", 1)[0] if "\nOutput:\n" in output else output[:400]
    code = exit_code_from_header(output, _EXEC_EXIT)
    if code is None:
        code = exit_code_from_header(output, _LEADING_EXIT)
    if code is not None:
        value["exit_code"], value["failed"] = code, code != 0
    wall = _WALL_TIME.search(header)
    if wall is not None and (output.startswith(("Chunk ID:", "Wall time:", "Exit code:"))):
        value["duration_ms"] = round(float(wall.group(1)) * 1000)
    tokens = _TOKEN_COUNT.search(header)
    if tokens is not None and output.startswith("Chunk ID:"):
        value["runtime_output_tokens"] = int(tokens.group(1))
    return value


def _end_facts(payload: dict[str, Any]) -> dict[str, Any]:
    """What `_apply_end` reads of an end event (it may wait for its output: keep it small)."""
    keys = ("exit_code", "status", "success", "duration")
    facts: dict[str, Any] = {k: payload[k] for k in keys if k in payload}
    result = payload.get("result")
    if isinstance(result, dict):
        ok = result.get("Ok")
        if "Err" in result:
            facts["result"] = {"Err": None}
        elif isinstance(ok, dict) and "isError" in ok:
            facts["result"] = {"Ok": {"isError": ok["isError"]}}
        else:
            facts["result"] = {}
    return facts


def _apply_end(item: DraftItem, position: int, payload: dict[str, Any]) -> None:
    """Merge a structured end event (exec / patch / MCP / completed item) into an output."""
    value = item.value
    code = _int(payload.get("exit_code"))
    status = _str(payload.get("status"))
    if code is not None and code >= 0:
        value["exit_code"], value["failed"] = code, code != 0
    elif status in ("failed", "declined", "cancelled"):
        value["failed"] = True
        value.pop("exit_code", None)
    elif status == "completed" and "exit_code" not in value and code is None:
        value["failed"] = False
    if isinstance(payload.get("success"), bool):
        value["failed"] = not payload["success"]
    result = payload.get("result")
    if isinstance(result, dict):
        ok = result.get("Ok")
        if "Err" in result:
            value["failed"] = True
        elif isinstance(ok, dict) and isinstance(ok.get("isError"), bool):
            value["failed"] = ok["isError"]
    duration = _duration_ms(payload.get("duration"))
    if duration is not None:
        value["duration_ms"] = duration
    if position not in item.records:
        item.records.append(position)


register(CodexAdapter)  # not a decorator: mypyc makes decorated classes Python classes
