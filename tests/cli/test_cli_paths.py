"""The command line refuses bad paths cleanly and prints ids that can be pasted back.

Run as a user runs it (a child process): a dataset path that is a file, a trace path that
does not exist and an HTML report into a folder that does not exist are refused in one line
with exit code 2, and nothing is written; the HTML report is readable by its owner only, as
the dataset is; an id printed by `sql` in a table is accepted by `inspect` as printed.
"""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

from tests.support.files import FIXTURES, traceidx_cli

TRACES = str(FIXTURES / "generated" / "pi")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("paths") / "dataset"
    done = traceidx_cli("build", "--dataset", str(where), TRACES)
    assert done.returncode == 0, done.stderr
    return where


def _refused(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and all(word in lines[0] for word in words), lines
    assert "Traceback" not in done.stderr


def test_a_dataset_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("mine")
    _refused(traceidx_cli("build", "--dataset", str(target), TRACES), str(target), "not a folder")
    assert target.read_text() == "mine"


def test_a_trace_path_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    dataset, missing = tmp_path / "dataset", tmp_path / "no" / "such"
    _refused(traceidx_cli("build", "--dataset", str(dataset), str(missing)), str(missing))
    assert not dataset.exists()  # no empty generation published


def test_html_report_needs_its_folder_and_is_private(dataset: Path, tmp_path: Path) -> None:
    pytest.importorskip("altair")
    nowhere = tmp_path / "no" / "such" / "report.html"
    done = traceidx_cli("report", "html", "--dataset", str(dataset), "--output", str(nowhere))
    _refused(done, str(nowhere.parent), "not a folder (no such folder)")
    assert not nowhere.parent.parent.exists()  # no folder made
    output = tmp_path / "report.html"
    done = traceidx_cli("report", "html", "--dataset", str(dataset), "--output", str(output))
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(output.stat().st_mode) == 0o600


def test_printed_ids_are_accepted_back(dataset: Path) -> None:
    query = "SELECT record_id, source_position FROM records ORDER BY record_id LIMIT 3"
    done = traceidx_cli("sql", "--dataset", str(dataset), query)
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[2].split()[0]  # under the header and its rule
    assert first.isdigit() and len(first) > 6  # as stored: no separators
    for typed in (first, f"{int(first):,}"):  # also as older tables printed it
        shown = traceidx_cli("inspect", "--dataset", str(dataset), typed)
        assert shown.returncode == 0, shown.stderr
        assert first in shown.stdout


def test_a_dataset_of_another_schema_asks_for_a_build_and_gets_it(tmp_path: Path) -> None:
    """Tables written by another traceidx version cannot be queried beside the views of this
    one: a query says so in one line (exit 2) instead of a binder error, and a build brings
    the dataset up to date."""
    import json
    import shutil

    where = tmp_path / "dataset"
    assert traceidx_cli("build", "--dataset", str(where), TRACES).returncode == 0
    manifest = where / "manifest.json"
    raw = json.loads(manifest.read_text("utf-8"))
    raw["settings"]["schema"] = "0123456789abcdef"  # as an older version wrote it
    manifest.write_text(json.dumps(raw), "utf-8")
    _refused(traceidx_cli("sql", "--dataset", str(where), "SELECT 1"), "another version", "build")
    _refused(traceidx_cli("report", "usage", "--dataset", str(where)), "another version")
    rebuilt = traceidx_cli("build", "--dataset", str(where), TRACES)
    assert rebuilt.returncode == 0, rebuilt.stderr
    done = traceidx_cli("sql", "--dataset", str(where), "--format", "csv", "SELECT 1 AS one")
    assert done.returncode == 0 and done.stdout.splitlines() == ["one", "1"]
    shutil.rmtree(where)
