"""Redaction (``build --redact``): secrets in published text replaced by a marker, found by
detect-secrets' detectors.

The detectors are detect-secrets' regular-expression plugins (cloud and service keys and
tokens, private keys, JSON web tokens, passwords in URLs), plus plugins of the same kind for
the model providers' keys it has no plugin for (Anthropic's), each matched where it matches,
so only the secret's characters are replaced. Left out: the entropy detectors and the keyword
detector (they flag hashes, ids and ordinary code, which a trace is full of) and the public IP
detector (an address is not a secret). A private key's whole block, from its ``BEGIN`` line
through its ``END`` line (or the end of the text when none follows), is one secret.

Each replacement is counted by detect-secrets' type name (``AWS Access Key``, ``GitHub
Token`` ...). detect-secrets is imported only when a build redacts (the ``redact`` extra).
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from typing import Any

import msgspec

from traceidx.domain.text import text_row
from traceidx.errors import UsageError

MARKER = "[REDACTED]"
#: detect-secrets plugins not used (see the module docstring)
LEFT_OUT = frozenset(
    {"Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector", "IPPublicDetector"}
)
#: plugin name -> (secret type, pattern) of the provider keys detect-secrets does not know:
#: Anthropic's API, admin and OAuth keys (``sk-ant-api03-…``, ``sk-ant-admin01-…``,
#: ``sk-ant-oat01-…``)
PROVIDER_KEYS = {
    "AnthropicKeyDetector": ("Anthropic API Key", r"sk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{32,}"),
}
_KEY_BLOCK_END = re.compile(r"-----END [A-Z0-9 ]*-----")
_KEY_BLOCK_START = "-----"


@cache
def detectors() -> tuple[Any, ...]:
    """An instance of every detect-secrets regular-expression plugin used."""
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError as exc:
        raise UsageError(
            "--redact needs detect-secrets: pip install 'traceidx[redact]' (or build without "
            "--redact)"
        ) from exc
    classes: list[type[Any]] = list(get_mapping_from_secret_type_to_class().values())
    # the keys of the model providers the traced agents call, which detect-secrets has no
    # plugin for: a plugin of its own kind (a RegexBasedDetector), matched the same way
    for name, (secret_type, pattern) in PROVIDER_KEYS.items():
        attrs = {"secret_type": secret_type, "denylist": (re.compile(pattern),)}
        classes.append(type(name, (RegexBasedDetector,), attrs))
    return tuple(
        cls()
        for cls in sorted(classes, key=lambda c: c.__name__)
        if issubclass(cls, RegexBasedDetector) and cls.__name__ not in LEFT_OUT
    )


#: a group a pattern captures that is shorter than this is a token's prefix (``ghp``,
#: ``glpat``), not the secret: the whole match is
_SHORTEST_CAPTURED_SECRET = 8


def _spans(plugin: Any, text: str, found: set[str]) -> list[tuple[int, int]]:
    """Where the secrets `found` by `plugin` in `text` are: the groups its patterns capture
    (a password in a URL, a key after its name), else the whole match. detect-secrets
    reports what a pattern captures, so `found` may hold only a token's prefix."""
    out = []
    for regex in plugin.denylist:
        for match in regex.finditer(text):
            groups = [g for g in range(1, (regex.groups or 0) + 1) if match.group(g)]
            if match.group() not in found and all(match.group(g) not in found for g in groups):
                continue
            secrets = [g for g in groups if len(match.group(g)) >= _SHORTEST_CAPTURED_SECRET]
            out += [match.span(g) for g in secrets] or [match.span()]
    return out


def _key_block(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of a whole private key block whose header was found at [start, end)."""
    dashes = text.rfind(_KEY_BLOCK_START, max(0, start - len(_KEY_BLOCK_START)), start)
    if dashes != -1:
        start = dashes
    closing = _KEY_BLOCK_END.search(text, end)
    return start, closing.end() if closing is not None else len(text)


class Redactor:
    """Replaces secrets in text values and counts what it replaced, by secret type."""

    def __init__(self) -> None:
        self.plugins = detectors()
        self.counts: Counter[str] = Counter()

    def text(self, text: str) -> tuple[str, int]:
        """`text` with each secret replaced by `MARKER`, and how many were replaced."""
        spans: list[tuple[int, int, str]] = []
        for plugin in self.plugins:
            found = set(plugin.analyze_string(text))
            if not found:
                continue
            kind = plugin.secret_type
            for start, end in _spans(plugin, text, found):
                if kind == "Private Key":
                    start, end = _key_block(text, start, end)
                spans.append((start, end, kind))
        if not spans:
            return text, 0
        merged: list[tuple[int, int, str]] = []
        for start, end, kind in sorted(spans):
            if merged and start < merged[-1][1]:  # overlapping: one secret, the first type
                last = merged[-1]
                merged[-1] = (last[0], max(last[1], end), last[2])
            else:
                merged.append((start, end, kind))
        pieces, at = [], 0
        for start, end, kind in merged:
            pieces += [text[at:start], MARKER]
            at = end
            self.counts[kind] += 1
        pieces.append(text[at:])
        return "".join(pieces), len(merged)

    def text_row(self, text: str, limit: int) -> dict[str, Any]:
        """The TextContent row of a complete text with its secrets replaced: `full_bytes` and
        `estimated_tokens` still describe the source text, `redactions` says how many
        secrets `value` no longer holds (0: none found)."""
        row = text_row(text, limit)
        redacted, count = self.text(text)
        if count:
            row["value"] = text_row(redacted, limit)["value"]
        row["redactions"] = count
        return row

    def arguments(self, arguments: str) -> tuple[str, int]:
        """A tool call's JSON arguments with the secrets in its strings replaced (re-encoded
        only when one was); text that is not JSON is redacted as text."""
        try:
            decoded = msgspec.json.decode(arguments)
        except msgspec.DecodeError:
            return self.text(arguments)
        total = 0

        def walk(node: Any) -> Any:
            nonlocal total
            if isinstance(node, str):
                redacted, count = self.text(node)
                total += count
                return redacted
            if isinstance(node, list):
                return [walk(member) for member in node]
            if isinstance(node, dict):
                return {key: walk(member) for key, member in node.items()}
            return node

        redacted = walk(decoded)
        return (msgspec.json.encode(redacted).decode() if total else arguments), total

    def fragments(
        self, rows: tuple[dict[str, Any], ...], text: dict[str, Any]
    ) -> tuple[dict[str, Any], ...]:
        """Shell fragment rows of a command (shared, so copied) with secrets replaced in their
        program names, argument words and redirect targets; `text` is the command's redacted
        text row (`text_row`: redacted whole, then bounded), which counts them."""
        out = []
        for fragment in rows:
            statements = []
            for statement in fragment.get("statements", ()):
                invocations = [
                    {
                        **invocation,
                        "program": self._quiet(invocation["program"]),
                        "argv": [self._quiet(word) for word in invocation.get("argv", ())],
                    }
                    for invocation in statement.get("invocations", ())
                ]
                redirects = [
                    {**redirect, "target": self._quiet(redirect["target"])}
                    for redirect in statement.get("redirects", ())
                ]
                statements.append({**statement, "invocations": invocations, "redirects": redirects})
            out.append({**fragment, "text": text, "statements": statements})
        return tuple(out)

    def _quiet(self, word: str) -> str:
        """A word redacted without counting (its secret is counted in the text it came from)."""
        before = self.counts.copy()
        redacted, _ = self.text(word)
        self.counts = before
        return redacted
