"""Deterministic opaque ids: 63-bit integers derived from evidence, never from content.

* source  = H("source", locator)
* record  = H("record", source_id, source_position)
* session = H("session", runtime, native_id)
* loop    = H("loop", source_id, start record position)
* item    = H("item", source_id, first record position, ordinal among items of that record)

H is BLAKE2b-64 over the parts joined with a 0x1F separator, with the top bit cleared so every
id is a non-negative signed 64-bit integer (safe in Parquet, DuckDB, Polars and JSON).
Unchanged evidence therefore gives unchanged ids across rebuilds.
"""

from __future__ import annotations

from hashlib import blake2b

_MASK = (1 << 63) - 1


def _h(*parts: object) -> int:
    return _digest("\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass"))


def source_id(locator: str) -> int:
    """Id of the Source at a canonical locator."""
    return _h("source", locator)


def _digest(data: bytes) -> int:
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "big") & _MASK


def record_id(source: int, position: int) -> int:
    """Id of the Record at `position` of a Source (the bytes `_h` would hash, built directly)."""
    return _digest(b"record\x1f%d\x1f%d" % (source, position))


def session_id(runtime: str, native_id: str) -> int:
    """Id of the Session a runtime names `native_id`."""
    return _h("session", runtime, native_id)


def loop_id(source: int, start_position: int) -> int:
    """Id of the Loop started by the record at `start_position` of a Source."""
    return _digest(b"loop\x1f%d\x1f%d" % (source, start_position))


def item_id(source: int, record_position: int, ordinal: int) -> int:
    """Id of the `ordinal`-th Item whose first supporting record is at `record_position`."""
    return _digest(b"item\x1f%d\x1f%d\x1f%d" % (source, record_position, ordinal))
