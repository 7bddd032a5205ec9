"""Items kept column by column while a source is projected.

A run of `ItemColumns` holds the items one projection batch of one source produced: ids,
supporting record ids, role, evidence strength, the semantic value as builtins (bounded texts
and parsed shell fragments included), loop, loop position, time and linked Session.
`traceidx.tables.items.items_table` encodes runs straight into Arrow, with no domain object per
item; `ItemColumns.objects` gives the `Item` objects they describe (converted, so validated, by
msgspec). `value_row` holds a role's value to the contract: only the members of the role's
value Struct, every required one present, defaults filled in.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt

from traceidx.domain.model import VALUE_BY_ROLE, Item


def _members(role: str) -> tuple[frozenset[str], frozenset[str], dict[str, Any]]:
    fields = msgspec.structs.fields(VALUE_BY_ROLE[role])
    defaults = {
        f.name: f.default
        for f in fields
        if not f.required and f.default is not None and f.default is not msgspec.NODEFAULT
    }
    required = frozenset(f.name for f in fields if f.required)
    return frozenset(f.name for f in fields), required, defaults


#: role -> (its value's members, the required ones, the defaults that are not None)
_MEMBERS: Final = {role: _members(role) for role in VALUE_BY_ROLE}


def value_row(role: str, value: dict[str, Any]) -> dict[str, Any]:
    """A role's value (builtins, None members left out) with its defaults filled in; raises
    ValueError for an unknown role, a member the role's value does not have, or a missing
    required member."""
    try:
        members, required, defaults = _MEMBERS[role]
    except KeyError:
        raise ValueError(f"unknown role {role!r}") from None
    # loops, not set operators on the keys view: this runs once per item
    if any(key not in members for key in value) or any(key not in value for key in required):
        unknown, missing = sorted(value.keys() - members), sorted(required.difference(value))
        raise ValueError(f"{role} value: unknown members {unknown}, missing members {missing}")
    return {**defaults, **value} if defaults else value


class ItemColumns:
    """Consecutive Items of one source (one projection batch), column by column."""

    __slots__ = (
        "item_ids",
        "linked",
        "loop_ids",
        "loop_positions",
        "occurred_at",
        "record_counts",
        "record_ids",
        "roles",
        "session_id",
        "source_id",
        "strengths",
        "values",
    )

    def __init__(self, session_id: int, source_id: int) -> None:
        self.session_id = session_id
        self.source_id = source_id
        self.item_ids: list[int] = []
        # every item's supporting records, one after another
        self.record_ids: npt.NDArray[np.int64] = np.empty(0, np.int64)
        self.record_counts: list[int] = []  # how many of them are each item's
        self.roles: list[str] = []
        self.strengths: list[str] = []
        self.values: list[dict[str, Any]] = []
        self.loop_ids: list[int | None] = []
        self.loop_positions: list[int | None] = []
        self.occurred_at: list[int | None] = []
        self.linked: list[int | None] = []

    def __len__(self) -> int:
        return len(self.item_ids)

    def objects(self) -> list[Item]:
        """The domain objects these columns describe."""
        ends = list(accumulate(self.record_counts))
        supporting: list[int] = self.record_ids.tolist()
        return [
            msgspec.convert(
                {
                    "item_id": self.item_ids[i],
                    "session_id": self.session_id,
                    "source_id": self.source_id,
                    "record_ids": supporting[ends[i] - self.record_counts[i] : ends[i]],
                    "semantic": {
                        "role": self.roles[i],
                        "evidence_strength": self.strengths[i],
                        "value": self.values[i],
                    },
                    "loop_id": self.loop_ids[i],
                    "loop_position": self.loop_positions[i],
                    "occurred_at": self.occurred_at[i],
                    "linked_session_id": self.linked[i],
                },
                Item,
            )
            for i in range(len(self))
        ]
