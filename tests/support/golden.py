"""Trace files projected as the golden files hold them: sessions, their loops and items in
evidence order, with the columns a reader checks (used by the golden tests and adapter tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from traceidx.analysis.query import connect
from traceidx.pipeline.job import build

ITEMS_SQL = """
SELECT i.loop_id, i.session_id, i.loop_position,
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
       i.semantic.tool_output.runtime_truncated AS runtime_truncated,
       i.semantic.delegation.child_session_id IS NOT NULL AS links_child,
       coalesce(i.semantic.subagent_report.source_session_id,
                i.semantic.subagent_activity.subagent_session_id) IS NOT NULL AS links_source,
       i.semantic.delegation.agent_type AS agent_type
FROM items i
ORDER BY i.loop_id IS NULL, i.loop_position, lines, i.semantic.role, text
"""


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if v is not None and v is not False and v != []}
    if isinstance(out.get("text"), str) and len(out["text"]) > 160:
        out["text"] = out["text"][:160] + "…"
    return out


def project_files(paths: list[Path], dataset: Path) -> dict[str, Any]:
    """Build `paths` and return every session with its loops and items, in evidence order."""
    report = build(paths, dataset, jobs=1)
    assert report.exit_code == 0, [r.reason for r in report.results if r.state != "indexed"]
    con = connect(dataset)

    def fetch(sql: str) -> list[dict[str, Any]]:
        rel = con.execute(sql)
        cols = [d[0] for d in rel.description]
        return [dict(zip(cols, row, strict=True)) for row in rel.fetchall()]

    sessions = fetch(
        """SELECT s.session_id, s.runtime, s.native_id, s.name, s.working_directory,
                  strftime(s.created_at, '%Y-%m-%dT%H:%M:%S.%g') AS created_at,
                  d.native_id AS delegated_from, f.native_id AS forked_from
           FROM sessions s
           LEFT JOIN sessions d ON d.session_id = s.delegated_from.session_id
           LEFT JOIN sessions f ON f.session_id = s.forked_from.session_id
           ORDER BY s.created_at NULLS LAST, s.native_id"""
    )
    loops = fetch(
        """SELECT l.session_id, l.loop_id, l.native_id, rs.source_position AS start_line,
                  re.source_position AS end_line, l."end".outcome AS outcome,
                  l.model.id AS model, l.model.effort AS effort, l.usage AS usage
           FROM loops l JOIN records rs ON rs.record_id = l.start_record_id
           LEFT JOIN records re ON re.record_id = l."end".record_id
           ORDER BY l.session_position"""
    )
    items = fetch(ITEMS_SQL)
    by_loop: dict[Any, list[dict[str, Any]]] = {}
    for item in items:
        key = item.pop("loop_id") or ("session", item["session_id"])
        item.pop("session_id")
        item.pop("loop_position")
        by_loop.setdefault(key, []).append(_clean(item))
    loops_of: dict[Any, list[dict[str, Any]]] = {}
    for loop in loops:
        items_of = by_loop.get(loop.pop("loop_id"), [])
        loops_of.setdefault(loop.pop("session_id"), []).append({**_clean(loop), "items": items_of})
    out = []
    for session in sessions:
        sid = session.pop("session_id")
        out.append(
            {
                **_clean(session),
                "loops": loops_of.get(sid, []),
                "session_items": by_loop.get(("session", sid), []),
            }
        )
    return {"sessions": out}
