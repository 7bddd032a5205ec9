"""Mistral Vibe: session folders under ``~/.vibe/logs/session`` (docs/runtimes/vibe.md)."""

from traceidx.runtimes.declare import Folder, Runtime, TraceHome, kinds

# 3.x keeps a session as a journaled store folder (`unified/<id>/`), 1.x and 2.x as
# `session_*/` with meta.json (its totals) and messages.jsonl
RUNTIME = Runtime(
    name="vibe",
    title="Mistral Vibe",
    module="traceidx.adapters.vibe.adapter",
    adapter="VibeAdapter",
    version=1,
    homes=(TraceHome("VIBE_HOME", ".vibe", ("logs/session",)),),
    tools=kinds(
        shell="file_system.bash bash",
        read="file_system.read_file read_file",
        write="file_system.write_file write_file",
        edit="file_system.edit search_replace",
        search="grep",
        delegate="agents.spawn self.wait",
        plan="todo",
    ),
    fixtures=("vibe",),
    folders=(
        Folder(
            # a journaled store (other stores hold a CURRENT and generations too: Kimi Code's
            # query cache), with its journal
            ("CURRENT", "journal/"),
            (
                "CURRENT",
                "meta.json",
                "generations/*/manifest.json",
                "generations/*/projection-state.json",
                "generations/*/runtime-state.json",
                "generations/*/checkpoint.json",
                "chunks/*.json",
                "tool-results/*.json",
                "journal/*.jsonl",
            ),
        ),
        Folder(("meta.json", "messages.jsonl"), ("meta.json", "messages.jsonl")),
    ),
)
