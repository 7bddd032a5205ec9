"""dsh adapter: `drain` hands over most of a long session while reading, changing nothing.

The long session is spliced from the top-level sessions of the demo's sample of real dsh logs,
read several times over (one header, then the events of every session with their seqs
shifted), so it has many turns of tool calls, results, errors, interrupts, steering,
compaction and subagent delegations.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import msgspec

from tests.support.facts import item_snapshot, loop_snapshot
from traceidx.adapters.dsh import DshAdapter
from traceidx.demo import SAMPLE
from traceidx.sources.sourceio import StreamStats, logical_chunks

Record = dict[str, Any]
T0 = 1786707340000


def _records(path: Path) -> list[Record]:
    data = b"".join(logical_chunks(io.BytesIO(path.read_bytes()), StreamStats()))
    return [msgspec.json.decode(line) for line in data.splitlines() if line.strip()]


def _shift_seqs(value: Any, offset: int) -> Any:
    if isinstance(value, int):
        return value + offset
    if isinstance(value, list):
        return [_shift_seqs(member, offset) for member in value]
    return value


def _long_session(rounds: int) -> list[Record]:
    """One header, then the events of the sample's top-level sessions, `rounds` times."""
    out: list[Record] = []
    offset = 0
    for path in sorted((SAMPLE / "dsh").rglob("session.jsonl.zstd")) * rounds:
        header, *events = _records(path)
        if "parentSession" in header:
            continue  # a subagent child: a log of its own
        if not out:
            out.append(header)
        top = offset
        for event in events:
            event = dict(event)
            for key in ("seq", "seq0"):
                if key in event:
                    event[key] += offset
                    top = max(top, event[key] + 1)
            if "sourceEventSeqs" in event:
                event["sourceEventSeqs"] = _shift_seqs(event["sourceEventSeqs"], offset)
            out.append(event)
        offset = top + 64  # packed rows span several seqs
    return out


def _run(records: list[Record], drain: bool) -> tuple[list[Any], list[Any], int, int]:
    """(loops, items, items drained before finish, most items held at once)."""
    adapter = DshAdapter()
    loops: list[Any] = []
    items: list[Any] = []
    held = 0
    for position, record in enumerate(records):
        adapter.feed(position, record)
        held = max(held, len(adapter.items))
        if drain:
            got_loops, got_items = adapter.drain()
            loops += [loop_snapshot(x) for x in got_loops]
            items += [item_snapshot(x) for x in got_items]
    drained = len(items)
    draft = adapter.finish()
    loops += [loop_snapshot(x) for x in draft.loops]
    items += [item_snapshot(x) for x in draft.items]
    return loops, items, drained, held


def test_long_session_is_drained_while_read() -> None:
    records = _long_session(rounds=4)
    kept_loops, kept_items, _, kept_held = _run(records, drain=False)
    loops, items, drained, held = _run(records, drain=True)
    assert len(kept_loops) >= 100 and len(kept_items) >= 1000
    assert loops == kept_loops
    assert items == kept_items
    assert drained >= 0.8 * len(items)  # most items leave before finish
    assert held <= 0.05 * kept_held  # the adapter holds about one turn, not the session


def _events(*events: Record, header: Record) -> list[Record]:
    body = [{"seq": n, "time": T0 + n, **event} for n, event in enumerate(events)]
    return [header, *body]


def _turn(number: int, call: str, command: str) -> list[Record]:
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": f"turn {number}"},
            {"type": "tool-call", "id": call, "name": "bash", "arguments": {"command": command}},
        ],
    }
    result = {"role": "tool", "toolCallId": call, "content": [{"type": "text", "text": "ok"}]}
    return [
        {"type": "turn/start", "data": {"turn": number}},
        {
            "type": "user/message",
            "data": {
                "source": {"kind": "user"},
                "content": [{"type": "text", "text": f"do {number}"}],
            },
        },
        {"type": "assistant/message", "data": {"turn": number, "step": 1, "message": message}},
        {"type": "tool/call", "data": {"callId": call, "name": "bash"}},
        {"type": "tool/result", "data": {"message": result}},
        {"type": "turn/end", "data": {"turn": number, "reason": {"kind": "completed"}}},
    ]


def test_a_settled_result_takes_no_later_replacement() -> None:
    pruned = {"role": "tool", "toolCallId": "c1", "content": [{"type": "text", "text": "[pruned]"}]}
    records = _events(
        *_turn(1, "c1", "ls"),
        {"type": "compaction/prune", "data": {}},
        {"type": "tool/result", "data": {"message": pruned}, "surfaceOp": {"op": "replace"}},
        *_turn(2, "c2", "pwd"),
        header={"type": "session", "id": "s-prune", "createdAt": T0},
    )
    kept_loops, kept_items, _, _ = _run(records, drain=False)
    loops, items, drained, _ = _run(records, drain=True)
    assert (loops, items) == (kept_loops, kept_items)
    assert drained == len(items)
    outputs = [item for item in items if item["role"] == "tool.output"]
    assert [o["records"] for o in outputs] == [[5], [13]]  # the replacement (8) stays a Record


def test_an_inherited_cut_is_final_before_anything_is_drained() -> None:
    header = {
        "type": "session",
        "id": "s-fork",
        "createdAt": T0,
        "parentSession": "s-parent",
        "seedLength": 6,
    }
    records = _events(*_turn(1, "c1", "ls"), *_turn(2, "c2", "pwd"), header=header)
    adapter = DshAdapter()
    for position, record in enumerate(records[:7]):  # the inherited turn and the cut record
        adapter.feed(position, record)
        if position < 6:
            assert adapter.drain() == ([], [])
    kept_loops, kept_items, _, _ = _run(records, drain=False)
    loops, items, drained, _ = _run(records, drain=True)
    assert (loops, items) == (kept_loops, kept_items)
    assert [loop["start"] for loop in loops] == [7] and drained == len(items) > 0


def test_a_seeded_log_waits_for_finish() -> None:
    """Any later tagged end-seed moves the cut: nothing is drained, the result is unchanged."""
    header = {"type": "session", "id": "s-seeded", "createdAt": T0, "isSeeded": True}
    header["parentSession"] = "s-parent"
    tagged = {"type": "session/end-seed", "data": {"inherited": True}}
    records = _events(
        *_turn(1, "c1", "ls"),
        tagged,
        *_turn(2, "c2", "pwd"),
        tagged,
        *_turn(3, "c3", "id"),
        header=header,
    )
    kept_loops, kept_items, _, _ = _run(records, drain=False)
    loops, items, drained, _ = _run(records, drain=True)
    assert (loops, items) == (kept_loops, kept_items)
    assert drained == 0
    assert [loop["native_id"] for loop in loops] == ["3"]
