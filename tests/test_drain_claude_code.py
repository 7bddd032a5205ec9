"""The Claude Code adapter hands over almost everything while reading, keeping little.

On the largest public Claude Code transcript of the shared corpus, draining after every record
returns nearly all items before `finish`, the adapter retains only a handful at any time, and
it keeps no reference to what it returned (so drained drafts can be freed).
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.conftest import CORPUS
from traceidx.adapters.base import DraftItem, DraftLoop
from traceidx.adapters.claude_code import ClaudeCodeAdapter
from traceidx.frame import frame_bytes
from traceidx.ingest import split_joined

PUBLIC = CORPUS / "public" / "claude"


def _largest() -> Path | None:
    files = list(PUBLIC.glob("*.jsonl")) if PUBLIC.is_dir() else []
    return max(files, key=lambda p: p.stat().st_size) if files else None


def _records(path: Path) -> list[tuple[int, list[Any]]]:
    decoder = msgspec.json.Decoder()
    out: list[tuple[int, list[Any]]] = []
    for line in frame_bytes(path.read_bytes()):
        if line.data is None:
            continue
        try:
            out.append((line.position, [decoder.decode(line.data)]))
        except (msgspec.DecodeError, UnicodeDecodeError):
            out.append((line.position, split_joined(line.data) or []))
    return out


@pytest.mark.skipif(_largest() is None, reason="no public Claude Code corpus")
def test_drain_returns_most_items_and_keeps_little() -> None:
    path = _largest()
    assert path is not None
    adapter = ClaudeCodeAdapter()
    loops: list[DraftLoop] = []
    items: list[DraftItem] = []
    retained = 0
    for position, objs in _records(path):
        for obj in objs:
            adapter.feed(position, obj)
        got_loops, got_items = adapter.drain()
        loops += got_loops
        items += got_items
        retained = max(retained, len(adapter.items))
        del got_loops, got_items

    # nothing the adapter still holds refers to a drained item
    gc.collect()
    holders = [r for r in gc.get_referrers(*items) if r is not items]
    assert holders == []

    draft = adapter.finish()
    total = len(items) + len(draft.items)
    assert total > 300  # a long transcript, so the numbers below mean something
    assert len(items) >= 0.9 * total
    assert retained <= max(50, total // 20)
    assert loops  # settled Loops leave too, not only items
    assert all(item not in draft.items for item in items[:10])
