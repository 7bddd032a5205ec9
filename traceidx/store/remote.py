"""A dataset on object storage: parts under unique names, then a manifest numbered by generation.

Object stores have no rename, so a remote dataset (``--dataset s3://bucket/prefix``) is not
swapped into place as a local folder is (traceidx.store.dataset). A build uploads the parts it
wrote first, under names no other builder uses (``part-<generation>-<bucket>-<tag>.parquet``),
and then its manifest as ``manifests/<generation>.json``. That object makes the generation
current: readers list ``manifests/`` and read the highest-numbered one, so they see a complete
generation or the one before, never a mix. The manifest is written only if no object of that
name exists (S3's ``If-None-Match: *`` on PutObject, through boto3, since pyarrow.fs has no
conditional write): of two builders that started from the same generation, one publishes and
the other stops with `GenerationTaken`, its parts left as garbage and the winner's generation
intact. A local lock file cannot guard a bucket; that write is the guard.

Garbage (parts no manifest names of a generation already decided, manifests before the
previous one, checkpoints no source names) is removed after each publication; parts of a
generation not yet decided may be another builder's work in progress and are left alone.

`ObjectStore` is this dataset as a `traceidx.store.base.Store`: a build works in a private
locked temporary folder, puts each finished file by upload and publishes by the conditional
write; `RemoteDataset` is the bucket's side of it.
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow.fs as pafs

from traceidx import storage
from traceidx.errors import DatasetError, GenerationTaken, UsageError
from traceidx.store import manifest as manifests
from traceidx.store.base import Store
from traceidx.store.dataset import (
    Damage,
    collect_garbage,
    decode_manifest,
    locked,
    own,
    refuse_foreign,
)
from traceidx.store.manifest import Manifest, Published

MANIFESTS = "manifests"
MANIFEST_FILE = re.compile(r"(\d{12})\.json")
#: the generation in a part's (``part-<generation>-…``) or a checkpoint's (``…-<generation>``)
#: name
NAMED_GENERATION = re.compile(r"^part-(\d+)-|-(\d+)\.pickle$")


def manifest_name(generation: int) -> str:
    """The dataset-relative name of a generation's manifest."""
    return f"{MANIFESTS}/{generation:012d}.json"


@dataclass(frozen=True)
class RemoteDataset:
    """A dataset at a URI of a pyarrow filesystem."""

    uri: str

    @property
    def fs(self) -> Any:
        return storage.resolve(self.uri)[0]

    def path(self, relative: str = "") -> str:
        """The filesystem path of a dataset-relative name."""
        root = storage.resolve(self.uri)[1]
        return f"{root}/{relative}" if relative else root

    def generations(self) -> list[int]:
        """The generations whose manifests are published, ascending."""
        selector = pafs.FileSelector(self.path(MANIFESTS), allow_not_found=True)
        try:
            infos = self.fs.get_file_info(selector)
        except OSError as exc:
            raise DatasetError(f"{self.uri}: cannot list its manifests ({exc})") from exc
        found = (MANIFEST_FILE.fullmatch(info.base_name) for info in infos)
        return sorted(int(m.group(1)) for m in found if m is not None)

    def read(self) -> Manifest | None:
        """The newest published manifest, or None when nothing was ever published."""
        generations = self.generations()
        if not generations:
            return None
        name = manifest_name(generations[-1])
        try:
            with self.fs.open_input_stream(self.path(name)) as stream:
                data = stream.read()
        except OSError as exc:
            raise DatasetError(f"{storage.join(self.uri, name)}: unreadable ({exc})") from exc
        return decode_manifest(data, storage.join(self.uri, name), "a new prefix")

    def open(self, relative: str) -> Any:
        """A published file opened for (ranged) reading."""
        return self.fs.open_input_file(self.path(relative))

    def download(self, relative: str, local: Path) -> None:
        """Copy a dataset-relative file to a local path."""
        local.parent.mkdir(parents=True, exist_ok=True)
        pafs.copy_files(
            self.path(relative),
            str(local),
            source_filesystem=self.fs,
            destination_filesystem=pafs.LocalFileSystem(),
        )

    def upload(self, local: Path, relative: str) -> None:
        """Copy a local file to a dataset-relative name."""
        pafs.copy_files(
            str(local),
            self.path(relative),
            source_filesystem=pafs.LocalFileSystem(),
            destination_filesystem=self.fs,
        )

    def publish(self, manifest: Manifest) -> None:
        """Write `manifest` as its generation's manifest, only if none was published under
        that generation (else `GenerationTaken`)."""
        name = manifest_name(manifest.generation)
        data = manifests.encode(manifest)
        if urlsplit(self.uri).scheme == "s3":
            self._put_if_absent_s3(name, data)
            return
        # no conditional write but S3's: checked, then written (a narrow window remains)
        if self.fs.get_file_info(self.path(name)).type != pafs.FileType.NotFound:
            raise self._taken(manifest.generation)
        with self.fs.open_output_stream(self.path(name)) as out:
            out.write(data)

    def _put_if_absent_s3(self, name: str, data: bytes) -> None:
        try:
            import boto3
            import botocore.exceptions
        except ImportError as exc:
            raise UsageError(
                "publishing to S3 needs boto3 (its conditional write): pip install 'traceidx[s3]'"
            ) from exc
        bucket, _, prefix = self.path().partition("/")
        key = f"{prefix}/{name}" if prefix else name
        client = boto3.client("s3", region_name=_region())
        try:
            client.put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")
        except botocore.exceptions.ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in ("PreconditionFailed", "ConditionalRequestConflict"):
                raise self._taken(int(name[len(MANIFESTS) + 1 : -5])) from exc
            raise OSError(f"s3://{bucket}/{key}: {exc}") from exc

    def _taken(self, generation: int) -> GenerationTaken:
        return GenerationTaken(
            f"{self.uri}: generation {generation} was published by another build while this "
            "one ran; nothing of this build was published and that generation stays current; "
            "run the build again"
        )

    def check_parts(self, manifest: Published) -> list[Damage]:
        """The live parts that are missing or of another size than the manifest recorded
        (one listing; checksums would mean reading every part)."""
        sizes = self._files()
        out = []
        for key in sorted(manifest.parts):
            for table, part in sorted(manifest.parts[key].items()):
                size = sizes.get(part.path)
                if size is None:
                    out.append(Damage(key, table, part.path, "missing part"))
                elif part.size is not None and size != part.size:
                    what = f"damaged part: {size:,} bytes where {part.size:,} were written"
                    out.append(Damage(key, table, part.path, what))
        return out

    def foreign(self) -> list[str]:
        """What makes the prefix no dataset of traceidx's (its top-level names no dataset
        writes, sorted, folders with a trailing ``/``): nothing when a generation is
        published, or when it is empty or holds only a dataset's own entries."""
        if self.generations():
            return []
        names = {name.split("/", 1)[0] + ("/" if "/" in name else "") for name in self._files()}
        return sorted(name for name in names if not own(name.rstrip("/")))

    def _files(self) -> dict[str, int]:
        """Every file of the dataset: dataset-relative name -> size."""
        root = self.path()
        selector = pafs.FileSelector(root, recursive=True, allow_not_found=True)
        return {
            info.path[len(root) + 1 :]: int(info.size)
            for info in self.fs.get_file_info(selector)
            if info.type == pafs.FileType.File
        }

    def collect_garbage(self, manifest: Manifest) -> int:
        """Remove parts of decided generations that `manifest` neither uses nor keeps as
        previous, manifests before the previous generation's and checkpoints no source
        names; returns files removed."""
        keep = {f.path for f in manifest.part_files()} | set(manifest.previous)
        keep.update(e.checkpoint for e in manifest.sources.values() if e.checkpoint)
        doomed = []
        for name in self._files():
            base = name.rsplit("/", 1)[-1]
            if name.startswith(f"{MANIFESTS}/"):
                found = MANIFEST_FILE.fullmatch(base)
                if found is not None and int(found.group(1)) < manifest.generation - 1:
                    doomed.append(name)
            elif name not in keep and name.endswith((".parquet", ".pickle")):
                made = NAMED_GENERATION.search(base)  # of the build that wrote it
                if made is not None and int(made.group(1) or made.group(2)) <= manifest.generation:
                    doomed.append(name)
        for name in doomed:
            self.fs.delete_file(self.path(name))
        return len(doomed)


def _region() -> str | None:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None


class ObjectStore(Store):
    """A dataset on object storage, and the local folder a build works in (None: read only)."""

    def __init__(self, uri: str, folder: Path | None = None) -> None:
        self.remote = RemoteDataset(uri)
        self.where: Path | str = uri
        self._folder = folder
        #: a random tag: builders racing for a generation never write the same name
        self._tag = f"-{secrets.token_hex(4)}"

    @classmethod
    @contextmanager
    def locked(cls, uri: str) -> Iterator[ObjectStore]:
        """The dataset at `uri` with a private temporary folder to build in (staging, parts
        before upload), locked; the folder goes when the build ends. A prefix that holds
        anything but a dataset is refused first (`refuse_foreign`)."""
        store = cls(uri)
        refuse_foreign(uri, store.remote.foreign())
        with tempfile.TemporaryDirectory(prefix="traceidx-build-") as folder, locked(Path(folder)):
            store._folder = Path(folder)
            yield store

    @property
    def folder(self) -> Path:
        if self._folder is None:
            raise RuntimeError(f"{self.where}: opened to read only; a build opens it with a folder")
        return self._folder

    @property
    def tag(self) -> str:
        return self._tag

    def read(self) -> Manifest | None:
        return self.remote.read()

    def check_parts(self, manifest: Published, *, checksums: bool) -> list[Damage]:
        """Sizes from one listing (checksums would mean reading every part)."""
        return self.remote.check_parts(manifest)

    @property
    def filesystem(self) -> Any:
        return self.remote.fs

    def path(self, relative: str) -> str:
        return self.remote.path(relative)

    def open(self, relative: str) -> Any:
        return self.remote.open(relative)

    def fetch(self, relative: str) -> Path:
        local = self.folder / relative  # the workers read it here
        self.remote.download(relative, local)
        return local

    def put(self, local: Path, relative: str) -> None:
        """Upload, then remove the local file."""
        self.remote.upload(local, relative)
        Path(local).unlink()

    def publish(self, manifest: Manifest) -> None:
        """Conditional: `GenerationTaken` if another build published that generation first."""
        self.remote.publish(manifest)

    def collect_garbage(self, manifest: Manifest | None) -> int:
        """The working folder's garbage, and the dataset's once a generation is known."""
        removed = collect_garbage(self._folder, manifest) if self._folder is not None else 0
        if manifest is not None:
            removed += self.remote.collect_garbage(manifest)
        return removed

    def abandon(self) -> None:
        if self._folder is not None:
            collect_garbage(self._folder, None)
