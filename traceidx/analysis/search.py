"""Search: the published items whose text matches, newest first, with the ids to inspect.

The text searched is what the dataset publishes of an item: prompts, answers, reasoning,
commands and tool arguments, tool output, delegations and reports, context and notices (each
bounded by the build's text limit). By default every word must appear as a word, in any case; with
``regex`` the text is matched against a regular expression (RE2, as DuckDB reads it). A plain
scan over the items' parts: DuckDB reads only the text columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from traceidx.errors import UsageError

if TYPE_CHECKING:
    import duckdb

#: the published text of an item, whatever its shape
TEXT = """coalesce(
    i.semantic.text.text.value, i.semantic.reasoning.text.value,
    i.semantic.tool_call.shell_fragments[1].text.value, i.semantic.tool_call.arguments,
    i.semantic.tool_output.text.value, i.semantic.delegation.text.value,
    i.semantic.subagent_report.text.value, i.semantic.subagent_activity.text.value,
    i.semantic.instruction.text.value, i.semantic.context.text.value,
    i.semantic.compaction.summary.value)"""
#: characters of context shown before and after the match (more after: a table that clips
#: the snippet keeps its start, so the match stays in view)
BEFORE, AFTER = 24, 96
COLUMNS = (
    "occurred_at",
    "runtime",
    "project",
    "session",
    "role",
    "snippet",
    "record_id",
    "item_id",
    "loop_id",
    "session_id",
)


@dataclass(frozen=True, slots=True)
class Query:
    """What to search for, and where."""

    text: str
    regex: bool = False
    runtimes: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    since: date | None = None
    until: date | None = None
    limit: int = 20

    def check(self) -> None:
        """Refuse an empty search or a pattern that does not compile."""
        if not self.text.split():
            raise UsageError("search: give the words (or --regex pattern) to look for")
        if self.regex:
            try:
                re.compile(self.text)
            except re.error as exc:
                raise UsageError(
                    f"--regex {self.text!r}: not a regular expression ({exc})"
                ) from None

    def first(self) -> str:
        """The pattern of the first match shown in the snippet."""
        if self.regex:
            return self.text
        words = [whole_word(w).removeprefix("(?i)") for w in self.text.split()]
        return "(?i)" + "|".join(f"(?:{w})" for w in words)


def search(con: duckdb.DuckDBPyConnection, q: Query) -> list[tuple[Any, ...]]:
    """The matching items, newest first (`COLUMNS`), at most `q.limit`."""
    q.check()
    where = []
    params: list[Any] = []
    if q.regex:
        where.append(f"regexp_matches({TEXT}, ?)")
        params.append(q.text)
    else:  # every word, any case, as a word (a substring test first: it is cheap)
        for word in q.text.split():
            where.append(f"contains(lower({TEXT}), ?) AND regexp_matches({TEXT}, ?)")
            params += [word.lower(), whole_word(word)]
    if q.runtimes:
        where.append("s.runtime IN (SELECT unnest(?))")
        params.append(list(q.runtimes))
    if q.roles:
        where.append("(i.semantic.role IN (SELECT unnest(?)) OR split_part(i.semantic.role, "
                     "'.', 1) IN (SELECT unnest(?)))")  # fmt: skip
        params += [list(q.roles), list(q.roles)]
    if q.since:
        where.append("i.occurred_at >= ?::DATE")
        params.append(q.since.isoformat())
    if q.until:
        where.append("i.occurred_at < ?::DATE + INTERVAL 1 DAY")
        params.append(q.until.isoformat())
    sql = f"""
        SELECT i.occurred_at, s.runtime, s.project, s.native_id AS session, i.semantic.role,
               {TEXT} AS body, i.record_ids[1] AS record_id, i.item_id, i.loop_id, i.session_id
        FROM items AS i JOIN sessions AS s USING (session_id)
        WHERE {" AND ".join(where)}
        ORDER BY i.occurred_at DESC NULLS LAST, i.item_id
        LIMIT {int(q.limit)}"""
    rows = con.execute(sql, params).fetchall()
    first = re.compile(q.first())
    return [(*row[:5], snippet(row[5], first), *row[6:]) for row in rows]


def whole_word(word: str) -> str:
    """The RE2 pattern of `word` in any case, not inside a longer word."""
    left = r"\b" if re.match(r"\w", word[0]) else ""
    right = r"\b" if re.match(r"\w", word[-1]) else ""
    return f"(?i){left}{re.escape(word)}{right}"


def snippet(body: str, first: re.Pattern[str]) -> str:
    """The text around the first match, on one line, with … where it was cut."""
    found = first.search(body)
    start, end = (found.start(), found.end()) if found else (0, 0)
    left, right = max(0, start - BEFORE), min(len(body), end + AFTER)
    text = " ".join(body[left:right].split())
    return ("…" if left else "") + text + ("…" if right < len(body) else "")
