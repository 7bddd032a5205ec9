"""The runtime-neutral domain model: Source, Record, Session, Loop, Item and the typed Semantic.

This module is the single source of truth for the dataset's shape. The Arrow schema
(`traceidx.tables.schema`), the Parquet files and the SQL views are all derived from (or checked
against) these Structs; the columns' descriptions are in `traceidx.domain.columns`. The module
imports nothing but msgspec and the standard library.

Field names follow the contract in the specification (item model, semantic contract, loop
model) and, for Source / Record / Session, the shapes adopted from the reference
implementation. A field that the evidence does not support is absent (``None``), never zero.

Ids are opaque signed 64-bit integers (see `traceidx.domain.ids`). Times are epoch milliseconds UTC.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

# ---------------------------------------------------------------------------------------------
# Constrained scalars

U64 = Annotated[int, msgspec.Meta(ge=0)]
Id = int  # opaque 63-bit id; never decoded by callers
EpochMs = Annotated[
    int, msgspec.Meta(description="epoch milliseconds, UTC", extra={"arrow": "timestamp_ms_utc"})
]

#: a registered runtime's name (traceidx.runtimes: the adapters declare them)
Runtime = str

EvidenceStrength = Literal["structural", "heuristic"]
Outcome = Literal["completed", "interrupted", "failed"]
#: how a model call ended: answered (`ok`), a failed attempt (`error`), cut by the user (`aborted`)
CallOutcome = Literal["ok", "error", "aborted"]


class _Struct(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Common base: immutable and strict (unknown members are refused)."""


# ---------------------------------------------------------------------------------------------
# Value types of the semantic contract


class TextContent(_Struct, frozen=True):
    """Bounded published text: `value` is a prefix of the source text unless `redactions` is
    above 0 (then secrets in it were replaced by a marker: ``build --redact``);
    `full_bytes`/`estimated_tokens` describe the complete source text. `redactions` is absent
    when the build did not redact."""

    value: str
    full_bytes: U64
    estimated_tokens: U64
    redactions: U64 | None = None


class Text(_Struct, frozen=True):
    """Readable text of an input or output; `has_images` is always present."""

    has_images: bool = False
    text: TextContent | None = None


class Reasoning(_Struct, frozen=True):
    """Reasoning exposed in full, as a runtime-marked summary, or only known to have happened."""

    representation: Literal["full", "summary", "unavailable"]
    text: TextContent | None = None


class ByteRange(_Struct, frozen=True):
    """Half-open byte range ``[start, end)``."""

    start: U64
    end: U64


class Pipeline(_Struct, frozen=True):
    """Membership of a statement in a pipeline of its fragment."""

    id: U64
    position: U64


class Invocation(_Struct, frozen=True):
    """A program name and the argument words as the agent wrote them."""

    program: str
    argv: tuple[str, ...] = ()


class Redirect(_Struct, frozen=True):
    """A redirection with its operator, target and range relative to the fragment."""

    operator: str
    target: str
    range: ByteRange
    source_fd: str | None = None


class ShellStatement(_Struct, frozen=True):
    """One statement of a shell fragment; positions index the fragment's statement array."""

    range: ByteRange
    parent_position: U64 | None = None
    connector: str | None = None
    pipeline: Pipeline | None = None
    invocations: tuple[Invocation, ...] = ()
    redirects: tuple[Redirect, ...] = ()


class ShellFragment(_Struct, frozen=True):
    """A piece of shell program with its parse coverage and statements."""

    text: TextContent
    completeness: Literal["complete", "partial"]
    statements: tuple[ShellStatement, ...] = ()


class ToolCall(_Struct, frozen=True):
    """A tool invocation; `arguments` is the runtime's JSON argument object as JSON text (with
    its secrets replaced when `redactions` is above 0)."""

    tool_name: str | None = None
    arguments: str | None = None
    working_directory: str | None = None
    #: secrets replaced by a marker in `arguments` (``build --redact``; absent otherwise)
    redactions: U64 | None = None


class ShellToolCall(_Struct, frozen=True):
    """A tool call whose command argument was parsed into shell fragments (at least one)."""

    shell_fragments: tuple[ShellFragment, ...]
    tool_name: str | None = None
    arguments: str | None = None
    working_directory: str | None = None
    #: secrets replaced by a marker in `arguments` (``build --redact``; absent otherwise)
    redactions: U64 | None = None


class ToolOutput(_Struct, frozen=True):
    """What a tool returned, with only the facts the runtime itself reported."""

    call_item_id: Id | None = None
    text: TextContent | None = None
    exit_code: int | None = None
    failed: bool | None = None
    duration_ms: U64 | None = None
    runtime_truncated: bool | None = None
    runtime_output_tokens: U64 | None = None


class Delegation(_Struct, frozen=True):
    """Work handed to a child agent; `child_session_id` only when the child Session exists;
    `agent_type` the kind of child agent the runtime names (e.g. Claude Code's subagent type,
    Codex's agent type, dsh's subagent name), when it names one."""

    has_images: bool = False
    text: TextContent | None = None
    child_session_id: Id | None = None
    agent_type: str | None = None


class SubagentActivity(_Struct, frozen=True):
    """Progress of, or communication with, a child agent while it works."""

    has_images: bool = False
    text: TextContent | None = None
    subagent_session_id: Id | None = None


class SubagentReport(_Struct, frozen=True):
    """A child agent's result handed back."""

    has_images: bool = False
    text: TextContent | None = None
    source_session_id: Id | None = None


class Compaction(_Struct, frozen=True):
    """The summary a runtime substitutes for earlier context."""

    summary: TextContent | None = None


InstructionCategory = Literal[
    "project", "user", "skill", "permission", "collaboration", "plugin", "tool_catalog"
]
ContextCategory = Literal["environment", "memory", "file", "session_reference", "internal"]


class Instruction(_Struct, frozen=True):
    """Rules the runtime injects for the agent to follow."""

    text: TextContent | None = None
    category: InstructionCategory | None = None


class Context(_Struct, frozen=True):
    """Material the runtime supplies for the agent to use."""

    has_images: bool = False
    text: TextContent | None = None
    category: ContextCategory | None = None


# ---------------------------------------------------------------------------------------------
# Semantic: a discriminated union keyed by role, one Struct per role.


class _Semantic(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="role"):
    """Base of every role Struct: the role tag plus the classification's evidence strength."""

    evidence_strength: EvidenceStrength


class HumanRequest(_Semantic, frozen=True, tag="human.request"):
    """A person's input that starts a new Loop."""

    value: Text


class HumanSteering(_Semantic, frozen=True, tag="human.steering"):
    """A person's input delivered into a Loop that is still running."""

    value: Text


class AgentCommentary(_Semantic, frozen=True, tag="agent.commentary"):
    """Agent text emitted while the Loop runs."""

    value: Text


class AgentFinalAnswer(_Semantic, frozen=True, tag="agent.final_answer"):
    """Agent text the runtime's structure marks as the Loop's final response."""

    value: Text


class AgentReasoning(_Semantic, frozen=True, tag="agent.reasoning"):
    """Reasoning the runtime exposed (or proved happened)."""

    value: Reasoning


class AgentToolCall(_Semantic, frozen=True, tag="agent.tool_call"):
    """A tool invocation with agent-written arguments."""

    value: ToolCall


class AgentShellToolCall(_Semantic, frozen=True, tag="agent.tool_call.shell"):
    """A declared shell tool invocation with parsed shell structure."""

    value: ShellToolCall


class AgentDelegation(_Semantic, frozen=True, tag="agent.delegation"):
    """Work handed by the agent to a child agent."""

    value: Delegation


class ToolOutputRole(_Semantic, frozen=True, tag="tool.output"):
    """What a tool returned."""

    value: ToolOutput


class SubagentActivityRole(_Semantic, frozen=True, tag="subagent.activity"):
    """Activity tied to a child Session while it works."""

    value: SubagentActivity


class SubagentReportRole(_Semantic, frozen=True, tag="subagent.report"):
    """A child Session's result handed back to the parent."""

    value: SubagentReport


class RuntimeInstructions(_Semantic, frozen=True, tag="runtime.instructions"):
    """Instructions injected by the runtime (not human input)."""

    value: Instruction


class RuntimeContext(_Semantic, frozen=True, tag="runtime.context"):
    """Material supplied by the runtime (not human input)."""

    value: Context


class RuntimeState(_Semantic, frozen=True, tag="runtime.state"):
    """Runtime-owned state or a change of it."""

    value: Text


class RuntimeNotice(_Semantic, frozen=True, tag="runtime.notice"):
    """A runtime-owned error, reminder or control event."""

    value: Text


class RuntimeCompactionSummary(_Semantic, frozen=True, tag="runtime.compaction_summary"):
    """A runtime summary replacing earlier context."""

    value: Compaction


class RuntimeUnknown(_Semantic, frozen=True, tag="runtime.unknown"):
    """Meaningful bounded runtime content whose specific role is not yet known."""

    value: Text


Semantic = (
    HumanRequest
    | HumanSteering
    | AgentCommentary
    | AgentFinalAnswer
    | AgentReasoning
    | AgentToolCall
    | AgentShellToolCall
    | AgentDelegation
    | ToolOutputRole
    | SubagentActivityRole
    | SubagentReportRole
    | RuntimeInstructions
    | RuntimeContext
    | RuntimeState
    | RuntimeNotice
    | RuntimeCompactionSummary
    | RuntimeUnknown
)

ROLE_TYPES: tuple[type[_Semantic], ...] = (
    HumanRequest,
    HumanSteering,
    AgentCommentary,
    AgentFinalAnswer,
    AgentReasoning,
    AgentToolCall,
    AgentShellToolCall,
    AgentDelegation,
    ToolOutputRole,
    SubagentActivityRole,
    SubagentReportRole,
    RuntimeInstructions,
    RuntimeContext,
    RuntimeState,
    RuntimeNotice,
    RuntimeCompactionSummary,
    RuntimeUnknown,
)


def role_of(semantic_type: type[_Semantic]) -> str:
    """The contract role name (the union tag) of a role Struct."""
    tag = semantic_type.__struct_config__.tag
    assert isinstance(tag, str)
    return tag


ROLE_BY_NAME: dict[str, type[_Semantic]] = {role_of(t): t for t in ROLE_TYPES}


def _value_type(semantic_type: type[_Semantic]) -> type[msgspec.Struct]:
    annotation = semantic_type.__annotations__["value"]
    value: type[msgspec.Struct] = (
        globals()[annotation] if isinstance(annotation, str) else annotation
    )
    return value


#: role name -> the value Struct the contract pairs with it
VALUE_BY_ROLE: dict[str, type[msgspec.Struct]] = {role_of(t): _value_type(t) for t in ROLE_TYPES}

#: Roles whose definition depends on a Loop: an Item with one of these must carry `loop_id`.
LOOP_BOUND_ROLES = frozenset(
    {"human.request", "human.steering", "agent.commentary", "agent.final_answer"}
)

# ---------------------------------------------------------------------------------------------
# Physical evidence and program structure


class Source(_Struct, frozen=True):
    """A physical trace file: identity is its canonical locator.

    `compression` is an operational fact: ``zstd`` means record ranges are offsets into the
    decoded stream of the file's complete frames (see traceidx.sources.sourceio). `origin` names the
    machine or person the file came from (``build --origin``). `duplicate_of` is set on a copy
    of another source's records (the same file collected twice, or an earlier, shorter copy
    of it): only the source it names publishes records, sessions, loops and items.
    """

    source_id: Id
    locator: str
    runtime: Runtime
    compression: Literal["none", "zstd"] = "none"
    origin: str | None = None
    duplicate_of: Id | None = None


class RowKey(_Struct, frozen=True):
    """Where a row of a database source is: its table and primary key (as text)."""

    table: str
    key: str


class Record(_Struct, frozen=True):
    """One complete newline-terminated line of a Source, one element of a document Source
    (a JSON file its runtime rewrites whole: `traceidx.sources.document`), named by `json_path`, or
    one row of a database source (`traceidx.sources.rowsource`), located by `row`.

    `content_range` is half-open and excludes the newline (of an element: the bytes of its
    value); `fingerprint` is XXH3-128 (hex) of exactly those bytes (BLAKE2b-128 for sources
    gone before that change: `traceidx.sources.frame`); `occurred_at` only when the runtime wrote a
    timestamp on that line.
    `native_type` and `parse_status` are operational facts (not contract fields) that help
    diagnose evidence: `parse_status` is ``ok``, ``malformed``, ``oversized`` or ``joined``
    (several JSON objects written on one line without a newline, each recovered losslessly).
    A row of a database source (traceidx.sources.rowsource) is located by `row` (table, key); its
    bytes are the row's stored values serialised as one JSON line, and its `content_range`
    is that line's range in the session's rows framed one after another.
    """

    record_id: Id
    source_id: Id
    source_position: U64
    content_range: ByteRange
    fingerprint: str
    parse_status: Literal["ok", "malformed", "oversized", "joined"]
    occurred_at: EpochMs | None = None
    native_type: str | None = None
    json_path: str | None = None
    row: RowKey | None = None


class SessionRef(_Struct, frozen=True):
    """A link to another Session plus the record that witnesses it."""

    session_id: Id
    record_id: Id


class Session(_Struct, frozen=True):
    """A runtime-maintained agent context, identified by (runtime, native_id)."""

    session_id: Id
    runtime: Runtime
    native_id: str
    identity_record_id: Id
    source_ids: tuple[Id, ...]
    created_at: EpochMs | None = None
    name: str | None = None
    working_directory: str | None = None
    project: str | None = None
    branch: str | None = None
    forked_from: SessionRef | None = None
    delegated_from: SessionRef | None = None
    task: TextContent | None = None
    session_usage: Usage | None = None
    session_usage_model: str | None = None


class LoopEnd(_Struct, frozen=True):
    """The record proving the Loop ended, and the runtime's whole-run outcome if it stated one."""

    record_id: Id
    outcome: Outcome | None = None


class LoopModel(_Struct, frozen=True):
    """The model the runtime reported for the Loop."""

    id: str
    effort: str | None = None
    context_window: U64 | None = None


class Usage(_Struct, frozen=True):
    """Normalised token usage: input includes cache reads and writes; reasoning is in output."""

    input: U64
    output: U64
    cached: U64 | None = None
    cache_write: U64 | None = None
    reasoning: U64 | None = None


class Loop(_Struct, frozen=True):
    """One outer agent execution the runtime started."""

    loop_id: Id
    session_id: Id
    source_id: Id
    session_position: U64
    start_record_id: Id
    native_id: str | None = None
    end: LoopEnd | None = None
    model: LoopModel | None = None
    usage: Usage | None = None
    started_at: EpochMs | None = None
    ended_at: EpochMs | None = None


class Item(_Struct, frozen=True):
    """One queryable program fact with its semantic and supporting records."""

    item_id: Id
    session_id: Id
    source_id: Id
    record_ids: tuple[Id, ...]
    semantic: Semantic
    loop_id: Id | None = None
    loop_position: U64 | None = None
    occurred_at: EpochMs | None = None
    linked_session_id: Id | None = None


class ModelCall(_Struct, frozen=True):
    """One model call (API response) the trace records usage for; a Loop's usage is the sum
    of its calls' usage. `model`/`provider` as the trace states them for the call (the model
    falls back to the Loop's); a call outside any Loop has no `loop_id`; `outcome` says whether
    the call was answered or is a failed or aborted attempt the runtime wrote a response for; such
    an attempt that states only zeros (Pi's message for an HTTP 500) billed nothing: its usage is
    absent (`traceidx.domain.rules.billed`)."""

    call_id: Id
    session_id: Id
    source_id: Id
    record_ids: tuple[Id, ...]
    usage: Usage | None
    loop_id: Id | None = None
    occurred_at: EpochMs | None = None
    model: str | None = None
    provider: str | None = None
    outcome: CallOutcome = "ok"


TABLES: dict[str, type[msgspec.Struct]] = {
    "sources": Source,
    "records": Record,
    "sessions": Session,
    "loops": Loop,
    "items": Item,
    "model_calls": ModelCall,
}
