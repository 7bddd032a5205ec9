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
line, and a whole run of them is computed at once (`traceidx.sources.idruns` evaluates the
streams over numpy arrays; the domain holds no numpy); within a source they never collide
(every step of S is a bijection of the 63-bit integers), and across sources they are as good
as random. Every id is a non-negative signed 64-bit integer (safe in Parquet, DuckDB, Polars
and JSON). Unchanged evidence therefore gives unchanged ids across rebuilds. `ID_SCHEME` names
this scheme; a dataset built under another is re-projected.
"""

from __future__ import annotations

from functools import lru_cache
from hashlib import blake2b
from typing import Final

#: the id scheme (a dataset built under another one is re-projected)
ID_SCHEME: Final = "blake2b64-splitmix63-records-items"
MASK: Final = (1 << 63) - 1
#: SplitMix64's increment and output mix
GAMMA: Final = 0x9E3779B97F4A7C15
MIX1: Final = 0xBF58476D1CE4E5B9
MIX2: Final = 0x94D049BB133111EB


def _h(*parts: object) -> int:
    return _digest("\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass"))


def source_id(locator: str) -> int:
    """Id of the Source at a canonical locator."""
    return _h("source", locator)


def _digest(data: bytes) -> int:
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "big") & MASK


#: an item's ordinal takes this many low bits of its stream number
ORDINAL_BITS: Final = 16


@lru_cache(maxsize=1024)
def stream_seed(kind: bytes, source: int) -> int:
    """The seed of a Source's stream of record (`kind` ``b"record"``) or item ids."""
    return _digest(b"%s\x1f%d" % (kind, source))


def _stream(seed: int, n: int) -> int:
    """Output number `n` of the SplitMix64 generator seeded with `seed`, modulo 2**63."""
    z = (seed + n * GAMMA) & MASK
    z = ((z ^ (z >> 30)) * MIX1) & MASK
    z = ((z ^ (z >> 27)) * MIX2) & MASK
    return z ^ (z >> 31)


def record_id(source: int, position: int) -> int:
    """Id of the Record at `position` of a Source."""
    return _stream(stream_seed(b"record", source), position + 1)


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
    if ordinal >> ORDINAL_BITS:
        return _digest(b"item\x1f%d\x1f%d\x1f%d" % (source, record_position, ordinal))
    return _stream(stream_seed(b"item", source), (record_position << ORDINAL_BITS) + ordinal + 1)
