"""Golden tests: chosen trace files projected to readable expected data files.

Cases are listed in ``tests/fixtures/golden/<runtime>/cases.json`` as ``name -> path`` or ``name ->
[paths]``. A path starting with ``tests/`` is a committed fixture (``tests/fixtures/generated``
holds copies of the shared corpus's generated traces, ``tests/fixtures/handwritten`` and
``tests/fixtures/data`` typed ones): ``test_golden`` walks every such case of every runtime, so
adding a case is adding a fixture and a line there and generating its file with ``pytest
tests/corpus/test_golden.py --update-golden``, not writing test code. Any other path is relative to
the shared corpus (traces of ``public/`` that may not be copied into the repository):
``test_golden_public`` checks those cases in one test when the corpus is present. Expected files use
line numbers (source positions) instead of opaque ids so a reviewer can read them against the trace,
and order never depends on ids: ids hash the file's location, which differs between machines.
"""

from __future__ import annotations

import json
import operator
from pathlib import Path
from typing import Any

import pytest

from tests.support.files import GOLDEN, ROOT, corpus_path
from tests.support.golden import project_files
from traceidx.runtimes import RUNTIMES

REPO = ROOT
CASES = {
    path.parent.name: json.loads(path.read_text()) for path in sorted(GOLDEN.glob("*/cases.json"))
}


def _committed(spec: str | list[str]) -> bool:
    return all(s.startswith("tests/") for s in ([spec] if isinstance(spec, str) else spec))


PARAMS = [
    (rt, name) for rt, cases in CASES.items() for name, spec in cases.items() if _committed(spec)
]
CORPUS_CASES = [
    (rt, name)
    for rt, cases in CASES.items()
    for name, spec in cases.items()
    if not _committed(spec)
]


def _case_paths(spec: str | list[str]) -> list[Path]:
    specs = [spec] if isinstance(spec, str) else spec
    return [REPO / s if s.startswith("tests/") else corpus_path(*s.split("/")) for s in specs]


def _projected(runtime: str, name: str, dataset: Path, update: bool) -> tuple[Any, Any]:
    """The case's projection and its expected file (rewritten first when `update`)."""
    actual = project_files(_case_paths(CASES[runtime][name]), dataset)
    expected_file = GOLDEN / runtime / f"{name}.json"
    text = json.dumps(actual, indent=1, ensure_ascii=False, default=str) + "\n"
    if update:
        expected_file.write_text(text, encoding="utf-8")
    assert expected_file.exists(), f"no golden file yet: run pytest {__file__} --update-golden"
    return json.loads(text), json.loads(expected_file.read_text(encoding="utf-8"))


def test_every_runtime_has_committed_cases() -> None:
    assert {rt for rt, _ in PARAMS} == {f for rt in RUNTIMES.values() for f in rt.fixtures}
    for runtime, name in PARAMS + CORPUS_CASES:
        assert (GOLDEN / runtime / f"{name}.json").exists(), (runtime, name)
    expected = {p.parent.name + "/" + p.stem for p in GOLDEN.glob("*/*.json")} - {
        f"{rt}/cases" for rt in CASES
    }
    assert expected == {f"{rt}/{name}" for rt, name in PARAMS + CORPUS_CASES}, "orphan golden files"


@pytest.mark.parametrize(("runtime", "name"), PARAMS)
def test_golden(runtime: str, name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    update = request.config.getoption("--update-golden")
    actual, expected = _projected(runtime, name, tmp_path / "ds", update)
    assert actual == expected


def test_golden_public(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The cases read from the shared corpus's ``public/`` (skips without the corpus)."""
    corpus_path("public")
    update = request.config.getoption("--update-golden")
    differ = [
        f"{rt}/{name}"
        for rt, name in CORPUS_CASES
        if operator.ne(*_projected(rt, name, tmp_path / f"{rt}-{name}", update))
    ]
    assert not differ, f"golden cases that differ: {differ}"
