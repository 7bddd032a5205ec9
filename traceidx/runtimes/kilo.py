"""Kilo Code CLI: sessions in the SQLite database ``kilo.db``, OpenCode's tables in a database
of its own, marked so that its records are told from OpenCode's (docs/runtimes/kilo.md)."""

from traceidx.runtimes.declare import Database, Runtime, TraceHome
from traceidx.runtimes.opencode import TABLES, TOOLS

RUNTIME = Runtime(
    name="kilo",
    title="Kilo Code CLI",
    module="traceidx.adapters.kilo.adapter",
    adapter="KiloAdapter",
    version=1,
    homes=(
        TraceHome("XDG_DATA_HOME", ".local/share", ("kilo",)),
        TraceHome("KILO_DB", ".local/share/kilo/kilo.db", (".",)),
    ),
    # the fork keeps OpenCode's tools under OpenCode's names
    tools=TOOLS,
    fixtures=("kilo",),
    # OpenCode's tables in a database of Kilo's own name, its records marked as Kilo's
    database=Database(("kilo.db", "kilo-*.db"), TABLES, mark="kilo"),
)
