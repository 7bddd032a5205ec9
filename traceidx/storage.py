"""Locations: URIs of any filesystem pyarrow.fs supports (traces, datasets); the default dataset.

A trace root or a `--dataset` may be a URI (``s3://bucket/prefix``, ``gs://…``, any scheme
``pyarrow.fs.FileSystem.from_uri`` accepts); anything else is a local path. S3's endpoint,
region and credentials come from the standard AWS variables (``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``/``AWS_DEFAULT_REGION``), as
every AWS client reads them. A remote source's locator is its full URI; its size and
modification time (whole seconds on S3) stand for a file's in sync decisions, and it is read
as a stream of ranged reads, never copied whole.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from traceidx.errors import UsageError

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_uri(location: object) -> bool:
    """Whether `location` names a remote filesystem (a ``scheme://`` string other than
    ``file://``)."""
    return (
        isinstance(location, str)
        and _SCHEME.match(location) is not None
        and not location.startswith("file://")
    )


def local_path(location: str) -> str:
    """A ``file://`` URI's path (other strings as they are)."""
    return location.removeprefix("file://")


@functools.lru_cache(maxsize=16)
def _filesystem(root: str) -> tuple[Any, str]:
    import pyarrow.fs as pafs

    try:
        fs, path = pafs.FileSystem.from_uri(root)
    except (ValueError, OSError) as exc:  # an unknown scheme, a bad URI
        raise UsageError(
            f"{root}: not a location pyarrow.fs can open ({exc}); check the URI"
        ) from exc
    return fs, path.rstrip("/")


def resolve(uri: str) -> tuple[Any, str]:
    """The pyarrow filesystem of a URI and the path of what it names there (filesystems are
    made once per scheme and host, from the environment's settings)."""
    parts = urlsplit(uri)
    fs, base = _filesystem(f"{parts.scheme}://{parts.netloc}/")
    rest = parts.path.strip("/")
    return fs, f"{base}/{rest}" if rest else base


def join(uri: str, relative: str) -> str:
    """A URI beneath another."""
    return f"{uri.rstrip('/')}/{relative.lstrip('/')}"


def uri_of(uri: str, path: str) -> str:
    """The URI of a filesystem path found beneath `uri` (same scheme and host)."""
    parts = urlsplit(uri)
    _, base = _filesystem(f"{parts.scheme}://{parts.netloc}/")
    return f"{parts.scheme}://{parts.netloc}/{path.removeprefix(base).lstrip('/')}"


def stat(uri: str) -> tuple[int, int]:
    """Size and modification time (ns) of a remote file; FileNotFoundError when there is
    none."""
    import pyarrow.fs as pafs

    fs, path = resolve(uri)
    info = fs.get_file_info(path)
    if info.type != pafs.FileType.File:
        raise FileNotFoundError(2, "no such object", uri)
    return int(info.size), int(info.mtime_ns or 0)


def open_input(uri: str) -> Any:
    """A remote file opened for reading: a seekable stream of ranged reads (pyarrow's
    RandomAccessFile); FileNotFoundError when there is none."""
    fs, path = resolve(uri)
    try:
        return fs.open_input_file(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if "does not exist" in str(exc) or "NoSuchKey" in str(exc):
            raise FileNotFoundError(2, "no such object", uri) from exc
        raise


#: a listed file: its name, size and modification time (ns)
Listed = tuple[str, int, int]


def listing(uri: str) -> tuple[bool, dict[str, list[Listed]]]:
    """What is at a remote location: whether it is one file, and otherwise the files beneath
    it by directory (as filesystem paths; a bucket's root is a valid location), each with the
    size and modification time the listing gave (no request per file)."""
    import pyarrow.fs as pafs

    fs, path = resolve(uri)
    info = fs.get_file_info(path)
    if info.type == pafs.FileType.File:
        return True, {}
    selector = pafs.FileSelector(path, recursive=True, allow_not_found=True)
    out: dict[str, list[Listed]] = {}
    for entry in fs.get_file_info(selector):
        if entry.type == pafs.FileType.File:
            listed = (entry.base_name, int(entry.size), int(entry.mtime_ns or 0))
            out.setdefault(entry.path.rsplit("/", 1)[0], []).append(listed)
    return False, out


def location(text: str) -> Path | str:
    """A URI as it is, anything else as a local path (``~`` expanded)."""
    return text if is_uri(text) else Path(text).expanduser()


def default_dataset() -> Path | str:
    """`$TRACEIDX_DATASET` (a path or a URI), else `$XDG_DATA_HOME/traceidx`, else
    ~/.local/share/traceidx."""
    env = os.environ.get("TRACEIDX_DATASET")
    if env:
        return location(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "traceidx"
