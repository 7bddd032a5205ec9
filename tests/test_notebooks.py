"""The notebooks run top to bottom (each asserts on what it shows) and keep their charts."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from tests.support.files import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXECUTE = ROOT / "notebooks" / "execute.py"


def _load_executor() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("notebook_execute", EXECUTE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path: Path, tmp_path: Path) -> None:
    executor = _load_executor()
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    book = executor.execute(copy)  # type: ignore[attr-defined]
    errors = [
        o for c in book.cells for o in c.get("outputs", []) if o.get("output_type") == "error"
    ]
    assert errors == []


def test_saved_notebooks_show_at_least_three_charts() -> None:
    executor = _load_executor()
    charts = sum(executor.images(nbformat.read(p, as_version=4)) for p in NOTEBOOKS)  # type: ignore[attr-defined]
    assert len(NOTEBOOKS) >= 3 and charts >= 3
    for path in NOTEBOOKS:
        book = nbformat.read(path, as_version=4)
        code = [c for c in book.cells if c.cell_type == "code"]
        assert all(c.get("outputs") or c.get("execution_count") for c in code), path.name
