"""`traceidx export otel` to a file (read back by opentelemetry-proto's own parser) and to an
OTLP/HTTP receiver run here: spans per kind, stable ids, absent facts left out, content only
when asked, scope, `--since-last`, retries and the standard variables."""

from __future__ import annotations

import base64
import gzip
import json
import shutil
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support.files import fixture_path, traceidx_cli

pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed")

from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)


def _parse(path: Path) -> list[ExportTraceServiceRequest]:
    """An OTLP/JSON lines file through protobuf's JSON parser (OTLP/JSON writes ids as hex,
    protobuf's mapping as base64: the one difference)."""
    requests = []
    for line in path.read_text("utf-8").splitlines():
        document = json.loads(line)
        for resource in document["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            raw = bytes.fromhex(span[key])
                            span[key] = base64.b64encode(raw).decode()
        request = ExportTraceServiceRequest()
        ParseDict(document, request)
        requests.append(request)
    return requests


def _value(any_value: Any) -> Any:
    field = any_value.WhichOneof("value")
    if field == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, field)


def _spans(requests: list[ExportTraceServiceRequest]) -> list[dict[str, Any]]:
    spans = []
    for request in requests:
        for resource in request.resource_spans:
            service = {a.key: _value(a.value) for a in resource.resource.attributes}
            for scope in resource.scope_spans:
                assert scope.scope.name == "traceidx"
                for span in scope.spans:
                    spans.append(
                        {
                            "name": span.name,
                            "trace": span.trace_id.hex(),
                            "span": span.span_id.hex(),
                            "parent": span.parent_span_id.hex(),
                            "start": span.start_time_unix_nano,
                            "end": span.end_time_unix_nano,
                            "status": span.status.code,
                            "service": service["service.name"],
                            "attributes": {a.key: _value(a.value) for a in span.attributes},
                        }
                    )
    return spans


def _export(dataset: Path, out: Path, *args: str) -> list[dict[str, Any]]:
    done = traceidx_cli("export", "otel", "--dataset", str(dataset), "--output", str(out), *args)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {out}: ")
    return _spans(_parse(out))


def _one(dataset: Path, sql: str) -> Any:
    import traceidx

    con = traceidx.connect(dataset)
    try:
        return con.execute(sql).fetchall()[0][0]
    finally:
        con.close()


@pytest.fixture(scope="module")
def exported(traces_dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("otel") / "spans.jsonl"
    _export(traces_dataset, out)
    return out


def test_the_file_is_otlp_json_lines_with_a_span_per_fact(
    traces_dataset: Path, exported: Path
) -> None:
    requests = _parse(exported)
    assert len(requests) == len(exported.read_text().splitlines()) >= 1
    spans = _spans(requests)
    kinds = Counter(s["attributes"]["traceidx.span.kind"] for s in spans)
    assert kinds["session"] == _one(traces_dataset, "SELECT count(*) FROM sessions")
    assert kinds["loop"] == _one(traces_dataset, "SELECT count(*) FROM loops")
    billed = "SELECT count(*) FROM model_calls WHERE usage IS NOT NULL"
    assert kinds["model_call"] == _one(traces_dataset, billed)
    assert kinds["tool_call"] == _one(traces_dataset, "SELECT count(*) FROM tool_calls")
    delegations = "SELECT count(*) FROM items WHERE semantic.role = 'agent.delegation'"
    assert kinds["delegation"] == _one(traces_dataset, delegations)
    runtimes = {s["service"] for s in spans}
    assert runtimes == set(_one(traces_dataset, "SELECT list(DISTINCT runtime) FROM sessions"))
    # names and operations as the GenAI conventions have them
    for span in spans:
        attributes = span["attributes"]
        operation = attributes.get("gen_ai.operation.name")
        kind = attributes["traceidx.span.kind"]
        if kind == "model_call":
            model = attributes.get("gen_ai.request.model")
            assert operation == "chat" and span["name"] == (f"chat {model}" if model else "chat")
            assert attributes["traceidx.duration_unknown"] is True  # a response's time only
            assert span["start"] == span["end"]
        elif kind == "tool_call":
            assert operation == "execute_tool"
            assert span["name"] == f"execute_tool {attributes['gen_ai.tool.name']}"
            assert attributes["gen_ai.tool.call.id"] == attributes["traceidx.session.id"] or (
                attributes["gen_ai.tool.call.id"].isdigit()
            )
        elif kind in ("loop", "delegation"):
            assert operation == "invoke_agent"
        assert span["end"] >= span["start"]
        # ids are strings (63-bit ids lose digits as doubles)
        for key, value in attributes.items():
            if key.endswith((".id", "_id", "record_ids")) and key != "gen_ai.conversation.id":
                assert isinstance(value, str | list), key


def test_absent_stays_absent_and_content_is_off_by_default(
    traces_dataset: Path, exported: Path
) -> None:
    spans = _spans(_parse(exported))
    calls = [s for s in spans if s["attributes"]["traceidx.span.kind"] == "model_call"]
    without_cache = _one(
        traces_dataset,
        "SELECT count(*) FROM model_calls WHERE usage IS NOT NULL AND usage.cached IS NULL",
    )
    cache_key = "gen_ai.usage.cache_read.input_tokens"
    assert sum(cache_key not in c["attributes"] for c in calls) == without_cache > 0
    tools = [s for s in spans if s["attributes"]["traceidx.span.kind"] == "tool_call"]
    no_exit = _one(traces_dataset, "SELECT count(*) FROM tool_calls WHERE exit_code IS NULL")
    assert sum("traceidx.tool.exit_code" not in t["attributes"] for t in tools) == no_exit > 0
    failed = _one(traces_dataset, "SELECT count(*) FROM tool_calls WHERE failed")
    assert sum(t["status"] == 2 and "error.type" in t["attributes"] for t in tools) == failed
    unknown = _one(
        traces_dataset,
        "SELECT count(*) FROM tool_calls WHERE duration_ms IS NULL AND elapsed_ms IS NULL",
    )
    assert sum(t["attributes"].get("traceidx.duration_unknown", False) for t in tools) >= unknown
    shell = [t for t in tools if "traceidx.shell.programs" in t["attributes"]]
    assert shell and all(t["attributes"]["traceidx.tool.kind"] == "shell" for t in shell)
    content_keys = {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "traceidx.session.name",
    }
    assert not any(content_keys & set(s["attributes"]) for s in spans)


def test_a_second_export_of_the_same_scope_gives_the_same_ids(
    traces_dataset: Path, exported: Path, tmp_path: Path
) -> None:
    again = _export(traces_dataset, tmp_path / "again.jsonl")
    first = _spans(_parse(exported))

    def ids(spans: list[dict[str, Any]]) -> set[tuple[str, str, str, str]]:
        return {(s["trace"], s["span"], s["parent"], s["name"]) for s in spans}

    assert ids(again) == ids(first) and len(ids(first)) == len(first)
    # every parent is a span of the same trace; a subagent's session hangs in its parent's trace
    by_span = {s["span"]: s for s in first}
    for span in first:
        if span["parent"]:
            assert by_span[span["parent"]]["trace"] == span["trace"]
    children = [
        s for s in first if s["attributes"]["traceidx.span.kind"] == "session" and s["parent"]
    ]
    assert children
    assert all("traceidx.delegated_from" in s["attributes"] for s in children)
    under_delegation = [
        s
        for s in children
        if by_span[s["parent"]]["attributes"]["traceidx.span.kind"] == "delegation"
    ]
    assert under_delegation
    for child in under_delegation:
        delegation = by_span[child["parent"]]["attributes"]
        assert delegation["traceidx.child_session.id"] == child["attributes"]["traceidx.session.id"]


def test_content_when_asked(traces_dataset: Path, tmp_path: Path) -> None:
    spans = _export(traces_dataset, tmp_path / "content.jsonl", "--content")
    loops = [s for s in spans if "gen_ai.input.messages" in s["attributes"]]
    assert loops
    messages = json.loads(loops[0]["attributes"]["gen_ai.input.messages"])
    assert messages[0]["role"] == "user" and messages[0]["parts"][0]["type"] == "text"
    assert any("gen_ai.tool.call.arguments" in s["attributes"] for s in spans)
    assert any("gen_ai.tool.call.result" in s["attributes"] for s in spans)


def test_scope_options_narrow_the_export(traces_dataset: Path, tmp_path: Path) -> None:
    spans = _export(traces_dataset, tmp_path / "codex.jsonl", "--runtime", "codex")
    assert spans and {s["service"] for s in spans} == {"codex"}
    sessions = _one(traces_dataset, "SELECT count(*) FROM sessions WHERE runtime = 'codex'")
    assert sum(s["attributes"]["traceidx.span.kind"] == "session" for s in spans) == sessions
    model = _one(
        traces_dataset,
        "SELECT model FROM model_calls WHERE usage IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC "
        "LIMIT 1",
    )
    spans = _export(traces_dataset, tmp_path / "model.jsonl", "--model", model)
    calls = [s for s in spans if s["attributes"]["traceidx.span.kind"] == "model_call"]
    assert calls and {c["attributes"]["gen_ai.request.model"] for c in calls} == {model}
    project = _one(traces_dataset, "SELECT max(project) FROM sessions")
    spans = _export(traces_dataset, tmp_path / "project.jsonl", "--project", project)
    projects = {
        s["attributes"].get("traceidx.project")
        for s in spans
        if s["attributes"]["traceidx.span.kind"] == "session"
    }
    assert projects == {project}
    spans = _export(traces_dataset, tmp_path / "future.jsonl", "--since", "2999-01-01")
    assert spans == []


def test_since_last_exports_what_was_published_since(tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    files = sorted(fixture_path("generated", "codex").glob("*.jsonl"))[:3]
    for source in files[:2]:
        shutil.copy(source, traces / source.name)
    dataset = tmp_path / "ds"
    assert traceidx_cli("build", "--dataset", str(dataset), str(traces)).returncode == 0
    out = tmp_path / "out.jsonl"
    first = _export(dataset, out, "--since-last")
    assert sum(s["attributes"]["traceidx.span.kind"] == "session" for s in first) == 2
    assert (dataset / "otel-export.json").exists()
    assert _export(dataset, out, "--since-last") == []  # nothing new
    shutil.copy(files[2], traces / files[2].name)
    assert traceidx_cli("build", "--dataset", str(dataset), str(traces)).returncode == 0
    third = _export(dataset, out, "--since-last")
    sessions = [s for s in third if s["attributes"]["traceidx.span.kind"] == "session"]
    assert len(sessions) == 1
    assert sessions[0]["span"] not in {s["span"] for s in first}
    # another destination has its own state: everything is new to it
    other = _export(dataset, tmp_path / "other.jsonl", "--since-last")
    assert sum(s["attributes"]["traceidx.span.kind"] == "session" for s in other) == 3


# -- OTLP/HTTP ---------------------------------------------------------------------------------


class _Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP traces receiver: refuses its first request with 503, then parses each
    protobuf body with opentelemetry-proto."""

    received: list[tuple[dict[str, str], ExportTraceServiceRequest]]
    refused: int

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.server.refused == 0:  # type: ignore[attr-defined]
            self.server.refused += 1  # type: ignore[attr-defined]
            self.send_response(503)
            self.send_header("Retry-After", "0.01")
            self.end_headers()
            return
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.received.append(({k.lower(): v for k, v in self.headers.items()}, request))  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Any]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    server.received = []  # type: ignore[attr-defined]
    server.refused = 0  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_http_export_with_the_standard_variables_and_a_retry(
    traces_dataset: Path, exported: Path, receiver: Any
) -> None:
    port = receiver.server_address[1]
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-team=agents,authorization=Bearer%20abc",
        "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
    }
    done = traceidx_cli(
        "export", "otel", "--dataset", str(traces_dataset), "--batch", "700", env=env
    )
    assert done.returncode == 0, done.stderr
    assert f"sent to http://127.0.0.1:{port}/v1/traces" in done.stdout
    assert receiver.refused == 1  # the 503 was retried
    headers = [h for h, _ in receiver.received]
    assert all(h["x-team"] == "agents" and h["authorization"] == "Bearer abc" for h in headers)
    assert all(h["content-type"] == "application/x-protobuf" for h in headers)
    spans = _spans([r for _, r in receiver.received])
    assert all(len(r.resource_spans) >= 1 for _, r in receiver.received)
    assert (
        max(
            sum(len(s.spans) for rs in r.resource_spans for s in rs.scope_spans)
            for _, r in receiver.received
        )
        <= 700
    )
    file_spans = _spans(_parse(exported))
    assert sorted(s["span"] for s in spans) == sorted(s["span"] for s in file_spans)


def test_where_to_and_what_fails_say_so_in_one_line(traces_dataset: Path) -> None:
    from traceidx.analysis.otelsink import HttpSink
    from traceidx.errors import ExportError

    done = traceidx_cli("export", "otel", "--dataset", str(traces_dataset))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--output FILE" in done.stderr
    bad = traceidx_cli("export", "otel", "--dataset", str(traces_dataset), "--endpoint", "ftp://x")
    assert bad.returncode == 2 and "not an http(s) URL" in bad.stderr
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    waits: list[float] = []
    sink = HttpSink(f"http://127.0.0.1:{port}/v1/traces", sleep=waits.append)
    with pytest.raises(ExportError, match="cannot reach the OTLP endpoint"):
        sink.send(ExportTraceServiceRequest(), 0)
    assert waits == [1.0, 2.0, 4.0, 8.0, 16.0]  # exponential back-off between the tries
