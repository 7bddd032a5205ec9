"""Gemini CLI: chats under ``~/.gemini/tmp`` (docs/runtimes/gemini.md)."""

from traceidx.runtimes.declare import FileRule, Runtime, TraceHome, kinds

RUNTIME = Runtime(
    name="gemini",
    title="Gemini CLI",
    module="traceidx.adapters.gemini.adapter",
    adapter="GeminiAdapter",
    version=1,
    homes=(TraceHome("GEMINI_CLI_HOME", "", (".gemini/tmp",), note="the home folder"),),
    tools=kinds(
        shell="run_shell_command",
        read="read_file read_many_files list_directory",
        write="write_file",
        edit="replace",
        search="glob search_file_content google_web_search",
        fetch="web_fetch",
        plan="write_todos complete_task",
        ask_user="ask_user exit_plan_mode",
    ),
    fixtures=("gemini",),
    # the session documents Gemini CLI wrote before 0.58: JSON files it rewrites whole
    files=(FileRule("session-*.json", folder="chats", framing="document"),),
)
