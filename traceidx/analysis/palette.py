"""The HTML report's colours: one stable colour per model, and the neutral colours of every
other meaning on the page.

Models are the only thing the page colours with hue. `MODEL_PALETTE` holds 24 colours picked
for separation (every pair at least 15 apart in CIEDE2000, lightness 35-80 on a white page,
chroma at least 30); a model's colour depends on its name only, so it is the same in every
report (`model_colours`). Outcomes, and the bars of everything that is not a model (projects,
tools, runtimes), are greys (`OUTCOME_COLOURS`, `NEUTRAL`): they never look like a model.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

#: the model colours (their order is part of the rule: a model's slot indexes this tuple)
MODEL_PALETTE: tuple[str, ...] = (
    "#0080e0", "#e0c028", "#b04000", "#306000", "#ffa8b0", "#00d8c8", "#c00088", "#c87800",
    "#9880ff", "#685020", "#00a030", "#98c8ff", "#e85070", "#007868", "#908840", "#18a0b8",
    "#f86840", "#786090", "#f8b888", "#a80030", "#b0d098", "#1048c0", "#d8b8f0", "#f060d0",
)  # fmt: skip
#: the colour of the models a page shows beyond the palette's size (the least costly ones)
OTHER_MODELS = "#c8c8c8"
#: the bars of everything that is not a model (projects, tools, child sessions)
NEUTRAL = "#6b6b6b"
#: the outcome mix: darker the more the runtime said; "not stated" the lightest
OUTCOME_COLOURS: dict[str, str] = {
    "completed": "#4d4d4d",
    "interrupted": "#9e9e9e",
    "failed": "#000000",
    "no_outcome": "#e6e6e6",
}


def choices(name: str) -> Iterable[int]:
    """The palette slots a model name asks for, best first: slot k is the SHA-256 of the
    name (UTF-8), then of the name followed by a NUL byte and the decimal k, modulo the
    palette's size; every slot eventually."""
    size = len(MODEL_PALETTE)
    seen: set[int] = set()
    k = 0
    while len(seen) < size:
        data = name.encode() if k == 0 else name.encode() + b"\0" + str(k).encode()
        slot = int.from_bytes(hashlib.sha256(data).digest()[:8], "big") % size
        if slot not in seen:
            seen.add(slot)
            yield slot
        k += 1


def model_colours(by_spend: list[str]) -> dict[str, str]:
    """One colour per model of a page (`by_spend`: every model shown, the costliest first).

    The rule (stable across reports): each model takes the first of its `choices` that no
    model before it took, the models taken in the order of their names; so a model keeps its
    first choice on every page where no model of a smaller name wants the same slot. When a
    page shows more models than the palette has colours, the costliest take the palette and
    the rest share `OTHER_MODELS`. Returned in `by_spend` order."""
    size = len(MODEL_PALETTE)
    coloured = set(by_spend[:size])
    taken: dict[int, str] = {}
    out: dict[str, str] = {}
    for name in sorted(coloured):
        slot = next(s for s in choices(name) if s not in taken)
        taken[slot] = name
        out[name] = MODEL_PALETTE[slot]
    return {name: out.get(name, OTHER_MODELS) for name in by_spend}
