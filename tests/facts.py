"""Helpers the corpus tests share: query rows as dicts, and an item's text."""

from __future__ import annotations

from typing import Any

#: value shapes whose `text` member is the item's text, in the order they are looked up
TEXT_SHAPES = (
    "text",
    "delegation",
    "subagent_report",
    "subagent_activity",
    "tool_output",
    "context",
    "instruction",
    "reasoning",
)


def dict_rows(con: Any, sql: str) -> list[dict[str, Any]]:
    """The rows of a query as dicts keyed by column name."""
    rel = con.sql(sql)
    return [dict(zip(rel.columns, row, strict=True)) for row in rel.fetchall()]


def text_of(semantic: dict[str, Any], shapes: tuple[str, ...] = TEXT_SHAPES) -> str | None:
    """The text value of the first of `shapes` an item's semantic carries."""
    for shape in shapes:
        value = semantic.get(shape)
        if value and value.get("text"):
            return str(value["text"]["value"])
    return None
