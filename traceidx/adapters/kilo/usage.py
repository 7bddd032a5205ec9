"""Kilo Code token usage: OpenCode's units, and the members never read.

Kilo writes an assistant message's ``tokens`` exactly as OpenCode 1.18 does, so a call's usage
is `call_usage` of the OpenCode adapter (re-exported here). Never read: the message's
``cost`` (Kilo adds a subagent session's whole cost to the cost of the parent's message whose
step called ``task``, while its tokens are not rolled up: summing costs counts the child
twice), the ``step-finish`` part's copy of the tokens and its ``metrics``, the session row's
running totals and the ``event`` rows (one copy per update). Prices are the dataset's own.
"""

from traceidx.adapters.opencode.usage import call_usage

__all__ = ["call_usage"]
