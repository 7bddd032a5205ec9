"""Cline: the CLI's session documents under ``~/.cline/data/sessions``, and the task folders
of the VS Code extensions of Cline, Roo Code and Kilo Code (docs/runtimes/cline.md)."""

from traceidx.runtimes.declare import FileRule, Runtime, TraceHome, kinds


def _vscode_tasks(prefix: str) -> tuple[str, ...]:
    """The task folders of Cline's, Roo Code's and Kilo Code's VS Code extensions in VS Code's
    global storage, under a folder's `prefix`."""
    return tuple(
        f"{prefix}Code/User/globalStorage/{extension}/tasks"
        for extension in (
            "saoudrizwan.claude-dev",
            "rooveterinaryinc.roo-cline",
            "kilocode.kilo-code",
        )
    )


# Cline CLI keeps sessions in CLINE_SESSION_DATA_DIR, else CLINE_DATA_DIR/sessions, else
# CLINE_DIR/data/sessions (each defaulting to ~/.cline/...): all three homes; older Cline
# front ends keep task folders (tasks/<id>/ui_messages.json) in its data folder, and the
# VS Code extensions in the editor's global storage (Linux: XDG_CONFIG_HOME, macOS: HOME)
RUNTIME = Runtime(
    name="cline",
    title="Cline",
    module="traceidx.adapters.cline.adapter",
    adapter="ClineAdapter",
    version=1,
    homes=(
        TraceHome("CLINE_DIR", ".cline", ("data/sessions", "data/tasks")),
        TraceHome("CLINE_DATA_DIR", ".cline/data", ("sessions", "tasks")),
        TraceHome("CLINE_SESSION_DATA_DIR", ".cline/data/sessions", (".",)),
        TraceHome(
            "XDG_CONFIG_HOME", ".config", _vscode_tasks(""), note="VS Code's settings folder"
        ),
        TraceHome(
            "HOME",
            "",
            _vscode_tasks("Library/Application Support/"),
            note="the home folder: VS Code's on macOS",
        ),
    ),
    tools=kinds(
        shell="run_commands execute_command",
        read="read_files readfile listfilestoplevel listfilesrecursive",
        write="newfilecreated",
        edit="editor apply_patch editedexistingfile",
        search="search_codebase searchfiles",
        fetch="fetch_web_content",
        delegate="spawn_agent team_spawn_teammate team_run_task",
    ),
    fixtures=("cline",),
    # a session's conversation (<id>.messages.json, a sub-agent's agent_<id>.messages.json):
    # a JSON document the CLI rewrites whole; a VS Code task's messages (a JSON array)
    files=(
        FileRule("*.messages.json", framing="document"),
        FileRule("ui_messages.json", framing="document"),
    ),
)
