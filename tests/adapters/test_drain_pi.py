"""The Pi adapter's `drain` hands over most drafts while reading, and holds what may change.

`tests/adapters/test_drain.py` proves draining changes nothing; this shows it also meets its purpose
(bounded memory): on the largest public Pi file (without the shared corpus, thirty id-unique copies
of the largest committed one in a file: `tests.support.facts.long_trace`), draining after every
record returns almost every item before `finish`. Small chains show what is held back and when it is
released.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.facts import drain_while_reading, long_trace
from tests.support.pi import Chain
from traceidx.adapters.pi import PiAdapter
from traceidx.domain.drafts import DraftItem


def test_draining_the_largest_public_file_returns_most_items_before_finish(
    tmp_path: Path,
) -> None:
    adapter = PiAdapter()
    drained = drain_while_reading(adapter, long_trace("pi", tmp_path, copies=30))
    draft = adapter.finish()
    total_items = len(drained.items) + len(draft.items)
    total_loops = len(drained.loops) + len(draft.loops)
    assert total_items > 1000 and total_loops > 10
    assert len(drained.items) >= 0.8 * total_items, (len(drained.items), total_items)
    assert len(draft.loops) <= 1  # only the last Loop waits for the end of the file
    # the adapter never holds more than a small window of undrained items
    assert drained.most_held < 0.05 * total_items, (drained.most_held, total_items)


def _drain_after_each(chain: Chain) -> list[tuple[list[int], list[str]]]:
    """Per record: (starts of the Loops, roles of the items) drain returned after it."""
    adapter = PiAdapter()
    out: list[tuple[list[int], list[str]]] = []
    for position, entry in enumerate(chain.entries):
        adapter.feed(position, entry)
        loops, items = adapter.drain()
        out.append(([loop.start for loop in loops], [item.role for item in items]))
    return out


def test_a_final_answer_is_held_until_the_run_can_no_longer_go_on() -> None:
    chain = Chain()
    chain.user("Say hello.")
    chain.assistant("stop", "Hello!")
    chain.assistant("stop", "Hello again!")  # queued input: the first answer was commentary
    chain.user("Thanks.")
    steps = _drain_after_each(chain)
    assert steps[1] == ([], ["human.request"])
    assert steps[2] == ([], [])  # the answer may still be demoted
    assert steps[3] == ([], ["agent.commentary"])
    assert steps[4] == ([1], ["agent.final_answer", "human.request"])


def test_what_a_retry_may_take_over_is_held_until_it_is_known() -> None:
    chain = Chain()
    chain.user("Say hello.")
    chain.assistant("error", input=0, output=0)
    chain.add("compaction", summary="Earlier context.", firstKeptEntryId="e0000001")
    chain.assistant("stop", "Hello!")
    adapter = PiAdapter()
    returned: list[DraftItem] = []
    for position, entry in enumerate(chain.entries):
        adapter.feed(position, entry)
        returned += adapter.drain()[1]
        if position == 3:  # the compaction after the error: a retry may still adopt it
            assert [i.role for i in returned] == ["human.request"]
    draft = adapter.finish()
    summary = next(i for i in returned if i.role == "runtime.compaction_summary")
    assert summary.loop is draft.loops[0]  # adopted by the retried Loop before it was returned
    assert [i.role for i in draft.items] == ["agent.final_answer"]


def test_an_extension_message_is_held_until_it_is_known_whether_it_opens_a_run() -> None:
    chain = Chain()
    chain.user("Say hello.")
    chain.assistant("stop", "Hello!")
    chain.user("Bye.")
    chain.assistant("stop", "Bye!")
    chain.add("custom_message", customType="reminder", content="Check the build.", display=True)
    chain.assistant("stop", "The build is green.")
    steps = _drain_after_each(chain)
    assert steps[5] == ([], [])  # the trigger and the Loop's final answer are held
    assert steps[6] == ([3], ["agent.final_answer", "runtime.context"])
