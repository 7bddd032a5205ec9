"""Kilo Code's rows beyond OpenCode's: the mark of its database and its transient parts."""

from __future__ import annotations

from typing import Any, Final

from traceidx.adapters.values import dict_or_empty

#: the mark the framing writes into every record of Kilo's database (its registry entry's
#: `Database.mark`, `traceidx.runtimes.kilo`)
DATABASE_MARK: Final = "kilo"
#: the ``metadata`` member by which Kilo marks a part as progress shown while it works (the
#: spinner text "⠴ Initializing snapshot…"), removed again when the step goes on
LIFECYCLE: Final = "kilocode.lifecycle"
TRANSIENT: Final = "transient"


def transient(data: dict[str, Any]) -> bool:
    """Whether a part's ``data`` is one of Kilo's transient progress texts (never content: not
    sent to the model again, not an answer; it stays only when the process died first)."""
    return (
        data.get("type") == "text"
        and dict_or_empty(data.get("metadata")).get(LIFECYCLE) == TRANSIENT
    )
