"""Drafts: the facts an adapter hands to projection, keyed by record positions, before ids exist.

An adapter (`traceidx.adapters.base.Adapter`) drafts loops and items as it reads a source's
records and returns a `Draft` for the whole source; projection turns drafts into domain
objects: it assigns ids and positions, bounds text, resolves tool-call links and parses
declared shell commands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from traceidx.domain.rules import UsageSample


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


@dataclass(slots=True)
class DraftItem:
    """An Item under construction.

    `value` holds the value Struct's fields; text members (`text`, `summary`) are plain
    strings, bounded later. `call_id` registers a tool call's native id; `output_of` names the
    native call id a tool output belongs to (resolved to `call_item_id` within the source);
    `session_ref` is the native id of a linked Session (resolved by id derivation, checked by
    the views); `shell_command` is the command text of a declared shell tool.
    """

    role: str
    strength: str
    value: dict[str, Any]
    records: list[int]
    loop: DraftLoop | None
    occurred_at: int | None = None
    call_id: str | None = None
    output_of: str | None = None
    session_ref: str | None = None
    shell_command: str | None = None


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
    #: the session's usage as the runtime totals it, where it keeps that total beside (or
    #: instead of) per-call usage; its `model` the session's model (never spread over calls)
    usage: UsageSample | None = None


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


@dataclass(slots=True)
class RecordFacts:
    """What an adapter says about one record: the runtime's time and native type."""

    occurred_at: int | None
    native_type: str | None
