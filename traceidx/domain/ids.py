"""Deterministic opaque ids: 63-bit integers derived from evidence, never from content.

* source  = H("source", locator)
* record  = S(H("record", source_id), source_position + 1)
* session = H("session", runtime, native_id)
* loop    = H("loop", source_id, start record position)
* model call = H("model_call", source_id, first record position, ordinal)
* item    = S(H("item", source_id), first record position * 2**16 + ordinal + 1), the
  ordinal counting the items whose first supporting record that is (from the 65,536th
  item of one record on: H("item", source_id, first record position, ordinal))

H is BLAKE2b-64 over the parts joined with a 0x1F separator, with the top bit cleared.
S(seed, n) is output number n of SplitMix64's generator computed modulo 2**63 and seeded
with `seed`. So a source's record and item ids cost one hash each per source, not per
line, and a whole run of them is computed at once (`record_ids`, `item_ids`); within a
source they never collide (every step of S is a bijection of the 63-bit integers), and
across sources they are as good as random. Every id is a non-negative signed 64-bit integer
(safe in Parquet, DuckDB, Polars and JSON). Unchanged evidence therefore gives unchanged ids
across rebuilds. `ID_SCHEME` names this scheme; a dataset built under another is re-projected.
"""

from __future__ import annotations

from array import array
from functools import lru_cache
from hashlib import blake2b
from typing import Final

import numpy as np

#: the id scheme (a dataset built under another one is re-projected)
ID_SCHEME: Final = "blake2b64-splitmix63-records-items"
_MASK: Final = (1 << 63) - 1
#: SplitMix64's increment and output mix
_GAMMA: Final = 0x9E3779B97F4A7C15
_MIX1: Final = 0xBF58476D1CE4E5B9
_MIX2: Final = 0x94D049BB133111EB


def _h(*parts: object) -> int:
    return _digest("\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass"))


def source_id(locator: str) -> int:
    """Id of the Source at a canonical locator."""
    return _h("source", locator)


def _digest(data: bytes) -> int:
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "big") & _MASK


#: an item's ordinal takes this many low bits of its stream number
_ORDINAL_BITS: Final = 16
#: at most this many ids are computed one by one rather than through numpy
_FEW: Final = 16


@lru_cache(maxsize=1024)
def _seed(kind: bytes, source: int) -> int:
    return _digest(b"%s\x1f%d" % (kind, source))


def _stream(seed: int, n: int) -> int:
    """Output number `n` of the SplitMix64 generator seeded with `seed`, modulo 2**63."""
    z = (seed + n * _GAMMA) & _MASK
    z = ((z ^ (z >> 30)) * _MIX1) & _MASK
    z = ((z ^ (z >> 27)) * _MIX2) & _MASK
    return z ^ (z >> 31)


def _streams(seed: int, n: np.ndarray) -> np.ndarray:
    """`_stream` of every number of a uint64 array, as int64 (uint64 arithmetic wraps
    modulo 2**64; masking the top bit after each step leaves the result modulo 2**63)."""
    mask = np.uint64(_MASK)
    z = n * np.uint64(_GAMMA)
    z += np.uint64(seed)
    z &= mask
    z ^= z >> np.uint64(30)
    z *= np.uint64(_MIX1)
    z &= mask
    z ^= z >> np.uint64(27)
    z *= np.uint64(_MIX2)
    z &= mask
    z ^= z >> np.uint64(31)
    return z.view(np.int64)


def record_id(source: int, position: int) -> int:
    """Id of the Record at `position` of a Source."""
    return _stream(_seed(b"record", source), position + 1)


def record_ids(source: int, first: int, count: int) -> array[int]:
    """Ids of the Records at positions ``first .. first + count - 1`` of a Source."""
    if count <= _FEW:
        return array("q", [record_id(source, p) for p in range(first, first + count)])
    n = np.arange(first + 1, first + count + 1, dtype=np.uint64)
    return array("q", _streams(_seed(b"record", source), n).tobytes())


def session_id(runtime: str, native_id: str) -> int:
    """Id of the Session a runtime names `native_id`."""
    return _h("session", runtime, native_id)


def loop_id(source: int, start_position: int) -> int:
    """Id of the Loop started by the record at `start_position` of a Source."""
    return _digest(b"loop\x1f%d\x1f%d" % (source, start_position))


def model_call_id(source: int, record_position: int, ordinal: int) -> int:
    """Id of the `ordinal`-th model call whose first record is at `record_position`."""
    return _digest(b"model_call\x1f%d\x1f%d\x1f%d" % (source, record_position, ordinal))


def item_id(source: int, record_position: int, ordinal: int) -> int:
    """Id of the `ordinal`-th Item whose first supporting record is at `record_position`."""
    if ordinal >> _ORDINAL_BITS:
        return _digest(b"item\x1f%d\x1f%d\x1f%d" % (source, record_position, ordinal))
    return _stream(_seed(b"item", source), (record_position << _ORDINAL_BITS) + ordinal + 1)


def item_ids(source: int, record_positions: list[int], ordinals: list[int]) -> list[int]:
    """`item_id` of each (first record position, ordinal) pair of a Source."""
    if len(ordinals) <= _FEW or max(ordinals) >> _ORDINAL_BITS:
        return [item_id(source, p, o) for p, o in zip(record_positions, ordinals, strict=True)]
    n = np.array(record_positions, dtype=np.uint64) << np.uint64(_ORDINAL_BITS)
    n += np.array(ordinals, dtype=np.uint64) + np.uint64(1)
    ids: list[int] = _streams(_seed(b"item", source), n).tolist()
    return ids
