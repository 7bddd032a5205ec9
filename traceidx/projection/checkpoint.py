"""Checkpoints: where a long source's ingestion stood after its last complete line.

A build that indexes a plain (uncompressed) source of at least `MIN_BYTES` keeps, beside the
dataset, the state its ingestion had just before the adapter's `finish`: the adapter itself
(pickled; it holds only what it has not drained), the projector's counters, the record
times and fingerprints read so far, and the ids of the loops and items that `finish` then
produced (the *tail*: drafts that were not settled yet). When the file has only grown, the
next build resumes from the checkpoint (its first 64 KiB, and the 64 KiB before the
checkpoint, must be the bytes they were): it reads the new lines only, the tail's rows are
replaced by what the resumed adapter now says about them, and every settled row stays as
published. The result equals re-reading the whole file (tests/projection/test_checkpoint.py).

A checkpoint is only trusted by the same code that wrote it (`code_version`) and only when
it carries this user's signature: it is a pickle, so a dataset copied from elsewhere must not
run anyone's code. The key is a random secret in the user's cache folder (`key_path`).
Anything else (another version or key, an unreadable file, a source that shrank or changed its
first bytes) re-reads the source from its first byte; a checkpoint is only ever a shortcut.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import secrets
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from traceidx.sources.sourceio import open_regular

#: sources shorter than this are re-read on append: cheaper than keeping their state
MIN_BYTES = 8 << 20
#: the bytes just before a checkpoint's offset are hashed, and checked before resuming
ANCHOR_BYTES = 64 * 1024


def anchor(locator: str, offset: int) -> str | None:
    """The digest of the `ANCHOR_BYTES` before `offset` in the file (None if unreadable)."""
    start = max(0, offset - ANCHOR_BYTES)
    try:
        with open_regular(locator) as source:
            source.seek(start)
            data = source.read(offset - start)
    except OSError:
        return None
    if len(data) != offset - start:
        return None
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def key_path() -> Path:
    """`$TRACEIDX_CHECKPOINT_KEY`, else `$XDG_CACHE_HOME/traceidx/checkpoint.key`."""
    env = os.environ.get("TRACEIDX_CHECKPOINT_KEY")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "traceidx" / "checkpoint.key"


def _key() -> bytes | None:
    """This user's signing key (created on first use); None when it cannot be kept."""
    path = key_path()
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    except OSError:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(secrets.token_bytes(32))
        return path.read_bytes()
    except FileExistsError:  # another process created it first
        return path.read_bytes()
    except OSError:
        return None


@cache
def code_version() -> str:
    """A digest of the package's source files: a checkpoint is code-specific state."""
    hasher = hashlib.blake2b(digest_size=16)
    root = Path(__file__).resolve().parents[1]  # the traceidx package
    for path in sorted(root.rglob("*.py")):
        hasher.update(str(path.relative_to(root)).encode())
        hasher.update(path.read_bytes())
    return hasher.hexdigest()


@dataclass(slots=True)
class Checkpoint:
    """The resumable state of one source (see the module docstring)."""

    version: str
    locator: str
    runtime: str
    offset: int
    adapter: bytes
    times: bytes
    fingerprints: bytes
    projector: dict[str, Any] | None
    counters: dict[str, Any]
    tail: dict[str, list[int]] = field(default_factory=dict)
    anchor: str | None = None

    def write(self, path: Path) -> bool:
        """Write it, signed, to `path`; False when no signing key can be kept."""
        key = _key()
        if key is None:
            return False
        data = pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)
        with open(path, "wb") as out:
            out.write(hmac.digest(key, data, "sha256"))
            out.write(data)
        return True


def load(path: Path, locator: str, version: str) -> Checkpoint | None:
    """The checkpoint at `path` if this user signed it for `locator` with this `version`."""
    key = _key()
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    tag, data = raw[:32], raw[32:]
    if key is None or not hmac.compare_digest(tag, hmac.digest(key, data, "sha256")):
        return None
    try:
        checkpoint = pickle.loads(data)
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError):
        return None
    if not isinstance(checkpoint, Checkpoint):
        return None
    if checkpoint.version != version or checkpoint.locator != locator:
        return None
    if checkpoint.anchor is None or anchor(locator, checkpoint.offset) != checkpoint.anchor:
        return None  # the bytes before it changed: the file was rewritten, not appended to
    return checkpoint
