"""Traces and datasets on object storage: an S3-compatible endpoint on 127.0.0.1 (moto's
standalone server, the `s3` fixture of tests/conftest.py), pyarrow's own S3 client and boto3
talking to it.

The committed fixtures are uploaded to a bucket, built with the Ray engine into ``s3://…`` and
queried with ``traceidx sql --dataset s3://…``; the results are compared with a local build."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.files import FIXTURES, s3_bucket, traceidx_cli

pytest.importorskip("moto", reason="the dev extra (moto[server]) is not installed")
pytest.importorskip("boto3", reason="the s3 extra (boto3) is not installed")

import pyarrow.fs as pafs

from traceidx.analysis.query import connect
from traceidx.errors import GenerationTaken
from traceidx.pipeline.job import build
from traceidx.store.open import reader

TRACES = FIXTURES / "generated"
#: what "the same loops and tokens" means: every loop's runtime, model, times, outcome and usage
#: (ids are functions of the locator, which differs between a file and an object); a runtime's
#: database (a source ``<database>#<session>``) and a session folder (``<folder>/``) are read
#: on local disk only, not as objects
LOOPS_AND_TOKENS = (
    "SELECT runtime, model, started_at, ended_at, outcome, input, cached, cache_write, output, "
    "reasoning, total FROM loop_usage WHERE session_id NOT IN (SELECT i.session_id FROM items "
    "AS i JOIN sources AS s USING (source_id) WHERE contains(s.locator, '#') "
    "OR s.locator LIKE '%/') ORDER BY ALL"
)


def _upload(local: Path, uri: str) -> None:
    fs, path = pafs.FileSystem.from_uri(uri)
    pafs.copy_files(
        str(local), path, source_filesystem=pafs.LocalFileSystem(), destination_filesystem=fs
    )


def _summary(result: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    summary: dict[str, object] = json.loads(result.stdout)
    return summary


def _sql(env: dict[str, str], dataset: str, query: str) -> list[dict[str, object]]:
    result = traceidx_cli("sql", "--dataset", dataset, "--format", "json", query, env=env)
    assert result.returncode == 0, result.stderr
    rows: list[dict[str, object]] = json.loads(result.stdout)
    return rows


@pytest.fixture(scope="module")
def local_loops(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, object]]:
    dataset = tmp_path_factory.mktemp("local") / "dataset"
    _summary(traceidx_cli("build", "--dataset", str(dataset), "--format", "json", str(TRACES)))
    result = traceidx_cli("sql", "--dataset", str(dataset), "--format", "json", LOOPS_AND_TOKENS)
    assert result.returncode == 0, result.stderr
    rows: list[dict[str, object]] = json.loads(result.stdout)
    assert len(rows) > 20 and any(row["total"] for row in rows)  # not vacuous
    return rows


def test_a_ray_build_from_a_bucket_into_a_bucket_equals_a_local_build(
    s3: dict[str, str], local_loops: list[dict[str, object]]
) -> None:
    s3_bucket(s3, "team")
    _upload(TRACES, "s3://team/traces")
    dataset = "s3://team/index"
    summary = _summary(
        traceidx_cli(
            "build",
            *("--dataset", dataset, "--engine", "ray", "--jobs", "2", "--format", "json"),
            "s3://team/traces",
            env=s3,
            timeout=600,
        )
    )
    assert summary["published"] is True and summary["failed"] == 0
    assert _sql(s3, dataset, LOOPS_AND_TOKENS) == local_loops
    sources = _sql(s3, dataset, "SELECT locator FROM sources ORDER BY 1")
    assert sources and all(str(s["locator"]).startswith("s3://team/traces/") for s in sources)
    zstd = _sql(s3, dataset, "SELECT count(*) AS n FROM sources WHERE compression = 'zstd'")
    assert zstd[0]["n"] > 0  # compressed objects were streamed and decoded too

    # a record re-read from its object and verified, in a plain and in a zstd source
    for compression in ("none", "zstd"):
        record = _sql(
            s3,
            dataset,
            "SELECT max(record_id) AS id FROM records JOIN sources USING (source_id) "
            f"WHERE compression = '{compression}'",
        )[0]["id"]
        args = ("inspect", str(record), "--dataset", dataset, "--format", "json")
        inspected = traceidx_cli(*args, env=s3)
        assert inspected.returncode == 0, inspected.stderr
        assert json.loads(inspected.stdout)["verification"] == "verified"

    fs, root = pafs.FileSystem.from_uri(dataset)
    manifests = fs.get_file_info(pafs.FileSelector(f"{root}/manifests"))
    assert [m.base_name for m in manifests] == ["000000000001.json"]

    status = traceidx_cli("status", "--dataset", dataset, env=s3)
    assert status.returncode == 0, status.stderr
    assert "generation 1 " in status.stdout
    report = traceidx_cli("report", "usage", "--dataset", dataset, "--format", "csv", env=s3)
    assert report.returncode == 0, report.stderr
    assert len(report.stdout.splitlines()) > 1

    # the library reads it too: connect() and the Polars scans
    import traceidx

    con = connect(dataset)
    assert con.execute("SELECT count(*) FROM loops").fetchone() == (len(local_loops),)
    frame = traceidx.scan_loop_usage(dataset).collect()
    assert frame.height == len(local_loops)
    offline = con.execute(
        "SELECT value FROM duckdb_settings() WHERE name = 'autoinstall_known_extensions'"
    ).fetchone()
    assert offline == ("false",)


def test_an_appended_object_alone_is_read_again(s3: dict[str, str], tmp_path: Path) -> None:
    s3_bucket(s3, "grow")
    _upload(TRACES / "codex", "s3://grow/codex")
    dataset = "s3://grow/index"
    first = _summary(
        traceidx_cli("build", "--dataset", dataset, "--format", "json", "s3://grow", env=s3)
    )
    indexed = first["indexed"]
    assert isinstance(indexed, int) and indexed > 2

    fs, _ = pafs.FileSystem.from_uri("s3://grow")
    name = sorted(p.name for p in (TRACES / "codex").glob("*.jsonl"))[0]
    key = f"grow/codex/{name}"
    with fs.open_input_stream(key) as stream:
        data = stream.read()
    lines = data.splitlines(keepends=True)
    with fs.open_output_stream(key) as out:  # an object is replaced whole: the appended one
        out.write(data + lines[-1])
    second = _summary(
        traceidx_cli("build", "--dataset", dataset, "--format", "json", "s3://grow", env=s3)
    )
    assert second["published"] is True and second["generation"] == 2
    assert second["actions"] == {"appended": 1, "unchanged": indexed - 1}
    third = _summary(
        traceidx_cli("build", "--dataset", dataset, "--format", "json", "s3://grow", env=s3)
    )
    assert third["published"] is False and third["actions"] == {"unchanged": indexed}

    fs.delete_file(key)  # the object is gone: its facts stay until prune removes them
    pruned = traceidx_cli("prune", "--dataset", dataset, env=s3)
    assert pruned.returncode == 0, pruned.stderr
    assert pruned.stdout.startswith("removed the facts of 1 vanished source; generation 3")
    assert f"s3://{key}" in pruned.stdout
    left = _sql(s3, dataset, "SELECT count(*) AS n FROM sources")
    assert left[0]["n"] == indexed - 1


def test_a_build_that_loses_the_generation_race_publishes_nothing(
    s3: dict[str, str], tmp_path: Path
) -> None:
    s3_bucket(s3, "race")
    _upload(TRACES / "codex", "s3://race/codex")
    _upload(TRACES / "pi", "s3://race/pi")
    dataset = "s3://race/index"
    _summary(traceidx_cli("build", "--dataset", dataset, "--format", "json", "s3://race/codex"))
    before = _sql(s3, dataset, LOOPS_AND_TOKENS)

    rival: list[subprocess.CompletedProcess[str]] = []

    def publish_first(done: int, total: int, outcome: object) -> None:
        if not rival:  # another builder publishes generation 2 while this one runs
            args = ("build", "--dataset", dataset, "--format", "json", "s3://race/codex")
            rival.append(traceidx_cli(*args, "--text-limit", "1000", env=s3))

    with pytest.raises(GenerationTaken) as lost:
        build(["s3://race/pi"], dataset, jobs=1, progress=publish_first)
    message = str(lost.value)
    assert message.startswith(f"{dataset}: generation 2 was published by another build")
    assert "run the build again" in message and "\n" not in message
    winner = _summary(rival[0])
    assert winner["generation"] == 2
    # nothing lost: the winner's generation is current and whole, with every loop it had
    status = traceidx_cli("status", "--dataset", dataset, env=s3)
    assert status.returncode == 0, status.stderr
    assert "generation 2 " in status.stdout
    assert len(_sql(s3, dataset, LOOPS_AND_TOKENS)) == len(before)
    assert not _sql(s3, dataset, "SELECT * FROM sources WHERE runtime = 'pi'")

    again = _summary(
        traceidx_cli("build", "--dataset", dataset, "--format", "json", "s3://race/pi", env=s3)
    )
    assert again["generation"] == 3 and again["failed"] == 0
    assert _sql(s3, dataset, "SELECT count(*) AS n FROM sources WHERE runtime = 'pi'")[0]["n"]
    # the loser's uploaded parts were garbage, removed by the next publication
    manifest = reader(dataset).read()
    assert manifest is not None
    named = {f.path for f in manifest.part_files()} | set(manifest.previous)
    fs, root = pafs.FileSystem.from_uri(dataset)
    parts = {
        info.path.removeprefix(f"{root}/")
        for info in fs.get_file_info(pafs.FileSelector(root, recursive=True))
        if info.base_name.endswith(".parquet")
    }
    assert parts == named


def test_a_bucket_root_is_a_trace_root(s3: dict[str, str], tmp_path: Path) -> None:
    s3_bucket(s3, "traces")
    _upload(TRACES / "pi", "s3://traces/")
    dataset = tmp_path / "dataset"  # a local dataset of remote traces
    summary = _summary(
        traceidx_cli("build", "--dataset", str(dataset), "--format", "json", "s3://traces/")
    )
    expected = len(list((TRACES / "pi").rglob("*.jsonl")))
    assert summary["indexed"] == expected > 0
    rows = _sql(s3, str(dataset), "SELECT locator FROM sources ORDER BY 1")
    assert all(str(r["locator"]).startswith("s3://traces/") for r in rows)


def test_a_missing_bucket_is_a_clear_problem(s3: dict[str, str], tmp_path: Path) -> None:
    result = traceidx_cli(
        "build", "--dataset", str(tmp_path / "d"), "s3://no-such-bucket/traces", env=s3
    )
    assert result.returncode == 1
    assert "s3://no-such-bucket/traces: " in result.stderr
    assert "Traceback" not in result.stderr
