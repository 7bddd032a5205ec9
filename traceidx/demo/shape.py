"""How long generated sessions are: mostly a few turns, now and then a long working session.

Calibrated on the public corpus (``shared/corpus/public``): its median Claude Code session is
45 lines and its median Codex session 19, yet about two thirds of its bytes lie in sessions of
500 lines or more (Claude Code 65%, Codex 66%, Pi 84%). A corpus of short sessions only would
misstate where the bytes are, and so what building and querying them costs.
"""

from __future__ import annotations

import random

#: about one session in LONG_EVERY is a long working session.
LONG_EVERY = 8


def long_indexes(runtime: str, seed: int, sessions: int, wanted: bool = True) -> frozenset[int]:
    """The indexes of the long working sessions among `sessions` (a seeded choice, drawn
    apart from the generator's own stream so that short sessions do not depend on it); none
    when not `wanted` (a corpus of many small sources)."""
    rng = random.Random(f"long:{runtime}:{seed}")
    return frozenset(rng.sample(range(sessions), sessions // LONG_EVERY if wanted else 0))
