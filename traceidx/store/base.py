"""The storage seam: one interface to a dataset, whether it lives in a local folder or on
object storage (in the spirit of pyiceberg's ``FileIO``).

The rest of traceidx never asks which kind of dataset it holds; it asks the `Store`: the
current manifest, whether the live parts are whole, the local folder a build works in, the tag
its part names end with, a published file to read (and its path and filesystem for pyarrow and
DuckDB), a finished file put into the dataset, a generation published, garbage collected.
`traceidx.store.local` keeps a dataset in a folder (a lock, an atomic manifest swap);
`traceidx.store.remote` keeps one at a URI (uploads, a manifest per generation published by a
conditional write). `traceidx.store.open` makes the one or the other from a location.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from traceidx.store.dataset import Damage
from traceidx.store.manifest import Manifest, Published


class Store(ABC):
    """A dataset's storage: its published generations, and for a build the working folder its
    new generation is made in."""

    #: the dataset as messages name it (a local folder, or a URI)
    where: Path | str

    @property
    @abstractmethod
    def folder(self) -> Path:
        """The local folder a build works in (staging, parts before they are put, checkpoints
        read): the dataset's own folder locally, a private locked temporary folder for a
        dataset on object storage."""

    @property
    @abstractmethod
    def tag(self) -> str:
        """What a build's part names end with (`Partition.path`)."""

    @abstractmethod
    def read(self) -> Manifest | None:
        """The current manifest, or None when nothing was ever published."""

    def read_published(self) -> Published | None:
        """The current manifest's parts (its sources may be left unread): what a reader of the
        tables needs; None when nothing was ever published."""
        return self.read()

    @abstractmethod
    def check_parts(self, manifest: Published, *, checksums: bool) -> list[Damage]:
        """The live parts that are missing or not what `manifest` recorded (with `checksums`,
        where the store can tell without reading every part remotely, their checksums too)."""

    @property
    @abstractmethod
    def filesystem(self) -> Any:
        """The pyarrow filesystem published files are read through (None: local files, which
        DuckDB reads by path)."""

    @abstractmethod
    def path(self, relative: str) -> str:
        """A dataset-relative name as a path of `filesystem`."""

    @abstractmethod
    def open(self, relative: str) -> Any:
        """A published file, to read (a local path, or a file opened for ranged reads)."""

    @abstractmethod
    def fetch(self, relative: str) -> Path:
        """A published file as a local file beneath `folder` (downloaded if need be)."""

    @abstractmethod
    def put(self, local: Path, relative: str) -> None:
        """Move a finished file of the working folder to a dataset-relative name (nothing
        becomes current before `publish`)."""

    @abstractmethod
    def publish(self, manifest: Manifest) -> None:
        """Make `manifest` the current generation (`GenerationTaken` if another build
        published that generation first)."""

    @abstractmethod
    def collect_garbage(self, manifest: Manifest | None) -> int:
        """Remove what no manifest needs (staging folders, parts neither live nor previous,
        checkpoints no source names); returns files removed."""

    @abstractmethod
    def abandon(self) -> None:
        """Remove the temporary files of a build whose writing failed (the current generation
        stays)."""

    def tighten(self) -> int:
        """Make every path of the dataset its owner's alone; how many were wider (none where
        access is the store's policy)."""
        return 0

    def exposed(self) -> list[Path]:
        """The dataset's paths that group or others may access (none where access is the
        store's policy)."""
        return []
