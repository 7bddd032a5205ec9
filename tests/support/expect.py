"""The generated set's ground truth, read the same way for every runtime.

Each folder of the generated set (``generated/<folder>/``: the shared corpus's when it is
present, else the committed fixtures, see `tests.support.files.generated`) holds two statements
of what the real runtime did:

* ``expect.json`` (format ``expect/1``): per session, in the contract's units: its Loops (outcome,
  usage, the usage and model of every billed model call, tool calls, final answer), the model
  calls outside any Loop, the subagent sessions it delegated to, and the session's usage as
  the runtime totals it (``session_token_usage``, where the runtime keeps only a total for
  some of its calls: a Loop whose calls' usage is gone from the trace states ``pruned`` and
  no ``calls``);
* ``manifest.json``: the generator's record in the runtime's own units; of it the tests read
  only what every runtime's manifest states in the same sense: a session's ``session_id``,
  ``cwd``, ``human_prompts`` and ``final_answer``, and its ``turns`` (``index``, the ``prompt``
  of a turn the human typed, ``steering``).

``tests/fixtures/expect-deviations.json`` lists where a trace's evidence reads otherwise than
its ground truth, with the reason. Adding a runtime is adding its folder to `FOLDERS`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.facts import dict_rows
from tests.support.files import FIXTURES, generated
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build
from traceidx.runtimes import RUNTIMES, names

#: the generated set's folders (the runtime each folder holds is its expect.json's `runtime`)
FOLDERS = tuple(folder for name in names() for folder in RUNTIMES[name].fixtures)
#: the contract's usage members
USAGE = ("input", "cached", "cache_write", "output", "reasoning")
#: the members of a session's usage as the runtime totals it (``session_token_usage``)
SESSION_USAGE = ("input", "cached", "output")
#: the manifests' turn kinds (``kind`` or ``trigger``) of a turn a human typed
HUMAN_TURNS = frozenset({"prompt", "user"})


def _read(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text("utf-8")) if path.is_file() else None


def expect(folder: str) -> dict[str, Any] | None:
    """A folder's ``expect.json``, or None when it has none."""
    return _read(generated(folder) / "expect.json")


def manifest(folder: str) -> dict[str, Any] | None:
    """A folder's ``manifest.json``, or None when it has none."""
    return _read(generated(folder) / "manifest.json")


#: where the evidence reads otherwise than the ground truth: overridden members, with the reason
DEVIATIONS: dict[str, Any] = json.loads((FIXTURES / "expect-deviations.json").read_text("utf-8"))

#: the folders with an expect.json whose runtime traceidx reads
TRUTHS: dict[str, dict[str, Any]] = {
    folder: truth
    for folder in FOLDERS
    if (truth := expect(folder)) is not None and truth["runtime"] in names()
}


def deviation(family: str, key: str, member: str) -> dict[str, Any]:
    """The members `DEVIATIONS` overrides for one session (`key`) and one of its parts."""
    found: dict[str, Any] = DEVIATIONS.get(family, {}).get(key, {}).get(member, {})
    return {k: v for k, v in found.items() if k != "why"}


def manifest_sessions(folder: str) -> dict[str, dict[str, Any]]:
    """A folder's manifest sessions by native session id (empty without a manifest)."""
    found = manifest(folder)
    sessions = (found or {}).get("sessions", [])
    return {s["session_id"]: s for s in sessions if "session_id" in s}  # others: another shape


def turn_of(session: dict[str, Any], loop: dict[str, Any]) -> dict[str, Any] | None:
    """The manifest turn an expect.json Loop stands for (same ``index``), if there is one."""
    for turn in session["turns"]:
        if str(turn["index"]) == str(loop["index"]):
            return turn
    return None


def is_human_turn(session: dict[str, Any], turn: dict[str, Any]) -> bool:
    """Whether a manifest turn was opened by a prompt the human typed (a subagent's task is a
    ``prompt`` turn too in some manifests, but never one of the session's human prompts)."""
    kind = turn.get("kind", turn.get("trigger", "prompt"))  # none stated: a prompt (Cline's)
    return kind in HUMAN_TURNS and turn.get("prompt") in session.get("human_prompts", [])


def loop_calls(loop: dict[str, Any]) -> list[dict[str, Any]]:
    """The billed model calls an expect.json Loop states: its ``calls``; a Loop without them
    must state that the trace lost them (``pruned``: Mistral Vibe keeps a resumed session's
    per-call usage for its last run only), and has none."""
    if "calls" in loop:
        return list(loop["calls"])
    assert loop.get("pruned"), f"loop {loop.get('index')}: no calls and not pruned"
    return []


def calls(session: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every billed model call of an expect.json session: in its Loops, then outside them."""
    for loop in session["loops"]:
        yield from loop_calls(loop)  # none where the trace kept no per-call usage
    yield from session.get("calls", [])


def add_usage(totals: dict[str, int], usage: dict[str, Any] | None) -> None:
    """Add a usage to running totals: a member counts where it is reported (None adds 0)."""
    for member in USAGE:
        totals[member] += (usage or {}).get(member) or 0


def usage_by_model(truth: dict[str, Any]) -> dict[str, dict[str, int]]:
    """The usage of every billed model call of a runtime's ground truth, summed per model."""
    totals: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(USAGE, 0))
    for session in truth["sessions"]:
        for call in calls(session):
            add_usage(totals[call["model"]], call["usage"])
    return dict(totals)


def usage_total(truth: dict[str, Any], *, loops_only: bool = False) -> dict[str, int]:
    """The usage of a runtime's ground truth summed over the whole set: of its Loops
    (`loops_only`), else of every billed model call (in Loops and outside them)."""
    totals = dict.fromkeys(USAGE, 0)
    for session in truth["sessions"]:
        if loops_only:
            for loop in session["loops"]:
                add_usage(totals, loop["usage"])
        else:
            for call in calls(session):
                add_usage(totals, call["usage"])
    return totals


def build_folder(folder: str, dataset: Path) -> list[dict[str, Any]]:
    """Build a folder of the generated set into `dataset`, which must succeed; the build's
    results (locator, state) of the files it did not read as traces (``skipped``)."""
    report = build([generated(folder)], dataset, jobs=2)
    failed = [(r.locator, r.reason) for r in report.results if r.state == "failed"]
    assert report.exit_code == 0 and not failed, failed
    return [
        {"locator": r.locator, "state": r.state} for r in report.results if r.state == "skipped"
    ]


def query(dataset: Path, sql: str) -> list[dict[str, Any]]:
    """The rows of a query over a built dataset's views, as dicts."""
    con = connect(dataset)
    try:
        return dict_rows(con, sql)
    finally:
        con.close()
