"""OpenCode: sessions in the SQLite database ``opencode.db`` (docs/runtimes/opencode.md)."""

from traceidx.runtimes.declare import Database, RowTable, Runtime, TraceHome, kinds

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
    fixtures=("opencode",),
    database=Database(
        ("opencode.db", "opencode-*.db"),
        (
            RowTable("session", session="id"),
            RowTable("message", "session_id", "session_id", order=("time_created", "id")),
            RowTable("part", "session_id", "message_id"),
        ),
    ),
)
