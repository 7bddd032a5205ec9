"""Document sources: a JSON file its runtime rewrites whole, framed into a Record per element.

Gemini CLI before 0.58 kept each session as ``chats/session-*.json`` = ``{sessionId,
projectHash, startTime, lastUpdated, messages: [...]}`` (``JSON.stringify(record, null, 2)``,
rewritten in place). Discovery finds those files and chooses the document framing for them;
each message is a Record located by its JSON path and byte range, fingerprinted and verified
by ``inspect`` as a line is; a rewrite re-reads the file and messages that kept their place
keep their ids. The fixture is hand-written in that documented shape
(``tests/fixtures/handwritten/gemini/tmp/legacy-document-demo``), not written by the CLI.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.support.facts import dict_rows
from tests.support.files import fixture_path, traceidx_cli
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build
from traceidx.projection.ingest import Settings, ingest
from traceidx.sources.discover import discover, framing_of
from traceidx.sources.document import file_of, frame_document
from traceidx.sources.frame import fingerprint

LIMIT = 16 << 20
FOLDER = ("handwritten", "gemini", "tmp", "legacy-document-demo", "chats")


def legacy() -> Path:
    return next(fixture_path(*FOLDER).glob("session-*.json"))


def test_each_message_is_a_record_located_by_its_path_and_bytes() -> None:
    data = legacy().read_bytes()
    records = frame_document(data, LIMIT)
    document = json.loads(data)
    assert [r.path for r in records] == ["$"] + [
        f"$.messages[{i}]" for i in range(len(document["messages"]))
    ]
    assert [r.line.position for r in records] == list(range(len(records)))
    root = records[0]
    assert (root.line.start, root.line.end) == (0, len(data))  # no final newline
    assert root.value == {k: v for k, v in document.items() if k != "messages"}
    for record, message in zip(records[1:], document["messages"], strict=True):
        piece = data[record.line.start : record.line.end]
        assert piece == record.line.data and json.loads(piece) == message == record.value
        assert record.line.fingerprint == fingerprint(piece) and record.status == "ok"


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        (b'{"a": "]}\\"[{", "messages": [1, "x]", {"b": [[]]}, null], "z": {}}\n', 5),
        (b'  {"messages": []}  ', 1),
        (b'{"sessionId": "s", "messages": {"not": "an array"}}', 1),
        (b'{"messages": [{"a": 1}], "messages": [{"b": 2}, {"c": 3}]}', 3),
    ],
)
def test_the_scanner_finds_the_elements_json_reads(text: bytes, paths: int) -> None:
    records = frame_document(text, LIMIT)
    assert len(records) == paths
    whole = msgspec.json.decode(text)
    messages = whole["messages"]
    for index, record in enumerate(records[1:]):
        assert record.value == messages[index]
        assert msgspec.json.decode(text[record.line.start : record.line.end]) == record.value
    if isinstance(messages, list):  # its elements are records: the document's is the rest
        whole.pop("messages")
    assert records[0].value == whole


def test_a_document_that_is_not_json_or_too_long_is_one_record() -> None:
    (torn,) = frame_document(b'{"sessionId": "s", "messages": [{"id"', LIMIT)
    assert (torn.path, torn.status, torn.value) == ("$", "malformed", None)
    (long,) = frame_document(b'{"messages": []}', 8)
    assert (long.status, long.line.data, long.line.end) == ("oversized", None, 16)
    assert frame_document(b" \n ", LIMIT) == []
    (listed,) = frame_document(b'"text"', LIMIT)
    assert (listed.status, listed.value) == ("ok", "text")


def test_an_array_document_is_its_root_then_a_record_per_element() -> None:
    """Cline's VS Code task files: the root Record names where the file is, as framing was
    given it; each element is a Record located by its own bytes."""
    data = b'[{"ts": 1, "say": "task"} ,\n {"ts": 2, "text": "a ] b"}]\n'
    root, first, second = frame_document(data, LIMIT, file="1700000000000/ui_messages.json")
    assert (root.path, root.value) == ("$", {"$file": "1700000000000/ui_messages.json"})
    assert (root.line.start, root.line.end) == (0, len(data) - 1)
    assert (first.path, first.value) == ("$[0]", {"ts": 1, "say": "task"})
    assert data[first.line.start : first.line.end] == b'{"ts": 1, "say": "task"}'
    assert (second.path, second.line.position, second.value["text"]) == ("$[1]", 2, "a ] b")
    assert file_of("/home/u/tasks/1700000000000/ui_messages.json") == (
        "1700000000000/ui_messages.json"
    )


def _home(tmp_path: Path) -> Path:
    """A Gemini CLI home with a session document, the JSON-lines file a migrated one left,
    and the other JSON files the CLI keeps there."""
    home = tmp_path / ".gemini"
    chats = home / "tmp" / "demo" / "chats"
    chats.mkdir(parents=True)
    shutil.copy(legacy(), chats / legacy().name)
    migrated = chats / "session-2025-11-02T08-00-0a0b0c0d.json"
    migrated.write_text('{"sessionId": "x", "projectHash": "y", "messages": []}')
    migrated.with_suffix(".jsonl").write_text(
        '{"sessionId":"x","projectHash":"y","startTime":"2025-11-02T08:00:00.000Z"}\n'
    )
    (home / "projects.json").write_text('{"projects": {}}')
    (home / "tmp" / "demo" / "logs.json").write_text("[]")
    (chats / "checkpoint-x.json").write_text("{}")
    return home


def test_discovery_finds_session_documents_and_chooses_their_framing(tmp_path: Path) -> None:
    home = _home(tmp_path)
    found = discover([home])
    chats = (home / "tmp" / "demo" / "chats").resolve()
    assert [Path(c.locator).name for c in found.candidates] == [
        "session-2025-11-02T08-00-0a0b0c0d.jsonl",
        legacy().name,
    ]
    assert [(Path(s.locator).name, Path(s.by).name) for s in found.superseded] == [
        ("session-2025-11-02T08-00-0a0b0c0d.json", "session-2025-11-02T08-00-0a0b0c0d.jsonl")
    ]
    assert found.superseded[0].locator == str(chats / "session-2025-11-02T08-00-0a0b0c0d.json")
    assert [framing_of(c.locator) for c in found.candidates] == ["lines", "document"]


def test_a_document_is_indexed_record_by_record(tmp_path: Path) -> None:
    result = ingest(str(legacy()), Settings())
    assert (result.state, result.runtime, result.unknown_types) == ("indexed", "gemini", {})
    assert result.checkpoint is None and result.tail_bytes == 0
    records = result.records.objects()
    assert [r.json_path for r in records] == ["$"] + [f"$.messages[{i}]" for i in range(5)]
    assert [r.native_type for r in records] == [
        "metadata",
        "user/text",
        "gemini/toolCalls",
        "gemini",
        "user/text",
        "gemini",
    ]
    assert result.loop_count == 2 and result.indexed_bytes == legacy().stat().st_size


def _facts(dataset: Path) -> dict[str, Any]:
    con = connect(dataset)
    try:
        records = dict_rows(
            con, "SELECT record_id, json_path, fingerprint FROM records ORDER BY source_position"
        )
        items = dict_rows(
            con,
            "SELECT item_id, semantic.role AS role, record_ids FROM items ORDER BY item_id",
        )
        loops = dict_rows(con, "SELECT loop_id, usage FROM loops ORDER BY session_position")
    finally:
        con.close()
    return {"records": records, "items": items, "loops": loops}


def test_a_rewrite_rereads_the_document_and_kept_messages_keep_their_ids(
    tmp_path: Path,
) -> None:
    traces = tmp_path / "chats"
    traces.mkdir()
    path = traces / legacy().name
    shutil.copy(legacy(), path)
    dataset = tmp_path / "ds"
    assert build([traces], dataset, jobs=1).exit_code == 0
    before = _facts(dataset)
    document = json.loads(path.read_text("utf-8"))
    document["lastUpdated"] = "2025-11-03T14:25:00.000Z"
    document["messages"].append(
        {
            "id": "8a1b2c3d-0006-4e5f-9a0b-1c2d3e4f5a65",
            "timestamp": "2025-11-03T14:25:00.000Z",
            "type": "user",
            "content": "One more thing.",
        }
    )
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")  # as the CLI rewrites it
    report = build([traces], dataset, jobs=1)
    assert report.exit_code == 0 and report.actions["rewritten"] == 1
    after = _facts(dataset)
    # the document record changed (its bytes did); every message record kept id and bytes
    assert after["records"][0]["record_id"] == before["records"][0]["record_id"]
    assert after["records"][0]["fingerprint"] != before["records"][0]["fingerprint"]
    assert after["records"][1:6] == before["records"][1:]
    assert after["records"][6]["json_path"] == "$.messages[5]"
    assert {i["item_id"] for i in before["items"]} <= {i["item_id"] for i in after["items"]}
    assert len(after["loops"]) == len(before["loops"]) + 1
    fresh = tmp_path / "fresh"
    build([traces], fresh, jobs=1)
    assert _facts(fresh) == after


def test_inspect_verifies_a_message_record(tmp_path: Path) -> None:
    dataset = tmp_path / "ds"
    assert build([legacy()], dataset, jobs=1).exit_code == 0
    con = connect(dataset)
    try:
        (rid,) = con.execute(
            "SELECT record_id FROM records WHERE json_path = '$.messages[1]'"
        ).fetchone()
    finally:
        con.close()
    done = traceidx_cli("inspect", "--dataset", str(dataset), "--format", "json", str(rid))
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert (info["verification"], info["json_path"]) == ("verified", "$.messages[1]")
    assert json.loads(info["content"]) == json.loads(legacy().read_text("utf-8"))["messages"][1]
    text = traceidx_cli("inspect", "--dataset", str(dataset), str(rid))
    assert "json_path: $.messages[1]" in text.stdout
