"""Golden tests: chosen corpus files projected to readable expected data files.

Cases are listed in ``tests/golden/cases.json``; adding a case is adding a line there (and
generating its file with ``--update-golden``), not writing test code. Expected files use line
numbers (source positions) instead of opaque ids so a reviewer can read them against the trace,
and order never depends on ids: ids hash the file's location, which differs between machines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import corpus_path
from traceidx.build import build
from traceidx.query import connect

GOLDEN = Path(__file__).parent / "golden"
CASES = json.loads((GOLDEN / "cases.json").read_text())
PARAMS = [(rt, name) for rt, cases in CASES.items() if rt != "_doc" for name in cases]

ITEMS_SQL = """
SELECT i.loop_id, i.loop_position,
       (SELECT list(r.source_position ORDER BY r.source_position) FROM records r
        WHERE list_contains(i.record_ids, r.record_id)) AS lines,
       i.semantic.role, i.semantic.evidence_strength,
       coalesce(i.semantic.text.text.value, i.semantic.reasoning.text.value,
                i.semantic.tool_output.text.value, i.semantic.delegation.text.value,
                i.semantic.subagent_activity.text.value, i.semantic.subagent_report.text.value,
                i.semantic.compaction.summary.value, i.semantic.instruction.text.value,
                i.semantic.context.text.value) AS text,
       i.semantic.reasoning.representation AS representation,
       coalesce(i.semantic.instruction.category, i.semantic.context.category) AS category,
       i.semantic.tool_call.tool_name AS tool,
       i.semantic.tool_call.shell_fragments[1].text.value AS command,
       [s.invocations[1].program
        FOR s IN coalesce(i.semantic.tool_call.shell_fragments[1].statements, [])
        IF len(s.invocations) > 0] AS programs,
       (SELECT r.source_position FROM items c JOIN records r ON r.record_id = c.record_ids[1]
        WHERE c.item_id = i.semantic.tool_output.call_item_id) AS call_line,
       i.semantic.tool_output.exit_code AS exit_code,
       i.semantic.tool_output.failed AS failed,
       i.semantic.tool_output.duration_ms AS duration_ms,
       i.semantic.delegation.child_session_id IS NOT NULL AS links_child
FROM items i
ORDER BY i.loop_id IS NULL, i.loop_position, lines, i.semantic.role, text
"""


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if v not in (None, [], False)}
    if isinstance(out.get("text"), str) and len(out["text"]) > 160:
        out["text"] = out["text"][:160] + "…"
    return out


def project_file(path: Path, dataset: Path) -> dict[str, Any]:
    build([path], dataset, jobs=1)
    con = connect(dataset)

    def fetch(sql: str) -> list[dict[str, Any]]:
        rel = con.execute(sql)
        cols = [d[0] for d in rel.description]
        return [dict(zip(cols, row, strict=True)) for row in rel.fetchall()]

    session = fetch(
        "SELECT runtime, native_id, working_directory, "
        "strftime(created_at, '%Y-%m-%dT%H:%M:%S.%g') AS created_at, "
        "delegated_from IS NOT NULL AS delegated FROM sessions"
    )
    loops = fetch(
        """SELECT l.loop_id, l.session_position, l.native_id, rs.source_position AS start_line,
                  re.source_position AS end_line, l."end".outcome AS outcome,
                  l.model.id AS model, l.model.effort AS effort, l.usage AS usage
           FROM loops l JOIN records rs ON rs.record_id = l.start_record_id
           LEFT JOIN records re ON re.record_id = l."end".record_id
           ORDER BY l.session_position"""
    )
    items = fetch(ITEMS_SQL)
    by_loop: dict[Any, list[dict[str, Any]]] = {}
    for item in items:
        by_loop.setdefault(item.pop("loop_id"), []).append(item)
    out_loops = []
    for loop in loops:
        loop_items = [_clean(i) for i in by_loop.get(loop.pop("loop_id"), [])]
        for i in loop_items:
            i.pop("loop_position", None)
        out_loops.append({**_clean(loop), "items": loop_items})
    return {
        "session": session,
        "loops": out_loops,
        "session_items": [_clean(i) for i in by_loop.get(None, [])],
    }


@pytest.mark.parametrize(("runtime", "name"), PARAMS)
def test_golden(runtime: str, name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    path = corpus_path(*CASES[runtime][name].split("/"))
    actual = project_file(path, tmp_path / "ds")
    expected_file = GOLDEN / runtime / f"{name}.json"
    text = json.dumps(actual, indent=1, ensure_ascii=False, default=str) + "\n"
    if request.config.getoption("--update-golden"):
        expected_file.write_text(text, encoding="utf-8")
    assert expected_file.exists(), f"no golden file yet: run pytest {__file__} --update-golden"
    assert json.loads(text) == json.loads(expected_file.read_text(encoding="utf-8"))
