"""The one place a dataset's location becomes its `Store`: a local folder (`LocalStore`) or a
URI of object storage (`ObjectStore`, whose module and pyarrow.fs load only for one)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from traceidx import storage
from traceidx.store.base import Store
from traceidx.store.local import LocalStore


@contextmanager
def open_store(dataset: Path | str) -> Iterator[Store]:
    """The dataset at `dataset` opened for a build, locked: a local folder is built in place
    under its lock; a dataset on object storage in a private locked temporary folder."""
    if not storage.is_uri(dataset):
        with LocalStore.locked(Path(dataset)) as local:
            yield local
        return
    from traceidx.store.remote import ObjectStore

    with ObjectStore.locked(str(dataset).rstrip("/")) as remote:
        yield remote


def reader(dataset: Path | str) -> Store:
    """The dataset at `dataset` opened to read (no lock, no working folder for a remote one)."""
    if not storage.is_uri(dataset):
        return LocalStore(Path(dataset).expanduser())
    from traceidx.store.remote import ObjectStore

    return ObjectStore(str(dataset).rstrip("/"))
