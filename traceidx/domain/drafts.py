"""Drafts: the facts an adapter hands to projection, keyed by record positions, before ids exist.

An adapter (`traceidx.adapters.base.Adapter`) drafts loops and items as it reads a source's
records and returns a `Draft` for the whole source; projection turns drafts into domain
objects: it assigns ids and positions, bounds text, resolves tool-call links and parses
declared shell commands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mypy_extensions import mypyc_attr

from traceidx.domain.plain import Plain
from traceidx.domain.rules import UsageSample

# Drafts are pickled in checkpoints, so they are `serializable` native classes. mypyc runs
# such a class's __init__ on a call from Python (a draft made by an adapter, which is not
# compiled, or by a test) only if the class also allows interpreted subclasses.


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
@dataclass(slots=True)
class DraftLoop:
    """A Loop under construction; `start`/`end` are record positions."""

    start: int
    native_id: str | None = None
    end: int | None = None
    outcome: str | None = None
    model_id: str | None = None
    effort: str | None = None
    context_window: int | None = None
    usage: list[UsageSample] = field(default_factory=list)


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class DraftItem(Plain):
    """An Item under construction.

    `value` holds the value Struct's fields; text members (`text`, `summary`) are plain
    strings, bounded later. `call_id` registers a tool call's native id; `output_of` names the
    native call id a tool output belongs to (resolved to `call_item_id` within the source);
    `session_ref` is the native id of a linked Session (resolved by id derivation, checked by
    the views); `shell_command` is the command text of a declared shell tool.
    """

    FIELDS = (
        "role",
        "strength",
        "value",
        "records",
        "loop",
        "occurred_at",
        "call_id",
        "output_of",
        "session_ref",
        "shell_command",
    )

    def __init__(
        self,
        role: str,
        strength: str,
        value: dict[str, Any],
        records: list[int],
        loop: DraftLoop | None,
        occurred_at: int | None = None,
        call_id: str | None = None,
        output_of: str | None = None,
        session_ref: str | None = None,
        shell_command: str | None = None,
    ) -> None:
        self.role = role
        self.strength = strength
        self.value = value
        self.records = records
        self.loop = loop
        self.occurred_at = occurred_at
        self.call_id = call_id
        self.output_of = output_of
        self.session_ref = session_ref
        self.shell_command = shell_command


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
@dataclass(slots=True)
class DraftSession:
    """Session facts of one source; `*_from` are (native id, witness record position)."""

    native_id: str
    identity_record: int
    created_at: int | None = None
    name: str | None = None
    working_directory: str | None = None
    git_root: str | None = None  # the git top-level, where the trace states it
    branch: str | None = None
    delegated_from: tuple[str, int] | None = None
    forked_from: tuple[str, int] | None = None
    #: the task a delegated child received from its parent (the text that opens its work)
    task: str | None = None


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
@dataclass(slots=True)
class Draft:
    """Everything one source contributes; `calls` are the model calls outside any Loop."""

    session: DraftSession | None
    loops: list[DraftLoop]
    items: list[DraftItem]
    unknown_types: dict[str, int] = field(default_factory=dict)
    calls: list[UsageSample] = field(default_factory=list)


def among(item: DraftItem, items: list[DraftItem]) -> bool:
    """Whether `item` itself (not an equal one) is in `items`."""
    return any(other is item for other in items)


def unheld_prefix(items: list[DraftItem], held: list[DraftItem]) -> list[DraftItem]:
    """Remove and return the leading `items` that are not among `held` (the items a later
    record may still change): what `Adapter.drain` may hand over."""
    count = 0
    while count < len(items) and not among(items[count], held):
        count += 1
    settled = items[:count]
    del items[:count]
    return settled


class RecordFacts(Plain):
    """What an adapter says about one record: the runtime's time and native type."""

    FIELDS = ("occurred_at", "native_type")

    def __init__(self, occurred_at: int | None, native_type: str | None) -> None:
        self.occurred_at = occurred_at
        self.native_type = native_type
