"""The MCP Inspector's command line (npm ``@modelcontextprotocol/inspector``, a JavaScript MCP
client), installed into the checkout's ignored ``.node/`` folder, and a tool call made through it.

    python -m tests.support.inspector      (or `make inspector`; `make unit` runs it)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.files import ROOT

#: the pinned release (its 1.x line runs on the Node.js of Debian stable, 20; npm warns that it
#: asks for 22, and it works)
PACKAGE = "@modelcontextprotocol/inspector@1.0.3"
#: where npm installs it (ignored by git)
PREFIX = ROOT / ".node"
INSPECTOR = PREFIX / "node_modules" / ".bin" / "mcp-inspector"


def ensure_inspector() -> Path | str:
    """The Inspector's command, installed with npm where it is missing; else why not."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "node and npm are not installed (the MCP Inspector is a Node.js program)"
    if INSPECTOR.exists():
        return INSPECTOR
    done = subprocess.run(
        ["npm", "install", "--prefix", str(PREFIX), "--no-audit", "--no-fund", PACKAGE],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not INSPECTOR.exists():
        raise RuntimeError(f"npm install {PACKAGE} failed: {done.stderr.strip()[-500:]}")
    return INSPECTOR


def call_tool(server: list[str], tool: str, *args: str) -> dict[str, Any]:
    """A tool call to the MCP `server` (its command line) through the Inspector's command
    line: ``--tool-arg key=value`` for each of `args` (the Inspector reads each value as JSON
    when it can: ``record_id="12"`` sends a string, ``record_id=12`` a number). Its reply as
    the Inspector prints it."""
    inspector = ensure_inspector()
    assert isinstance(inspector, Path), inspector
    command = [str(inspector), "--cli", *server, "--method", "tools/call", "--tool-name", tool]
    for arg in args:
        command += ["--tool-arg", arg]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr + done.stdout
    start = 0 if done.stdout.startswith("{") else done.stdout.index("\n{") + 1  # past a banner
    reply: dict[str, Any] = json.loads(done.stdout[start:])
    return reply


if __name__ == "__main__":
    found = ensure_inspector()
    print(found if isinstance(found, Path) else f"skipped: {found}")
    sys.exit(0)
