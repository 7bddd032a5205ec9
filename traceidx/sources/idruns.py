"""Ids of whole runs at once: the streams of `traceidx.domain.ids` evaluated over numpy arrays.

A source's record ids (framing keeps them, `traceidx.sources.records.SourceKeys`) and its item
ids (projection) are outputs of one SplitMix63 stream per source and kind; `record_ids` and
`item_ids` compute a run of them in a few array operations, equal to `ids.record_id` and
`ids.item_id` one by one (a run of at most `_FEW` is computed one by one). The scheme itself,
and every id that is not part of a run, stays in the domain, which imports no numpy.
"""

from __future__ import annotations

from array import array
from typing import Final

import numpy as np

from traceidx.domain import ids

#: at most this many ids are computed one by one rather than through numpy
_FEW: Final = 16


def _streams(seed: int, n: np.ndarray) -> np.ndarray:
    """S (`traceidx.domain.ids`) of every number of a uint64 array, as int64 (uint64 arithmetic
    wraps modulo 2**64; masking the top bit after each step leaves the result modulo 2**63)."""
    mask = np.uint64(ids.MASK)
    z = n * np.uint64(ids.GAMMA)
    z += np.uint64(seed)
    z &= mask
    z ^= z >> np.uint64(30)
    z *= np.uint64(ids.MIX1)
    z &= mask
    z ^= z >> np.uint64(27)
    z *= np.uint64(ids.MIX2)
    z &= mask
    z ^= z >> np.uint64(31)
    return z.view(np.int64)


def record_ids(source: int, first: int, count: int) -> array[int]:
    """Ids of the Records at positions ``first .. first + count - 1`` of a Source."""
    if count <= _FEW:
        return array("q", [ids.record_id(source, p) for p in range(first, first + count)])
    n = np.arange(first + 1, first + count + 1, dtype=np.uint64)
    return array("q", _streams(ids.stream_seed(b"record", source), n).tobytes())


def item_ids(source: int, record_positions: list[int], ordinals: list[int]) -> list[int]:
    """`ids.item_id` of each (first record position, ordinal) pair of a Source."""
    if len(ordinals) <= _FEW or max(ordinals) >> ids.ORDINAL_BITS:
        return [ids.item_id(source, p, o) for p, o in zip(record_positions, ordinals, strict=True)]
    n = np.array(record_positions, dtype=np.uint64) << np.uint64(ids.ORDINAL_BITS)
    n += np.array(ordinals, dtype=np.uint64) + np.uint64(1)
    found: list[int] = _streams(ids.stream_seed(b"item", source), n).tolist()
    return found
