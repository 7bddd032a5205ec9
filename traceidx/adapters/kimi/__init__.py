"""Kimi adapter: Kimi Code's ``sessions/wd_<dir>/session_<id>/agents/<agent>/wire.jsonl`` (and
the legacy ``kimi-cli``'s ``sessions/<hash>/<id>/wire.jsonl``) to draft facts.

The format, the versions checked against and the evidence rules: ``docs/runtimes/kimi.md``.
Modules: `wire` (record shapes, the session a file is, detection), `usage` (``usage.record``
and legacy ``token_usage`` in the contract's units), `state` (session, Loops, model calls,
draining), `tools` (calls, results, subagent delegations), and `adapter` (the registered
adapter, which dispatches each record of either dialect).
"""

from traceidx.adapters.kimi.adapter import KimiAdapter

__all__ = ["KimiAdapter"]
