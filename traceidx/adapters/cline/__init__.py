"""Cline adapter: the Cline CLI's session documents
(``~/.cline/data/sessions/<id>/<id>.messages.json``, and the files of its sub-agents and
teammates beside them) and the VS Code extension's task files to draft facts.

The format, the versions checked against and the evidence rules: ``docs/runtimes/cline.md``.
Modules: `wire` (document shapes, content blocks, native types), `usage` (a message's
``metrics`` in the contract's units), `state` (session, Loops, the final answer), `tools` (tool
calls, their results, delegations to sub-agents and teammates), `legacy` (the task files of
Cline's, Roo Code's and Kilo Code's VS Code extensions) and `adapter` (the registered adapter,
which dispatches each record).
"""

from traceidx.adapters.cline.adapter import ClineAdapter

__all__ = ["ClineAdapter"]
