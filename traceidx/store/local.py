"""A dataset in a local folder (traceidx.store.dataset): built in place under its lock,
published by the atomic swap of ``manifest.json``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from traceidx.store import dataset
from traceidx.store.base import Store
from traceidx.store.dataset import Damage
from traceidx.store.manifest import Manifest, Published


class LocalStore(Store):
    """A dataset folder: parts, checkpoints and the manifest in place."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self.where: Path | str = folder

    @classmethod
    @contextmanager
    def locked(cls, folder: Path) -> Iterator[LocalStore]:
        """The dataset in `folder`, its build lock held (traceidx.store.dataset.locked)."""
        with dataset.locked(folder):
            yield cls(folder)

    @property
    def folder(self) -> Path:
        return self._folder

    @property
    def tag(self) -> str:
        return ""  # one builder at a time holds the lock

    def read(self) -> Manifest | None:
        return dataset.read_manifest(self._folder)

    def read_published(self) -> Published | None:
        return dataset.read_published(self._folder)

    def check_parts(self, manifest: Published, *, checksums: bool) -> list[Damage]:
        """Each part's size and Parquet footer, and with `checksums` its checksum."""
        return dataset.check_parts(self._folder, manifest, checksums=checksums)

    @property
    def filesystem(self) -> None:
        return None

    def path(self, relative: str) -> str:
        return str(self._folder / relative)

    def open(self, relative: str) -> Path:
        return self._folder / relative

    def fetch(self, relative: str) -> Path:
        return self._folder / relative  # already here

    def put(self, local: Path, relative: str) -> None:
        target = self._folder / relative
        if Path(local) != target:  # a part is written in place; a checkpoint is moved there
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(local, target)

    def publish(self, manifest: Manifest) -> None:
        """Swap the manifest in with one atomic rename (under the lock a build holds)."""
        dataset.swap_manifest(self._folder, manifest)

    def collect_garbage(self, manifest: Manifest | None) -> int:
        return dataset.collect_garbage(self._folder, manifest)

    def abandon(self) -> None:
        dataset.collect_garbage(self._folder, dataset.read_manifest(self._folder))

    def tighten(self) -> int:
        return dataset.tighten(self._folder)

    def exposed(self) -> list[Path]:
        return dataset.exposed(self._folder)
