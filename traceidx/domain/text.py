"""Bounded publication of text: the TextContent constructor and the token estimate.

Bound: a prefix of at most `limit` UTF-8 bytes, cut back to a character boundary
(default 64 KiB). `full_bytes` is the UTF-8 length of the complete text.

Token estimate ``ascii4_unicode1_v1`` (deterministic, not a vendor count): the number of ASCII
characters divided by 4 rounded up, plus one per non-ASCII character, over the complete text.
"""

from __future__ import annotations

from typing import Any, Final

from traceidx.domain.model import TextContent

DEFAULT_TEXT_LIMIT: Final = 64 * 1024
TOKEN_ESTIMATOR: Final = "ascii4_unicode1_v1"


#: every ASCII byte
_ASCII_BYTES: Final = bytes(range(128))


def estimate_tokens(text: str) -> int:
    """ceil(ascii_chars / 4) + non_ascii_chars."""
    if text.isascii():
        return (len(text) + 3) // 4
    return _estimate(text, text.encode("utf-8", "surrogatepass"))


def _estimate(text: str, data: bytes) -> int:
    """`estimate_tokens` of a text given its UTF-8 form: its ASCII characters are the bytes
    below 0x80 (every byte of a longer character is above), counted by deleting them."""
    ascii_chars = len(data) - len(data.translate(None, _ASCII_BYTES))
    return (ascii_chars + 3) // 4 + (len(text) - ascii_chars)


def bound_utf8(data: bytes, limit: int) -> bytes:
    """The longest prefix of `data` of at most `limit` bytes that ends on a character boundary."""
    if len(data) <= limit:
        return data
    cut = limit
    # Back off over UTF-8 continuation bytes (0b10xxxxxx).
    while cut > 0 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return data[:cut]


def text_row(text: str, limit: int = DEFAULT_TEXT_LIMIT) -> dict[str, Any]:
    """The bounded TextContent of a complete text, as its row (builtins)."""
    if text.isascii():  # one byte per character: no need to encode it
        size = len(text)
        value = text if size <= limit else text[:limit]
        return {"value": value, "full_bytes": size, "estimated_tokens": (size + 3) // 4}
    data = text.encode("utf-8", "surrogatepass")
    value = text if len(data) <= limit else bound_utf8(data, limit).decode("utf-8", "replace")
    return {"value": value, "full_bytes": len(data), "estimated_tokens": _estimate(text, data)}


def text_content(text: str, limit: int = DEFAULT_TEXT_LIMIT) -> TextContent:
    """Build the bounded TextContent of a complete text."""
    return TextContent(**text_row(text, limit))
