"""Rules of the Kimi adapter, on the generated wire files and on the legacy kimi-cli documents.

The generated set (the shared corpus's whole ``~/.kimi-code`` copy when present, else the
committed sessions) is built as a Kimi Code home and read back through the views: a session is
named by its folder (a subagent by ``<session>/agent-<n>``), usage only from ``usage.record``
(never its copies in ``step.end``, ``agent.message.appended`` or the parent's
``subagent.completed``), the compaction request counted in the turn that triggered it, failed
requests as calls without usage, the session index skipped. The hand-written legacy documents
(``tests/fixtures/handwritten/kimi/legacy-document-*``) cover the older dialect; the default
roots are checked through the command line.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.support.facts import dict_rows
from tests.support.files import fixture_path, generated, traceidx_cli
from traceidx.adapters.kimi import KimiAdapter
from traceidx.adapters.kimi.wire import native_ids
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build
from traceidx.runtimes import declared

FOLDER = generated("kimi")
MANIFEST = json.loads((FOLDER / "manifest.json").read_text("utf-8"))
LEGACY = fixture_path("handwritten", "kimi")
#: a line of ``~/.kimi-code/session_index.jsonl`` as Kimi Code 2.1.0 wrote it (the corpus's first)
INDEX_LINE = (
    '{"sessionId":"session_c4fc3897-1788-45e4-900a-bd7ac98e73bd","sessionDir":"/home/dev/'
    ".kimi-code/sessions/wd_plain_qa-s1_e6a7b376841c/session_c4fc3897-1788-45e4-900a-"
    'bd7ac98e73bd","workDir":"/home/dev/projects/plain_qa-s1"}'
)


def _contract(usage: dict[str, int]) -> dict[str, Any]:
    """A Kimi Code usage object in the contract's units (written here from the docs' rule)."""
    other, read, creation = (
        usage["inputOther"],
        usage["inputCacheRead"],
        usage["inputCacheCreation"],
    )
    return {
        "input": other + read + creation,
        "cached": read,
        "cache_write": creation,
        "output": usage["output"],
        "reasoning": None,
    }


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The generated folder built as a Kimi Code home (with its session index)."""
    home = tmp_path_factory.mktemp("kimi-home") / ".kimi-code"
    shutil.copytree(FOLDER, home)
    index = home / "session_index.jsonl"
    if not index.is_file():
        index.write_text(INDEX_LINE + "\n", "utf-8")
    dataset = home.parent / "ds"
    report = build([home], dataset, jobs=1)
    assert report.exit_code == 0
    con = connect(dataset)
    yield home, report, con
    con.close()


def _session_files() -> dict[str, Path]:
    """Every wire file of the generated set by the native id of its session."""
    found: dict[str, Path] = {}
    for session in MANIFEST["sessions"]:
        for name in [session["file"], *session["subagent_files"]]:
            found[native_ids(str(FOLDER / name))[0]] = FOLDER / name
    return found


def test_a_session_is_named_by_its_folder() -> None:
    base = "/h/.kimi-code/sessions/wd_app_0123456789ab/session_1f2e"
    assert native_ids(f"{base}/agents/main/wire.jsonl") == ("session_1f2e", None)
    assert native_ids(f"{base}/agents/agent-3/wire.jsonl") == (
        "session_1f2e/agent-3",
        "session_1f2e",
    )
    legacy = "/h/.kimi/sessions/5d41402abc4b2a76b9719d911017c592/2f1b7c3a-9d44/wire.jsonl"
    assert native_ids(legacy) == ("2f1b7c3a-9d44", None)
    assert native_ids("s3://bucket/kimi/session_9/agents/main/wire.jsonl") == ("session_9", None)
    assert native_ids("/tmp/copied-session.jsonl") == ("copied-session", None)
    hashed = "/h/p#1/.kimi-code/sessions/wd_x_0123456789ab/session_z/agents/main/wire.jsonl"
    assert native_ids(hashed) == ("session_z", None)  # a '#' is part of a folder's name


def test_the_index_is_skipped_and_every_wire_file_is_a_kimi_session(built: Any) -> None:
    _, report, con = built
    skipped = {Path(r.locator).name: r.reason for r in report.results if r.state == "skipped"}
    assert list(skipped) == ["session_index.jsonl"]
    assert skipped["session_index.jsonl"].startswith("no adapter recognises its structure")
    rows = dict_rows(con, "SELECT native_id, runtime, delegated_from FROM sessions")
    assert {r["native_id"] for r in rows} == set(_session_files())
    assert {r["runtime"] for r in rows} == {"kimi"}


def test_usage_counts_each_usage_record_once(built: Any) -> None:
    """One call per ``usage.record`` line, in the contract's units; the copies in ``step.end``,
    ``agent.message.appended`` and the parent's ``subagent.completed`` add nothing."""
    _, _, con = built
    for native, path in _session_files().items():
        records = _records(path)
        stated = sorted(
            json.dumps(_contract(r["usage"]), sort_keys=True)
            for r in records
            if r.get("type") == "usage.record"
        )
        calls = dict_rows(
            con,
            "SELECT c.usage FROM model_calls c JOIN sessions s USING (session_id) "
            f"WHERE s.native_id = '{native}' AND c.usage IS NOT NULL",
        )
        assert sorted(json.dumps(c["usage"], sort_keys=True) for c in calls) == stated, native
        copies = [r for r in records if r.get("type") == "subagent.completed"]
        assert all("usage" in r for r in copies)  # the fourth copy is there, and not counted


def test_the_compaction_request_counts_in_the_turn_it_opened(built: Any) -> None:
    """The ``usageScope: session`` record is the automatic compaction's billed request: a call
    of the turn whose prompt triggered it, beside the summary that replaced the history."""
    _, _, con = built
    native = next(s["session_id"] for s in MANIFEST["sessions"] if s["scenario"] == "compaction")
    path = _session_files()[native]
    scoped = [r for r in _records(path) if r.get("usageScope") == "session"]
    assert len(scoped) == 1
    rows = dict_rows(
        con,
        "SELECT l.session_position, c.usage FROM model_calls c JOIN loops l USING (loop_id) "
        f"JOIN sessions s ON s.session_id = c.session_id WHERE s.native_id = '{native}'",
    )
    positions = [r["session_position"] for r in rows if r["usage"] == _contract(scoped[0]["usage"])]
    assert len(positions) == 1 and positions[0] == max(r["session_position"] for r in rows)
    roles = dict_rows(
        con,
        "SELECT i.semantic.role AS role FROM items i JOIN sessions s USING (session_id) "
        f"WHERE s.native_id = '{native}' AND i.semantic.role = 'runtime.compaction_summary'",
    )
    assert len(roles) == 1


def test_failed_requests_are_calls_without_usage(built: Any) -> None:
    """An HTTP error leaves an ``llm.request`` and a ``step.end`` with finishReason error, no
    usage record: a failed attempt, published without usage (never 0)."""
    _, _, con = built
    failed: dict[str, int] = defaultdict(int)
    for native, path in _session_files().items():
        failed[native] = sum(
            1
            for r in _records(path)
            if r.get("type") == "context.append_loop_event"
            and r["event"].get("type") == "step.end"
            and r["event"].get("finishReason") == "error"
        )
    rows = dict_rows(
        con,
        "SELECT s.native_id, c.outcome, c.usage FROM model_calls c JOIN sessions s "
        "USING (session_id) WHERE c.outcome <> 'ok'",
    )
    published: dict[str, int] = defaultdict(int)
    for row in rows:
        assert row["outcome"] == "error" and row["usage"] is None, row
        published[row["native_id"]] += 1
    assert {k: v for k, v in failed.items() if v} == dict(published)
    assert sum(published.values()) >= 3


def test_a_subagent_is_its_own_session_linked_both_ways(built: Any) -> None:
    _, _, con = built
    children = dict_rows(
        con,
        "SELECT c.native_id, p.native_id AS parent, c.task FROM sessions c "
        "JOIN sessions p ON p.session_id = c.delegated_from.session_id",
    )
    assert [(c["native_id"], c["parent"]) for c in children] == [
        (f"{s['session_id']}/agent-0", s["session_id"])
        for s in MANIFEST["sessions"]
        if s["subagent_files"]
    ]
    delegations = dict_rows(
        con,
        "SELECT i.semantic.delegation.child_session_id AS child FROM items i "
        "WHERE i.semantic.role = 'agent.delegation'",
    )
    ids = dict_rows(con, "SELECT session_id FROM sessions WHERE delegated_from IS NOT NULL")
    assert {d["child"] for d in delegations} == {r["session_id"] for r in ids}


def test_a_long_output_is_marked_cut_by_the_runtime(built: Any) -> None:
    """Over 50,000 characters Kimi Code keeps a preview (the full output goes to a file) and
    ends it with its own success line: no exit code is read from it."""
    _, _, con = built
    if not any(s["scenario"] == "long_output" for s in MANIFEST["sessions"]):
        pytest.skip("the long_output session is only in the shared corpus")
    rows = dict_rows(
        con,
        "SELECT t.command, t.exit_code, o.semantic.tool_output.runtime_truncated AS cut "
        "FROM tool_calls t JOIN items o ON o.item_id = t.output_item_id "
        "WHERE t.command = 'seq 1 20000'",
    )
    assert rows == [{"command": "seq 1 20000", "exit_code": None, "cut": True}]


def test_detection_needs_a_kimi_record_after_the_metadata_line() -> None:
    metadata = {"type": "metadata", "protocol_version": "1.5", "created_at": 1}
    assert not KimiAdapter.claims([metadata])
    assert not KimiAdapter.claims([json.loads(INDEX_LINE)])
    assert KimiAdapter.claims([metadata, {"type": "turn.prompt", "input": []}])
    legacy = {"timestamp": 1.5, "message": {"type": "TurnBegin", "payload": {"user_input": "x"}}}
    assert KimiAdapter.claims([legacy])
    assert not KimiAdapter.claims([{"timestamp": 1.5, "message": "TurnBegin"}])


@pytest.fixture(scope="module")
def legacy(tmp_path_factory: pytest.TempPathFactory) -> Any:
    dataset = tmp_path_factory.mktemp("kimi-legacy") / "ds"
    assert build([LEGACY], dataset, jobs=1).exit_code == 0
    con = connect(dataset)
    yield con
    con.close()


def test_legacy_usage_is_once_per_message_and_a_subagents_outside_the_turn(legacy: Any) -> None:
    """``StatusUpdate.token_usage`` written twice for one ``message_id`` counts once; the usage
    of an inline ``SubagentEvent`` is a call of the session outside the parent's turns."""
    rows = dict_rows(
        legacy,
        "SELECT s.native_id, c.loop_id IS NULL AS outside, c.usage FROM model_calls c "
        "JOIN sessions s USING (session_id) ORDER BY c.occurred_at",
    )
    first = [r for r in rows if r["native_id"] == "7c9e6679-7425-40de-944b-e07fc1f90ae7"]
    assert [(r["outside"], r["usage"]["input"], r["usage"]["output"]) for r in first] == [
        (False, 2824, 42),
        (False, 2936, 31),
        (False, 3244, 55),
        (True, 900, 20),
    ]
    assert all(r["usage"]["reasoning"] is None for r in rows)


def test_legacy_turns_end_and_fail_as_the_records_say(legacy: Any) -> None:
    """``TurnEnd`` completes a turn; ``StepInterrupted`` ends it without an outcome (it does
    not say whether the user or an error stopped it); the shell exit code comes from the
    result's fixed message only."""
    loops = dict_rows(
        legacy,
        'SELECT s.native_id, l."end".outcome AS outcome FROM loops l JOIN sessions s '
        "USING (session_id) ORDER BY s.native_id, l.session_position",
    )
    assert [(r["native_id"][:8], r["outcome"]) for r in loops] == [
        ("2f1b7c3a", "completed"),
        ("7c9e6679", "completed"),
        ("7c9e6679", None),
    ]
    tools = dict_rows(
        legacy, "SELECT tool_name, exit_code, failed FROM tool_calls ORDER BY tool_name"
    )
    assert tools == [
        {"tool_name": "ReadFile", "exit_code": None, "failed": False},
        {"tool_name": "Shell", "exit_code": 2, "failed": True},
        {"tool_name": "Task", "exit_code": None, "failed": False},
    ]


def test_build_without_paths_reads_kimi_codes_and_kimi_clis_homes(tmp_path: Path) -> None:
    """``traceidx build`` with no paths reads ``$KIMI_CODE_HOME/sessions`` and the legacy
    ``$KIMI_SHARE_DIR/sessions`` (every other runtime's home is an empty folder here)."""
    env = {var.variable: "" for homes in declared().values() for var in homes}
    env |= {"HOME": str(tmp_path / "home"), "KIMI_CODE_HOME": str(tmp_path / "code")}
    env |= {"KIMI_SHARE_DIR": str(tmp_path / "cli"), "XDG_DATA_HOME": str(tmp_path / "data")}
    plain = next(s for s in MANIFEST["sessions"] if s["scenario"] == "plain_qa")
    target = tmp_path / "code" / plain["file"]
    target.parent.mkdir(parents=True)
    shutil.copyfile(FOLDER / plain["file"], target)
    shutil.copytree(LEGACY / "legacy-document-kimi-cli" / "sessions", tmp_path / "cli" / "sessions")
    dataset = str(tmp_path / "ds")
    done = traceidx_cli("build", "--dataset", dataset, env=env)
    assert done.returncode == 0, done.stderr
    found = traceidx_cli(
        "sql", "--dataset", dataset, "--format", "json",
        "SELECT runtime, native_id FROM sessions ORDER BY native_id", env=env,
    )  # fmt: skip
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout) == [
        {"runtime": "kimi", "native_id": "7c9e6679-7425-40de-944b-e07fc1f90ae7"},
        {"runtime": "kimi", "native_id": plain["session_id"]},
    ]


def _fed(records: list[dict[str, Any]], locator: str) -> Any:
    adapter = KimiAdapter()
    adapter.locate(locator)
    for position, record in enumerate(records):
        adapter.feed(position, record)
    return adapter.finish()


def test_steering_and_a_request_cut_before_its_usage() -> None:
    """Records the corpus does not show, in the shapes Kimi Code writes its others: input given
    while a turn runs joins it; a request the user cut before any usage record is an aborted
    call without usage; without a locator no session is drafted (nothing names one)."""
    prompt = {"type": "text", "text": "run the tests"}
    records = [
        {"type": "metadata", "protocol_version": "1.5", "created_at": 1796653000000},
        {"type": "turn.prompt", "input": [prompt], "origin": {"kind": "user"}, "promptId": "p1"},
        {"type": "llm.request", "provider": "openai", "modelAlias": "moonshot/kimi-k2-0905"},
        {"type": "turn.steer", "input": [{"type": "text", "text": "only the fast ones"}]},
        {
            "type": "context.append_loop_event",
            "event": {"type": "step.end", "finishReason": "interrupted"},
        },
        {"type": "turn.ended", "turnId": 0, "reason": "cancelled", "time": 1796653001000},
    ]
    draft = _fed(
        records, "/h/.kimi-code/sessions/wd_x_0123456789ab/session_s1/agents/main/wire.jsonl"
    )
    assert draft.session.native_id == "session_s1" and draft.session.created_at == 1796653000000
    [loop] = draft.loops
    assert (loop.native_id, loop.outcome, loop.end) == ("p1", "interrupted", 5)
    [call] = loop.usage
    assert (call.outcome, call.records, call.model) == ("aborted", (2, 4), "moonshot/kimi-k2-0905")
    assert [(i.role, i.value["text"]) for i in draft.items] == [
        ("human.request", "run the tests"),
        ("human.steering", "only the fast ones"),
    ]
    assert draft.unknown_types == {}
    assert KimiAdapter().finish().session is None
