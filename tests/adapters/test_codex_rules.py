"""Single Codex adapter rules, each checked on the real record that exercises it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from tests.support.expect import build_folder, manifest, query
from tests.support.files import corpus_path, fixture_path
from traceidx.adapters.codex import CodexAdapter, _shell_script
from traceidx.domain.drafts import DraftItem

PUBLIC = ("public", "codex")
DESKTOP_104 = (
    "madshn__localpush__src-tauri__tests__fixtures__codex__2026-02-23__raw__sessions__"
    "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
)
TUI_125 = (
    "codemie-ai__codemie-code__src__agents__plugins__codex____tests____fixtures__"
    "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
)
LEGACY = "AcidicSoil__codex-session-viewer__docs__example.jsonl"


def _project(path: Path) -> tuple[list[Any], list[DraftItem]]:
    adapter = CodexAdapter()
    records = [json.loads(raw) for raw in path.read_bytes().splitlines()]
    for position, obj in enumerate(records):
        adapter.feed(position, obj)
    return records, adapter.finish().items


def test_compaction_summary_joins_its_event() -> None:
    records, items = _project(corpus_path(*PUBLIC, DESKTOP_104))
    (item,) = [i for i in items if i.role == "runtime.compaction_summary"]
    first, second = item.records
    assert records[first]["type"] == "compacted"
    assert records[second]["payload"]["type"] == "context_compacted"
    assert item.value["summary"] == records[first]["payload"]["message"]
    assert item.loop is not None  # an automatic compaction inside a running turn


def test_structured_exec_end_is_authoritative() -> None:
    records, items = _project(corpus_path(*PUBLIC, TUI_125))
    merged = [i for i in items if i.role == "tool.output" and len(i.records) >= 2]
    ends = [r for r in records if r["payload"].get("type") == "exec_command_end"]
    assert len(merged) >= len(ends) > 40
    for item in merged:
        end = next(
            (records[p]["payload"] for p in item.records if records[p]["type"] == "event_msg"),
            None,
        )
        if end is None or end.get("type") != "exec_command_end":
            continue
        duration = end["duration"]
        assert item.value["duration_ms"] == duration["secs"] * 1000 + duration["nanos"] // 10**6
        assert item.value["exit_code"] == end["exit_code"]
        assert item.value["failed"] is (end["exit_code"] != 0)


def test_legacy_shell_envelope_and_argv() -> None:
    records, items = _project(corpus_path(*PUBLIC, LEGACY))
    calls = [i for i in items if i.role == "agent.tool_call" and i.shell_command is not None]
    assert calls
    scripts = 0
    for call in calls:
        argv = json.loads(call.value["arguments"])["command"]
        if argv[:2] == ["bash", "-lc"]:
            assert call.shell_command == argv[2]
            scripts += 1
        else:  # e.g. ["apply_patch", "<patch>"] run through the shell tool: joined argv
            assert call.shell_command == shlex.join(argv)
    assert 0 < scripts < len(calls)
    outputs = [i for i in items if i.role == "tool.output" and "exit_code" in i.value]
    assert len(outputs) > 150
    for item in outputs:
        envelope = json.loads(records[item.records[0]]["output"])
        assert item.value["exit_code"] == envelope["metadata"]["exit_code"]
        assert item.value["text"] == envelope["output"]


def test_argv_is_joined_faithfully_unless_it_is_a_shell_script() -> None:
    assert _shell_script(["/bin/zsh", "-lc", "printf hello | wc -c"]) == "printf hello | wc -c"
    assert _shell_script(["ls", "-la", "my dir"]) == "ls -la 'my dir'"
    assert _shell_script(["bash", "-x", "script.sh"]) == "bash -x script.sh"
    assert _shell_script(["rush", "-c", "x"]) == "rush -c x"  # not a declared shell
    assert _shell_script("ls") is None


def test_human_input_is_one_item_with_both_records() -> None:
    path = fixture_path(
        "generated",
        "codex",
        "resume_multiturn-s1__rollout-2026-11-30T06-29-40-01a22b25-14aa-7ed1-a0db-c5fb25b6bfbb.jsonl",
    )
    records, items = _project(path)
    humans = [i for i in items if i.role.startswith("human.")]
    assert len(humans) == 3
    for item in humans:
        kinds = sorted(
            records[p]["type"] + "/" + str(records[p]["payload"].get("type")) for p in item.records
        )
        assert kinds == ["event_msg/item_completed", "response_item/message"]
    # no other item repeats a human text (the model-input copy is not a second item)
    texts = [i.value.get("text") for i in items if not i.role.startswith("human.")]
    assert not {h.value["text"] for h in humans} & set(texts)


def test_generated_rollouts_against_what_only_codex_states(tmp_path: Path) -> None:
    """The generated Codex folder (the rest of its ground truth: tests/corpus/test_expect.py):
    every file but the manifest is read as a rollout; every Loop keeps its turn id; each tool
    call's exit code is exactly the one the rollout states (the manifest's), also for the
    interrupted command the contract would allow others for."""
    dataset = tmp_path / "ds"
    skipped = {Path(r["locator"]).name for r in build_folder("codex", dataset)}
    assert skipped <= {"manifest.json"}, skipped
    stated = manifest("codex")
    assert stated is not None
    loops: dict[str, list[dict[str, Any]]] = {}
    for row in query(
        dataset,
        "SELECT s.native_id AS session, l.native_id, "
        "list(t.exit_code ORDER BY i.loop_position) FILTER (WHERE t.item_id IS NOT NULL) AS codes "
        "FROM loops l JOIN sessions s USING (session_id) "
        "LEFT JOIN tool_calls t USING (loop_id) LEFT JOIN items i ON i.item_id = t.item_id "
        "GROUP BY s.native_id, l.session_position, l.native_id "
        "ORDER BY s.native_id, l.session_position",
    ):
        loops.setdefault(row["session"], []).append(row)
    for session in stated["sessions"]:
        published = loops[session["session_id"]]
        assert len(published) == len(session["turns"]), session["key"]
        for turn, loop in zip(session["turns"], published, strict=True):
            where = f"{session['key']} turn {turn['index']}"
            assert loop["native_id"], where
            assert (loop["codes"] or []) == [c["exit_code"] for c in turn["tool_calls"]], where
