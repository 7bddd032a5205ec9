"""`traceidx.arrays.array` equals `pyarrow.array` on any values: the C converter where it is
built (the compiled install), and where it declines a value, pyarrow's own result or error."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import traceidx
from traceidx import arrays
from traceidx.schema import table_schema

#: the types a build converts: every table's columns, the semantic struct's children among them
TYPES = [f.type for table in ("items", "loops", "sessions", "records") for f in table_schema(table)]
SEMANTIC = table_schema("items").field("semantic").type
TYPES += [f.type for f in SEMANTIC]
#: odd values a converter may meet: every JSON scalar type, big ints, text not UTF-8-encodable
ODD = st.one_of(
    st.booleans(),
    st.floats(allow_nan=False),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=4),
    st.just("\ud800"),
    st.tuples(st.integers()),
    st.just([]),
    st.just({}),
)


def values_of(kind: pa.DataType, odd: bool) -> st.SearchStrategy[Any]:
    """Values of an Arrow type as a build holds them (None for null; with `odd`, sometimes a
    value of another type)."""
    if pa.types.is_struct(kind):
        members = {f.name: values_of(f.type, odd) for f in kind}
        # any subset of the members, sometimes with one the type does not have
        value: st.SearchStrategy[Any] = st.fixed_dictionaries(
            {}, optional={**members, "unknown": st.integers()}
        )
    elif pa.types.is_list(kind):
        item = values_of(kind.value_type, odd)
        value = st.one_of(st.lists(item, max_size=3), st.lists(item, max_size=3).map(tuple))
    elif kind == pa.string():
        value = st.text(max_size=12)
    elif kind == pa.bool_():
        value = st.booleans()
    elif pa.types.is_integer(kind) or pa.types.is_timestamp(kind):
        value = st.integers(min_value=-(2**63), max_value=2**63 - 1)
    else:
        raise AssertionError(f"no values for {kind}")
    choices = [st.none(), value, value]
    if odd:
        choices.append(ODD)
    return st.one_of(*choices)


def _outcome(convert: Any, values: list[Any], kind: pa.DataType) -> Any:
    try:
        result = convert(values, kind)
    except (pa.ArrowException, TypeError, ValueError, OverflowError, UnicodeError) as exc:
        return type(exc).__name__
    result.validate(full=True)
    return result


def _same(values: list[Any], kind: pa.DataType) -> None:
    ours, theirs = _outcome(arrays.array, values, kind), _outcome(pa.array, values, kind)
    if isinstance(theirs, pa.Array):
        assert isinstance(ours, pa.Array), ours
        assert ours.type == kind
        assert ours.equals(theirs), (ours.to_pylist(), theirs.to_pylist())
        assert ours.null_count == theirs.null_count
    else:
        assert ours == theirs


def test_the_compiled_install_converts_natively() -> None:
    assert traceidx.compiled() == arrays.NATIVE


@pytest.mark.parametrize("kind", TYPES, ids=str)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_equal_to_pyarrow(kind: pa.DataType, data: st.DataObject) -> None:
    _same(data.draw(st.lists(values_of(kind, odd=False), max_size=20)), kind)


@pytest.mark.parametrize("kind", [SEMANTIC.field("tool_call").type, pa.int64(), pa.string()])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_values_of_other_types_give_pyarrows_result_or_error(
    kind: pa.DataType, data: st.DataObject
) -> None:
    _same(data.draw(st.lists(values_of(kind, odd=True), max_size=20)), kind)


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        ([True, None], pa.int64()),  # a bool is an int to Python, not to Arrow
        ([1.0], pa.int64()),
        ([2**63], pa.int64()),
        ([-(2**63) - 1], pa.int64()),
        ([("a", 1)], pa.struct([("x", pa.string()), ("y", pa.int64())])),  # positional
        (["\ud800"], pa.string()),  # a lone surrogate has no UTF-8
        ([b"bytes"], pa.string()),
        ([1], pa.bool_()),
        ([[1, "a"]], pa.list_(pa.int64())),
    ],
)
def test_declined_values(values: list[Any], kind: pa.DataType) -> None:
    _same(values, kind)


def test_null_structs_give_their_children_empty_values() -> None:
    kind = pa.struct([("n", pa.int64()), ("s", pa.string()), ("l", pa.list_(pa.string()))])
    out = arrays.array([None, {"n": 5, "s": "é", "l": ["a"]}, {}], kind)
    assert out.to_pylist() == [None, {"n": 5, "s": "é", "l": ["a"]}, dict.fromkeys("nsl")]
    assert out.field("n").to_pylist() == [0, 5, None]  # as Arrow's StructBuilder leaves them
    assert out.field("l").to_pylist() == [[], ["a"], None]


def test_large_columns() -> None:
    values = [f"text {i} " * (i % 50) for i in range(20_000)]
    values[::7] = [None] * len(values[::7])
    assert arrays.array(values, pa.string()).equals(pa.array(values, pa.string()))
    ints = list(range(-(10**6), 10**6, 3))
    assert arrays.array(ints, pa.timestamp("ms", "UTC")).equals(
        pa.array(ints, pa.timestamp("ms", "UTC"))
    )


@pytest.mark.parametrize("kind", [pa.bool_(), pa.int64(), pa.string(), SEMANTIC], ids=str)
def test_runs_of_nulls_across_bitmap_bytes(kind: pa.DataType) -> None:
    sample = {
        pa.bool_(): True,
        pa.int64(): 7,
        pa.string(): "x",
        SEMANTIC: {"role": "text", "evidence_strength": "direct", "text": {"has_images": True}},
    }[kind]
    for lead in range(9):
        for run in (1, 7, 8, 9, 17, 64, 70):
            values = [sample] * lead + [None] * run + [sample] * 3 + [None] * (run // 2)
            _same(values, kind)


@pytest.mark.parametrize("kind", [SEMANTIC, pa.int64(), pa.list_(pa.string())], ids=str)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_rows_in_a_given_order(kind: pa.DataType, data: st.DataObject) -> None:
    values = data.draw(st.lists(values_of(kind, odd=False), max_size=20))
    order = data.draw(st.permutations(range(len(values))))
    rows = np.array(order, dtype=np.int64)
    out = arrays.array(values, kind, rows)
    out.validate(full=True)
    assert out.equals(pa.array(values, kind).take(rows))
    assert out.equals(pa.array([values[at] for at in order], kind))


def test_an_order_naming_a_row_that_is_not_there() -> None:
    with pytest.raises((IndexError, pa.ArrowIndexError)):
        arrays.array([1, 2], pa.int64(), np.array([0, 2], dtype=np.int64))
