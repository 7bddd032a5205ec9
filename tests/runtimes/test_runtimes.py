"""The registry knows each runtime: every entry has its fixtures, golden cases, docs page and the
kinds of the tools its traces call; the shared places derive from it; and a new version of one
adapter re-projects that runtime's sources only."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from tests.support.facts import dict_rows
from tests.support.files import FIXTURES, GOLDEN, ROOT
from traceidx import runtimes
from traceidx.runtimes import RUNTIMES, TOOL_KINDS, names, tool_kinds


@pytest.mark.parametrize("name", names())
def test_every_runtime_has_fixtures_golden_cases_and_a_docs_page(name: str) -> None:
    runtime = RUNTIMES[name]
    assert runtime.fixtures, f"{name} names no fixture folder"
    for folder in runtime.fixtures:
        committed = FIXTURES / "generated" / folder
        assert (committed / "expect.json").is_file(), f"{name}: no {committed}/expect.json"
        assert any(p.is_file() for p in (GOLDEN / folder).glob("*.json")), f"{name}: no golden"
    if (ROOT / "docs").is_dir():
        assert (ROOT / "docs" / "runtimes" / f"{name}.md").is_file(), f"{name}: no docs page"
    assert runtime.module == f"traceidx.adapters.{name}.adapter"
    assert runtime.tools and set(runtime.tools.values()) <= set(TOOL_KINDS)
    assert runtime.version >= 1


def test_a_tool_name_has_one_kind_and_a_bad_declaration_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    declared = tool_kinds()
    for name in names():
        for tool, kind in RUNTIMES[name].tools.items():
            assert declared[tool] == kind
    some = names()[0]
    clash = dict(RUNTIMES[some].tools)
    tool, kind = next(iter(clash.items()))
    clash[tool] = "plan" if kind != "plan" else "read"
    monkeypatch.setitem(RUNTIMES, "zzz", dataclasses.replace(RUNTIMES[some], tools=clash))
    with pytest.raises(RuntimeError, match=f"declares tool '{tool}'"):
        tool_kinds()
    upper = {"Bash": "shell"}
    monkeypatch.setitem(RUNTIMES, "zzz", dataclasses.replace(RUNTIMES[some], tools=upper))
    with pytest.raises(RuntimeError, match="not a lower-case name"):
        tool_kinds()
    with pytest.raises(ValueError, match="not a tool kind"):
        runtimes.declare.kinds(shell="bash", nonsense="x")


@pytest.fixture(scope="module")
def fixtures_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset of the committed copies of every runtime's generated traces."""
    from traceidx.pipeline.job import build

    dataset = tmp_path_factory.mktemp("fixtures") / "dataset"
    report = build([FIXTURES / "generated"], dataset, jobs=2)
    assert report.exit_code == 0
    return dataset


@pytest.mark.parametrize("name", names())
def test_every_tool_a_runtime_calls_in_its_fixtures_has_a_declared_kind(
    name: str, fixtures_dataset: Path
) -> None:
    from traceidx.analysis.query import connect

    con = connect(fixtures_dataset)
    try:
        calls = dict_rows(
            con,
            "SELECT DISTINCT t.tool_name, t.role FROM tool_calls t JOIN sessions s "
            f"USING (session_id) WHERE s.runtime = '{name}'",
        )
    finally:
        con.close()
    assert calls, f"{name}: its fixtures call no tool"
    declared = RUNTIMES[name].tools
    undeclared = sorted(
        str(c["tool_name"])
        for c in calls
        if str(c["tool_name"]).lower() not in declared
        and "__" not in str(c["tool_name"])  # a tool of an MCP server
    )
    assert not undeclared, f"{name} declares no kind for {undeclared}"


def test_a_new_adapter_version_re_projects_that_runtime_s_sources_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from traceidx.pipeline.job import build

    traces = tmp_path / "traces"
    for folder in ("pi", "codex"):
        shutil.copytree(FIXTURES / "generated" / folder, traces / folder)
    dataset = tmp_path / "dataset"
    first = build([traces], dataset, jobs=1)
    assert first.exit_code == 0
    by_runtime = {r.locator: r for r in first.results}
    pi = {loc for loc in by_runtime if "/pi/" in loc}
    assert pi and len(pi) < len(by_runtime)

    again = build([traces], dataset, jobs=1)
    assert again.actions["new"] == 0 and again.actions["unchanged"] == len(by_runtime)

    bumped = dataclasses.replace(RUNTIMES["pi"], version=RUNTIMES["pi"].version + 1)
    monkeypatch.setitem(RUNTIMES, "pi", bumped)
    after = build([traces], dataset, jobs=1)
    reread = {r.locator for r in after.results if r.action == "new"}
    indexed_pi = {loc for loc in pi if by_runtime[loc].state == "indexed"}
    unclaimed = {loc for loc, r in by_runtime.items() if r.state != "indexed"}
    assert indexed_pi <= reread <= pi | unclaimed  # pi's, and those no adapter claimed
    assert after.actions["unchanged"] == len(by_runtime) - len(reread)

    settled = build([traces], dataset, jobs=1)
    assert settled.actions["new"] == 0
