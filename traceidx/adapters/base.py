"""The adapter base class: what every runtime's adapter implements, and what they share.

An adapter receives the decoded records of one source in order (`Adapter.feed`) and returns a
`Draft` (`Adapter.finish`; the draft types are `traceidx.domain.drafts`). Adapters are plain
Python: they never touch files, ids or storage, and carry no compiler annotations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, TypedDict

import msgspec

from traceidx.adapters.values import declared_command
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop, DraftSession, RecordFacts
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


class Adapter:
    """Base class of the per-runtime adapters (registered in `traceidx.runtimes.RUNTIMES`).

    Subclasses keep `position` / `time` (the record being fed and the runtime time written on
    it) and `items` (the items drafted so far) current; `emit` drafts one item from them.
    """

    runtime: ClassVar[str]
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

    def __init__(self) -> None:
        """The state every adapter keeps: the record being fed (its position and runtime time),
        the items drafted and not yet drained, the session and the unknown record types."""
        self.session = None
        self.items = []
        self.unknown = {}
        self.position = 0
        self.time = None

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

    def tool_call(
        self,
        name: str | None,
        call_id: str | None,
        args: Any,
        loop: DraftLoop | None,
        shell_tools: frozenset[str],
        **members: Any,
    ) -> DraftItem:
        """Draft a tool call from its decoded arguments: the tool's name, `members` (a working
        directory), the arguments as JSON text, and the command of a declared shell tool."""
        value: dict[str, Any] = {"tool_name": name, **members}
        if args is not None:
            value["arguments"] = msgspec.json.encode(args).decode()
        shell = declared_command(name, args, shell_tools)
        return self.emit(
            "agent.tool_call", "structural", value, loop, call_id=call_id, shell_command=shell
        )

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
        The contract, which `tests/adapters/test_drain.py` checks on every corpus file:

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
