"""The compiled install behaves as its own modules do as pure Python: on traces of every runtime
whose values were swapped for values of other JSON types, both publish the same facts.

mypyc checks a value against its annotation at run time, where Python lets any value through;
an annotation narrower than what a runtime's JSON can hold would fail a source only in the
compiled build. Each file here is a real trace with some values replaced (a string by a
number, an object by a list, a value by null…); both builds index the same files in child
processes and must agree on every source's outcome and on every published row.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import traceidx
from tests.support.files import WITH_CORPUS
from tests.support.mutation import recognised_files, write_variants

pytestmark = pytest.mark.skipif(
    not traceidx.compiled(), reason="compares the compiled install with its pure modules"
)

VARIANTS = 4  # mutated copies of each recognised corpus file
MAX_FILE_BYTES = 400_000

SUMMARY = """
import hashlib, json, sys
from pathlib import Path
import pyarrow.parquet as pq
import traceidx
from traceidx.pipeline.job import build
from traceidx.store.dataset import read_manifest
traces, dataset = Path(sys.argv[1]), Path(sys.argv[2])
report = build([traces], dataset, jobs=1)
out = {"compiled": traceidx.compiled(), "sources": {}, "tables": {}}
for r in report.results:
    where = str(Path(r.locator).relative_to(traces))
    out["sources"][where] = [r.state, r.reason if r.state != "failed" else None]
parts = read_manifest(dataset).parts
for table in ("sources", "records", "sessions", "loops", "items"):
    rows = []
    for part in parts.values():
        if table in part:
            rows += [json.dumps(row, sort_keys=True, default=str)
                     for row in pq.read_table(dataset / part[table].path).to_pylist()]
    digest = hashlib.sha256("\\n".join(sorted(rows)).encode()).hexdigest()
    out["tables"][table] = [len(rows), digest]
print(json.dumps(out))
"""


def _summary(home: Path, traces: Path, dataset: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", SUMMARY, str(traces), str(dataset)],
        capture_output=True,
        text=True,
        cwd=home,
        env={**os.environ, "PYTHONPATH": str(home)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_compiled_and_pure_publish_the_same_facts(tmp_path: Path) -> None:
    installed = Path(traceidx.__file__).resolve().parent
    pure = tmp_path / "pure"
    shutil.copytree(
        installed, pure / "traceidx", ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__")
    )
    assert write_variants(recognised_files(MAX_FILE_BYTES), tmp_path / "traces", VARIANTS) > 200
    compiled = _summary(installed.parent, tmp_path / "traces", tmp_path / "compiled-ds")
    expected = _summary(pure, tmp_path / "traces", tmp_path / "pure-ds")
    assert compiled["compiled"] and not expected["compiled"]
    differ = {
        where: (state, expected["sources"].get(where))
        for where, state in compiled["sources"].items()
        if state != expected["sources"].get(where)
    }
    assert not differ, differ
    assert compiled["tables"] == expected["tables"]
    # the mutated traces still hold many facts (fewer from the committed traces alone)
    assert compiled["tables"]["items"][0] > (10_000 if WITH_CORPUS else 5_000)
