"""The Arrow schema, derived from the domain Structs in `domain.model` (never hand-written).

`msgspec.inspect` walks each table Struct: ints become int64 (ids are 63-bit), ``EpochMs``
fields become ``timestamp[ms, UTC]``, Literals and strings become strings, tuples become lists
and nested Structs become structs. The ``semantic`` union becomes
``struct<role, evidence_strength, <one nullable child per value shape>>``; the child is named
after the value type in snake case, and ``ShellToolCall`` shares ``tool_call`` (its extra
``shell_fragments`` member is part of that child).
"""

from __future__ import annotations

import re
import sys
from functools import cache
from typing import Any, Final

import msgspec
import msgspec.inspect as mi
import numpy as np
import numpy.typing as npt
import pyarrow as pa

from traceidx.domain import model
from traceidx.domain.columns import COLUMN_DOCS

#: Value Struct -> the name of its child in the stored `semantic` struct.
SHAPE_OF: Final[dict[type[msgspec.Struct], str]] = {}
for _role_type in model.ROLE_TYPES:
    _value_type = _role_type.__annotations__["value"]
    _value_cls = getattr(model, _value_type) if isinstance(_value_type, str) else _value_type
    _name = "tool_call" if _value_cls is model.ShellToolCall else None
    SHAPE_OF[_value_cls] = _name or re.sub(r"(?<!^)(?=[A-Z])", "_", _value_cls.__name__).lower()

#: role name -> shape child name
SHAPE_BY_ROLE: Final[dict[str, str]] = {
    model.role_of(t): SHAPE_OF[_v]
    for t in model.ROLE_TYPES
    for _v in [getattr(model, t.__annotations__["value"])]
}
SHAPES: Final[tuple[str, ...]] = tuple(dict.fromkeys(SHAPE_OF.values()))


def _arrow(t: mi.Type) -> pa.DataType:
    if isinstance(t, mi.UnionType):
        others = [x for x in t.types if not isinstance(x, mi.NoneType)]
        if len(others) == 1:
            return _arrow(others[0])
        return _semantic_type()
    if isinstance(t, mi.Metadata):
        if (t.extra or {}).get("arrow") == "timestamp_ms_utc":
            return pa.timestamp("ms", tz="UTC")
        return _arrow(t.type)
    if isinstance(t, mi.IntType):
        return pa.int64()
    if isinstance(t, mi.StrType | mi.LiteralType):
        return pa.string()
    if isinstance(t, mi.BoolType):
        return pa.bool_()
    if isinstance(t, mi.VarTupleType | mi.ListType):
        return pa.list_(_arrow(t.item_type))
    if isinstance(t, mi.StructType):
        return _struct(t.cls)
    raise TypeError(f"no Arrow mapping for {t!r}")


@cache
def _struct(cls: type[msgspec.Struct]) -> pa.StructType:
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    return pa.struct([pa.field(f.name, _arrow(f.type)) for f in info.fields])


@cache
def _semantic_type() -> pa.StructType:
    children: dict[str, pa.StructType] = {}
    for value_cls, shape in SHAPE_OF.items():
        current = children.get(shape)
        new = _struct(value_cls)
        if current is None:
            children[shape] = new
        else:  # ToolCall and ShellToolCall share one child: the union of their members
            names = {f.name for f in current}
            extra = [f for f in new if f.name not in names]
            children[shape] = pa.struct([*list(current), *extra])
    fields = [pa.field("role", pa.string()), pa.field("evidence_strength", pa.string())]
    fields += [pa.field(name, children[name]) for name in SHAPES]
    return pa.struct(fields)


def _optional(t: mi.Type) -> bool:
    """Whether a field's type admits None (a required field may still be absent)."""
    return isinstance(t, mi.UnionType) and any(isinstance(x, mi.NoneType) for x in t.types)


@cache
def table_schema(table: str) -> pa.Schema:
    """The Arrow schema of one table, with column descriptions as field metadata."""
    cls = model.TABLES[table]
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    docs = COLUMN_DOCS.get(table, {})
    fields = []
    for f in info.fields:
        meta = {"description": docs[f.name]} if f.name in docs else None
        nullable = not f.required or _optional(f.type)
        fields.append(pa.field(f.name, _arrow(f.type), nullable=nullable, metadata=meta))
    return pa.schema(fields)


#: string leaves that hold free text or unique values: dictionary encoding only costs there,
#: and their min/max statistics prune nothing
_FREE_TEXT: Final = frozenset(
    {"value", "arguments", "fingerprint", "native_id", "locator", "element"}
)


def _leaves(t: pa.DataType, path: str) -> list[tuple[str, pa.DataType]]:
    """The Parquet column paths of the leaves under a field, with their types."""
    if pa.types.is_struct(t):
        return [leaf for f in t for leaf in _leaves(f.type, f"{path}.{f.name}")]
    if pa.types.is_list(t):
        return _leaves(t.value_type, f"{path}.list.element")
    return [(path, t)]


def _free_text(path: str, t: pa.DataType) -> bool:
    return pa.types.is_string(t) and path.rsplit(".", 1)[-1] in _FREE_TEXT


@cache
def dictionary_columns(table: str) -> tuple[str, ...]:
    """The Parquet column paths of a table worth dictionary encoding (categorical strings)."""
    return tuple(
        path
        for f in table_schema(table)
        for path, t in _leaves(f.type, f.name)
        if pa.types.is_string(t) and not _free_text(path, t)
    )


@cache
def statistics_columns(table: str) -> tuple[str, ...]:
    """The Parquet column paths of a table that get min/max statistics: all but free text
    (min/max of texts prune no query, yet cost time to compute and bytes in every footer)."""
    return tuple(
        path
        for f in table_schema(table)
        for path, t in _leaves(f.type, f.name)
        if not _free_text(path, t)
    )


def _fold_semantic(row: dict[str, Any]) -> dict[str, Any]:
    """A builtins row with its tagged semantic union folded into the role's shape child."""
    semantic = row.get("semantic")
    if isinstance(semantic, dict):
        role = semantic["role"]
        row["semantic"] = {
            "role": role,
            "evidence_strength": semantic["evidence_strength"],
            SHAPE_BY_ROLE[role]: semantic["value"],
        }
    return row


def to_row(obj: msgspec.Struct) -> dict[str, Any]:
    """A domain object as an Arrow-ready row (the semantic union folded into shape children)."""
    return _fold_semantic(msgspec.to_builtins(obj))


def semantic_column(
    roles: list[str],
    strengths: list[str],
    values: list[Any],
    kind: pa.StructType,
    order: npt.NDArray[np.int64] | None = None,
) -> pa.StructArray:
    """The ``semantic`` column of rows given their roles, strengths and values (as builtins):
    each value goes to its role's shape child (the other children null), built one shape at
    a time; with an `order` (row numbers), the rows in that order."""
    count = len(roles)
    shaped: dict[str, list[Any]] = {}  # shape -> its child's rows (None where another shape)
    for at, role in enumerate(roles):
        shape = SHAPE_BY_ROLE[role]
        rows = shaped.get(shape)
        if rows is None:
            rows = shaped[shape] = [None] * count
        rows[at] = values[at]
    children: list[pa.Array] = [
        to_array(roles, pa.string(), order),
        to_array(strengths, pa.string(), order),
    ]
    for child in list(kind)[2:]:
        rows = shaped.get(child.name)
        if rows is None:
            children.append(pa.nulls(count, child.type))
        else:
            children.append(to_array(rows, child.type, order))
    return pa.StructArray.from_arrays(children, fields=list(kind))


def skip_pandas_probe() -> None:
    """Spare this process pyarrow's import of pandas (about 0.25 CPU-seconds, in every worker).

    pyarrow's first conversion of a Python list imports pandas when it is installed, only to ask
    whether the list is a pandas object (it never is here), and so does its first inference of
    a type from Python values (to know pandas' missing values); each answer is kept for the
    life of the process. Asked once each while pandas cannot be imported, pyarrow keeps "no
    pandas" for both, and still imports pandas when something asks it for pandas
    (``to_pandas``)."""
    if "pandas" in sys.modules:
        return
    blocker = _NoPandas()
    sys.meta_path.insert(0, blocker)
    try:
        pa.array([None], pa.string())  # is a list a pandas object?
        pa.array([None, "probe"])  # pandas' missing values, for type inference
    finally:
        sys.meta_path.remove(blocker)


class _NoPandas:
    """An import finder under which pandas cannot be imported."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas":
            raise ImportError("pandas is not imported while a build converts rows")


def to_array(
    values: list[Any], kind: pa.DataType, order: npt.NDArray[np.int64] | None = None
) -> pa.Array:
    """``pyarrow.array(values, kind)``; with an `order` (row numbers), its rows in that order."""
    converted = pa.array(values, kind)
    return converted if order is None else converted.take(order)


def repeated(values: list[int], counts: npt.NDArray[np.int64]) -> pa.Array:
    """An int64 column holding each of `values` `counts` times over (one value per run of
    rows), built with no Python int per row (each would cost a conversion into Arrow)."""
    return pa.array(np.repeat(np.array(values, dtype=np.int64), counts), pa.int64())


def to_table(table: str, objs: list[Any]) -> pa.Table:
    """An Arrow table of domain objects of one kind, built column by column (the semantic
    union one shape at a time)."""
    schema = table_schema(table)
    columns = []
    # each object's fields in one call (the schema lists them in the Struct's order), then
    # transposed: a getattr by name per field and object cost several times more
    fields = list(zip(*[msgspec.structs.astuple(obj) for obj in objs], strict=True))
    for at, f in enumerate(schema):
        values = list(fields[at]) if fields else []
        if f.name == "semantic":
            roles = [model.role_of(type(v)) for v in values]
            strengths = [v.evidence_strength for v in values]
            shaped = msgspec.to_builtins([v.value for v in values])
            columns.append(semantic_column(roles, strengths, shaped, f.type))
        else:
            columns.append(to_array(msgspec.to_builtins(values), f.type))
    return pa.Table.from_arrays(columns, schema=schema)


def schema_digest() -> str:
    """A digest of every published table's Arrow schema (names, types, nesting)."""
    import xxhash

    text = "\n".join(f"{table}: {table_schema(table)}" for table in model.TABLES)
    return str(xxhash.xxh3_64_hexdigest(text.encode()))
