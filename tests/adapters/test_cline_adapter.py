"""Rules of the Cline adapter, on the generated session documents, on the hand-typed task files
of the VS Code extensions, and on small message sequences.

The generated set (the shared corpus's whole folder when present, else the committed copies)
is built and read back: each session counts its own calls, exactly its manifest's
``metadata.usage`` (never ``aggregateUsage``, which adds teammates). The task files
(``tests/fixtures/handwritten/cline/legacy-document-*``, typed in the documented shape) are
built as a user's default roots would find them. Message sequences fed straight to the adapter
cover what neither shows (exit codes only from the fixed sentence, a run that goes on after a
failure or an answer, steering).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.facts import dict_rows
from tests.support.files import fixture_path, generated, traceidx_cli
from traceidx.adapters import detect
from traceidx.adapters.cline import ClineAdapter
from traceidx.analysis.query import connect
from traceidx.domain.drafts import Draft
from traceidx.pipeline.job import build
from traceidx.runtimes import declared
from traceidx.sources.discover import default_roots

FOLDER = generated("cline")
HANDWRITTEN = fixture_path("handwritten", "cline")
USAGE = ("input", "cached", "cache_write", "output", "reasoning")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Any:
    dataset = tmp_path_factory.mktemp("cline") / "ds"
    report = build([FOLDER], dataset, jobs=1)
    assert report.exit_code == 0
    con = connect(dataset)
    yield report, con
    con.close()


def _manifests() -> list[Path]:
    """The session manifests (``<id>.json``) beside the lead sessions' documents."""
    return sorted(
        p
        for p in FOLDER.rglob("*.json")
        if "sessions" in p.parts and p.name == f"{p.parent.name}.json"
    )


def test_each_session_counts_its_own_calls_as_its_manifest_totals(built: Any) -> None:
    """``metadata.usage`` is the total of the session's own recorded calls: the sum of what is
    published for it (``inputTokens`` as stored: the cache is inside, never added again).
    ``aggregateUsage`` adds teammates' calls, which are sessions of their own."""
    _, con = built
    sums = {
        r["native_id"]: r
        for r in dict_rows(
            con,
            "SELECT s.native_id, sum(c.usage.input) AS input, sum(c.usage.cached) AS cached, "
            "sum(c.usage.cache_write) AS cache_write, sum(c.usage.output) AS output, "
            "count(c.usage.reasoning) AS reasoning FROM sessions s "
            "JOIN model_calls c USING (session_id) GROUP BY 1",
        )
    }
    manifests = _manifests()
    assert len(manifests) >= 8
    aggregated = 0
    for path in manifests:
        manifest = json.loads(path.read_text("utf-8"))
        usage = manifest["metadata"]["usage"]
        got = sums.get(manifest["session_id"])
        if usage["inputTokens"] == 0:  # a turn that failed before any response
            assert got is None, path.name
            continue
        assert got is not None, path.name
        assert (got["input"], got["cached"], got["output"]) == (
            usage["inputTokens"],
            usage["cacheReadTokens"],
            usage["outputTokens"],
        ), path.name
        assert got["cache_write"] == usage.get("cacheWriteTokens", 0), path.name
        assert got["reasoning"] == 0, path.name  # never recorded: absent, not 0
        everything = manifest["metadata"]["aggregateUsage"]["inputTokens"]
        aggregated += everything != usage["inputTokens"]
    assert aggregated >= 1  # the team session: its teammate's calls are its own session's


def test_exit_codes_come_only_from_the_error_sentence(built: Any) -> None:
    _, con = built
    rows = dict_rows(
        con,
        "SELECT t.command, t.exit_code, t.failed FROM tool_calls t "
        "WHERE t.tool_name = 'run_commands' AND t.output_count = 1",
    )
    assert rows
    stated = {r["command"]: r["exit_code"] for r in rows if r["exit_code"] is not None}
    assert stated.get("cat missing.txt") == 1
    assert stated.get("bash -c 'exit 2'") == 2
    assert all(code != 0 for code in stated.values())  # a success states no number
    assert all(r["failed"] for r in rows if r["exit_code"] is not None)


def test_subagents_and_teammates_are_their_own_sessions(built: Any) -> None:
    _, con = built
    children = dict_rows(
        con,
        "SELECT c.native_id, p.native_id AS parent, c.task, c.working_directory "
        "FROM sessions c JOIN sessions p ON p.session_id = c.delegated_from.session_id",
    )
    by_id = {r["native_id"]: r for r in children}
    assert any("__agent_" in n for n in by_id) and any("__teamtask__" in n for n in by_id)
    for native, row in by_id.items():
        assert native.startswith(row["parent"] + "__"), native
        assert row["task"] and row["working_directory"] is None


def test_the_cline_homes_follow_each_override(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for variable in ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    roots = default_roots()["cline"]
    assert tmp_path / ".cline" / "data" / "sessions" in roots
    vscode = tmp_path / ".config" / "Code" / "User" / "globalStorage"
    assert vscode / "saoudrizwan.claude-dev" / "tasks" in roots
    assert vscode / "rooveterinaryinc.roo-cline" / "tasks" in roots
    assert vscode / "kilocode.kilo-code" / "tasks" in roots
    monkeypatch.setenv("CLINE_DIR", str(tmp_path / "a"))
    monkeypatch.setenv("CLINE_DATA_DIR", str(tmp_path / "b"))
    monkeypatch.setenv("CLINE_SESSION_DATA_DIR", str(tmp_path / "c"))
    roots = default_roots()["cline"]
    for root in (tmp_path / "a" / "data" / "sessions", tmp_path / "b" / "sessions"):
        assert root in roots
    assert tmp_path / "c" in roots


def _isolated_home(tmp_path: Path) -> dict[str, str]:
    """Environment variables that put every runtime's home inside `tmp_path` (Cline's and the
    VS Code folders where they are by default, the others in folders that do not exist)."""
    env = {
        home.variable: str(tmp_path / "elsewhere" / home.variable)
        for homes in declared().values()
        for home in homes
    }
    cline = tmp_path / ".cline"
    env |= {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config")}
    env |= {"CLINE_DIR": str(cline), "CLINE_DATA_DIR": str(cline / "data")}
    env["CLINE_SESSION_DATA_DIR"] = str(cline / "data" / "sessions")
    return env


def test_build_without_paths_finds_cli_sessions_and_extension_tasks(tmp_path: Path) -> None:
    """`traceidx build` with no paths reads the CLI's sessions folder and the extensions'
    task folders under the user's home, as a user runs it."""
    sessions = tmp_path / ".cline" / "data" / "sessions"
    lead = next(FOLDER.rglob("*.messages.json")).parent
    shutil.copytree(lead, sessions / lead.name)
    storage = tmp_path / ".config" / "Code" / "User" / "globalStorage"
    for name, extension in (
        ("cline", "saoudrizwan.claude-dev"),
        ("roo", "rooveterinaryinc.roo-cline"),
    ):
        shutil.copytree(
            HANDWRITTEN / f"legacy-document-{name}" / "tasks", storage / extension / "tasks"
        )
    env = _isolated_home(tmp_path)
    dataset = tmp_path / "ds"
    done = traceidx_cli("build", "--dataset", str(dataset), env=env)
    assert done.returncode == 0, done.stderr
    status = traceidx_cli("status", "--dataset", str(dataset), "--format", "json", env=env)
    assert status.returncode == 0, status.stderr
    con = connect(dataset)
    try:
        rows = dict_rows(con, "SELECT runtime, native_id FROM sessions ORDER BY native_id")
    finally:
        con.close()
    assert {r["runtime"] for r in rows} == {"cline"}
    natives = {r["native_id"] for r in rows}
    assert {"1718000000000", "0193a4c1-2f00-7b4e-9d10-5a6b7c8d9e0f"} <= natives
    assert len(natives) >= 3


def test_task_files_count_the_cache_by_protocol_and_read_the_turns(tmp_path: Path) -> None:
    report = build([HANDWRITTEN], tmp_path / "ds", jobs=1)
    assert report.exit_code == 0
    assert {r.state for r in report.results} == {"indexed"}  # the history file is no source
    con = connect(tmp_path / "ds")
    try:
        calls = dict_rows(
            con,
            "SELECT s.native_id, c.usage FROM model_calls c JOIN sessions s USING (session_id) "
            "ORDER BY c.occurred_at",
        )
        loops = dict_rows(
            con,
            'SELECT s.native_id, l."end".outcome AS outcome FROM loops l '
            "JOIN sessions s USING (session_id) ORDER BY s.native_id, l.session_position",
        )
        shell = dict_rows(
            con, "SELECT command, output_count FROM tool_calls WHERE command IS NOT NULL"
        )
    finally:
        con.close()
    cline = [c["usage"] for c in calls if c["native_id"] == "1718000000000"]
    # Anthropic counts (no protocol written): tokensIn excludes the cache, which is added
    assert [u["input"] for u in cline] == [3 + 4210, 6 + 160 + 4210, 4 + 92 + 4370, 4 + 38 + 4462]
    assert all(u["reasoning"] is None for u in cline)
    roo = [c["usage"] for c in calls if c["native_id"].startswith("0193")]
    # the OpenAI protocol: tokensIn includes the cache; a request without counts is no call
    assert [(u["input"], u["cached"]) for u in roo] == [(5210, 4096)]
    outcomes = [(r["native_id"], r["outcome"]) for r in loops]
    assert outcomes == [
        ("0193a4c1-2f00-7b4e-9d10-5a6b7c8d9e0f", "failed"),
        ("1718000000000", None),
        ("1718000000000", "interrupted"),
    ]
    assert shell == [{"command": "ls tests | wc -l", "output_count": 1}]


# -- message sequences --------------------------------------------------------------------------


class Session:
    """Messages of one lead session document, in the CLI's shapes."""

    def __init__(self) -> None:
        self.head = {
            "version": 1,
            "agent": "lead",
            "sessionId": "1800000000000_abcde",
            "origin": {"source": "cli", "mode": "user", "sessionId": "1800000000000_abcde"},
            "system_prompt": "<env>\n1. Platform: linux\n4. Working Directory: /w/p\n</env>",
        }
        self.messages: list[dict[str, Any]] = []

    def add(self, role: str, *content: dict[str, Any], **fields: Any) -> None:
        ts = 1800000000000 + 1000 * len(self.messages)
        self.messages.append(
            {"id": f"m{len(self.messages)}", "role": role, "content": list(content), "ts": ts}
            | fields
        )

    def prompt(self, text: str) -> None:
        self.add("user", {"type": "text", "text": f'<user_input mode="act">{text}</user_input>'})

    def reply(self, text: str | None = None, *commands: tuple[str, str]) -> None:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for call, command in commands:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call,
                    "name": "run_commands",
                    "input": {"commands": [command]},
                }
            )
        metrics = {
            "inputTokens": 120,
            "outputTokens": 9,
            "cacheReadTokens": 100,
            "cacheWriteTokens": 0,
        }
        self.add(
            "assistant", *blocks, modelInfo={"id": "gpt-5", "provider": "openai"}, metrics=metrics
        )

    def result(self, call: str, *entries: dict[str, Any]) -> None:
        self.add(
            "user",
            {
                "type": "tool_result",
                "tool_use_id": call,
                "name": "run_commands",
                "content": list(entries),
            },
        )

    def draft(self) -> Draft:
        assert detect([self.head, *self.messages]) is ClineAdapter
        adapter = ClineAdapter()
        for position, record in enumerate([self.head, *self.messages]):
            adapter.feed(position, record)
        return adapter.finish()


def _outputs(draft: Draft) -> list[dict[str, Any]]:
    return [i.value for i in draft.items if i.role == "tool.output"]


def test_an_exit_code_is_only_the_number_of_the_fixed_error_sentence() -> None:
    session = Session()
    session.prompt("Run things.")
    session.reply(None, ("c1", "false"), ("c2", "x"), ("c3", "true"))
    session.result(
        "c1",
        {
            "query": "false",
            "result": "[Command exited with code 4]",
            "error": "Command exited with code 4",
            "success": False,
        },
    )
    session.result(
        "c2",
        {
            "query": "x",
            "result": "[Command exited with code 3]",
            "error": "Command failed: x",
            "success": False,
        },
    )
    session.result(
        "c3",
        {"query": "a", "result": "", "success": True},
        {"query": "b", "result": "", "error": "Command exited with code 1", "success": False},
    )
    first, second, third = _outputs(session.draft())
    assert (first.get("exit_code"), first["failed"]) == (4, True)
    assert ("exit_code" not in second, second["failed"]) == (True, True)
    assert ("exit_code" not in third, third["failed"]) == (True, True)  # two commands: whose?


def test_a_response_after_an_error_or_an_answer_goes_on_in_the_loop() -> None:
    session = Session()
    session.prompt("Answer.")
    session.reply("Partial answer.")
    session.add(
        "assistant",
        {"type": "text", "text": "Rate limited"},
        metadata={"displayOnly": True, "displayRole": "error"},
    )
    session.reply("The answer.")
    draft = session.draft()
    (loop,) = draft.loops
    assert (loop.end, loop.outcome) == (None, None)
    roles = [i.role for i in draft.items]
    assert roles == ["human.request", "agent.commentary", "runtime.notice", "agent.final_answer"]
    session.add(
        "assistant",
        {"type": "text", "text": "Down"},
        metadata={"displayOnly": True, "displayRole": "error"},
    )
    (loop,) = session.draft().loops
    assert (loop.end, loop.outcome) == (5, "failed")
    assert session.draft().session is not None
    assert session.draft().session.working_directory == "/w/p"  # type: ignore[union-attr]


def test_a_typed_hint_beside_tool_results_is_steering() -> None:
    session = Session()
    session.prompt("Look around.")
    session.reply(None, ("c1", "ls"))
    session.add(
        "user",
        {
            "type": "tool_result",
            "tool_use_id": "c1",
            "name": "run_commands",
            "content": [{"query": "ls", "result": "a", "success": True}],
        },
        {"type": "text", "text": '<user_input mode="act">only src/</user_input>'},
    )
    draft = session.draft()
    steering = [i.value["text"] for i in draft.items if i.role == "human.steering"]
    assert steering == ["only src/"] and len(draft.loops) == 1
