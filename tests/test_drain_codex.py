"""Codex drains while reading: on the largest public rollout most items leave before `finish`.

`tests/test_drain.py` proves draining changes nothing; this proves it achieves something: fed
one record at a time and drained after each, the adapter hands over at least 80% of the items
(and all but the last Loop) before `finish`, and never holds more than a fraction of them.
"""

from __future__ import annotations

from tests.conftest import CORPUS
from tests.facts import decoded_records, largest
from traceidx.adapters import detect
from traceidx.adapters.codex import CodexAdapter

PUBLIC = CORPUS / "public" / "codex"


def test_largest_public_rollout_drains_most_items_before_finish() -> None:
    records = decoded_records(largest(PUBLIC))
    assert detect([o for _, objs in records[:32] for o in objs]) is CodexAdapter
    adapter = CodexAdapter()
    drained_items = drained_loops = peak_held = 0
    for position, objs in records:
        for obj in objs:
            adapter.feed(position, obj)
        loops, items = adapter.drain()
        drained_loops += len(loops)
        drained_items += len(items)
        held = {id(item) for item in adapter.items}
        assert not any(id(item) in held for item in items)  # the adapter let go of them
        peak_held = max(peak_held, len(adapter.items))
    draft = adapter.finish()
    total_items = drained_items + len(draft.items)
    total_loops = drained_loops + len(draft.loops)
    assert total_items > 100 and total_loops > 1
    assert drained_items >= 0.8 * total_items, (drained_items, total_items)
    assert drained_loops == total_loops - 1  # every Loop but the running one
    assert peak_held <= 0.3 * total_items, (peak_held, total_items)
