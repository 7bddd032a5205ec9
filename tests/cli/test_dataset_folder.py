"""A dataset folder holds a dataset and nothing else: a folder of a person's files named as the
dataset is refused by every command that writes one (one line, exit 2, nothing changed), and a
build makes private only what traceidx wrote.

Run as a user runs it (a child process, real folders); the object-storage side runs against
moto's S3 server (the `s3` fixture)."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

from tests.support.files import FIXTURES, traceidx_cli
from traceidx.analysis import rollup, summary
from traceidx.store import dataset

TRACES = str(FIXTURES / "generated" / "pi")


def _documents(root: Path) -> Path:
    """A folder as a person keeps one: a note, and a folder of photos (readable by others)."""
    folder = root / "Documents"
    (folder / "photos").mkdir(parents=True)
    (folder / "notes.txt").write_text("mine\n")
    (folder / "photos" / "cat.jpg").write_bytes(b"\xff\xd8 not really a photo")
    for path, mode in ((folder / "photos", 0o755), (folder / "notes.txt", 0o644)):
        path.chmod(mode)
    return folder


def _snapshot(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Every path beneath `folder` (itself included) with its mode, size and mtime."""
    out = {}
    for path in [folder, *folder.rglob("*")]:
        st = path.lstat()
        out[str(path.relative_to(folder))] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


def _refused(done: subprocess.CompletedProcess[str], folder: Path) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith(f"traceidx: {folder}: not a traceidx dataset"), line
    assert "notes.txt" in line and "photos/" in line  # what makes it no dataset
    assert "--dataset" in line and "new or empty folder" in line  # the next step
    assert done.stdout == ""


@pytest.mark.parametrize(
    "command",
    [
        ("build", TRACES),
        ("build", "--format", "json", TRACES),
        ("watch", TRACES),
        ("demo",),
        ("prune",),
    ],
)
def test_a_folder_of_a_persons_files_is_refused_and_left_as_it_is(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    folder = _documents(tmp_path)
    before = _snapshot(folder)
    corpus = tmp_path / "corpus"
    extra = ("--corpus", str(corpus)) if command[0] == "demo" else ()
    done = traceidx_cli(*command, "--dataset", str(folder), *extra, timeout=120)
    if command[0] == "prune":  # nothing to prune: said as for any folder without a dataset
        assert done.returncode == 2 and "no dataset here yet" in done.stderr
    else:
        _refused(done, folder)
    assert _snapshot(folder) == before
    assert not corpus.exists()  # the demo wrote no traces either


def test_a_manifest_json_that_is_not_traceidxs_does_not_make_a_dataset(tmp_path: Path) -> None:
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "manifest.json").write_text('{"name": "my web app", "icons": []}')
    before = _snapshot(folder)
    done = traceidx_cli("build", "--dataset", str(folder), TRACES)
    assert done.returncode == 2 and "not a traceidx dataset (it holds manifest.json)" in done.stderr
    assert _snapshot(folder) == before


def test_new_empty_and_dataset_folders_are_taken(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for where in (tmp_path / "new" / "dataset", empty):
        done = traceidx_cli("build", "--dataset", str(where), TRACES)
        assert done.returncode == 0, done.stderr
        again = traceidx_cli("build", "--dataset", str(where), TRACES)  # now a dataset
        assert again.returncode == 0 and "unchanged at generation 1" in again.stdout
    # the summary and the rollup the read side keeps there are a dataset's own entries
    assert {summary.NAME, rollup.NAME} == set(dataset.BESIDE_MANIFEST)
    report = traceidx_cli("report", "usage", "--dataset", str(empty))
    assert report.returncode == 0 and (empty / rollup.NAME).exists()
    assert (empty / summary.NAME).exists()  # the build left it
    (empty / dataset.MANIFEST).rename(empty / "kept.json")  # no manifest: told by its entries
    assert dataset.foreign(empty) == ["kept.json"]


def test_a_first_build_that_died_leaves_a_folder_a_build_takes(tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    (folder / ".staging-000001").mkdir(parents=True)
    (folder / "loops" / "runtime=pi").mkdir(parents=True)
    (folder / ".lock").touch()
    assert dataset.foreign(folder) == []
    done = traceidx_cli("build", "--dataset", str(folder), TRACES)
    assert done.returncode == 0, done.stderr
    assert not (folder / ".staging-000001").exists()  # its garbage removed


def test_a_build_makes_private_only_what_traceidx_wrote(tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    assert traceidx_cli("build", "--dataset", str(folder), TRACES).returncode == 0
    mine = folder / "README.txt"  # a person's file put beside the dataset later
    mine.write_text("what this dataset is\n")
    mine.chmod(0o644)
    part = next((folder / "loops").rglob("*.parquet"))
    for path, mode in ((folder, 0o755), (folder / "loops", 0o755), (part, 0o644)):
        path.chmod(mode)
    done = traceidx_cli("build", "--dataset", str(folder), TRACES)
    assert done.returncode == 0, done.stderr
    # (the folder itself is made private as its lock is taken)
    assert f"{folder}: 2 paths were readable by other users; made private" in done.stderr
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in (folder, folder / "loops", part, mine)}
    assert modes == {folder: 0o700, folder / "loops": 0o700, part: 0o600, mine: 0o644}
    status = traceidx_cli("status", "--dataset", str(folder))
    assert status.returncode == 0 and "readable by other users" not in status.stderr


def test_a_prefix_of_other_objects_is_refused(s3: dict[str, str]) -> None:
    import pyarrow.fs as pafs

    from tests.support.files import s3_bucket

    s3_bucket(s3, "home")
    fs, _ = pafs.FileSystem.from_uri("s3://home")
    with fs.open_output_stream("home/backup/notes.txt") as out:
        out.write(b"mine")
    done = traceidx_cli("build", "--dataset", "s3://home/backup", TRACES, env=s3)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "s3://home/backup: not a traceidx dataset" in lines[0], lines
    assert "notes.txt" in lines[0]
    listed = fs.get_file_info(pafs.FileSelector("home/backup", recursive=True))
    assert [info.path for info in listed] == ["home/backup/notes.txt"]  # nothing written
    built = traceidx_cli("build", "--dataset", "s3://home/index", TRACES, env=s3)
    assert built.returncode == 0, built.stderr
    again = traceidx_cli("build", "--dataset", "s3://home/index", TRACES, env=s3)
    assert again.returncode == 0 and "unchanged at generation 1" in again.stdout


def test_the_dataset_folder_is_checked_before_anything_is_written(tmp_path: Path) -> None:
    """The library's build refuses the same folder: the check is the store's, not the CLI's."""
    from traceidx.errors import DatasetError
    from traceidx.pipeline.job import build

    folder = _documents(tmp_path)
    before = _snapshot(folder)
    with pytest.raises(DatasetError, match="not a traceidx dataset"):
        build([Path(TRACES)], folder)
    assert _snapshot(folder) == before
