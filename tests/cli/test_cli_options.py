"""Options that do not apply are refused, not ignored: one line on stderr, exit 2, nothing
written; a --model that names no call says so. Tested as a user runs the command."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.files import fixture_path, traceidx_cli
from traceidx.analysis.reports import REPORTS, report_options


@pytest.mark.parametrize(
    "args",
    [
        ("report", "models", "--group-by", "project"),
        ("report", "sessions", "--period", "week"),
        ("report", "slowest", "--limit", "-1"),
        ("report", "slowest", "--limit", "0"),
        ("prices", "--period", "week"),
        ("report", "usage", "--format", "json", "--wide"),
        ("sql", "--format", "csv", "--wide", "SELECT 1"),
    ],
)
def test_an_option_that_does_not_apply_is_refused(
    demo_dataset: Path, args: tuple[str, ...]
) -> None:
    done = traceidx_cli(*args, "--dataset", str(demo_dataset))
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert lines and any(
        flag in done.stderr for flag in ("--group-by", "--period", "--limit", "--wide")
    )


def test_report_options_are_read_from_the_reports_sql() -> None:
    assert report_options("usage") == {"limit", "period", "group_by"}
    assert report_options("slowest") == {"limit"}
    assert report_options("html") == {"limit", "period", "group_by"}
    assert all(report_options(name) <= {"limit", "period", "group_by"} for name in REPORTS)


@pytest.mark.parametrize(
    "args", [("--jobs", "0"), ("--jobs", "-2"), ("--text-limit", "0"), ("--format", "csv")]
)
def test_build_refuses_bad_counts_and_formats_and_writes_nothing(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    dataset = tmp_path / "ds"
    traces = fixture_path("generated", "codex")
    done = traceidx_cli("build", "--dataset", str(dataset), *args, str(traces))
    assert done.returncode == 2, done.stderr
    assert args[0] in done.stderr and done.stdout == ""
    assert not dataset.exists()


def test_a_model_that_names_no_call_gives_a_hint(demo_dataset: Path) -> None:
    done = traceidx_cli(
        "report", "usage", "--dataset", str(demo_dataset), "--model", "no-such-model",
        "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0
    assert done.stdout.strip() == "[]"
    assert "--model no-such-model: no model call names it; models here:" in done.stderr
