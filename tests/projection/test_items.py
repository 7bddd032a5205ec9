"""Column-wise items: every value is held to its role's value Struct."""

from __future__ import annotations

import pytest

from traceidx.projection.items import value_row


def test_a_value_gets_its_defaults_and_keeps_its_members() -> None:
    assert value_row("human.request", {}) == {"has_images": False}
    assert value_row("human.request", {"has_images": True}) == {"has_images": True}
    fragments = [{"text": {"value": "ls", "full_bytes": 2, "estimated_tokens": 1}}]
    assert value_row("agent.tool_call.shell", {"shell_fragments": fragments}) == {
        "shell_fragments": fragments
    }


@pytest.mark.parametrize(
    ("role", "value", "message"),
    [
        ("tool.output", {"summary": "x"}, "unknown members ['summary']"),
        ("agent.reasoning", {}, "missing members ['representation']"),
        ("agent.tool_call", {"shell_fragments": []}, "unknown members ['shell_fragments']"),
        ("no.such.role", {}, "unknown role 'no.such.role'"),
    ],
)
def test_a_value_outside_its_role_is_refused(role: str, value: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        value_row(role, value)
