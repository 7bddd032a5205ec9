"""A Gemini CLI session resumed (``--resume``, or a checkpoint loaded with ``/chat resume``):
the lines the CLI appends, replayed on the committed generated files, must leave one Loop per
prompt typed.

`resumed` writes what Gemini CLI 0.61.0 writes when ``gemini --resume <id> -p PROMPT`` runs,
step by step as its own code does (``ChatRecordingService.initialize``,
``GeminiChat.initialize`` → ``updateMessagesFromHistory``, ``convertSessionToClientHistory``;
the steps are listed in ``docs/runtimes/gemini.md``):

1. the client's first chat starts a fresh recording: a metadata line and a ``$set`` of the
   injected session context go to ``session-<now>-<id8>.jsonl``: the resumed file itself when
   it is named after the same minute, else a new two-line file;
2. the resumed recording appends ``{"$set": {"sessionId": ...}}`` to the resumed file;
3. then ``{"$set": {"messages": [...], "lastUpdated": ...}}``: the whole API history, each turn
   under its message's id (tool results under ``<id>_response``), as the file's own message
   when the CLI's reload still held it, else as a new message stamped now;
4. then the new prompt and its response, as message lines.

`replayed` writes what loading a checkpoint writes (``GeminiChat.setHistory`` of turns without
ids): each turn again as a new message line, then a re-sync listing just them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.files import fixture_path
from traceidx.projection.ingest import Settings, ingest

NOW = "2026-12-07T09:00:00.000Z"
EXPECT = json.loads(fixture_path("generated", "gemini", "expect.json").read_text("utf-8"))
SESSIONS = {session["key"]: session for session in EXPECT["sessions"]}


def loaded(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation's messages as the CLI's loader (``loadConversationRecord``) reads a
    file: message lines upsert by id, a ``$set.messages`` replaces them all, a rewind cuts."""
    messages: dict[str, dict[str, Any]] = {}
    for line in lines:
        if isinstance(line.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(line["$rewindTo"]) if line["$rewindTo"] in messages else 0
            for gone in ids[cut:]:
                del messages[gone]
        elif isinstance(line.get("id"), str) and isinstance(line.get("type"), str):
            messages[line["id"]] = line
        elif isinstance(line.get("$set"), dict) and isinstance(line["$set"].get("messages"), list):
            messages = {m["id"]: m for m in line["$set"]["messages"] if isinstance(m, dict)}
    return list(messages.values())


def text_of(content: Any) -> str:
    """``partListUnionToString`` (verbose): what the CLI tests a user message's text on."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(text_of(part) for part in content)
    if not isinstance(content, dict):
        return ""
    if "thought" in content:
        return f"[Thought: {content['thought']}]"
    if "functionCall" in content:
        return f"[Function Call: {content['functionCall'].get('name')}]"
    if "functionResponse" in content:
        return f"[Function Response: {content['functionResponse'].get('name')}]"
    return str(content.get("text") or "")


def parts(content: Any) -> list[Any]:
    if isinstance(content, list):
        return [{"text": part} if isinstance(part, str) else part for part in content]
    return [{"text": content}] if isinstance(content, str) else [content]


def history(messages: list[dict[str, Any]]) -> list[tuple[str, str, list[Any]]]:
    """``convertSessionToClientHistory``: (id, role, parts) of each API turn."""
    turns: list[tuple[str, str, list[Any]]] = []
    for msg in messages:
        if msg["type"] == "user":
            text = text_of(msg.get("content")).strip()
            if not text or text.startswith(("/", "?", "<session_context>", "<hook_context>")):
                continue
            turns.append((msg["id"], "user", parts(msg.get("content"))))
        elif msg["type"] == "gemini":
            content = parts(msg["content"]) if msg.get("content") else []
            calls = msg.get("toolCalls") or []
            if any("functionCall" in p or p.get("thought") for p in content):
                model = list(content)
            else:
                model = [
                    {
                        "text": f"**{t['subject']}** {t['description']}"
                        if t.get("subject")
                        else t["description"],
                        "thought": True,
                    }
                    for t in msg.get("thoughts") or []
                ]
                model += content
                model += [
                    {"functionCall": {"id": c["id"], "name": c["name"], "args": c["args"]}}
                    for c in calls
                ]
            if not model:
                continue
            turns.append((msg["id"], "model", model))
            results: list[Any] = []
            for call in calls:
                result = call.get("result")
                if isinstance(result, str):
                    response = {"output": result}
                    results.append({"functionResponse": {**call, "response": response}})
                elif isinstance(result, list):
                    results += parts(result)
                elif result:
                    results.append(result)
            if results:
                turns.append((f"{msg['id']}_response", "user", results))
    return turns


def resynced(
    turns: list[tuple[str, str, list[Any]]], cached: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``updateMessagesFromHistory``: each turn as the recording's cached message of its id
    (content replaced by the turn's parts), else as a new message stamped now."""
    known = {m["id"]: m for m in cached}
    listed: list[dict[str, Any]] = []
    for key, role, content in turns:
        if key in known:
            listed.append({**known[key], "content": content})
        else:
            kind = "user" if role == "user" else "gemini"
            listed.append({"id": key, "timestamp": NOW, "type": kind, "content": content})
    return listed


def resumed(
    lines: list[dict[str, Any]], same_minute: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The lines ``gemini --resume`` appends to the file, and those it writes to a new file."""
    header = lines[0]
    conversation = loaded(lines)  # read once, before anything is written
    context = next(m for m in loaded(lines[:2]) if m["type"] == "user")
    fresh_context = {"id": context["id"], "timestamp": NOW, "type": "user"}
    fresh_context["content"] = parts(context["content"])
    fresh = [
        {**header, "startTime": NOW, "lastUpdated": NOW},
        {"$set": {"messages": [fresh_context], "lastUpdated": NOW}},
    ]
    appended = list(fresh) if same_minute else []
    cached = loaded(lines + appended)  # the resumed recording reloads the file
    appended.append({"$set": {"sessionId": header["sessionId"]}})
    turns = [(context["id"], "user", parts(context["content"])), *history(conversation)]
    appended.append({"$set": {"messages": resynced(turns, cached), "lastUpdated": NOW}})
    return appended, ([] if same_minute else fresh)


def new_turn(lines: list[dict[str, Any]], prompt: str) -> list[dict[str, Any]]:
    """The prompt typed after the resume and its answer, shaped like the file's own lines."""
    tokens = {"input": 900, "output": 12, "cached": 0, "thoughts": 0, "tool": 0, "total": 912}
    answer = {
        "id": "a0c1e2f3-0000-4000-8000-000000000002",
        "timestamp": NOW,
        "type": "gemini",
        "content": "Resumed: done.",
        "thoughts": [],
        "tokens": tokens,
        "model": "gemini-2.5-pro",
    }
    user = {"id": "a0c1e2f3-0000-4000-8000-000000000001", "timestamp": NOW, "type": "user"}
    user["content"] = [{"text": prompt}]
    stamp = {"$set": {"lastUpdated": NOW}}
    return [user, stamp, answer, stamp]


def write(path: Path, lines: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    path.write_text(text, "utf-8")


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("same_minute", [True, False], ids=["same-minute", "new-file"])
@pytest.mark.parametrize("key", sorted(SESSIONS))
def test_a_resumed_session_has_one_loop_per_typed_prompt(
    key: str, same_minute: bool, tmp_path: Path
) -> None:
    session = SESSIONS[key]
    source = fixture_path("generated", "gemini", *session["file"].split("/"))
    chat = tmp_path / source.name
    shutil.copyfile(source, chat)
    lines = read(chat)
    appended, stray = resumed(lines, same_minute)
    prompt = "Und jetzt: wie viele Dateien?"
    write(chat, lines + appended + new_turn(lines, prompt))

    result = ingest(str(chat), Settings())
    assert (result.state, result.unknown_types) == ("indexed", {})
    projection = result.projection
    assert projection is not None
    assert projection.session.native_id == session["native_session_id"]
    assert result.loop_count == len(session["loops"]) + 1
    items = [
        (role, value, loop)
        for run in projection.item_runs
        for role, value, loop in zip(run.roles, run.values, run.loop_ids, strict=True)
    ]
    requests = [
        (value["text"]["value"], loop) for role, value, loop in items if role == "human.request"
    ]
    assert len(requests) == result.loop_count  # each Loop opened by a prompt typed
    last = projection.loops[-1].loop_id
    assert [text for text, loop in requests if loop == last] == [prompt]
    finals = [
        v["text"]["value"] for r, v, loop in items if r == "agent.final_answer" and loop == last
    ]
    assert finals == ["Resumed: done."]
    if stray:  # the fresh recording's own file: the session's id, no message
        other = tmp_path / "session-2026-12-07T09-00-stray.jsonl"
        write(other, stray)
        empty = ingest(str(other), Settings())
        assert empty.loop_count == 0


def test_the_resync_lists_every_turn_under_the_cli_ids() -> None:
    """The re-sync the replay writes has the shape the corpus's resumed session shows: the
    session context first, tool results under ``<id>_response``, stamped now when the reload
    held only the fresh context (the same-minute case)."""
    source = fixture_path("generated", "gemini", "tmp", "shell-multistep-s1", "chats")
    lines = read(next(source.glob("*.jsonl")))
    appended, stray = resumed(lines, same_minute=True)
    assert stray == [] and [sorted(line) for line in appended[1:]] == [["$set"]] * 3
    assert appended[0]["startTime"] == NOW and "sessionId" in appended[0]
    listed = appended[3]["$set"]["messages"]
    ids = [m["id"] for m in listed]
    assert ids[0] == lines[1]["$set"]["messages"][0]["id"]
    assert any(key.endswith("_response") for key in ids)
    assert {m["timestamp"] for m in listed[1:]} == {NOW}
    assert all("tokens" not in m and "toolCalls" not in m for m in listed)
    appended, stray = resumed(lines, same_minute=False)
    kept = appended[1]["$set"]["messages"]  # the reload held the file's own messages
    assert any("tokens" in m for m in kept) and len(stray) == 2


def replayed(
    lines: list[dict[str, Any]], checkpoint: list[tuple[str, list[Any]]]
) -> list[dict[str, Any]]:
    """The lines ``/chat resume <tag>`` (0.61 also ``/resume resume <tag>``) appends: the
    checkpoint's turns carry no ids, so ``GeminiChat.setHistory`` records each as a new message
    line (``recordSyntheticMessage``), then ``updateMessagesFromHistory`` lists exactly them."""
    out: list[dict[str, Any]] = []
    listed: list[dict[str, Any]] = []
    for n, (role, content) in enumerate(checkpoint):
        key = f"c0ffee00-0000-4000-8000-{n:012d}"
        msg: dict[str, Any] = {"id": key, "timestamp": NOW, "type": role, "content": content}
        if role == "gemini":
            msg.update(thoughts=[], tokens=None)
        out += [msg, {"$set": {"lastUpdated": NOW}}]
        listed.append(msg)
    return [*out, {"$set": {"messages": listed, "lastUpdated": NOW}}]


def checkpoint_of(lines: list[dict[str, Any]]) -> list[tuple[str, list[Any]]]:
    """What ``/chat save <tag>`` stores: the chat's API history (``getHistory``), the session
    context first; each turn a role and its parts, no id."""
    context = next(m for m in loaded(lines[:2]) if m["type"] == "user")
    turns = [("user", parts(context["content"]))]
    turns += [
        ("user" if role == "user" else "gemini", content)
        for _, role, content in history(loaded(lines))
    ]
    return turns


@pytest.mark.parametrize("where", ["same-file", "new-session"])
@pytest.mark.parametrize("key", sorted(SESSIONS))
def test_a_checkpoint_resumed_restates_history_without_opening_loops(
    key: str, where: str, tmp_path: Path
) -> None:
    session = SESSIONS[key]
    source = fixture_path("generated", "gemini", *session["file"].split("/"))
    lines = read(source)
    checkpoint = checkpoint_of(lines)
    if where == "same-file":
        before, typed = lines, len(session["loops"])
    else:  # a new interactive session: its fresh recording, then the command
        header = {**lines[0], "sessionId": "5e55e55e-0000-4000-8000-000000000000"}
        fresh = {"id": lines[1]["$set"]["messages"][0]["id"], "timestamp": NOW, "type": "user"}
        fresh["content"] = checkpoint[0][1]
        before = [header, {"$set": {"messages": [fresh], "lastUpdated": NOW}}]
        typed = 0
    prompt = "Weiter mit dem gespeicherten Stand."
    chat = tmp_path / source.name
    write(chat, before + replayed(before, checkpoint) + new_turn(lines, prompt))

    result = ingest(str(chat), Settings())
    assert (result.state, result.unknown_types) == ("indexed", {})
    projection = result.projection
    assert projection is not None
    assert result.loop_count == typed + 1
    items = [
        (role, value, loop)
        for run in projection.item_runs
        for role, value, loop in zip(run.roles, run.values, run.loop_ids, strict=True)
    ]
    last = projection.loops[-1].loop_id
    requests = [v["text"]["value"] for r, v, loop in items if r == "human.request"]
    assert len(requests) == typed + 1 and requests[-1] == prompt
    assert [r for r, _, loop in items if loop == last] == ["human.request", "agent.final_answer"]
    states = [v["text"]["value"] for r, v, loop in items if r == "runtime.state" and loop is None]
    assert f"history restated from a checkpoint: {len(checkpoint)} messages" in states
