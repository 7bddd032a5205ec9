"""Adapters hand over settled drafts while reading (`Adapter.drain`), changing nothing.

For every committed trace fixture, and every trace file of the shared corpus when it is present
(public, generated and reference samples), and every session of a runtime's database there,
each file is adapted twice: once keeping every draft
until `finish`, and once calling `drain` after every record. What `drain` returns is copied the
moment it is returned; the copies followed by what `finish` returns must equal the first run
exactly, so a drained draft that changed afterwards, or a prefix broken, fails here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.support.facts import (
    database_sessions,
    decoded_records,
    in_session_folder,
    item_snapshot,
    loop_snapshot,
    session_folders,
)
from tests.support.files import CORPUS, DATA, FIXTURES, ROOT
from traceidx.adapters import detect
from traceidx.adapters.base import Adapter
from traceidx.domain.drafts import Draft

ROOT = ROOT


def _files() -> list[tuple[str, Path]]:
    roots = [FIXTURES, DATA]  # committed: every runtime, always
    roots += [CORPUS / "public", CORPUS / "generated", CORPUS / "reference-samples"]
    found: list[tuple[str, Path]] = []
    suffixes = (".jsonl", ".jsonl.zst", ".jsonl.zstd")
    for root in roots:
        folders = session_folders(root)  # a session folder is one trace (Mistral Vibe's)
        files = sorted(p for p in root.rglob("*") if p.name.endswith(suffixes))
        files = [p for p in files if not in_session_folder(p, folders)]
        for path in files + database_sessions(root) + folders:
            head = [v for _, values in decoded_records(path)[:32] for v in values]
            cls = detect(head)
            if cls is not None:
                found.append((cls.runtime, path))
    return found


FILES = _files()


def _run(cls: type[Adapter], path: Path, values: list[tuple[int, list[Any]]], drain: bool) -> Any:
    adapter = cls()
    adapter.locate(str(path))  # as ingest does (Kimi names a session by the file's folders)
    loops: list[Any] = []
    items: list[Any] = []
    for position, objs in values:
        for obj in objs:
            adapter.feed(position, obj)
        if drain:
            got_loops, got_items = adapter.drain()
            loops += [loop_snapshot(x) for x in got_loops]
            items += [item_snapshot(x) for x in got_items]
    draft: Draft = adapter.finish()
    loops += [loop_snapshot(x) for x in draft.loops]
    items += [item_snapshot(x) for x in draft.items]
    session = msgspec.to_builtins(draft.session) if draft.session is not None else None
    return session, loops, items, dict(draft.unknown_types)


@pytest.mark.parametrize(
    ("runtime", "path"),
    FILES,
    ids=[f"{rt}-{p.parent.name}-{p.name[:60]}" for rt, p in FILES],
)
def test_drain_changes_nothing(runtime: str, path: Path) -> None:
    values = decoded_records(path)
    head = [v for _, vs in values[:32] for v in vs]
    cls = detect(head)
    assert cls is not None and cls.runtime == runtime
    kept = _run(cls, path, values, drain=False)
    drained = _run(cls, path, values, drain=True)
    assert drained[0] == kept[0], "session facts differ"
    assert drained[3] == kept[3], "unknown record types differ"
    assert len(drained[1]) == len(kept[1]), "loop count differs"
    for i, (a, b) in enumerate(zip(drained[1], kept[1], strict=True)):
        assert a == b, f"loop {i} changed after it was drained"
    assert len(drained[2]) == len(kept[2]), "item count differs"
    for i, (a, b) in enumerate(zip(drained[2], kept[2], strict=True)):
        assert a == b, f"item {i} changed after it was drained"


def test_every_runtime_is_covered() -> None:
    assert {rt for rt, _ in FILES} >= {"claude_code", "codex", "pi", "dsh"}
