"""Delegation links do not depend on how the dataset was built.

Publication works the links out before it writes (pipeline.publish: from the staged rows, the
previous rows that stay and the parts it keeps), then rewrites only the kept parts whose links
moved. A dataset built a few sources at a time, parents before children or children before
parents, must therefore publish the same links as one cold build of the same traces: every
delegation's child, every report's and activity's session, in every runtime with subagents.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.files import DATA, FIXTURES
from traceidx.analysis.query import connect
from traceidx.pipeline import publish
from traceidx.pipeline.job import build

#: trace folders with delegations, matched and stated (each copied under its own name)
ROOTS = {
    "generated": FIXTURES / "generated",
    "handwritten": FIXTURES / "handwritten",
    "dsh": DATA / "dsh",
}

LINKS = """
    SELECT item_id, semantic.role AS role,
           semantic.delegation.child_session_id AS child,
           semantic.subagent_report.source_session_id AS report,
           semantic.subagent_activity.subagent_session_id AS activity
    FROM items
    WHERE semantic.role IN ('agent.delegation', 'subagent.report', 'subagent.activity')
    ORDER BY item_id
"""


def _files() -> list[Path]:
    """Every trace file of the roots, by its path under a common root."""
    out = []
    for name, root in ROOTS.items():
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.name.endswith((".md", ".json")):
                out.append(Path(name) / path.relative_to(root))
    return out


def _copy(files: list[Path], into: Path) -> None:
    for relative in files:
        name, rest = relative.parts[0], Path(*relative.parts[1:])
        target = into / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOTS[name] / rest, target)


def _links(dataset: Path) -> list[tuple[object, ...]]:
    return connect(dataset).sql(LINKS).fetchall()


#: a dsh parent whose delegation names no child and the child matched to it by its task
MATCHED = "s1-sierra"


@pytest.mark.parametrize("order", ["parents-first", "children-first"])
def test_links_built_in_steps_equal_a_cold_build(
    order: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # small parts: sessions spread over many buckets, so a parent and its child are mostly in
    # different partitions and a build often rewrites one side only
    monkeypatch.setattr(publish, "PART_RECORDS", 40)
    # a Claude Code parent `<id>.jsonl` sorts before its `<id>/subagents/…` children; dsh's
    # matched pair comes last, one file per build (the parent's `session-…` folder first)
    files = sorted(_files(), key=str, reverse=order == "children-first")
    late = sorted(
        (f for f in files if MATCHED in str(f) and f.name == "session.jsonl.zstd"),
        key=lambda f: ("session-" not in str(f)) == (order == "parents-first"),
    )
    assert len(late) == 2
    rest = [f for f in files if f not in late]
    steps = [rest[: len(rest) // 2], rest[len(rest) // 2 :], *([f] for f in late)]
    root, dataset = tmp_path / "traces", tmp_path / "dataset"
    for step in steps:
        _copy(step, root)
        assert build([root], dataset, jobs=1).exit_code == 0
    cold = tmp_path / "cold"  # ids are functions of the sources' paths: the same files
    assert build([root], cold, jobs=1).exit_code == 0
    links = _links(cold)
    assert sum(row[1] == "agent.delegation" and row[2] is not None for row in links) >= 5
    assert _links(dataset) == links
