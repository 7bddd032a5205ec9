"""OpenCode: sessions in the SQLite database ``opencode.db`` (docs/runtimes/opencode.md)."""

from traceidx.runtimes.declare import Database, RowTable, Runtime, TraceHome, kinds

#: the tables of a session's rows (Kilo Code, a fork, keeps the same ones)
TABLES = (
    RowTable("session", session="id"),
    RowTable("message", "session_id", "session_id", order=("time_created", "id")),
    RowTable("part", "session_id", "message_id"),
)
#: the tools (Kilo Code keeps them under the same names)
TOOLS = kinds(
    shell="bash",
    read="read list lsp",
    write="write",
    edit="edit patch apply_patch multiedit",
    search="grep glob codesearch websearch",
    fetch="webfetch",
    delegate="task",
    plan="todowrite todoread",
    ask_user="question",
)

RUNTIME = Runtime(
    name="opencode",
    title="OpenCode",
    module="traceidx.adapters.opencode.adapter",
    adapter="OpenCodeAdapter",
    version=1,
    homes=(
        TraceHome("XDG_DATA_HOME", ".local/share", ("opencode",)),
        TraceHome("OPENCODE_DB", ".local/share/opencode/opencode.db", (".",)),
    ),
    tools=TOOLS,
    fixtures=("opencode",),
    database=Database(("opencode.db", "opencode-*.db"), TABLES),
)
