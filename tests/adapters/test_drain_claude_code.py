"""The Claude Code adapter hands over almost everything while reading, keeping little.

On the largest public Claude Code transcript of the shared corpus (without it, nine id-unique copies
of the largest committed one in a file: `tests.support.facts.long_trace`), draining after every
record returns nearly all items before `finish`, the adapter retains only a handful at any time, and
it keeps no reference to what it returned (so drained drafts can be freed).
"""

from __future__ import annotations

import gc
from pathlib import Path

from tests.support.facts import drain_while_reading, long_trace
from traceidx.adapters.claude_code import ClaudeCodeAdapter


def test_drain_returns_most_items_and_keeps_little(tmp_path: Path) -> None:
    adapter = ClaudeCodeAdapter()
    drained = drain_while_reading(adapter, long_trace("claude", tmp_path, copies=9))
    items = drained.items

    # nothing the adapter still holds refers to a drained item
    gc.collect()
    holders = [r for r in gc.get_referrers(*items) if r is not items]
    assert holders == []

    draft = adapter.finish()
    total = len(items) + len(draft.items)
    assert total > 300  # a long transcript, so the numbers below mean something
    assert len(items) >= 0.9 * total
    assert drained.most_held <= max(50, total // 20)
    assert drained.loops  # settled Loops leave too, not only items
    assert all(item not in draft.items for item in items[:10])
