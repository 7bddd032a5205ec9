"""What adapters produce: draft facts keyed by record positions, before ids exist.

An adapter receives the decoded records of one source in order (`Adapter.feed`) and returns a
`Draft` (`Adapter.finish`). The project stage turns drafts into domain objects: it assigns ids
and positions, bounds text, resolves tool-call links and parses declared shell commands.
Adapters never touch files, ids or storage.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypedDict

from mypy_extensions import mypyc_attr

from traceidx.domain.plain import Plain
from traceidx.domain.rules import UsageSample
from traceidx.domain.timestamps import rfc3339_ms

#: `TypedDict` through a name mypy lets take members built at run time
_TYPED_DICT: Any = TypedDict


def members(name: str, keys: Iterable[str], narrow: Mapping[str, Any] | None = None) -> Any:
    """A msgspec type that decodes a JSON object to a dict of only the members `keys` (any
    value; the rest are skipped, never built), and the members of `narrow` to the types given
    there. A member of another JSON type than its narrow type (an object) is kept as is."""
    fields: dict[str, Any] = dict.fromkeys(keys, Any)
    for key, kind in (narrow or {}).items():
        fields[key] = kind | str | int | float | bool | list[Any] | None
    return _TYPED_DICT(name, fields, total=False)


# Adapters and drafts are pickled in checkpoints, so they are `serializable` native classes.
# mypyc runs such a class's __init__ on a call from Python (an adapter made by its type, a
# draft made by a test) only if the class also allows interpreted subclasses: every one of
# them, subclasses included, says both.


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


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Adapter:
    """Base class of the per-runtime adapters (registered in `traceidx.runtimes.RUNTIMES`).

    Subclasses keep `position` / `time` (the record being fed and the runtime time written on
    it) and `items` (the items drafted so far) current; `emit` drafts one item from them.
    """

    runtime: ClassVar[str]
    #: bumped whenever the adapter projects a trace otherwise (a build re-projects then)
    version: ClassVar[int] = 1
    #: how many leading records `claims` may inspect
    detect_window: ClassVar[int] = 32
    #: what a record is decoded to once the runtime is known (`members`: only the members the
    #: adapter reads, so the bulk it never reads is skipped unbuilt); None decodes everything
    record_type: ClassVar[Any] = None
    position: int
    time: int | None
    items: list[DraftItem]
    session: DraftSession | None
    #: record types the adapter does not know, by name: how many records had each
    unknown: dict[str, int]

    def emit(
        self,
        role: str,
        strength: str,
        value: dict[str, Any],
        loop: DraftLoop | None,
        *,
        call_id: str | None = None,
        output_of: str | None = None,
        session_ref: str | None = None,
        shell_command: str | None = None,
    ) -> DraftItem:
        """Draft an item supported by the current record (with DraftItem's link fields)."""
        item = DraftItem(
            role,
            strength,
            value,
            [self.position],
            loop,
            self.time,
            call_id,
            output_of,
            session_ref,
            shell_command,
        )
        self.items.append(item)
        return item

    def enter(self, position: int, obj: Any) -> bool:
        """The start of `feed` most adapters share: note the record's position and, for a JSON
        object, the runtime's time in its RFC 3339 ``timestamp`` member; False (the record
        counted as unknown) when it is no object."""
        self.position = position
        if not isinstance(obj, dict):
            self.count_unknown("<not an object>")
            return False
        self.time = rfc3339_ms(obj.get("timestamp"))
        return True

    def count_unknown(self, name: str) -> None:
        """Count a record of a type the adapter does not know (it stays a Record)."""
        self.unknown[name] = self.unknown.get(name, 0) + 1

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        """Whether the decoded leading records have this runtime's structure."""
        raise NotImplementedError

    def feed(self, position: int, obj: Any) -> RecordFacts:
        """Consume one decoded record (malformed lines are not fed)."""
        raise NotImplementedError

    def drain(self) -> tuple[list[DraftLoop], list[DraftItem]]:
        """Remove and return the leading loops and items that no later record can change.

        Called between records, so a long source need not hold every draft until `finish`.
        The contract, which `tests/test_drain.py` checks on every corpus file:

        * the loops returned, over all calls, are a prefix of the source's loops in order, and
          the items a prefix of its items in emission order; `finish` returns the rest;
        * nothing returned changes afterwards (an item's value, records, loop and links; a
          loop's end, model and usage), and the adapter drops its own references to it;
        * an item may be returned before its loop (the loop is identified by its `start`);
          a tool output only once its call was returned (now or earlier);
        * nothing is returned before the session's native id is final.

        The default returns nothing: everything waits for `finish`.
        """
        return [], []

    def finish(self) -> Draft:
        """The source's draft facts once every record was fed."""
        raise NotImplementedError
