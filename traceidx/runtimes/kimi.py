"""Kimi Code: ``wire.jsonl`` under ``~/.kimi-code/sessions``, and the legacy kimi-cli's under
``~/.kimi/sessions`` (docs/runtimes/kimi.md)."""

from traceidx.runtimes.declare import Runtime, TraceHome, kinds

# one adapter reads both dialects: Kimi Code's home is KIMI_CODE_HOME, kimi-cli's KIMI_SHARE_DIR
RUNTIME = Runtime(
    name="kimi",
    title="Kimi Code (and kimi-cli)",
    module="traceidx.adapters.kimi.adapter",
    adapter="KimiAdapter",
    version=1,
    homes=(
        TraceHome("KIMI_CODE_HOME", ".kimi-code", ("sessions",)),
        TraceHome("KIMI_SHARE_DIR", ".kimi", ("sessions",)),
    ),
    # Kimi Code 2.1.0's tools, then kimi-cli's (Shell, ReadFile, WriteFile, StrReplaceFile,
    # SearchWeb, FetchURL, SetTodoList, Task)
    tools=kinds(
        shell="bash shell",
        read="read readmediafile readfile",
        write="write writefile",
        edit="edit strreplacefile",
        search="grep glob websearch searchweb",
        fetch="fetchurl",
        delegate="agent agentswarm task tasklist taskoutput taskstop waitfor",
        plan="todolist settodolist enterplanmode creategoal getgoal updategoal setgoalbudget",
        ask_user="askuserquestion exitplanmode",
    ),
    fixtures=("kimi",),
)
