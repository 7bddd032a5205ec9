"""Kilo Code adapter state: OpenCode's (session, turns, model requests, draining).

Kilo keeps OpenCode's bookkeeping unchanged: a session row (``agent`` ``code`` for a root
session, OpenCode's placeholder titles, ``parent_id`` for a subagent), a turn opened by a
user message with a text part that is not synthetic, one assistant message per model
request, its ``error`` ending the turn. A session row without a single message (a run killed
during start-up) is a session without turns.
"""

from __future__ import annotations

from traceidx.adapters.opencode.state import OpenCodeState


class KiloState(OpenCodeState):
    """What a Kilo session's adapter keeps between rows: OpenCode's state, as it is."""
