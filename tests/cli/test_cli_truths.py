"""What the command line says is true, and a mistake is refused in one line.

Run as a user runs it (a child process, real files): a file that is no trace is said to be
skipped (not kept) and publishes no generation; `schema` names every registered runtime;
`demo --help` names the demo's own default dataset; options that do not apply and values
that mean nothing are refused (exit 2); a usage error is one line, not the usage block.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.files import FIXTURES, traceidx_cli
from traceidx import runtimes

TRACES = str(FIXTURES / "generated" / "pi")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("truths") / "dataset"
    done = traceidx_cli("build", "--dataset", str(where), TRACES)
    assert done.returncode == 0, done.stderr
    return where


def _one_line(done: subprocess.CompletedProcess[str], *words: str) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert all(word in lines[0] for word in words), lines[0]
    assert "Traceback" not in done.stderr and "usage:" not in done.stderr
    return lines[0]


def test_a_file_that_is_no_trace_is_skipped_and_publishes_nothing(
    dataset: Path, tmp_path: Path
) -> None:
    hostname = tmp_path / "hostname"  # as /etc/hostname: one line, not JSON
    hostname.write_text("build-machine\n")
    manifest = dataset / "manifest.json"
    before = manifest.read_bytes(), manifest.stat().st_mtime_ns
    done = traceidx_cli("build", "--dataset", str(dataset), str(hostname))
    assert done.returncode == 0, done.stderr
    assert "malformed record" not in done.stderr + done.stdout  # none was kept
    assert "skipped 1: no adapter recognises its structure" in done.stdout
    assert done.stdout.startswith(f"dataset {dataset}: unchanged at generation 1\n")
    assert (manifest.read_bytes(), manifest.stat().st_mtime_ns) == before
    again = traceidx_cli("build", "--dataset", str(dataset), "--format", "json", str(hostname))
    summary = json.loads(again.stdout)
    assert summary["published"] is False and summary["generation"] == 1
    assert summary["skipped"] == 1 and summary["warnings"] == []


def test_a_malformed_line_of_an_indexed_trace_is_said_to_be_kept(tmp_path: Path) -> None:
    trace = tmp_path / "session.jsonl"
    good = (FIXTURES / "generated" / "pi").glob("*.jsonl")
    lines = next(iter(sorted(good))).read_bytes().splitlines(keepends=True)
    trace.write_bytes(lines[0] + b"not json\n" + b"".join(lines[1:]))
    done = traceidx_cli("build", "--dataset", str(tmp_path / "dataset"), str(trace))
    assert done.returncode == 0, done.stderr
    assert f"{trace}:2: line is not valid JSON; kept as a malformed record" in done.stderr


def test_schema_names_every_registered_runtime() -> None:
    done = traceidx_cli("schema", "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    described = next(
        r["description"] for r in rows if (r["table"], r["column"]) == ("sources", "runtime")
    )
    names = runtimes.names()
    assert described == f"program that wrote the trace: {', '.join(names[:-1])} or {names[-1]}"


def test_demo_help_names_the_demos_own_default_dataset() -> None:
    done = traceidx_cli("demo", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "(default: a folder named dataset in the demo corpus folder)" in text
    assert "XDG_DATA_HOME" not in text


def test_report_html_takes_no_format(dataset: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    base = ("report", "html", "--dataset", str(dataset), "--output", str(page))
    _one_line(traceidx_cli(*base, "--format", "json"), "--format does not apply", "report html")
    _one_line(traceidx_cli(*base, "--wide"), "--wide does not apply", "report html")
    assert not page.exists()
    csv = traceidx_cli("report", "usage", "--dataset", str(dataset), "--format", "csv")
    assert csv.returncode == 0 and csv.stdout.startswith("period,")  # other reports take it


def test_search_refuses_a_role_that_is_none(dataset: Path) -> None:
    base = ("search", "the", "--dataset", str(dataset))
    line = _one_line(traceidx_cli(*base, "--role", "nonsense"), "'nonsense'", "human")
    assert line.endswith("(see traceidx search --help)")
    for role in ("human", "human.request"):
        assert traceidx_cli(*base, "--role", role).returncode == 0


@pytest.mark.parametrize(
    ("args", "command", "words"),
    [
        (("build", "--jobs", "0"), "traceidx build", ("--jobs", "'0'")),
        (("frobnicate",), "traceidx", ("invalid choice", "frobnicate")),
        ((), "traceidx", ("required",)),
        (("report", "nonsense"), "traceidx report", ("invalid choice", "nonsense")),
        (("sql",), "traceidx sql", ("required", "query")),
        (("build", "--runtime", "nonsense"), "traceidx build", ("--runtime", "nonsense")),
    ],
)
def test_a_usage_error_is_one_line(args: tuple[str, ...], command: str, words: tuple[str]) -> None:
    line = _one_line(traceidx_cli(*args), *words)
    assert line.startswith("traceidx: error: ") and line.endswith(f"(see {command} --help)")
