"""Search: the published items whose text matches, newest first, with the ids to inspect.

The text searched is what the dataset publishes of an item: prompts, answers, reasoning,
commands and tool arguments, tool output, delegations and reports, context and notices (each
bounded by the build's text limit). By default every word must appear as a word, in any case; with
``regex`` the text is matched against a regular expression (RE2, as DuckDB reads it). A plain
scan over the items' parts: DuckDB reads only the text columns.

Words are told apart in every script: a word's edge that is a letter, mark, digit or ``_``
must meet the text's start or end, or a character that is none of these (RE2's ``\b`` knows
ASCII only). Scripts written without spaces between words (Chinese, Japanese, Thai, Lao,
Khmer, Myanmar, Tibetan) and Korean, whose words carry their particles attached, match as
substrings: an edge in one of them needs no boundary, and a character of them bounds a word
of another script (``Python`` in ``用Python写``).
"""

from __future__ import annotations

import re
import unicodedata
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
#: the code points of scripts whose words are matched as substrings (see the module's doc):
#: Han (with its radicals, iteration marks and ideographic numbers), kana, Hangul, Thai, Lao,
#: Tibetan, Myanmar and Khmer
UNSPACED: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul jamo
    (0x1780, 0x17FF),  # Khmer
    (0x19E0, 0x19FF),  # Khmer symbols
    (0x2E80, 0x2FDF),  # CJK and Kangxi radicals
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3021, 0x3029),  # Hangzhou numerals
    (0x3031, 0x3035),  # kana repeat marks
    (0x3038, 0x303C),
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3130, 0x318F),  # Hangul compatibility jamo
    (0x31A0, 0x31FF),  # Bopomofo extended, CJK strokes, Katakana extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul jamo extended A
    (0xA9E0, 0xA9FF),  # Myanmar extended B
    (0xAA60, 0xAA7F),  # Myanmar extended A
    (0xAC00, 0xD7FF),  # Hangul syllables, jamo extended B
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # halfwidth Katakana
    (0xFFA0, 0xFFDC),  # halfwidth Hangul
    (0x1B000, 0x1B16F),  # kana supplement, extended
    (0x20000, 0x323AF),  # CJK extensions B to H, compatibility supplement
)
#: a character that makes words (RE2): a letter, a mark, a digit or ``_``
_WORD = r"\p{L}\p{M}\p{N}_"
#: a character that bounds a word of a spaced script (RE2): not a word character, or one of
#: a script matched as substrings
_EDGE = "[^" + _WORD + "]|[" + "".join(f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in UNSPACED) + "]"
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

    def first(self, body: str) -> tuple[int, int] | None:
        """Where the first match in `body` is (shown in the snippet), if Python finds it."""
        if self.regex:
            try:
                found = re.search(self.text, body)
            except re.error:  # RE2 syntax Python does not read
                return None
            return found.span() if found else None
        spans = [span for w in self.text.split() if (span := find_word(body, w)) is not None]
        return min(spans) if spans else None


def search(con: duckdb.DuckDBPyConnection, q: Query) -> list[tuple[Any, ...]]:
    """The matching items, newest first (`COLUMNS`), at most `q.limit`."""
    q.check()
    where = []
    params: list[Any] = []
    if q.regex:
        where.append(f"regexp_matches({TEXT}, ?)")
        params.append(q.text)
    else:  # every word, any case, as a word (an ASCII word: a cheap substring test first)
        for word in q.text.split():
            if word.isascii():
                where.append(f"contains(lower({TEXT}), ?)")
                params.append(word.lower())
            where.append(f"regexp_matches({TEXT}, ?)")
            params.append(whole_word(word))
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
    return [(*row[:5], snippet(row[5], q.first(row[5])), *row[6:]) for row in rows]


def makes_words(char: str) -> bool:
    """Whether a character is part of a word: a letter, a mark, a digit or ``_``."""
    return char == "_" or unicodedata.category(char)[0] in "LMN"


def unspaced(char: str) -> bool:
    """Whether a character is of a script whose words are matched as substrings."""
    point = ord(char)
    return any(low <= point <= high for low, high in UNSPACED)


def _needs_edge(char: str) -> bool:
    return makes_words(char) and not unspaced(char)


def whole_word(word: str) -> str:
    """The RE2 pattern of `word` in any case, not inside a longer word of a spaced script."""
    left = f"(?:^|{_EDGE})" if _needs_edge(word[0]) else ""
    right = f"(?:$|{_EDGE})" if _needs_edge(word[-1]) else ""
    return f"(?i){left}{re.escape(word)}{right}"


def find_word(body: str, word: str) -> tuple[int, int] | None:
    """Where `word` first occurs in `body` as `whole_word` matches it (Python's case folding)."""
    left, right = _needs_edge(word[0]), _needs_edge(word[-1])
    for found in re.finditer(re.escape(word), body, re.IGNORECASE):
        start, end = found.span()
        before = body[start - 1] if start else ""
        after = body[end] if end < len(body) else ""
        if left and before and _needs_edge(before):
            continue
        if right and after and _needs_edge(after):
            continue
        return start, end
    return None


def snippet(body: str, first: tuple[int, int] | None) -> str:
    """The text around the first match (at the start when it is not known), on one line,
    with … where it was cut."""
    start, end = first or (0, 0)
    left, right = max(0, start - BEFORE), min(len(body), end + AFTER)
    text = " ".join(body[left:right].split())
    return ("…" if left else "") + text + ("…" if right < len(body) else "")
