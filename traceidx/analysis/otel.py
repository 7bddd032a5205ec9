"""OpenTelemetry export: the dataset's sessions, loops, billed model calls, tool calls and
delegations as OTLP spans in the GenAI semantic conventions (``traceidx export otel``).

A session is a span at the top of a trace whose id derives from the session id (a subagent's
session joins the trace of the session that delegated to it, under the delegation's span); a
loop is an ``invoke_agent`` span, a billed model call a ``chat {model}`` span, a tool call an
``execute_tool {tool}`` span, a delegation an ``invoke_agent {agent type}`` client span. Trace
and span ids are hashes (XXH3) of the dataset's ids, so exporting the same facts again gives
the same ids. The rows come from `traceidx.analysis.otelspans`; requests (one
``ExportTraceServiceRequest`` per batch of spans) go to a sink of `traceidx.analysis.otelsink`.

Times are the records' times. A span whose start is unknown starts at its own end when that is
known, else at its parent's start (``traceidx.start_unknown``); a span whose end is unknown ends
where it starts (``traceidx.duration_unknown``): a model call's record states when its response
came, not when it was asked, so a ``chat`` span is always such an instant. A session without
any known time sits at the Unix epoch with both marks. A count the trace does not state is left
out, never 0. Prompts, outputs and tool arguments are attributes only with ``content``; they are
the dataset's published text (redacted when the dataset was built with ``--redact``).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import xxhash

from traceidx import __version__
from traceidx.analysis import otelspans
from traceidx.errors import UsageError

if TYPE_CHECKING:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.common.v1.common_pb2 import KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import ScopeSpans, Span

    from traceidx.analysis.reports import ReportParams

#: spans per request (the OTel SDK's batch processor sends up to 512; collectors take more)
BATCH_SPANS = 2000
#: the kinds of span, in the order they are exported
KINDS = ("session", "loop", "model_call", "tool_call", "delegation")
_MS = 1_000_000  # nanoseconds per millisecond


class Sink(ABC):
    """Where requests go: `send` one request of `spans` spans, `close` when done."""

    @abstractmethod
    def send(self, request: ExportTraceServiceRequest, spans: int) -> None:
        """Deliver one request (or raise `traceidx.errors.ExportError`)."""

    @abstractmethod
    def close(self) -> None:
        """Finish: write what is pending, close a file."""


@dataclass(slots=True)
class Exported:
    """What an export sent: spans by kind, traces (root sessions) and requests."""

    spans: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    traces: int = 0
    requests: int = 0


def require() -> None:
    """Refuse at once, in one line, when the otel extra is not installed."""
    try:
        import google.protobuf  # noqa: F401
        import opentelemetry.proto  # noqa: F401
    except ImportError:
        raise UsageError(
            "export otel needs the OpenTelemetry wire format: pip install 'traceidx[otel]'"
        ) from None


def trace_id(session_id: int) -> bytes:
    """The 16-byte trace id of a root session."""
    return xxhash.xxh3_128_digest(b"traceidx.session" + session_id.to_bytes(8, "big", signed=True))


def span_id(kind: str, fact_id: int) -> bytes:
    """The 8-byte span id of one fact (never all zeros, which OTLP reserves for "none")."""
    digest = xxhash.xxh3_64_digest(kind.encode() + fact_id.to_bytes(8, "big", signed=True))
    return digest if any(digest) else b"\x00" * 7 + b"\x01"


def _put(span: Span, key: str, value: Any) -> None:
    """One attribute; None (absent) adds nothing."""
    if value is None:
        return
    attribute: KeyValue = span.attributes.add()
    attribute.key = key
    _value(attribute.value, value)


def _value(target: Any, value: Any) -> None:
    if isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, int):
        target.int_value = value
    elif isinstance(value, float):
        target.double_value = value
    elif isinstance(value, str):
        target.string_value = value
    elif isinstance(value, list | tuple):
        items = target.array_value.values
        for element in value:
            _value(items.add(), element)
    else:  # pragma: no cover - every value the rows hold is one of the above
        target.string_value = str(value)


def _ids(values: list[int] | None) -> list[str] | None:
    """Record ids as strings: 63-bit ids lose digits in readers that store numbers as doubles."""
    return [str(v) for v in values] if values else None


def _messages(role: str, texts: list[str] | None) -> str | None:
    """Texts as the conventions' ``gen_ai.*.messages`` JSON (one text part per message)."""
    if not texts:
        return None
    return json.dumps(
        [{"role": role, "parts": [{"type": "text", "content": t}]} for t in texts],
        ensure_ascii=False,
    )


class _Builder:
    """Spans into requests: one resource per runtime, one scope, `BATCH_SPANS` per request."""

    def __init__(self, sink: Sink, batch: int, progress: Callable[[int], None] | None) -> None:
        from opentelemetry.proto.trace.v1 import trace_pb2

        self.sink, self.batch, self.progress = sink, batch, progress
        self.status_error = trace_pb2.Status.STATUS_CODE_ERROR
        self.kinds = {
            "internal": trace_pb2.Span.SPAN_KIND_INTERNAL,
            "client": trace_pb2.Span.SPAN_KIND_CLIENT,
        }
        self.sent = 0
        self._new()

    def _new(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        self.request = ExportTraceServiceRequest()
        self.scopes: dict[str, ScopeSpans] = {}
        self.count = 0

    def span(self, runtime: str, kind: str) -> Span:
        scope = self.scopes.get(runtime)
        if scope is None:
            resource = self.request.resource_spans.add()
            for key, value in (("service.name", runtime), ("traceidx.runtime", runtime)):
                attribute = resource.resource.attributes.add()
                attribute.key = key
                attribute.value.string_value = value
            scope = resource.scope_spans.add()
            scope.scope.name = "traceidx"
            scope.scope.version = __version__
            self.scopes[runtime] = scope
        span: Span = scope.spans.add()
        span.kind = self.kinds[kind]
        self.count += 1
        return span

    def flush(self, force: bool = False) -> None:
        if self.count and (force or self.count >= self.batch):
            self.sink.send(self.request, self.count)
            self.sent += self.count
            if self.progress is not None:
                self.progress(self.count)
            self._new()


def _times(
    span: Span, start: int | None, end: int | None, placed: int | None
) -> tuple[int, bool, bool]:
    """Set a span's times from what the records state (ms); returns (start, start_unknown,
    duration_unknown)."""
    start_unknown = start is None
    if start is None:
        start = end if end is not None else placed
    if start is None:
        start = 0
    duration_unknown = end is None or end < start
    span.start_time_unix_nano = start * _MS
    span.end_time_unix_nano = (start if duration_unknown or end is None else end) * _MS
    if start_unknown:
        _put(span, "traceidx.start_unknown", True)
    if duration_unknown:
        _put(span, "traceidx.duration_unknown", True)
    return start, start_unknown, duration_unknown


class _Spans:
    """The span of each kind of row (see the module doc and docs/otel.md for the mapping)."""

    def __init__(self, lineage: otelspans.Lineage, builder: _Builder, content: bool) -> None:
        self.lineage, self.builder, self.content = lineage, builder, content
        self.traces: dict[int, bytes] = {}
        self.roots: set[int] = set()

    def trace(self, session_id: int) -> bytes:
        found = self.traces.get(session_id)
        if found is None:
            root = self.lineage.root(session_id)
            self.roots.add(root)
            found = self.traces[session_id] = trace_id(root)
        return found

    def _open(self, row: dict[str, Any], kind: str, fact: str, fact_id: int) -> Span:
        span = self.builder.span(row["runtime"], kind)
        span.trace_id = self.trace(row["session_id"])
        span.span_id = span_id(fact, fact_id)
        loop_id = row.get("loop_id")
        if loop_id is not None and fact != "loop":
            span.parent_span_id = span_id("loop", loop_id)
        else:
            span.parent_span_id = span_id("session", row["session_id"])
        _put(span, "traceidx.span.kind", fact)
        _put(span, "gen_ai.conversation.id", row["native_id"])
        _put(span, "traceidx.session.id", str(row["session_id"]))
        return span

    def session(self, row: dict[str, Any]) -> None:
        sid = row["session_id"]
        span = self.builder.span(row["runtime"], "internal")
        span.trace_id = self.trace(sid)
        span.span_id = span_id("session", sid)
        link = self.lineage.delegation.get(sid)
        parent = self.lineage.parent_session(sid)
        if self.lineage.root(sid) == sid:  # nothing above it (or it closes a circle)
            pass
        elif link is not None:
            span.parent_span_id = span_id("delegation", link[0])
        elif parent is not None:
            span.parent_span_id = span_id("session", parent)
        span.name = f"session {row['runtime']}"
        _times(span, row["start_ms"], row["end_ms"], None)
        _put(span, "traceidx.span.kind", "session")
        _put(span, "gen_ai.conversation.id", row["native_id"])
        _put(span, "gen_ai.agent.name", row["runtime"])
        _put(span, "traceidx.session.id", str(sid))
        _put(span, "traceidx.runtime", row["runtime"])
        _put(span, "traceidx.project", row["project"])
        _put(span, "traceidx.branch", row["branch"])
        _put(span, "traceidx.working_directory", row["working_directory"])
        _put(span, "traceidx.identity_record_id", str(row["identity_record_id"]))
        if row["excess_input"] is not None or row["excess_output"] is not None:
            # the runtime's own session total beyond its billed calls (no call span holds it)
            _put(span, "traceidx.session_usage.model", row["excess_model"])
            _put(span, "traceidx.session_usage.input_tokens", row["excess_input"])
            _put(span, "traceidx.session_usage.cache_read.input_tokens", row["excess_cached"])
            _put(span, "traceidx.session_usage.output_tokens", row["excess_output"])
        forked = row["forked_from"]
        _put(span, "traceidx.forked_from", None if forked is None else str(forked))
        _put(span, "traceidx.delegated_from", None if parent is None else str(parent))
        if self.content:
            _put(span, "traceidx.session.name", row["name"])

    def loop(self, row: dict[str, Any]) -> None:
        span = self._open(row, "internal", "loop", row["loop_id"])
        span.name = f"invoke_agent {row['runtime']}"
        _times(span, row["started_ms"], row["ended_ms"], row["placed_ms"])
        _put(span, "gen_ai.operation.name", "invoke_agent")
        _put(span, "gen_ai.agent.name", row["runtime"])
        _put(span, "gen_ai.request.model", row["model"])
        _put(span, "traceidx.loop.id", str(row["loop_id"]))
        _put(span, "traceidx.loop.outcome", row["outcome"])
        _put(span, "traceidx.record.start_id", str(row["start_record_id"]))
        end_record = row["end_record_id"]
        _put(span, "traceidx.record.end_id", None if end_record is None else str(end_record))
        if row["outcome"] == "failed":
            span.status.code = self.builder.status_error
            _put(span, "error.type", "_OTHER")
        if self.content:
            _put(span, "gen_ai.input.messages", _messages("user", row["requests"]))
            _put(span, "gen_ai.output.messages", _messages("assistant", row["answers"]))

    def model_call(self, row: dict[str, Any]) -> None:
        span = self._open(row, "client", "model_call", row["call_id"])
        model = row["model"]
        span.name = f"chat {model}" if model else "chat"
        _times(span, row["occurred_ms"], None, row["placed_ms"])
        _put(span, "gen_ai.operation.name", "chat")
        _put(span, "gen_ai.provider.name", row["provider"])
        _put(span, "gen_ai.request.model", model)
        _put(span, "gen_ai.usage.input_tokens", row["input"])
        _put(span, "gen_ai.usage.output_tokens", row["output"])
        _put(span, "gen_ai.usage.cache_read.input_tokens", row["cached"])
        _put(span, "gen_ai.usage.cache_creation.input_tokens", row["cache_write"])
        _put(span, "gen_ai.usage.reasoning.output_tokens", row["reasoning"])
        cost = row["cost_usd"]
        _put(span, "traceidx.cost_usd", None if cost is None else float(cost))
        _put(span, "traceidx.call.id", str(row["call_id"]))
        _put(span, "traceidx.call.outcome", row["outcome"])
        _put(span, "traceidx.record_ids", _ids(row["record_ids"]))
        if row["outcome"] == "error":
            span.status.code = self.builder.status_error
            _put(span, "error.type", "_OTHER")

    def tool_call(self, row: dict[str, Any]) -> None:
        span = self._open(row, "internal", "tool_call", row["item_id"])
        tool = row["tool_name"]
        span.name = f"execute_tool {tool}" if tool else "execute_tool"
        start, duration = row["started_ms"], row["duration_ms"]
        if start is not None and duration is not None:  # the runtime's own duration
            end = start + duration
        elif start is not None and row["elapsed_ms"] is not None:  # call record to output
            end = start + row["elapsed_ms"]
        else:
            end = None
        _times(span, start, end, row["placed_ms"])
        _put(span, "gen_ai.operation.name", "execute_tool")
        _put(span, "gen_ai.tool.name", tool)
        _put(span, "gen_ai.tool.call.id", str(row["item_id"]))
        _put(span, "traceidx.tool.kind", row["kind"])
        _put(span, "traceidx.tool.exit_code", row["exit_code"])
        _put(span, "traceidx.tool.failed", row["failed"])
        _put(span, "traceidx.tool.duration_ms", duration)
        _put(span, "traceidx.tool.elapsed_ms", row["elapsed_ms"])
        _put(span, "traceidx.tool.output_count", row["output_count"])
        output = row["output_item_id"]
        _put(span, "traceidx.tool.output_item_id", None if output is None else str(output))
        _put(span, "traceidx.shell.programs", row["programs"] or None)
        if row["failed"]:
            span.status.code = self.builder.status_error
            code = row["exit_code"]
            _put(span, "error.type", str(code) if code else "_OTHER")
        if self.content:
            _put(span, "gen_ai.tool.call.arguments", row["arguments"])
            _put(span, "gen_ai.tool.call.result", row["result"])

    def delegation(self, row: dict[str, Any]) -> None:
        span = self._open(row, "client", "delegation", row["item_id"])
        agent = row["agent_type"]
        span.name = f"invoke_agent {agent or 'subagent'}"
        _times(span, row["occurred_ms"], None, row["placed_ms"])
        _put(span, "gen_ai.operation.name", "invoke_agent")
        _put(span, "gen_ai.agent.name", agent)
        _put(span, "traceidx.item.id", str(row["item_id"]))
        child = row["child_session_id"]
        _put(span, "traceidx.child_session.id", None if child is None else str(child))
        _put(span, "traceidx.record_ids", _ids(row["record_ids"]))
        if self.content:
            task = row["task"]
            _put(span, "gen_ai.input.messages", _messages("user", [task] if task else None))


def export(
    dataset: str | Path,
    sink: Sink,
    params: ReportParams,
    scope: otelspans.Scope | None = None,
    *,
    content: bool = False,
    batch: int = BATCH_SPANS,
    started: Callable[[dict[str, int]], None] | None = None,
    progress: Callable[[int], None] | None = None,
) -> Exported:
    """Export the facts in scope to `sink`; `started` gets the span count of each kind before
    the first request, `progress` the span count of each request sent."""
    from traceidx.analysis.query import connect

    require()
    con = connect(dataset)
    try:
        lineage = otelspans.prepare(con, params, scope or otelspans.Scope())
        totals = otelspans.counts(con)
        if started is not None:
            started(totals)
        builder = _Builder(sink, batch, progress)
        spans = _Spans(lineage, builder, content)
        done = Exported()
        for kind in KINDS:
            make = getattr(spans, kind)
            for rows in otelspans.rows(con, kind, content):
                for row in rows:
                    make(row)
                    builder.flush()
                done.spans[kind] += len(rows)
        builder.flush(force=True)
        sink.close()
        done.traces = len(spans.roots)
        done.requests = getattr(sink, "requests", 0)
        return done
    finally:
        con.close()


def to_json(request: ExportTraceServiceRequest) -> str:
    """A request as one line of OTLP/JSON (protobuf's JSON mapping; trace and span ids as hex,
    enums as numbers, as OTLP/JSON and the collector's file exporter write them).

    Protobuf's mapping runs in pure Python, field by field; most attributes repeat from span
    to span (an operation, a model, a session's id), so each distinct attribute is mapped once
    per request and each span's own fields once."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    mapped: dict[bytes, dict[str, Any]] = {}
    bare = Span()
    resources = []
    for resource in request.resource_spans:
        scopes = []
        for scope in resource.scope_spans:
            spans = []
            for span in scope.spans:
                bare.CopyFrom(span)
                del bare.attributes[:]
                fields = MessageToDict(bare, use_integers_for_enums=True)
                _recode(fields, _b64_to_hex)
                attributes = []
                for attribute in span.attributes:
                    key = attribute.SerializeToString()
                    found = mapped.get(key)
                    if found is None:
                        found = mapped[key] = MessageToDict(attribute)
                    attributes.append(found)
                if attributes:
                    fields["attributes"] = attributes
                spans.append(fields)
            shell = type(scope)()
            shell.CopyFrom(scope)
            del shell.spans[:]
            scopes.append({**MessageToDict(shell), "spans": spans})
        head = type(resource)()
        head.CopyFrom(resource)
        del head.scope_spans[:]
        resources.append({**MessageToDict(head), "scopeSpans": scopes})
    return json.dumps({"resourceSpans": resources}, separators=(",", ":"), ensure_ascii=False)


def from_json(line: str) -> ExportTraceServiceRequest:
    """One line of OTLP/JSON as a request (the inverse of `to_json`)."""
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    document = json.loads(line)
    for resource in document.get("resourceSpans", ()):
        for scope in resource.get("scopeSpans", ()):
            for span in scope.get("spans", ()):
                _recode(span, _hex_to_b64)
    request = ExportTraceServiceRequest()
    ParseDict(document, request)
    return request


def read_file(path: Path) -> Iterator[ExportTraceServiceRequest]:
    """The requests of an OTLP/JSON lines file."""
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield from_json(line)


_ID_KEYS = ("traceId", "spanId", "parentSpanId")


def _recode(span: dict[str, Any], convert: Callable[[str], str]) -> None:
    for key in _ID_KEYS:
        if key in span:
            span[key] = convert(span[key])
    for link in span.get("links", ()):
        for key in _ID_KEYS:
            if key in link:
                link[key] = convert(link[key])


def _b64_to_hex(text: str) -> str:
    import base64

    return base64.b64decode(text).hex()


def _hex_to_b64(text: str) -> str:
    import base64

    return base64.b64encode(bytes.fromhex(text)).decode("ascii")
