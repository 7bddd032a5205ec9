"""Hostile inputs and a private dataset, tried as a user would (the `traceidx` command):
special files named like traces are never opened, the dataset is its owner's alone, a damaged
part is named and repaired, and a full disk leaves the previous generation intact."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard

from tests.support.files import DATA, traceidx_cli
from traceidx.store.dataset import read_manifest

VALID = [
    DATA / "codex" / "rollout-2026-03-02T10-00-00-0199aaaa-0000-7000-8000-00000000a001.jsonl",
    DATA / "pi" / "branched_tree.jsonl",
    DATA / "dsh" / "fork-parent.jsonl",
    DATA / "dsh" / "tool-result-v4.jsonl",
]


def _valid_traces(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for path in VALID:
        shutil.copy(path, root / path.name)
    data = VALID[0].read_bytes()  # the same rollout under another id, compressed
    compressed = zstandard.ZstdCompressor().compress(data.replace(b"a001", b"a0zz"))
    (
        root / "rollout-2026-03-02T10-00-05-0199aaaa-0000-7000-8000-00000000a0zz.jsonl.zst"
    ).write_bytes(compressed)


def _count(dataset: Path, sql: str) -> list[Any]:
    done = traceidx_cli("sql", "--dataset", str(dataset), "--format", "json", sql)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def _sessions(dataset: Path) -> list[Any]:
    return _count(dataset, "SELECT native_id FROM sessions ORDER BY 1")


def test_special_files_named_like_traces_are_never_opened(tmp_path: Path) -> None:
    valid = tmp_path / "valid"
    _valid_traces(valid)
    root = tmp_path / "root"
    shutil.copytree(valid, root)
    os.mkfifo(root / "fifo.jsonl")
    listener = socket.socket(socket.AF_UNIX)
    with contextlib.closing(listener):
        short = Path("/tmp") / f"traceidx-{os.getpid()}.jsonl"  # socket paths are short
        listener.bind(str(short))
        (root / "socket.jsonl").symlink_to(short)
        os.symlink("/dev/zero", root / "zero.jsonl")
        os.symlink("/dev/null", root / "null.jsonl.zst")
        (root / "folder.jsonl").mkdir()
        shutil.copy(VALID[1], root / "folder.jsonl" / "inside.jsonl")  # not walked
        os.symlink("loop.jsonl", root / "loop.jsonl")
        os.symlink("nowhere", root / "dangling.jsonl")
        (root / "empty.jsonl").write_bytes(b"")
        whole = zstandard.ZstdCompressor().compress(VALID[2].read_bytes())
        (root / "cut.jsonl.zst").write_bytes(whole[: len(whole) // 2])
        (root / "binary.jsonl").write_bytes(bytes(range(256)) * 64)
        try:
            done = traceidx_cli(
                "build", "--dataset", str(tmp_path / "ds"), "--jobs", "2", str(root),
                str(root / "fifo.jsonl"), timeout=60,
            )  # fmt: skip
        finally:
            short.unlink()
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    for name, what in [
        ("fifo.jsonl", "a named pipe"),
        ("socket.jsonl", "a symlink to socket"),
        ("zero.jsonl", "a symlink to character device"),
        ("null.jsonl.zst", "a symlink to character device"),
        ("folder.jsonl", "a directory"),
        ("loop.jsonl", "a symlink loop"),
        ("dangling.jsonl", "a dangling symlink"),
    ]:
        named = [line for line in lines if f"{root / name}: {what}" in line]
        assert len(named) == (2 if name == "fifo.jsonl" else 1), (name, lines)
    reference = tmp_path / "reference"
    assert traceidx_cli("build", "--dataset", str(reference), str(valid)).returncode == 0
    assert _sessions(tmp_path / "ds") == _sessions(reference) != []


def _modes(dataset: Path) -> dict[str, int]:
    return {str(p): stat.S_IMODE(p.lstat().st_mode) for p in [dataset, *dataset.rglob("*")]}


def test_a_dataset_is_private_whatever_the_umask(tmp_path: Path) -> None:
    _valid_traces(tmp_path / "traces")
    dataset = tmp_path / "ds"
    done = traceidx_cli("build", "--dataset", str(dataset), str(tmp_path / "traces"), umask=0o022)
    assert done.returncode == 0, done.stderr
    modes = _modes(dataset)
    assert len(modes) > 10 and any(name.endswith(".lock") for name in modes)
    assert {path: mode for path, mode in modes.items() if mode & 0o077} == {}
    for path in [dataset, *dataset.rglob("*")]:  # as a dataset made by an older version
        path.chmod(0o755 if path.is_dir() else 0o644)
    status = traceidx_cli("status", "--dataset", str(dataset))
    assert status.returncode == 0 and "readable by other users" in status.stderr
    again = traceidx_cli("build", "--dataset", str(dataset), umask=0o022)
    assert again.returncode == 0 and "made private" in again.stderr
    assert {path: mode for path, mode in _modes(dataset).items() if mode & 0o077} == {}


def _items_part(dataset: Path, of: Path | None = None) -> Path:
    """The items part of the partition holding the source `of` (else the first)."""
    manifest = read_manifest(dataset)
    assert manifest is not None
    if of is None:
        return dataset / manifest.files("items")[0]
    key = manifest.sources[str(of)].partition
    assert key is not None
    return dataset / manifest.parts[key]["items"].path


def test_a_damaged_part_is_named_and_the_next_build_repairs_it(tmp_path: Path) -> None:
    _valid_traces(tmp_path / "traces")
    gone = tmp_path / "traces" / "gone.jsonl"
    shutil.copy(DATA / "dsh" / "fork-child.jsonl", gone)
    dataset = tmp_path / "ds"
    assert (
        traceidx_cli("build", "--dataset", str(dataset), str(tmp_path / "traces")).returncode == 0
    )
    query = "SELECT (SELECT count(*) FROM items) AS items, (SELECT count(*) FROM records) AS r"
    before = _count(dataset, query)
    part = _items_part(dataset)
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])
    for command in (["sql", query], ["status"]):
        done = traceidx_cli(command[0], "--dataset", str(dataset), *command[1:])
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert [line for line in done.stderr.splitlines() if str(part) in line] == [
            done.stderr.strip()
        ]
    repaired = traceidx_cli("build", "--dataset", str(dataset), "--format", "json")
    assert repaired.returncode == 0, repaired.stderr
    assert json.loads(repaired.stdout)["damaged_parts"] and str(part) in repaired.stderr
    assert _count(dataset, query) == before
    assert traceidx_cli("status", "--dataset", str(dataset)).returncode == 0
    # a part gone, and one of its sources with it: its facts are reported lost, by name
    _items_part(dataset, gone).unlink()
    gone.unlink()
    lost = traceidx_cli("build", "--dataset", str(dataset), "--format", "json")
    assert lost.returncode == 1, lost.stderr
    assert json.loads(lost.stdout)["lost_sources"] == [str(gone)]
    assert f"{gone}: its facts lived in a damaged part" in lost.stderr
    after = _count(dataset, query)[0]
    assert 0 < after["items"] < before[0]["items"]
    assert traceidx_cli("status", "--dataset", str(dataset)).returncode == 0


@contextlib.contextmanager
def _small_filesystem(where: Path, megabytes: int) -> Iterator[Path]:
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here: {mounted.stderr!r}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_keeps_the_previous_generation(tmp_path: Path) -> None:
    _valid_traces(tmp_path / "traces")
    more = tmp_path / "more"
    more.mkdir()
    for k in range(40):  # more sessions, to need more room than is left
        data = VALID[0].read_bytes().replace(b"a001", b"%04x" % (0xB000 + k))
        (more / f"rollout-2026-03-02T10-00-00-0199aaaa-0000-7000-8000-0000{0xB000 + k:08x}.jsonl"
         ).write_bytes(data)  # fmt: skip
    with _small_filesystem(tmp_path / "small", 8) as disk:
        dataset = disk / "ds"
        first = traceidx_cli("build", "--dataset", str(dataset), str(tmp_path / "traces"))
        assert first.returncode == 0, first.stderr
        query = "SELECT (SELECT count(*) FROM items) AS items, (SELECT count(*) FROM loops) AS l"
        before = _count(dataset, query)
        files = sorted(p for p in dataset.rglob("*") if p.is_file())
        # unbuffered: a buffered file's close would flush a partial block into the full disk
        with open(disk / "filler", "wb", buffering=0) as filler, contextlib.suppress(OSError):
            while True:
                filler.write(b"\0" * (1 << 16))
        done = traceidx_cli("build", "--dataset", str(dataset), str(more))
        assert done.returncode == 1
        assert "Traceback" not in done.stderr
        failure = [line for line in done.stderr.splitlines() if "No space left" in line]
        assert len(failure) == 1 and "generation 1 stays current" in failure[0]
        assert _count(dataset, query) == before
        assert sorted(p for p in dataset.rglob("*") if p.is_file()) == files
