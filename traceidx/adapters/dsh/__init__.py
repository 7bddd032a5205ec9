"""dsh (DeepSeek Harness) adapter: the event-sourced session log, formats v0 to v4.

The format, the versions checked against and the evidence rules: ``docs/runtimes/dsh.md``.
Modules: `wire` (record shapes), `usage`, `state` (session, inherited prefix, turns,
compaction, draining), `tools`, and `adapter` (the registered adapter, which dispatches each
record).
"""

from traceidx.adapters.dsh.adapter import DshAdapter
from traceidx.adapters.dsh.wire import source_seqs as _seqs

__all__ = ["DshAdapter", "_seqs"]
