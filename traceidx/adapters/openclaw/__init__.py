"""OpenClaw adapter: session transcripts (JSON lines up to 2026.7, SQLite rows from 2026.8) to
draft facts.

OpenClaw keeps Pi's session format, so this package extends Pi's reading (`traceidx.adapters.pi`)
where the two differ; the format, the releases checked against and the evidence rules:
``docs/runtimes/openclaw.md``. Modules: `wire` (what tells OpenClaw's entries from Pi's, the
database's rows, the exec tool's result), `usage` (reasoning tokens stated apart), `state`
(a database session's rows, usage), `tools` (the exec tool and its exit codes), and `adapter`
(the registered adapter: detection, rows or lines, the mirror message).
"""

from traceidx.adapters.openclaw.adapter import OpenClawAdapter

__all__ = ["OpenClawAdapter"]
