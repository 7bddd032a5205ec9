"""The HTML report's model colours: at least 20 that people tell apart (CIEDE2000), a model's
colour fixed by its name alone, and greys for every other meaning."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.colour import ciede2000, difference
from traceidx.analysis.palette import (
    MODEL_PALETTE,
    NEUTRAL,
    OTHER_MODELS,
    OUTCOME_COLOURS,
    choices,
    model_colours,
)

#: the least CIEDE2000 difference between two model colours (about 2 is "just noticeable")
MODEL_SEPARATION = 15.0
#: the least difference between a model colour and a colour of another meaning
MEANING_SEPARATION = 12.0
OTHERS = (NEUTRAL, OTHER_MODELS, *OUTCOME_COLOURS.values())


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [  # Sharma, Wu and Dalal (2005), the CIEDE2000 test data: pairs 1, 7, 17 and 25
        ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
        ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
        ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
        ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ],
)
def test_the_metric_is_ciede2000(
    first: tuple[float, float, float], second: tuple[float, float, float], expected: float
) -> None:
    assert ciede2000(first, second) == pytest.approx(expected, abs=1e-4)
    assert ciede2000(second, first) == pytest.approx(expected, abs=1e-4)


def test_the_model_palette_has_twenty_four_colours_all_far_apart() -> None:
    assert len(MODEL_PALETTE) >= 20 and len(set(MODEL_PALETTE)) == len(MODEL_PALETTE)
    closest = min(difference(a, b) for a, b in itertools.combinations(MODEL_PALETTE, 2))
    assert closest >= MODEL_SEPARATION, closest
    # nor like any grey the page draws other meanings (and models beyond the palette) with
    assert len(set(OTHERS)) == len(OTHERS) and not set(OTHERS) & set(MODEL_PALETTE)
    nearest = min(difference(m, o) for m in MODEL_PALETTE for o in OTHERS)
    assert nearest >= MEANING_SEPARATION, nearest
    # and every one shows on the white page
    assert min(difference(m, "#ffffff") for m in MODEL_PALETTE) >= MEANING_SEPARATION
    # the outcomes, drawn side by side, are told apart too
    outcomes = itertools.combinations(OUTCOME_COLOURS.values(), 2)
    assert min(difference(a, b) for a, b in outcomes) >= MODEL_SEPARATION


def test_a_model_s_choices_are_every_slot_in_a_fixed_order() -> None:
    for name in ("gpt-5.5", "claude-opus-4-5", "(unknown)", "qwen3-coder-plus", ""):
        slots = list(choices(name))
        assert sorted(slots) == list(range(len(MODEL_PALETTE)))
        assert slots == list(choices(name))


def _colliding() -> tuple[str, str]:
    """Two model names whose first choice is the same slot."""
    first: dict[int, str] = {}
    for i in itertools.count():
        name = f"model-{i}"
        slot = next(iter(choices(name)))
        if slot in first:
            return first[slot], name
        first[slot] = name
    raise AssertionError("unreachable")


def test_a_collision_is_resolved_by_name_and_leaves_the_others_alone() -> None:
    a, b = sorted(_colliding())
    alone = model_colours([b])[b]
    both = model_colours([b, a])  # b is the costlier: spend does not decide, names do
    assert both[a] == MODEL_PALETTE[next(iter(choices(a)))] == model_colours([a])[a]
    assert both[b] != both[a] and both[b] == MODEL_PALETTE[list(choices(b))[1]]
    assert alone == both[a]  # b alone keeps the slot it shares with a


@given(
    st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=24, unique=True),
    st.randoms(use_true_random=False),
)
def test_colours_are_distinct_and_do_not_depend_on_the_order_given(
    names: list[str], rng: object
) -> None:
    colours = model_colours(names)
    assert list(colours) == names
    assert len(set(colours.values())) == len(names)
    assert set(colours.values()) <= set(MODEL_PALETTE)
    shuffled = list(names)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    assert model_colours(shuffled) == colours


@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=24, unique=True))
def test_a_model_keeps_its_first_choice_unless_a_smaller_name_takes_it(names: list[str]) -> None:
    colours = model_colours(names)
    for name in names:
        first = next(iter(choices(name)))
        rivals = [n for n in names if n < name and MODEL_PALETTE[first] == colours[n]]
        if not rivals:
            assert colours[name] == MODEL_PALETTE[first]


def test_models_beyond_the_palette_share_one_grey_and_the_costliest_keep_colours() -> None:
    names = [f"m{i:02d}" for i in range(len(MODEL_PALETTE) + 5)]  # costliest first
    colours = model_colours(names)
    coloured = names[: len(MODEL_PALETTE)]
    assert sorted(colours[n] for n in coloured) == sorted(MODEL_PALETTE)
    assert {colours[n] for n in names[len(MODEL_PALETTE) :]} == {OTHER_MODELS}
