"""The storage seam itself (traceidx.store.base.Store): a local folder and a dataset on object
storage (moto's S3 server, the `s3` fixture of tests/conftest.py) answer the same questions, each
in its own way: the manifest, damage, the working folder, the part tag, putting, publishing and
collecting garbage."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.files import s3_bucket
from traceidx.errors import DatasetLocked, GenerationTaken
from traceidx.store.base import Store
from traceidx.store.dataset import Partition, part_file
from traceidx.store.manifest import Manifest, PartFile
from traceidx.store.open import open_store, reader

PARTITION = Partition("codex", "2026-01", 0)


def _write_part(store: Store, generation: int, rows: int = 3) -> tuple[Path, str]:
    """A small Parquet part of the `sessions` table in the store's working folder."""
    relative = PARTITION.path("sessions", generation, store.tag)
    local = store.folder / relative
    local.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"session_id": list(range(rows))}), local)
    return local, relative


def _manifest(generation: int, part: PartFile, checkpoint: str | None = None) -> Manifest:
    from traceidx.store.manifest import SourceEntry

    sources = {}
    if checkpoint is not None:
        sources["/traces/a.jsonl"] = SourceEntry(state="indexed", checkpoint=checkpoint)
    return Manifest(
        generation=generation,
        parts={PARTITION.key: {"sessions": part}},
        buckets={PARTITION.group: 1},
        sources=sources,
    )


def _checkpoint(store: Store, name: str) -> Path:
    staged = store.folder / ".staging-000001" / name
    staged.parent.mkdir(parents=True, exist_ok=True)
    staged.write_bytes(b"where the reading stood")
    return staged


# -- a local folder --------------------------------------------------------------------------


def test_a_local_store_is_its_folder(tmp_path: Path) -> None:
    store = reader(tmp_path / "ds")
    assert isinstance(store, Store)
    assert store.where == store.folder == tmp_path / "ds"
    assert store.read() is None and store.read_published() is None
    assert store.tag == "" and store.filesystem is None
    assert store.path("items/x.parquet") == str(tmp_path / "ds" / "items/x.parquet")
    assert store.open("items/x.parquet") == store.fetch("items/x.parquet")


def test_a_local_store_is_built_under_its_lock(tmp_path: Path) -> None:
    with open_store(tmp_path / "ds") as store:
        assert store.folder == tmp_path / "ds"
        assert stat.S_IMODE(store.folder.stat().st_mode) == 0o700
        locked = pytest.raises(DatasetLocked, match="is being built by another traceidx process")
        with locked, open_store(tmp_path / "ds"):
            pass
    with open_store(tmp_path / "ds"):  # released
        pass


def test_a_local_store_puts_publishes_checks_and_collects(tmp_path: Path) -> None:
    with open_store(tmp_path / "ds") as store:
        local, relative = _write_part(store, 1)
        part = part_file(store.folder, relative)
        store.put(local, relative)  # written in place: nothing moves
        assert local.is_file()
        checkpoint = "checkpoints/00000000000000aa-000001.pickle"
        staged = _checkpoint(store, "aa.pickle")
        store.put(staged, checkpoint)
        assert not staged.exists() and (store.folder / checkpoint).is_file()
        stray = store.folder / Partition("codex", "2026-01", 1).path("sessions", 1)
        pq.write_table(pa.table({"session_id": [7]}), stray)  # a part no manifest names
        store.publish(_manifest(1, part, checkpoint))
        manifest = reader(tmp_path / "ds").read()
        assert manifest is not None and manifest.generation == 1
        assert store.check_parts(manifest, checksums=True) == []
        assert store.collect_garbage(manifest) == 2  # the stray part and the staging folder
        assert (store.folder / relative).is_file() and (store.folder / checkpoint).is_file()
        assert not stray.exists()

        data = bytearray(local.read_bytes())  # same size, another byte: only checksums tell
        data[len(data) // 2] ^= 0xFF
        local.write_bytes(bytes(data))
        assert store.check_parts(manifest, checksums=False) == []
        (damage,) = store.check_parts(manifest, checksums=True)
        assert damage.path == relative and "checksum differs" in damage.what
        local.unlink()
        (damage,) = store.check_parts(manifest, checksums=False)
        assert damage.what == "missing part"

        (store.folder / ".staging-000002").mkdir()
        store.abandon()
        assert not (store.folder / ".staging-000002").exists()
        assert (store.folder / checkpoint).is_file()  # named by the current manifest


def test_a_local_store_tightens_what_others_could_read(tmp_path: Path) -> None:
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "manifest.json").write_text("{}")
    os.chmod(folder, 0o755)
    os.chmod(folder / "manifest.json", 0o644)
    store = reader(folder)
    assert store.exposed() == [folder, folder / "manifest.json"]
    assert store.tighten() == 2
    assert store.exposed() == []
    assert stat.S_IMODE((folder / "manifest.json").stat().st_mode) == 0o600


# -- object storage ---------------------------------------------------------------------------


def test_an_object_store_builds_in_a_private_temporary_folder(s3: dict[str, str]) -> None:
    s3_bucket(s3, "store-folder")
    uri = "s3://store-folder/ds/"
    store = reader(uri)
    assert isinstance(store, Store)
    assert store.where == "s3://store-folder/ds"
    assert store.read() is None  # nothing published: no manifests listed
    assert store.tighten() == 0 and store.exposed() == []
    assert store.filesystem is not None
    with pytest.raises(RuntimeError, match="opened to read only"):
        _ = store.folder
    with open_store(uri) as building:
        folder = building.folder
        assert folder.is_dir() and stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert re.fullmatch(r"-[0-9a-f]{8}", building.tag)
        with open_store(uri) as other:  # its own folder: a bucket has no lock
            assert other.folder != folder and other.tag != building.tag
    assert not folder.exists()


def test_an_object_store_uploads_publishes_once_and_collects(s3: dict[str, str]) -> None:
    s3_bucket(s3, "store")
    uri = "s3://store/ds"
    with open_store(uri) as store:
        local, relative = _write_part(store, 1)
        part = part_file(store.folder, relative)
        store.put(local, relative)
        assert not local.exists()  # uploaded, then removed
        checkpoint = "checkpoints/00000000000000aa-000001.pickle"
        store.put(_checkpoint(store, "aa.pickle"), checkpoint)
        store.publish(_manifest(1, part, checkpoint))
        with pytest.raises(GenerationTaken) as taken:  # the conditional write
            store.publish(_manifest(1, part))
        assert str(taken.value).startswith(f"{uri}: generation 1 was published by another build")

        manifest = reader(uri).read()
        assert manifest is not None and manifest.generation == 1
        assert pq.ParquetFile(store.open(relative)).read().num_rows == 3
        assert store.check_parts(manifest, checksums=True) == []
        fetched = store.fetch(checkpoint)
        assert fetched == store.folder / checkpoint
        assert fetched.read_bytes() == b"where the reading stood"

        fs = store.filesystem
        stale = Partition("codex", "2026-01", 1).path("sessions", 1, "-00000000")
        undecided = Partition("codex", "2026-01", 1).path("sessions", 2, "-00000000")
        for name in (stale, undecided):
            with fs.open_output_stream(store.path(name)) as out:
                out.write(b"PAR1 not named PAR1")
        assert store.collect_garbage(manifest) >= 1
        names = {
            info.path.removeprefix(store.path("") + "/")
            for info in fs.get_file_info(_selector(store.path("")))
        }
        assert stale not in names  # of a decided generation, named by no manifest
        assert undecided in names  # perhaps another builder's work in progress
        assert {relative, checkpoint, "manifests/000000000001.json"} <= names

        with fs.open_output_stream(store.path(relative)) as out:
            out.write(b"PAR1 shorter PAR1")
        (damage,) = store.check_parts(manifest, checksums=True)  # sizes from one listing
        assert damage.what == f"damaged part: 17 bytes where {part.size:,} were written"
        fs.delete_file(store.path(relative))
        (damage,) = reader(uri).check_parts(manifest, checksums=False)
        assert damage.what == "missing part"
        assert damage.line(uri).startswith(f"{uri}/{relative}: missing part; ")


def _selector(root: str) -> object:
    import pyarrow.fs as pafs

    return pafs.FileSelector(root, recursive=True)
