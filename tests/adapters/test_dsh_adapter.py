"""dsh adapter: the corpus builds, zstd framing gives the same facts, and the format rules.

Projections are read through the golden harness (`project_files`: sessions, loops and items with
the line numbers of their records), so a fact is compared as a reader of the dataset sees it.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import zstandard

from tests.support.expect import build_folder, expect, manifest, query
from tests.support.files import DATA, corpus_path, fixture_path, generated
from tests.support.golden import project_files
from traceidx.adapters.dsh import DshAdapter, _seqs
from traceidx.analysis.query import connect
from traceidx.domain.drafts import Draft
from traceidx.pipeline.job import build
from traceidx.sources.sourceio import ZSTD_MAGIC

DSH = DATA / "dsh"
HEADER = {"type": "session", "version": 0, "id": "s-unit", "createdAt": 1786707340000}


def _project(tmp_path: Path, *paths: Path) -> dict[str, Any]:
    return project_files(list(paths), tmp_path / "ds")


def _draft(*events: dict[str, Any], header: dict[str, Any] | None = None) -> Draft:
    """Feed a header and events (seq/time filled in) straight to the adapter."""
    adapter = DshAdapter()
    adapter.feed(0, header or HEADER)
    for n, event in enumerate(events):
        adapter.feed(n + 1, {"seq": n, "time": 1786707340000 + n, **event})
    return adapter.finish()


def _turn(n: int, *body: dict[str, Any], end: dict[str, Any] | None = None) -> list[Any]:
    close = [{"type": "turn/end", "data": {"turn": n, "reason": end}}] if end else []
    return [{"type": "turn/start", "data": {"turn": n}}, *body, *close]


def _prompt(text: str, kind: str = "user") -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return {"type": "user/message", "data": {"content": content, "source": {"kind": kind}}}


# --------------------------------------------------------------------------------------------
# The corpus


def test_every_dsh_file_of_the_corpus_builds(tmp_path: Path) -> None:
    roots = [corpus_path("public", "dsh"), corpus_path("generated", "dsh")]
    report = build(roots, tmp_path / "ds", jobs=1)
    assert report.exit_code == 0
    traces = [r for r in report.results if "/_gen/" not in r.locator]
    assert len(traces) >= 190
    assert {(r.state, r.runtime) for r in traces} == {("indexed", "dsh")}
    skipped = [r for r in report.results if r.state == "skipped"]
    assert all("/_gen/" in r.locator for r in skipped)
    con = connect(tmp_path / "ds")
    compression = dict(
        con.sql("SELECT coalesce(compression, 'none'), count(*) FROM sources GROUP BY 1").fetchall()
    )
    assert compression["zstd"] >= 20 and compression["none"] >= 160


def _batches(lines: list[bytes], size: int) -> list[list[bytes]]:
    """dsh's write batches: the header alone, then the events a few at a time."""
    return [lines[:1], *(lines[i : i + size] for i in range(1, len(lines), size))]


@pytest.mark.parametrize(
    "source",
    [
        "public/dsh/deepseek-ai__deepseek-harness__apps__web__tests__snapshots__steering__session.jsonl",
        "generated/dsh/s1-estuary/sessions/--home-dev-projects-estuary--/"
        "session-c46db0f5-ba40-4420-b61b-cc490970d736/session.jsonl.zstd",
    ],
)
def test_multiframe_zstd_with_a_torn_frame_gives_the_same_facts(
    tmp_path: Path, source: str
) -> None:
    at = fixture_path if source.startswith("generated/") else corpus_path  # a committed copy
    raw = at(*source.split("/")).read_bytes()
    if raw.startswith(ZSTD_MAGIC):
        raw = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True)
        raw = raw.read()
    lines = raw.splitlines(keepends=True)
    batches = _batches(lines, 5)
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    frames = [compressor.compress(b"".join(batch)) for batch in batches]
    assert len(frames) >= 5
    complete, torn = frames[:-1], frames[-1]
    kept = sum(len(batch) for batch in batches[:-1])
    zst = tmp_path / "zstd" / "session.jsonl.zstd"
    plain = tmp_path / "plain" / "session.jsonl"
    zst.parent.mkdir()
    plain.parent.mkdir()
    zst.write_bytes(b"".join(complete) + torn[: len(torn) // 2])
    plain.write_bytes(b"".join(lines[:kept]))

    from_zstd = _project(tmp_path / "a", zst)
    from_plain = _project(tmp_path / "b", plain)
    assert from_zstd == from_plain
    assert from_zstd["sessions"][0]["loops"]  # the facts are not vacuous
    records: list[list[Any]] = []
    for dataset in (tmp_path / "a" / "ds", tmp_path / "b" / "ds"):
        con = connect(dataset)
        records.append(
            con.sql(
                "SELECT source_position, content_range, fingerprint, occurred_at FROM records "
                "ORDER BY source_position"
            ).fetchall()
        )
        compression = con.sql("SELECT coalesce(compression, 'none') FROM sources").fetchall()
        assert compression == [("zstd" if dataset.parent.name == "a" else "none",)]
    assert records[0] == records[1] and len(records[0]) == kept


# --------------------------------------------------------------------------------------------
# Tool results: three generations, one fact


def _outputs(tmp_path: Path, fixture: str) -> list[tuple[Any, ...]]:
    """(tool, output text, exit code, failed) of each call of a fixture, in call order."""
    project_files([DSH / fixture], tmp_path / "ds")
    con = connect(tmp_path / "ds")
    return con.sql(
        """SELECT t.tool_name, o.semantic.tool_output.text.value, t.exit_code, t.failed
           FROM tool_calls t JOIN items c USING (item_id)
           LEFT JOIN items o ON o.item_id = t.output_item_id
           ORDER BY c.loop_position"""
    ).fetchall()


def test_v3_wrapper_v4_tool_role_and_flat_results_are_the_same_output(tmp_path: Path) -> None:
    v3, v4, flat = (
        _outputs(tmp_path / name, f"tool-result-{name}.jsonl") for name in ("v3", "v4", "flat")
    )
    assert v3 == v4 == flat
    assert v3 == [
        # dsh keeps isError false for a non-zero exit: failed follows the exit code it wrote
        ("bash", "[stderr]\nno docs\n[exit code: 2]", 2, True),
        # isError true; the failure identity FsError/FS_NOT_FOUND stays in the Record
        ("read", "Error: file not found: /home/demo/inkwell/config.toml", None, True),
    ]


def test_a_nested_or_multiple_wrapper_is_refused(tmp_path: Path) -> None:
    calls = _outputs(tmp_path, "nested-wrapper.jsonl")
    assert [(tool, text) for tool, text, _, _ in calls] == [("bash", None), ("read", None)]
    con = connect(tmp_path / "ds")
    refused = con.sql(
        "SELECT source_position FROM records WHERE native_type = 'tool/result' "
        "AND parse_status = 'ok' ORDER BY 1"
    ).fetchall()
    assert refused == [(9,), (10,)]  # the Records stay
    supported = con.sql("SELECT unnest(record_ids) FROM items").fetchall()
    positions = dict(con.sql("SELECT record_id, source_position FROM records").fetchall())
    assert not {positions[r] for (r,) in supported} & {9, 10}


# --------------------------------------------------------------------------------------------
# Forks, resumes, subagents


def test_forked_child_excludes_its_inherited_prefix(tmp_path: Path) -> None:
    projection = _project(tmp_path, DSH / "fork-parent.jsonl", DSH / "fork-child.jsonl")
    child = next(s for s in projection["sessions"] if s["native_id"] == "fixture-fork-child")
    assert child["forked_from"] == "fixture-fork-parent" and "delegated_from" not in child
    # turn 1 and the tagged marker (lines 1-7) are the parent's; the untagged marker before
    # turn 3 is a resume, not a cut
    assert [loop["native_id"] for loop in child["loops"]] == ["2", "3"]
    lines = [n for loop in child["loops"] for i in loop["items"] for n in i["lines"]]
    lines += [n for i in child["session_items"] for n in i["lines"]]
    assert min(lines) > 7
    assert [loop["usage"]["output"] for loop in child["loops"]] == [3, 4]


def test_v0_seed_length_cut_and_subagent_fork_links(tmp_path: Path) -> None:
    root = "public/dsh/deepseek-ai__deepseek-harness__examples__acp-agent__tests__snapshots__"
    parent = corpus_path(*f"{root}subagent-fork-in-process__session.jsonl".split("/"))
    child = corpus_path(*f"{root}subagent-fork-in-process__session.1.jsonl".split("/"))
    projection = _project(tmp_path, parent, child)
    fork = next(s for s in projection["sessions"] if s["native_id"].startswith("ada8966c"))
    assert fork["delegated_from"] == fork["forked_from"] == "96cf59c9-b347-48b9-b234-a5200913ad05"
    (loop,) = fork["loops"]  # seedLength 42 covers the parent's turn 1 (lines 1-20)
    assert loop["native_id"] == "2" and loop["start_line"] == 24
    # the child's copy of its task stays a Record: the one delegation is the parent's
    assert "agent.delegation" not in [i["role"] for i in loop["items"]]
    parent_roles = [
        i["role"]
        for s in projection["sessions"]
        if s is not fork
        for i in [*s["session_items"], *(i for lp in s["loops"] for i in lp["items"])]
    ]
    assert parent_roles.count("agent.delegation") == 1


def test_an_injection_turn_and_a_blocked_prompt(tmp_path: Path) -> None:
    (session,) = _project(tmp_path, DSH / "prerelease-v0.jsonl")["sessions"]
    first, injected, blocked = session["loops"]
    roles = [i["role"] for i in first["items"]]
    assert roles[0] == "human.request" and "human.steering" in roles
    assert "runtime.compaction_summary" in roles and roles[-1] == "agent.final_answer"
    assert [i["role"] for i in injected["items"]] == ["runtime.notice"]
    assert blocked["outcome"] == "interrupted"
    assert {i["role"] for i in blocked["items"]} == {"human.request", "runtime.notice"}
    # a failed attempt's usage chunk counts, the completed steps' chunks are not counted twice
    assert first["usage"]["input"] == 700 + 700 + 300 and first["usage"]["output"] == 90


# --------------------------------------------------------------------------------------------
# Rules on small logs


@pytest.mark.parametrize(
    ("reason", "outcome"),
    [
        ({"kind": "completed"}, "completed"),
        ({"kind": "max-tokens"}, "completed"),
        ({"kind": "aborted", "reason": {"kind": "user"}}, "interrupted"),
        ({"kind": "interrupted"}, "interrupted"),
        ({"kind": "disposed"}, "interrupted"),
        ({"kind": "rejected", "reason": "policy"}, "interrupted"),
        ({"kind": "error", "error": {"message": "boom", "code": "SERVER"}}, "failed"),
        ({"kind": "forked"}, None),
        ({"kind": "something-new"}, None),
    ],
)
def test_turn_end_outcomes(reason: dict[str, Any], outcome: str | None) -> None:
    draft = _draft(*_turn(1, _prompt("go"), end=reason))
    (loop,) = draft.loops
    assert loop.end == 3 and loop.outcome == outcome


def test_a_turn_without_end_stays_open_and_the_next_start_bounds_it() -> None:
    draft = _draft(*_turn(1, _prompt("one")), *_turn(2, _prompt("two")))
    first, second = draft.loops
    assert (first.end, first.outcome) == (3, None)
    assert second.end is None
    assert [i.role for i in draft.items] == ["human.request", "human.request"]


def test_injection_turns_are_not_human_requests() -> None:
    settled = _prompt("Background subagent finished.", kind="subagent-settled")
    draft = _draft(*_turn(1, settled, _prompt("and now?"), end={"kind": "completed"}))
    assert [i.role for i in draft.items] == ["subagent.report", "human.steering"]
    trigger = {"kind": "injection", "source": {"kind": "user"}}
    start = {"type": "turn/start", "data": {"turn": 1, "trigger": trigger}}
    draft = _draft(start, _prompt("typed while idle"))
    assert [i.role for i in draft.items] == ["human.steering"]


def test_subagent_child_inputs_from_the_parent_stay_records() -> None:
    """The child's task and the parent's later relays are the parent's delegation (and its
    send_message calls) seen from the child: Records that open the child's Loops, no Items."""
    header = {**HEADER, "parentSession": "s-parent", "origin": "subagent", "delegationDepth": 1}
    relay = {"kind": "coordinator", "form": "relay", "senderSessionId": "s-parent"}
    msg = {"type": "user/message", "data": {"content": [{"type": "text", "text": "more"}]}}
    msg["data"]["source"] = relay
    other = json.loads(json.dumps(msg))
    other["data"]["source"]["senderSessionId"] = "s-sibling"
    draft = _draft(*_turn(1, _prompt("task")), *_turn(2, msg, other), header=header)
    assert draft.session is not None and draft.session.delegated_from == ("s-parent", 0)
    assert draft.session.forked_from is None
    assert [loop.start for loop in draft.loops] == [1, 3]
    assert [(i.role, i.session_ref) for i in draft.items] == [("subagent.activity", "s-sibling")]


def _assistant_calls(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    content = [
        {"type": "tool-call", "id": call_id, "name": name, "arguments": json.dumps(args)}
        for call_id, name, args in calls
    ]
    message = {"role": "assistant", "content": content}
    return {"type": "assistant/message", "data": {"turn": 1, "step": 1, "message": message}}


def _result(call_id: str, text: str, error: bool = False) -> dict[str, Any]:
    message = {
        "role": "tool",
        "toolCallId": call_id,
        "content": [{"type": "text", "text": text}],
        "isError": error,
    }
    return {"type": "tool/result", "data": {"turn": 1, "step": 1, "message": message}}


def _catalog(child: str, label: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"version": 0, "childId": child, "childCreatedAt": 1, "mode": "one-shot"}
    if label is not None:
        data["label"] = label
    return {"type": "subagent/catalog", "data": data}


def _facts(draft: Draft) -> list[tuple[Any, ...]]:
    return [(i.role, i.records, i.call_id, i.output_of, i.session_ref) for i in draft.items]


def test_a_delegating_call_is_a_tool_call_and_its_result_a_tool_output() -> None:
    args = {"description": "Count", "prompt": "count the lines", "run_in_background": False}
    draft = _draft(
        *_turn(
            1,
            _assistant_calls(("c1", "subagent", args)),
            _result("c1", "Error: subagent run failed", error=True),
            end={"kind": "completed"},
        )
    )
    assert _facts(draft) == [
        ("agent.tool_call", [2], "c1", None, None),
        ("agent.delegation", [2], None, None, None),
        ("tool.output", [3], None, "c1", None),
        ("subagent.report", [3], None, None, None),
    ]
    call, delegation, output, report = draft.items
    assert call.value == {"tool_name": "subagent", "arguments": json.dumps(args)}
    assert delegation.value["text"] == "count the lines"
    assert output.value["failed"] is True and report.strength == "structural"


def test_the_parents_log_names_the_child_a_delegation_created() -> None:
    background = {"description": "Bg", "prompt": "work", "run_in_background": True}
    draft = _draft(
        *_turn(
            1,
            _assistant_calls(("c1", "subagent", background)),
            _result("c1", "started subagent child-1"),
            end={"kind": "completed"},
        )
    )
    assert _facts(draft) == [
        ("agent.tool_call", [2], "c1", None, None),
        ("agent.delegation", [2, 3], None, None, "child-1"),
        ("tool.output", [3], None, "c1", None),
        ("subagent.activity", [3], None, None, "child-1"),
    ]
    # a catalog fact written while the call runs names its child; among several waiting calls,
    # the one whose description is the child's label
    one, two = {"description": "A", "prompt": "a"}, {"description": "B", "prompt": "b"}
    draft = _draft(
        *_turn(
            1,
            _assistant_calls(("c1", "subagent", one), ("c2", "subagent", two)),
            _catalog("kid-b", "B"),
            _catalog("kid-x", "unknown label"),
            _result("c2", "B done"),
            _catalog("kid-a"),  # c1 alone still waits
            _result("c1", "A done"),
            _catalog("kid-late"),  # no call waits: no link
            end={"kind": "completed"},
        )
    )
    links = [(i.role, i.records, i.session_ref) for i in draft.items if i.role != "tool.output"]
    assert links == [
        ("agent.tool_call", [2], None),
        ("agent.delegation", [2, 6], "kid-a"),
        ("agent.tool_call", [2], None),
        ("agent.delegation", [2, 3], "kid-b"),
        ("subagent.report", [5], "kid-b"),
        ("subagent.report", [7], "kid-a"),
    ]
    # product subagents report a job, not a Session
    job = _result("c1", "started background subagent job subagent-1")
    codex = {"prompt": "x", "run_in_background": True}
    draft = _draft(*_turn(1, _assistant_calls(("c1", "subagent_codex", codex)), job))
    assert all(i.session_ref is None for i in draft.items)


def test_a_max_tokens_end_keeps_the_truncation_fact() -> None:
    draft = _draft(*_turn(1, _prompt("go"), end={"kind": "max-tokens"}))
    (loop,) = draft.loops
    assert loop.outcome == "completed"
    assert [(i.role, i.records) for i in draft.items] == [
        ("human.request", [2]),
        ("runtime.notice", [3]),
    ]
    assert "max-tokens" in draft.items[1].value["text"]


def test_usage_is_counted_once_per_call() -> None:
    usage = {"inputTokens": 10, "outputTokens": 2, "cacheReadTokens": 5, "reasoningTokens": 1}
    failed = {"inputTokens": 7, "outputTokens": 0}

    def chunk(u: dict[str, int]) -> dict[str, Any]:
        return {
            "type": "assistant/chunk",
            "data": {"turn": 1, "step": 1, "chunk": {"type": "usage", "usage": u}},
        }

    message = {
        "type": "assistant/message",
        "data": {"turn": 1, "step": 1, "usage": usage, "message": {"content": []}},
    }
    draft = _draft(*_turn(1, chunk(failed), chunk(usage), message, end={"kind": "completed"}))
    (loop,) = draft.loops
    assert [(s.input, s.output, s.cached, s.reasoning) for s in loop.usage] == [
        (7, 0, None, None),  # the failed attempt (no message claimed it)
        (15, 2, 5, 1),  # the step, once, input normalised to include cache reads
    ]


def test_range_encoded_source_event_seqs_expand() -> None:
    assert _seqs([1, [3, 6], 9, "x", [8]]) == {1, 3, 4, 5, 6, 9}


def test_claims_dsh_headers_only() -> None:
    assert DshAdapter.claims([HEADER])
    pi = {"type": "session", "version": 3, "id": "x", "timestamp": "2026-01-01T00:00:00Z"}
    assert not DshAdapter.claims([pi])
    assert not DshAdapter.claims([{"type": "turn/start", "data": {"turn": 1}}])
    assert not DshAdapter.claims([json.loads('{"type": "session", "id": "x", "createdAt": true}')])


# --------------------------------------------------------------------------------------------
# The generated set against what only dsh's ground truth states (the rest: tests/corpus/
# test_expect.py, the same for every runtime)


@pytest.fixture(scope="module")
def generated_dsh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated dsh folder built once (the shared corpus's, else the committed copies)."""
    dataset = tmp_path_factory.mktemp("dsh-generated") / "ds"
    build_folder("dsh", dataset)
    return dataset


def _dsh_manifest() -> list[dict[str, Any]]:
    found = manifest("dsh")
    assert found is not None, "the generated dsh folder has no manifest.json"
    return list(found["sessions"])


def _mock_requests(instance: str) -> list[dict[str, Any]]:
    path = generated("dsh") / instance / "_gen" / "mock-responses.jsonl"
    lines = path.read_text("utf-8").splitlines() if path.is_file() else []
    return sorted((json.loads(line) for line in lines if line.strip()), key=lambda r: r["seq"])


def _compaction_calls(session: dict[str, Any]) -> dict[int, int]:
    """turn index -> how many compaction summariser calls the model served during it.

    The model served the main session's steps in order (threads ``main`` and ``post-compact``,
    answered ``ok``), so the k-th such request is the manifest's k-th step of the session; a
    compaction call belongs to the turn of the step served before it. (Subagent children share
    the instance's record under their own thread and compact nothing here.)"""
    if session["role"] != "main":
        return {}
    steps = [t["index"] for t in session["turns"] for _ in t["requests"]]
    out: dict[int, int] = {}
    served = 0
    for request in _mock_requests(session["instance"]):
        if request["result"] != "ok":
            continue
        if request["thread"] in ("main", "post-compact"):
            served += 1
        elif request["thread"] == "compact" and served:
            out[steps[served - 1]] = out.get(steps[served - 1], 0) + 1
    assert served == len(steps), f"{session['file']}: served steps and manifest steps differ"
    return out


def test_generated_compaction_calls_are_counted() -> None:
    """The summariser calls dsh makes inside a turn (the model's own record of them) are calls
    of that turn's Loop in the ground truth, beside the manifest's steps; the set has some."""
    expected = {s["native_session_id"]: s for s in (expect("dsh") or {"sessions": []})["sessions"]}
    compactions = 0
    for session in _dsh_manifest():
        extra = _compaction_calls(session)
        compactions += sum(extra.values())
        loops = {str(loop["index"]): loop for loop in expected[session["session_id"]]["loops"]}
        for turn in session["turns"]:
            calls = len(turn["requests"]) + extra.get(turn["index"], 0)
            assert len(loops[str(turn["index"])]["calls"]) == calls, (session["file"], turn)
    assert compactions >= 2


def test_every_generated_session_file_is_a_zstd_source(generated_dsh: Path) -> None:
    files = {str((generated("dsh") / s["file"]).resolve()) for s in _dsh_manifest()}
    by_locator = {s["locator"]: s for s in query(generated_dsh, "SELECT * FROM sources")}
    assert files <= set(by_locator)
    assert {by_locator[f]["compression"] for f in files} == {"zstd"}
    assert {by_locator[f]["runtime"] for f in files} == {"dsh"}


def test_generated_loops_are_dsh_turns(generated_dsh: Path) -> None:
    """A Loop's native id is its dsh turn number; a subagent's task opens its Loop as a Record
    (no delegation, no human request in the child); a subagent settlement opens one with the
    report; the session's last final answer is the manifest's."""
    sessions = {
        r["native_id"]: r["session_id"]
        for r in query(generated_dsh, "SELECT session_id, native_id FROM sessions")
    }
    loops: dict[int, list[dict[str, Any]]] = {}
    for row in query(
        generated_dsh,
        "SELECT l.session_id, l.native_id, list(i.semantic.role ORDER BY i.loop_position) AS roles,"
        " list(i.semantic.text.text.value ORDER BY i.loop_position) "
        "FILTER (WHERE i.semantic.role = 'agent.final_answer') AS finals "
        "FROM loops l JOIN items i USING (loop_id) "
        "GROUP BY l.session_id, l.session_position, l.native_id "
        "ORDER BY l.session_id, l.session_position",
    ):
        loops.setdefault(row["session_id"], []).append(row)
    for session in _dsh_manifest():
        published = loops[sessions[session["session_id"]]]
        assert len(published) == len(session["turns"]), session["file"]
        for turn, loop in zip(session["turns"], published, strict=True):
            where = f"{session['file']} turn {turn['index']} ({turn['trigger']})"
            assert loop["native_id"] == str(turn["index"]), where
            if turn["trigger"] == "agent-task":
                assert "agent.delegation" not in loop["roles"], where
                assert "human.request" not in loop["roles"], where
            elif turn["trigger"] != "user":
                assert "human.request" not in loop["roles"], where
                assert loop["roles"][0] == "subagent.report", where
        answers = [a for loop in published for a in loop["finals"] or []]
        assert (answers[-1] if answers else None) == session["final_answer"], session["file"]
