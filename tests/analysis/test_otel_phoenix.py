"""`traceidx export otel` to a real OTLP consumer: Arize Phoenix, started on 127.0.0.1, read
back through its client. The dataset is every trace at hand (the shared corpus when present)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.files import traceidx_cli

pytest.importorskip("phoenix.client", reason="the dev extra (arize-phoenix-client) is missing")
pytest.importorskip("phoenix.server", reason="the dev extra (arize-phoenix) is missing")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Phoenix server with its own working folder on free ports; its base URL."""
    work = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (work / "server.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "phoenix.server.main", "serve"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=work,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300  # its first start migrates a database: slow here
        while True:
            try:
                urllib.request.urlopen(f"{url}/healthz", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    tail = (work / "server.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"Phoenix did not start:\n{tail}") from None
                time.sleep(1)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _spans(url: str, expected: int) -> list[dict[str, Any]]:
    """Every span of Phoenix's default project, once it has ingested `expected` of them (it
    inserts in the background, slowly on a busy machine: waited for while the count grows)."""
    from phoenix.client import Client

    client = Client(base_url=url)
    seen, still = -1, time.monotonic()
    while True:
        spans: list[dict[str, Any]] = list(
            client.spans.get_spans(project_identifier="default", limit=expected + 1, timeout=300)
        )
        if len(spans) >= expected:
            return spans
        if len(spans) > seen:
            seen, still = len(spans), time.monotonic()
        elif time.monotonic() - still > 180:  # no progress for three minutes: it is stuck
            return spans
        time.sleep(15)


def _expected(dataset: Path) -> dict[str, Any]:
    """What the dataset holds, asked of it directly."""
    import traceidx

    con = traceidx.connect(dataset)
    one = lambda sql: con.execute(sql).fetchall()[0][0]  # noqa: E731
    linked = """
        SELECT session_id FROM sessions WHERE delegated_from IS NOT NULL
        UNION SELECT coalesce(semantic.delegation.child_session_id, linked_session_id)
        FROM items WHERE semantic.role = 'agent.delegation'
          AND coalesce(semantic.delegation.child_session_id, linked_session_id) <> session_id
    """
    found = {
        "session": one("SELECT count(*) FROM sessions"),
        "loop": one("SELECT count(*) FROM loops"),
        "model_call": one("SELECT count(*) FROM model_calls WHERE usage IS NOT NULL"),
        "tool_call": one("SELECT count(*) FROM tool_calls"),
        "delegation": one("SELECT count(*) FROM items WHERE semantic.role = 'agent.delegation'"),
        # (the corpus has no circle of sessions delegating to each other)
        "roots": one(f"SELECT count(*) FROM sessions WHERE session_id NOT IN ({linked})"),
    }
    con.close()
    usage = traceidx.report("usage", dataset, group_by="model", timezone="UTC")
    tokens: dict[str | None, Counter[str]] = defaultdict(Counter)
    members = ("input", "output", "cached", "cache_write")
    for row in usage.iter_rows(named=True):  # calls' tokens, and sessions' own totals beyond
        if all(row[member] is None for member in members):
            continue  # a row of loops only: no tokens of its own
        for member in members:
            tokens[row["model"]][member] += row[member] or 0
    found["tokens"] = tokens
    return found


def test_phoenix_holds_every_session_loop_call_and_tool_call(
    traces_dataset: Path, phoenix: str
) -> None:
    expected = _expected(traces_dataset)
    total = sum(expected[k] for k in ("session", "loop", "model_call", "tool_call", "delegation"))
    done = traceidx_cli(
        "export", "otel", "--dataset", str(traces_dataset), "--endpoint", phoenix, "--batch", "500"
    )
    assert done.returncode == 0, done.stderr
    assert f"{total} spans in {expected['roots']} traces" in done.stdout
    assert f"/{total} spans" in done.stderr  # the progress bar

    spans = _spans(phoenix, total)
    assert len(spans) == total
    kinds = Counter(s["attributes"]["traceidx.span.kind"] for s in spans)
    assert kinds == {k: expected[k] for k in kinds} and set(kinds) == {
        "session",
        "loop",
        "model_call",
        "tool_call",
        "delegation",
    }
    # one trace per session that nothing delegated to; a subagent's session is in its parent's
    by_id = {s["context"]["span_id"]: s for s in spans}
    assert len(by_id) == total
    traces = {s["context"]["trace_id"] for s in spans}
    assert len(traces) == expected["roots"]
    roots = [s for s in spans if not s.get("parent_id")]
    assert len(roots) == expected["roots"]
    assert {s["attributes"]["traceidx.span.kind"] for s in roots} == {"session"}
    # parent links intact: every parent is exported, in the same trace, of the right kind
    parent_kinds = {
        "loop": {"session"},
        "model_call": {"loop", "session"},
        "tool_call": {"loop", "session"},
        "delegation": {"loop", "session"},
        "session": {"delegation", "session"},
    }
    for span in spans:
        parent = span.get("parent_id")
        if not parent:
            continue
        assert parent in by_id, span["name"]
        above = by_id[parent]
        assert above["context"]["trace_id"] == span["context"]["trace_id"]
        kind = span["attributes"]["traceidx.span.kind"]
        assert above["attributes"]["traceidx.span.kind"] in parent_kinds[kind]
        if kind in ("model_call", "tool_call", "delegation") and "traceidx.loop.id" in str(
            above["attributes"]
        ):
            assert above["attributes"]["traceidx.loop.id"]
    # token sums per model equal `report usage`'s
    tokens: dict[str | None, Counter[str]] = defaultdict(Counter)
    members = {
        "input": "gen_ai.usage.input_tokens",
        "output": "gen_ai.usage.output_tokens",
        "cached": "gen_ai.usage.cache_read.input_tokens",
        "cache_write": "gen_ai.usage.cache_creation.input_tokens",
    }
    beyond = {  # a session's own usage total beyond its billed calls, on its session span
        "input": "traceidx.session_usage.input_tokens",
        "output": "traceidx.session_usage.output_tokens",
        "cached": "traceidx.session_usage.cache_read.input_tokens",
    }
    for span in spans:
        attributes = span["attributes"]
        if attributes["traceidx.span.kind"] == "session":
            model = attributes.get("traceidx.session_usage.model")
            for member, key in beyond.items():
                if key in attributes:
                    tokens[model][member] += int(attributes[key])
            continue
        if attributes["traceidx.span.kind"] != "model_call":
            continue
        assert attributes["gen_ai.operation.name"] == "chat"
        for member, key in members.items():
            tokens[attributes.get("gen_ai.request.model")][member] += int(attributes.get(key, 0))
    assert dict(tokens) == dict(expected["tokens"])
