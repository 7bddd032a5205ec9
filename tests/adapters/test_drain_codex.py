"""Codex drains while reading: on the largest public rollout most items leave before `finish`.

(Without the shared corpus: ten id-unique copies of the largest committed rollout in a file,
`tests.support.facts.long_trace`.)

`tests/adapters/test_drain.py` proves draining changes nothing; this proves it achieves something:
fed one record at a time and drained after each, the adapter hands over at least 80% of the items
(and all but the last Loop) before `finish`, and never holds more than a fraction of them.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.facts import decoded_records, drain_while_reading, long_trace
from traceidx.adapters import detect
from traceidx.adapters.codex import CodexAdapter


def test_largest_public_rollout_drains_most_items_before_finish(tmp_path: Path) -> None:
    rollout = long_trace("codex", tmp_path, copies=10)
    records = decoded_records(rollout)
    assert detect([o for _, objs in records[:32] for o in objs]) is CodexAdapter
    adapter = CodexAdapter()
    drained = drain_while_reading(adapter, rollout)
    draft = adapter.finish()
    total_items = len(drained.items) + len(draft.items)
    total_loops = len(drained.loops) + len(draft.loops)
    assert total_items > 100 and total_loops > 1
    assert len(drained.items) >= 0.8 * total_items, (len(drained.items), total_items)
    assert len(drained.loops) == total_loops - 1  # every Loop but the running one
    assert drained.most_held <= 0.3 * total_items, (drained.most_held, total_items)
