"""Kilo Code adapter: the sessions of Kilo Code CLI's SQLite database to draft facts.

Kilo Code CLI is a fork of OpenCode and keeps its sessions in OpenCode's tables, in its own
database ``kilo.db``. Its registry entry marks that database, so the framing writes the mark
into every record (traceidx.sources.rowsource) and the adapter is told from OpenCode's by it;
everything else is OpenCode's reading (traceidx.adapters.opencode), subclassed layer by layer
with what Kilo writes otherwise. The format and the evidence rules: ``docs/runtimes/kilo.md``.
Modules: `wire` (the database mark, Kilo's transient parts), `usage` (the units: OpenCode's;
what is never read), `state`, `tools` and `adapter` (the OpenCode layers, Kilo's additions).
"""

from traceidx.adapters.kilo.adapter import KiloAdapter

__all__ = ["KiloAdapter"]
