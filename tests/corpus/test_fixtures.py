"""The committed fixtures against what they stand for.

Each runtime's committed ground truth (``tests/fixtures/generated/<runtime>/manifest.json``)
names exactly the committed traces; with the shared corpus present, those traces are
byte-identical copies of its generated ones and that ground truth is the corpus's, filtered to
them (`tests/fixtures/README.md`).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.facts import committed_traces, in_session_folder, session_folders, trace_files
from tests.support.files import CORPUS, FIXTURES, WITH_CORPUS, fixture_path
from traceidx.runtimes import RUNTIMES as REGISTRY
from traceidx.runtimes import names

#: the generated set's folders of trace files (not a database) whose committed copy keeps its
#: ground truth (`manifest.json`)
RUNTIMES = tuple(
    folder
    for name in names()
    for folder in REGISTRY[name].fixtures
    if (FIXTURES / "generated" / folder / "manifest.json").is_file()
    and trace_files(FIXTURES / "generated" / folder)
)


def _manifest(root: Any, runtime: str) -> dict[str, Any]:
    return json.loads((root / "generated" / runtime / "manifest.json").read_text("utf-8"))


def _file(runtime: str, session: dict[str, Any]) -> str:
    """A manifest session's trace, relative to the runtime's folder: its ``file``, or the
    ``dir`` of a session its runtime keeps as a folder (Mistral Vibe's)."""
    trace = session["file"] if "file" in session else session["dir"]
    return str(trace).removeprefix(f"{runtime}/")


def _traces(runtime: str) -> list[str]:
    """The committed traces of a runtime, relative to its folder: its trace files, and its
    session folders in place of the files in them."""
    folder = FIXTURES / "generated" / runtime
    folders = session_folders(folder)
    files = [p for p in committed_traces(runtime) if not in_session_folder(p, folders)]
    return [str(p.relative_to(folder)) for p in files + folders]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_the_committed_ground_truth_names_exactly_the_committed_traces(runtime: str) -> None:
    manifest = json.loads(fixture_path("generated", runtime, "manifest.json").read_text("utf-8"))
    folder = FIXTURES / "generated" / runtime
    traces = set(_traces(runtime))
    named = [_file(runtime, s) for s in manifest["sessions"]]
    assert len(named) == len(set(named)) >= 3
    # a subagent's own trace, which a manifest may name only among its parent's files
    children = {
        str(f).removeprefix(f"{runtime}/")
        for s in manifest["sessions"]
        for f in s.get("subagent_files", [])
    }
    assert set(named) | children == traces
    if "instances" in manifest:
        assert {i["name"] for i in manifest["instances"]} == {
            s["instance"] for s in manifest["sessions"]
        }
    if WITH_CORPUS:
        corpus = _manifest(CORPUS, runtime)
        by_file = {_file(runtime, s): s for s in corpus["sessions"]}
        assert manifest["sessions"] == [by_file[f] for f in named]
        assert [s for s in corpus["sessions"] if _file(runtime, s) in traces] == manifest[
            "sessions"
        ]
        if "instances" in corpus:
            names = {s["instance"] for s in manifest["sessions"]}
            assert manifest["instances"] == [i for i in corpus["instances"] if i["name"] in names]
        rest = {k for k in corpus if k not in ("sessions", "instances")}
        assert {k: manifest[k] for k in rest} == {k: corpus[k] for k in rest}
        for name in traces:
            copy = folder / name
            original = CORPUS / "generated" / runtime / name
            if copy.is_dir():  # a session folder: the same files, byte for byte
                inside = sorted(str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file())
                assert inside == sorted(
                    str(p.relative_to(original)) for p in original.rglob("*") if p.is_file()
                ), name
                for member in inside:
                    data = (copy / member).read_bytes()
                    assert data == (original / member).read_bytes(), f"{name}/{member}"
                continue
            assert copy.read_bytes() == original.read_bytes(), name
        for log in (p for p in folder.glob("*/_gen/**/*") if p.is_file()):
            original = CORPUS / "generated" / runtime / log.relative_to(folder)
            assert log.read_bytes() == original.read_bytes(), log
