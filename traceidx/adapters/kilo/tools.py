"""Kilo Code tools: OpenCode's tool parts, with Kilo's extra metadata left in the records.

Kilo's tool parts are OpenCode's (``bash`` with ``metadata.exit``, ``task`` naming its child in
``metadata.sessionId``). What Kilo adds is not a fact of the contract and stays in the record:
``metadata.approval`` (what allowed the call), a ``task`` part's ``parentSessionId`` and
``model``, and ``metadata.output`` already written (empty) while a command runs.
"""

from __future__ import annotations

from traceidx.adapters.kilo.state import KiloState
from traceidx.adapters.opencode.tools import OpenCodeTools


class KiloTools(KiloState, OpenCodeTools):
    """Drafts tool calls, outputs and delegations as OpenCode's adapter does."""
