"""The domain model and its derived schema: one source of truth, role/value pairing enforced."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from traceidx.domain import model
from traceidx.domain.text import estimate_tokens, text_content
from traceidx.tables.schema import SHAPE_BY_ROLE, SHAPES, table_schema, to_row

CONTRACT_PAIRS = {
    "human.request": "Text",
    "human.steering": "Text",
    "agent.commentary": "Text",
    "agent.final_answer": "Text",
    "agent.reasoning": "Reasoning",
    "agent.tool_call": "ToolCall",
    "agent.tool_call.shell": "ShellToolCall",
    "agent.delegation": "Delegation",
    "tool.output": "ToolOutput",
    "subagent.activity": "SubagentActivity",
    "subagent.report": "SubagentReport",
    "runtime.instructions": "Instruction",
    "runtime.context": "Context",
    "runtime.state": "Text",
    "runtime.notice": "Text",
    "runtime.compaction_summary": "Compaction",
    "runtime.unknown": "Text",
}


def test_the_seventeen_roles_pair_with_the_contract_value_types() -> None:
    pairs = {name: cls.__annotations__["value"] for name, cls in model.ROLE_BY_NAME.items()}
    assert pairs == CONTRACT_PAIRS


@pytest.mark.parametrize("role", sorted(CONTRACT_PAIRS))
def test_a_role_rejects_every_other_value_shape(role: str) -> None:
    empty = {"Text": {}, "Reasoning": {"representation": "unavailable"}, "ToolCall": {}}
    empty |= {"ShellToolCall": {"shell_fragments": []}, "ToolOutput": {}, "Compaction": {}}
    for value_type in set(CONTRACT_PAIRS.values()):
        value = dict(empty.get(value_type, {}))
        value.update({"has_images": False} if value_type in ("Delegation",) else {})
        raw = {"role": role, "evidence_strength": "structural", "value": value}
        fields = {f.name for f in msgspec.structs.fields(getattr(model, value_type))}
        other = {f.name for f in msgspec.structs.fields(getattr(model, CONTRACT_PAIRS[role]))}
        if value_type == CONTRACT_PAIRS[role] or set(value) <= other:
            continue
        assert fields
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert(raw, type=model.Semantic)


def test_stored_semantic_has_one_child_per_value_shape() -> None:
    semantic = table_schema("items").field("semantic").type
    names = [semantic.field(i).name for i in range(semantic.num_fields)]
    assert names == ["role", "evidence_strength", *SHAPES]
    assert set(SHAPE_BY_ROLE.values()) == set(SHAPES)
    tool_call = semantic.field("tool_call").type
    assert {tool_call.field(i).name for i in range(tool_call.num_fields)} == {
        "tool_name",
        "arguments",
        "working_directory",
        "shell_fragments",
        "redactions",
    }


@pytest.mark.parametrize("role", sorted(CONTRACT_PAIRS))
def test_an_item_row_sets_exactly_the_role_child(role: str) -> None:
    value: dict[str, object] = {"text": text_content("x"), "has_images": False}
    pair = CONTRACT_PAIRS[role]
    if pair == "Reasoning":
        value = {"representation": "full", "text": text_content("x")}
    elif pair in ("ToolCall",):
        value = {"tool_name": "Read"}
    elif pair == "ShellToolCall":
        from traceidx.domain.shell import parse_shell

        value = {"tool_name": "Bash", "shell_fragments": parse_shell("ls")}
    elif pair in ("ToolOutput", "Instruction"):
        value = {"text": text_content("x")}
    elif pair == "Compaction":
        value = {"summary": text_content("x")}
    semantic = msgspec.convert(
        {"role": role, "evidence_strength": "structural", "value": value},
        type=model.Semantic,
        from_attributes=True,
    )
    item = model.Item(item_id=1, session_id=2, source_id=4, record_ids=(3,), semantic=semantic)
    row = to_row(item)["semantic"]
    set_children = [s for s in SHAPES if row.get(s) is not None]
    assert set_children == [SHAPE_BY_ROLE[role]]


def test_every_table_schema_is_derived_from_its_struct() -> None:
    for name, cls in model.TABLES.items():
        schema = table_schema(name)
        assert schema.names == [f.name for f in msgspec.structs.fields(cls)]
    assert str(table_schema("items").field("occurred_at").type) == "timestamp[ms, tz=UTC]"


@given(st.text(), st.integers(min_value=1, max_value=64))
def test_text_content_is_a_bounded_prefix(text: str, limit: int) -> None:
    content = text_content(text, limit)
    data = text.encode("utf-8", "surrogatepass")
    published = content.value.encode("utf-8", "surrogatepass")
    assert content.full_bytes == len(data)
    assert len(published) <= limit
    assert data.startswith(published)
    assert (published == data) == (len(data) <= limit)
    assert content.estimated_tokens == estimate_tokens(text)


def test_token_estimate_examples() -> None:
    examples = {"": 0, "a": 1, "abcdefgh": 2, "abcd你好": 3, "你好": 2, "abcdef你好": 4}
    assert {t: estimate_tokens(t) for t in examples} == examples
    assert text_content("abcdef你好", 10).value == "abcdef你"


_IDS = st.integers(min_value=0, max_value=(1 << 63) - 1)


@given(_IDS, st.integers(min_value=0, max_value=1 << 40), st.integers(min_value=0, max_value=64))
def test_id_fast_paths_hash_the_documented_parts(source: int, position: int, ordinal: int) -> None:
    from traceidx.domain import ids

    assert ids.loop_id(source, position) == ids._h("loop", source, position)


def _splitmix63(seed: int, n: int) -> int:
    """Output number `n` of SplitMix64's generator seeded with `seed`, modulo 2**63."""
    m = 1 << 63
    z = (seed + n * 0x9E3779B97F4A7C15) % m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % m
    return z ^ (z >> 31)


@given(_IDS, st.integers(min_value=0, max_value=1 << 40), st.integers(min_value=0, max_value=300))
def test_record_ids_are_the_documented_stream_in_bulk_and_one_by_one(
    source: int, first: int, count: int
) -> None:
    from hashlib import blake2b

    from traceidx.domain import ids
    from traceidx.sources import idruns

    seed = int.from_bytes(blake2b(b"record\x1f%d" % source, digest_size=8).digest(), "big")
    seed &= (1 << 63) - 1
    expected = [_splitmix63(seed, p + 1) for p in range(first, first + count)]
    assert [ids.record_id(source, p) for p in range(first, first + count)] == expected
    assert list(idruns.record_ids(source, first, count)) == expected


def test_record_ids_of_one_source_never_collide() -> None:
    from traceidx.sources import idruns

    many = idruns.record_ids(12345, 0, 1_000_000)
    assert len(set(many)) == len(many) and min(many) >= 0


@given(
    _IDS,
    st.lists(
        st.tuples(st.integers(0, 1 << 40), st.integers(0, (1 << 16) + 3)), max_size=40, unique=True
    ),
)
def test_item_ids_are_the_documented_stream_in_bulk_and_one_by_one(
    source: int, keys: list[tuple[int, int]]
) -> None:
    from hashlib import blake2b

    from traceidx.domain import ids
    from traceidx.sources import idruns

    seed = int.from_bytes(blake2b(b"item\x1f%d" % source, digest_size=8).digest(), "big")
    seed &= (1 << 63) - 1
    expected = [
        _splitmix63(seed, (p << 16) + o + 1) if o < 1 << 16 else ids._h("item", source, p, o)
        for p, o in keys
    ]
    assert [ids.item_id(source, p, o) for p, o in keys] == expected
    assert idruns.item_ids(source, [p for p, _ in keys], [o for _, o in keys]) == expected
    assert len(set(expected)) == len(expected)
