"""The CLI's layers: one output function applies the format; the domain facts it prints come
from their stages (the manifest's source states, the evidence verdict)."""

from __future__ import annotations

import json

import pytest

from traceidx.analysis.evidence import holds
from traceidx.cli.output import Document, Rows, emit
from traceidx.store.manifest import Manifest, SourceEntry


def test_a_source_status_names_why_an_indexed_source_counts_differently() -> None:
    manifest = Manifest(
        sources={
            "a": SourceEntry(state="indexed", runtime="codex"),
            "b": SourceEntry(state="indexed", runtime="codex", missing=True),
            "c": SourceEntry(state="indexed", runtime="codex", failed="torn"),
            "d": SourceEntry(state="indexed", runtime="pi", duplicate_of="a"),
            "e": SourceEntry(state="skipped"),
            "f": SourceEntry(state="indexed", runtime="codex"),
        }
    )
    assert manifest.source_states() == {
        ("codex", "indexed"): 2,
        ("codex", "missing"): 1,
        ("codex", "failed (previous facts kept)"): 1,
        ("pi", "copy (counted once)"): 1,
        ("-", "skipped"): 1,
    }


@pytest.mark.parametrize(
    ("verdict", "stands"),
    [
        ("verified", True),
        ("source missing (the file is gone; its facts stay until `traceidx prune`)", True),
        ("changed", False),
        ("unreadable (Permission denied)", False),
    ],
)
def test_evidence_holds_when_verified_or_its_source_is_gone(verdict: str, stands: bool) -> None:
    assert holds({"verification": verdict}) is stands


def test_the_human_formats_show_the_heading_and_the_reading_view(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = Rows(
        ["a", "b"],
        [(1, "x")],
        title="the title",
        heading=("(a line)",),
        human=Rows(["a"], [(1,)]),
    )
    emit(result, "table", wide=True)
    assert capsys.readouterr().out == "the title\n(a line)\na\n-\n1\n(1 row)\n"
    emit(result, "json")
    assert json.loads(capsys.readouterr().out) == [{"a": 1, "b": "x"}]
    emit(result, "csv")
    assert capsys.readouterr().out.splitlines() == ["a,b", "1,x"]


def test_a_text_view_gets_the_width_to_fit(capsys: pytest.CaptureFixture[str]) -> None:
    result = Rows(["n"], [(1,)], human=lambda width: f"width {width}\n")
    emit(result, "table", wide=True)
    assert capsys.readouterr().out == "width None\n"
    emit(result, "csv")
    assert capsys.readouterr().out.splitlines() == ["n", "1"]


def test_a_document_is_json_or_its_text(capsys: pytest.CaptureFixture[str]) -> None:
    document = Document({"k": [1]}, "k: 1\n", indent=1)
    emit(document, "json")
    assert capsys.readouterr().out == '{\n "k": [\n  1\n ]\n}\n'
    for fmt in ("table", "csv"):
        emit(document, fmt)
        assert capsys.readouterr().out == "k: 1\n"
