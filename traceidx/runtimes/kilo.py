"""Kilo Code CLI: sessions in the SQLite database ``kilo.db``, OpenCode's tables in a database
of its own, marked so that its records are told from OpenCode's (docs/runtimes/kilo.md)."""

from traceidx.runtimes.declare import Database, RowTable, Runtime, TraceHome, kinds

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
    tools=kinds(
        shell="bash",
        read="read list lsp",
        write="write",
        edit="edit patch apply_patch multiedit",
        search="grep glob codesearch websearch",
        fetch="webfetch",
        delegate="task",
        plan="todowrite todoread",
        ask_user="question",
    ),
    fixtures=("kilo",),
    database=Database(
        ("kilo.db", "kilo-*.db"),
        (
            RowTable("session", session="id"),
            RowTable("message", "session_id", "session_id", order=("time_created", "id")),
            RowTable("part", "session_id", "message_id"),
        ),
        mark="kilo",
    ),
)
