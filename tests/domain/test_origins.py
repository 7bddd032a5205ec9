"""Origins, copies counted once, and `build --redact`, through the command line.

A team's dataset gathers traces from several machines (`--origin`); the same trace file
collected twice (a copy, an earlier backup) is counted once; `--redact` replaces planted
secrets in published text while record fingerprints stay those of the source bytes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.files import DATA, fixture_path, traceidx_cli

TEMPLATE = DATA / "redact" / "pi_secrets.jsonl.template"
#: planted secrets, assembled here so that no secret-shaped string is committed
SECRETS = {
    "AWS_KEY": "AKIA" + "Q3EXAMPLE7KEY2ZA",
    "GITHUB_TOKEN": "ghp_" + "x7Kd93LmQp2ZtVb8NcRw4HyJ6sAe1FgU0oTi",
    "URL_PASSWORD": "hunter2-" + "s3cr3t",
    "ANTHROPIC_KEY": "sk-ant-" + "api03-" + "Zq8Lr2Vx6Nc0Tb4Hm7Kd1Pw5Js9Fg3Ya-" * 3 + "AA",
    "PRIVATE_KEY": "-----BEGIN RSA PRIVATE KEY-----\\n"
    + "MIIEowIBAAKCAQEA7x3kQ9vJ2mZ8pLw5bN1cR4tY6uH0sD3fG7hK9jL2nM5qP8rT\\n"
    + "-----END RSA PRIVATE KEY-----",
}
#: what the redaction of the planted trace counts, by detect-secrets type: the password is
#: replaced twice, in the command's arguments and in its parsed shell fragment
EXPECTED_REDACTED = {
    "AWS Access Key": 1,
    "Anthropic API Key": 1,
    "Basic Auth Credentials": 2,
    "GitHub Token": 1,
    "Private Key": 1,
}

TOKENS_BY_ORIGIN = """
SELECT s.origin, count(*) AS loops, sum(l.usage.input) AS input, sum(l.usage.output) AS output
FROM loops l JOIN sources s USING (source_id)
GROUP BY s.origin ORDER BY s.origin
"""


def _build(dataset: Path, *args: str) -> dict[str, Any]:
    done = traceidx_cli("build", "--dataset", str(dataset), "--format", "json", *args)
    assert done.returncode == 0, done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def _sql(dataset: Path, query: str) -> list[dict[str, Any]]:
    done = traceidx_cli("sql", "--dataset", str(dataset), "--format", "json", query)
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def _usage_by_origin(dataset: Path) -> dict[str, dict[str, Any]]:
    """`report usage --group-by origin` over all time, one row per origin."""
    done = traceidx_cli(
        "report",
        "usage",
        "--dataset",
        str(dataset),
        "--group-by",
        "origin",
        "--period",
        "month",
        "--timezone",
        "UTC",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, dict[str, Any]] = {}
    for row in json.loads(done.stdout):
        seen = out.setdefault(row["origin"], {"loops": 0, "total": 0})
        seen["loops"] += row["loops"]
        seen["total"] += row["total"] or 0
    return out


def _traces(tmp_path: Path) -> tuple[Path, Path]:
    """Two machines' trace folders: Codex rollouts and Pi sessions."""
    generated = fixture_path("generated")
    alice, bob = tmp_path / "alice", tmp_path / "bob"
    shutil.copytree(generated / "codex", alice)
    shutil.copytree(generated / "pi", bob)
    return alice, bob


def test_two_origins_and_a_copy_under_a_third(tmp_path: Path) -> None:
    alice, bob = _traces(tmp_path)
    dataset = tmp_path / "dataset"
    _build(dataset, "--origin", "alice", str(alice))
    _build(dataset, "--origin", "bob", str(bob))
    by_origin = _sql(dataset, TOKENS_BY_ORIGIN)
    assert [row["origin"] for row in by_origin] == ["alice", "bob"]
    assert all(row["loops"] > 0 and row["input"] > 0 for row in by_origin)
    before = _sql(dataset, "SELECT count(*) AS loops, sum(usage.input) AS input FROM loops")
    usage = _usage_by_origin(dataset)
    assert {o: u["loops"] for o, u in usage.items()} == {r["origin"]: r["loops"] for r in by_origin}

    # carol collected alice's traces again (a backup on a shared drive)
    carol = tmp_path / "carol"
    shutil.copytree(alice, carol)
    summary = _build(dataset, "--origin", "carol", str(carol))
    copies = len(list(carol.rglob("*.jsonl*")))
    assert summary["copies"] == copies == len(summary["new_copies"])
    assert all(Path(original).is_relative_to(alice) for original in summary["new_copies"].values())
    assert _sql(dataset, "SELECT count(*) AS loops, sum(usage.input) AS input FROM loops") == before
    assert _sql(dataset, TOKENS_BY_ORIGIN) == by_origin  # carol's copies count nothing
    assert _usage_by_origin(dataset) == usage  # and `report usage` has no carol row
    sources = _sql(
        dataset,
        """SELECT origin, count(*) AS n, count(duplicate_of) AS copies,
                  count(*) FILTER (WHERE duplicate_of IN (SELECT source_id FROM sources
                                                           WHERE origin = 'alice')) AS of_alice
           FROM sources GROUP BY origin ORDER BY origin""",
    )
    assert sources[2] == {"origin": "carol", "n": copies, "copies": copies, "of_alice": copies}
    assert sources[0]["copies"] == sources[1]["copies"] == 0
    status = traceidx_cli("status", "--dataset", str(dataset), "--format", "json")
    assert {"runtime": "codex", "state": "copy (counted once)", "sources": copies} in json.loads(
        status.stdout
    )
    # a copy publishes its source row only
    assert _sql(
        dataset,
        """SELECT count(*) AS n FROM records JOIN sources USING (source_id)
           WHERE origin = 'carol'""",
    ) == [{"n": 0}]

    # the origin sticks: an incremental build naming every folder under another origin
    # changes no source's origin, and the text summary says how many copies are counted once
    done = traceidx_cli(
        "build", "--dataset", str(dataset), "--origin", "dave", str(alice), str(bob), str(carol)
    )
    assert done.returncode == 0, done.stderr
    assert f"copies counted once: {copies} sources copy another's records\n" in done.stdout
    origins = _sql(dataset, "SELECT DISTINCT origin FROM sources ORDER BY origin")
    assert [row["origin"] for row in origins] == ["alice", "bob", "carol"]

    # appending to alice's file re-reads it; it keeps its origin, and so does its copy
    rollout = sorted(alice.rglob("*.jsonl"))[0]
    last = rollout.read_bytes().splitlines(keepends=True)[-1]
    with rollout.open("ab") as out:
        out.write(last)
    summary = _build(dataset, "--origin", "erin", str(alice))
    assert summary["actions"].get("appended") == 1
    assert summary["actions"].get("rechecked") == 1  # its copy, whose original changed
    assert _sql(dataset, "SELECT DISTINCT origin FROM sources ORDER BY origin") == origins


def test_a_longer_copy_wins_whichever_came_first(tmp_path: Path) -> None:
    """An earlier backup (a prefix of the file) is counted once, as the longer file."""
    full = sorted(
        fixture_path("generated", "codex").rglob("*.jsonl"), key=lambda p: p.stat().st_size
    )[-1]
    lines = full.read_bytes().splitlines(keepends=True)
    backup = tmp_path / "backup" / full.name
    backup.parent.mkdir()
    backup.write_bytes(b"".join(lines[: len(lines) // 2]))
    whole = "SELECT count(*) AS loops, sum(usage.input) AS input FROM loops"
    alone = tmp_path / "alone"
    _build(alone, str(full))
    expected = _sql(alone, whole)
    for first, second in ((backup, full), (full, backup)):
        dataset = tmp_path / f"first-{first.parent.name}"
        _build(dataset, "--origin", "one", str(first))
        summary = _build(dataset, "--origin", "two", str(second))
        assert summary["copies"] == 1
        assert summary["records"] == len(lines)
        assert _sql(dataset, whole) == expected
        copy = _sql(dataset, "SELECT locator, origin FROM sources WHERE duplicate_of IS NOT NULL")
        assert copy == [{"locator": str(backup), "origin": "one" if first == backup else "two"}]


def _planted(folder: Path) -> Path:
    text = TEMPLATE.read_text()
    for name, secret in SECRETS.items():
        text = text.replace("{" + name + "}", secret)
    folder.mkdir(parents=True)
    trace = folder / "secrets.jsonl"
    trace.write_text(text)
    return trace


TEXTS = """
SELECT coalesce(i.semantic.text.text, i.semantic.tool_output.text,
                i.semantic.tool_call.shell_fragments[1].text) AS text,
       i.semantic.tool_call.arguments AS arguments,
       i.semantic.tool_call.redactions AS argument_redactions
FROM items i ORDER BY i.loop_position
"""


def test_redact_replaces_planted_secrets(tmp_path: Path) -> None:
    trace = _planted(tmp_path / "traces")
    plain, redacted = tmp_path / "plain", tmp_path / "redacted"
    _build(plain, str(trace))
    summary = _build(redacted, "--redact", str(trace))
    assert summary["redacted_by_type"] == EXPECTED_REDACTED
    assert summary["redacted"] == sum(EXPECTED_REDACTED.values())

    published = json.dumps(_sql(redacted, TEXTS))
    for secret in SECRETS.values():  # not a piece of one is left
        for line in secret.split("\\n"):
            for at in range(len(line) - 8):
                assert line[at : at + 9] not in published, line
    assert published.count("[REDACTED]") == 6
    # a redacted value says so, and keeps the size of the source text; others say 0
    rows = _sql(redacted, TEXTS)
    plain_rows = _sql(plain, TEXTS)
    assert all(row["text"] is None or row["text"]["redactions"] is not None for row in rows)
    assert all(row["text"] is None or row["text"]["redactions"] is None for row in plain_rows)
    for row, before in zip(rows, plain_rows, strict=True):
        if row["text"] is None:
            continue
        assert row["text"]["full_bytes"] == before["text"]["full_bytes"]
        assert (row["text"]["value"] == before["text"]["value"]) == (row["text"]["redactions"] == 0)
    assert [r["argument_redactions"] for r in rows if r["arguments"]] == [1]
    call = next(r for r in rows if r["arguments"])
    assert json.loads(call["arguments"]) == {
        "command": "git clone https://deploy:[REDACTED]@git.example.com/team/app.git"
    }

    # fingerprints are those of the source bytes: the same in both datasets, and verified
    query = "SELECT record_id, fingerprint FROM records ORDER BY record_id"
    assert _sql(redacted, query) == _sql(plain, query)
    for row in _sql(redacted, query):
        done = traceidx_cli(
            "inspect", "--dataset", str(redacted), "--format", "json", str(row["record_id"])
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["verification"] == "verified"


def test_switching_redaction_reprojects(tmp_path: Path) -> None:
    trace = _planted(tmp_path / "traces")
    dataset = tmp_path / "dataset"
    _build(dataset, str(trace))
    summary = _build(dataset, "--redact", str(trace))
    assert summary["actions"] == {"new": 1}  # re-projected, not unchanged
    assert summary["redacted"] == sum(EXPECTED_REDACTED.values())
    assert _build(dataset, "--redact", str(trace))["actions"] == {"unchanged": 1}
    summary = _build(dataset, str(trace))
    assert summary["actions"] == {"new": 1} and summary["redacted"] == 0
    assert "[REDACTED]" not in json.dumps(_sql(dataset, TEXTS))


def test_an_empty_origin_is_refused(tmp_path: Path) -> None:
    done = traceidx_cli("build", "--dataset", str(tmp_path / "d"), "--origin", " ", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith("traceidx: --origin: empty name")
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("text", ["no secret here", "sha 3f786850e387550fdab836ed7e6dc881de23001b"])
def test_ordinary_text_is_not_redacted(text: str) -> None:
    from traceidx.domain.redact import Redactor

    assert Redactor().text(text) == (text, 0)


def test_a_copy_counts_again_when_its_original_changes(tmp_path: Path) -> None:
    rollouts = sorted(fixture_path("generated", "codex").rglob("*.jsonl"))
    first, other = rollouts[0], rollouts[1]
    original, copy = tmp_path / "a" / first.name, tmp_path / "c" / first.name
    for path in (original, copy):
        path.parent.mkdir()
        shutil.copyfile(first, path)
    dataset = tmp_path / "dataset"
    _build(dataset, "--origin", "one", str(original.parent))
    assert _build(dataset, "--origin", "two", str(copy.parent))["copies"] == 1

    shutil.copyfile(other, original)  # the original now holds another session
    summary = _build(dataset, "--origin", "three", str(original.parent))
    assert summary["actions"] == {"rewritten": 1, "rechecked": 1}
    assert summary["copies"] == 0
    rows = _sql(dataset, "SELECT locator, origin, duplicate_of FROM sources ORDER BY locator")
    assert rows == [
        {"locator": str(original), "origin": "one", "duplicate_of": None},
        {"locator": str(copy), "origin": "two", "duplicate_of": None},
    ]
    expected = tmp_path / "expected"
    _build(expected, str(first), str(other))
    whole = "SELECT count(*) AS loops, sum(usage.input) AS input FROM loops"
    assert _sql(dataset, whole) == _sql(expected, whole)


def test_a_secret_across_the_text_bound_leaks_no_part(tmp_path: Path) -> None:
    """Texts are redacted whole, then bounded: a secret the bound cuts leaves no prefix."""
    trace = _planted(tmp_path / "traces")
    dataset = tmp_path / "dataset"
    _build(dataset, "--redact", "--text-limit", "30", str(trace))
    rows = _sql(dataset, TEXTS)
    values = [row["text"]["value"] for row in rows if row["text"] is not None]
    assert "Deploy with access key [REDACT" in values  # the AWS key began at byte 23
    assert "git clone https://deploy:[REDA" in values  # the password began at byte 25
    published = json.dumps(rows)
    for secret in (SECRETS["AWS_KEY"], SECRETS["URL_PASSWORD"]):
        assert secret[:4] not in published
