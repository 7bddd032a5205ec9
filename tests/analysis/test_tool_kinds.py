"""Tools compare across runtimes: every tool call has a runtime-neutral kind, the tools report
groups by kind with each runtime's tool names, a failed command counts against the program
whose status it returned, and calls that wait for the person stay out of `slowest`."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support.facts import dict_rows
from tests.support.files import WITH_CORPUS, traceidx_cli
from traceidx.analysis.query import connect
from traceidx.runtimes import names

KINDS = {"shell", "read", "write", "edit", "search", "fetch", "delegate", "plan", "ask_user"}


def _json(*args: str) -> list[dict[str, object]]:
    done = traceidx_cli(*args, "--format", "json")
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, object]] = json.loads(done.stdout)
    return rows


def test_the_runtimes_tools_share_kinds(traces_dataset: Path) -> None:
    con = connect(traces_dataset)
    try:
        rows = dict_rows(
            con,
            "SELECT s.runtime, t.tool_name, t.kind, t.role FROM tool_calls t "
            "JOIN sessions s USING (session_id)",
        )
        mapped = dict_rows(con, "SELECT tool_name, count(*) AS n FROM tool_kinds GROUP BY 1")
    finally:
        con.close()
    assert all(r["n"] == 1 for r in mapped)  # one kind per name
    kinds = {(r["runtime"], r["tool_name"]): r["kind"] for r in rows}
    for shell in [("claude_code", "Bash"), ("codex", "exec_command"), ("pi", "bash")]:
        assert kinds[shell] == "shell", shell
    assert all(r["kind"] == "shell" for r in rows if r["role"] == "agent.tool_call.shell")
    assert kinds[("claude_code", "Read")] == kinds[("pi", "read")] == "read"
    asking = [
        k for (runtime, name), k in kinds.items() if name in ("AskUserQuestion", "ExitPlanMode")
    ]
    assert all(k == "ask_user" for k in asking)
    assert kinds.get(("claude_code", "AskUserQuestion"), "ask_user") == "ask_user"
    assert all(r["kind"] == "mcp" for r in rows if str(r["tool_name"]).startswith("mcp__"))
    # the tools of the runtimes' generated sets all have a kind of the list
    for runtime in names():
        found = {r["kind"] for r in rows if r["runtime"] == runtime}
        assert found and found <= KINDS | {"mcp", "other"}, runtime
    other = sum(r["kind"] == "other" for r in rows)
    assert other / len(rows) < 0.02


def test_the_tools_report_groups_by_kind_with_the_runtimes_names(traces_dataset: Path) -> None:
    rows = _json("report", "tools", "--dataset", str(traces_dataset), "--timezone", "UTC")
    kinds = {r["name"]: r for r in rows if r["entry"] == "tool kind"}
    assert set(kinds) <= KINDS | {"mcp", "other"} and {"shell", "read", "edit"} <= set(kinds)
    # "name (runtime, runtime), ...": each name with the runtimes that call it that
    listed = re.findall(r"([^,()]+?) \(([^)]*)\)", str(kinds["shell"]["tools"]))
    shell = {name.strip(): set(runtimes.split(", ")) for name, runtimes in listed}
    assert "claude_code" in shell["Bash"] and "codex" in shell["exec_command"]
    assert "pi" in shell["bash"]
    assert all(r["tools"] is None for r in rows if r["entry"] == "program")


def test_a_failed_command_counts_against_the_program_whose_status_it_returned(
    traces_dataset: Path,
) -> None:
    rows = _json("report", "tools", "--dataset", str(traces_dataset), "--timezone", "UTC")
    charged = sum(int(str(r["failures"])) for r in rows if r["entry"] == "program")
    con = connect(traces_dataset)
    try:
        [(failed, pipefail)] = con.execute(
            "SELECT count(DISTINCT t.item_id), count(*) FILTER (WHERE t.command LIKE "
            "'%pipefail%') FROM tool_calls t JOIN shell_statements s USING (item_id) "
            "WHERE t.failed AND len(s.statement.invocations) > 0 AND s.fragment_position = 0"
        ).fetchall()
    finally:
        con.close()
    assert failed > 20
    if pipefail == 0:
        assert charged == failed  # one program per failed command, not every one on the line
    else:
        assert failed <= charged


def test_slowest_leaves_out_the_time_spent_waiting_for_the_person(traces_dataset: Path) -> None:
    args = ("report", "slowest", "--dataset", str(traces_dataset), "--timezone", "UTC")
    slowest = _json(*args, "--limit", "100000")
    assert slowest and all(r["kind"] != "ask_user" for r in slowest)
    tools = _json("report", "tools", "--dataset", str(traces_dataset), "--timezone", "UTC")
    if WITH_CORPUS:  # the shared corpus has calls that wait for the person
        assert any(r["name"] == "ask_user" and r["entry"] == "tool kind" for r in tools)
