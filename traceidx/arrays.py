"""Arrow arrays from lists of Python values: the C converter where it is built, else pyarrow.

`pyarrow.array` pays per value for type checks and calls through its builders, and per
struct member for a dict lookup; a build converts about a million values a second that way.
The C extension ``traceidx._columns`` (compiled with the mypyc modules; see setup.py) fills the
same buffers, taken from Arrow's memory pool, in one walk over the values, for the types a
build converts most: int64, bool, string, timestamp (as int64), list and struct of these,
in a given order of rows if asked (so a caller that groups rows reorders no list and needs
no Arrow take). It halves the time of the semantic column's tool calls, and the instructions
of the items and records tables' conversion fall by 30% and 20% (`benchmarks/README.md`).
The result equals ``pyarrow.array(values, type)`` (tested on random values,
`tests/test_arrays.py`); values it does not take (a tuple for a struct, a float for an int,
an int out of range, a string that is not UTF-8) and other types go to pyarrow, which
converts them or reports them its own way."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa


def _native() -> ModuleType | None:
    try:
        return importlib.import_module("traceidx._columns")
    except ImportError:  # a pure install: pyarrow converts everything
        return None


_columns: Final = _native()

#: whether the C converter is built into this install
NATIVE: Final = _columns is not None

#: a spec `traceidx._columns.convert` reads, per Arrow type (None: a type it does not take)
_SPECS: dict[pa.DataType, tuple[Any, ...] | None] = {}


def _spec(kind: pa.DataType) -> tuple[Any, ...] | None:
    if kind in _SPECS:
        return _SPECS[kind]
    spec: tuple[Any, ...] | None = None
    if kind == pa.int64() or pa.types.is_timestamp(kind):
        spec = ("int64",)
    elif kind == pa.bool_():
        spec = ("bool",)
    elif kind == pa.string():
        spec = ("string",)
    elif pa.types.is_list(kind):
        item = _spec(kind.value_type)
        spec = None if item is None else ("list", item)
    elif pa.types.is_struct(kind):
        children = [_spec(f.type) for f in kind]
        if all(child is not None for child in children):
            spec = ("struct", tuple(f.name for f in kind), tuple(children))
    _SPECS[kind] = spec
    return spec


def _allocate(size: int) -> pa.ResizableBuffer:
    return pa.allocate_buffer(size, resizable=True)


def _array(kind: pa.DataType, node: tuple[Any, ...]) -> pa.Array:
    length, nulls, validity, buffers, children = node
    parts = [validity, *buffers]  # Arrow buffers (validity None when no slot is null)
    if pa.types.is_list(kind):
        items = [_array(kind.value_type, children[0])]
    elif pa.types.is_struct(kind):
        items = [_array(f.type, child) for f, child in zip(kind, children, strict=True)]
    else:
        items = None
    return pa.Array.from_buffers(kind, length, parts, nulls, children=items)


def array(
    values: list[Any], kind: pa.DataType, order: npt.NDArray[np.int64] | None = None
) -> pa.Array:
    """``pyarrow.array(values, kind)``, converted by the C converter when it can; with an
    `order` (row numbers), its rows in that order (``.take(order)``, with no reordered copy)."""
    if _columns is not None and (spec := _spec(kind)) is not None:
        try:
            return _array(kind, _columns.convert(spec, values, _allocate, order))
        except _columns.Unsupported:
            pass
    converted = pa.array(values, kind)
    return converted if order is None else converted.take(order)
