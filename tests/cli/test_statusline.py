"""traceidx statusline, as Claude Code runs it: JSON on stdin, one line out, fast (no data
library loaded), from a summary it has refreshed in the background when the dataset changed."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.files import fixture_path, traceidx_cli
from traceidx.analysis import summary
from traceidx.cli import statusline

ENTRY = "import sys; from traceidx.entry import main; sys.argv[0] = 'traceidx'; sys.exit(main())"


def _statusline(
    dataset: Path, stdin: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    # -P: as the installed `traceidx` script, the working directory is not on the import path
    command = [sys.executable, "-P", "-c", ENTRY, "statusline", "--dataset", str(dataset)]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60, cwd=cwd)


def _appears(path: Path, seconds: float = 60) -> bool:
    """Whether `path` exists within `seconds` (a summary is written in the background)."""
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    return path.exists()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("statusline") / "dataset"
    traces = fixture_path("generated", "claude")
    done = traceidx_cli("build", "--dataset", str(where), str(traces))
    assert done.returncode == 0, done.stderr
    return where


def test_the_line_says_the_session_today_week_and_the_burn_rate(dataset: Path) -> None:
    data = summary.compute(dataset, days=100_000)  # the fixtures are old: reach back to them
    key, (cost, _, first, last) = max(data["sessions"].items(), key=lambda kv: kv[1][0])
    session = key.split("/", 1)[1]
    stdin = {"session_id": session, "model": {"display_name": "Opus 4.5"}}
    # a moment just after the session's last call: the session's day and week hold its cost
    now = last / 1000 + 60
    text = statusline.line(stdin, data, now)
    assert text.startswith(f"Opus 4.5 · session ${cost:,.2f} (")
    assert "today $" in text and "week $" in text and "\n" not in text
    today = float(text.split("today $")[1].split(" ")[0].replace(",", ""))
    week = float(text.split("week $")[1].split(" ")[0].replace(",", ""))
    assert week >= today >= cost - 0.005
    if last - first >= 5 * 60_000:
        assert text.endswith("/h")
    other = statusline.line({"session_id": "no-such-session"}, data, now)
    assert "session" not in other and "today $" in other


def test_the_command_refreshes_its_summary_and_loads_no_data_library(
    dataset: Path, tmp_path: Path
) -> None:
    (dataset / summary.NAME).unlink(missing_ok=True)
    stdin = json.dumps({"session_id": "x", "model": {"display_name": "Opus"}})
    first = _statusline(dataset, stdin)
    assert first.returncode == 0
    assert first.stdout.startswith("Opus · traceidx: no summary yet (being computed)")
    assert _appears(dataset / summary.NAME)
    assert (dataset / summary.NAME).stat().st_mode & 0o077 == 0  # private, as the dataset
    second = _statusline(dataset, stdin)
    assert second.returncode == 0 and "today $" in second.stdout
    probe = (
        "import sys, io; sys.stdin = io.StringIO('{}'); "
        "from traceidx.cli.statusline import main; main(['--dataset', sys.argv[1]]); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pyarrow', 'duckdb', 'polars'}))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe, str(dataset)], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip().splitlines()[-1] == "[]"


def test_bad_input_still_prints_a_line(tmp_path: Path) -> None:
    done = _statusline(tmp_path / "nowhere", "not json")
    assert done.returncode == 0 and "no summary yet" in done.stdout


def test_a_build_leaves_the_numbers_for_the_first_call(tmp_path: Path) -> None:
    dataset = tmp_path / "dataset"
    done = traceidx_cli("build", "--dataset", str(dataset), str(fixture_path("generated", "pi")))
    assert done.returncode == 0, done.stderr
    shown = _statusline(dataset, json.dumps({"model": {"display_name": "Opus"}}))
    assert shown.returncode == 0
    assert shown.stdout.startswith("Opus · today $") and " · week $" in shown.stdout
    left = summary.read(dataset)  # what the build left: of the manifest it published
    assert left is not None and left["manifest"] == summary.manifest_stamp(dataset)


@pytest.mark.parametrize("shadow", ["", "raise ImportError('not traceidx')\n"])
def test_the_refresh_works_beside_a_folder_named_traceidx(
    dataset: Path, tmp_path: Path, shadow: str
) -> None:
    """`python -m` puts the working directory first on the import path: the background
    summarize must not import a folder there named traceidx (a namespace folder, or a package
    of that name)."""
    cwd = tmp_path / "project"
    (cwd / "traceidx").mkdir(parents=True)
    if shadow:
        (cwd / "traceidx" / "__init__.py").write_text(shadow)
    (dataset / summary.NAME).unlink(missing_ok=True)
    first = _statusline(dataset, "{}", cwd=cwd)
    assert first.returncode == 0 and "no summary yet (being computed)" in first.stdout
    assert _appears(dataset / summary.NAME)
    second = _statusline(dataset, "{}", cwd=cwd)
    assert second.stdout.startswith("today $"), second.stdout
