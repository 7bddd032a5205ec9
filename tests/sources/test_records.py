"""Column-wise records: runs continue one another, and a source's keys digest in order."""

from __future__ import annotations

from hashlib import blake2b

from traceidx.domain import ids
from traceidx.sources.frame import fingerprint
from traceidx.sources.records import RecordColumns, SourceKeys


def test_a_run_continues_where_the_last_one_stopped() -> None:
    keys = SourceKeys(7)
    run = RecordColumns(7, keys, first=0)
    keys.add(None, b"0" * 32)
    run.append(0, 5, "ok", "user")
    rest = run.rest()
    assert (rest.source_id, rest.first, len(rest), rest.keys) == (7, 1, 0, keys)
    assert [(r.source_position, r.record_id) for r in run.objects()] == [(0, ids.record_id(7, 0))]


def test_source_digests_cover_the_fingerprints_in_order() -> None:
    keys = SourceKeys()
    for position in range(5):
        keys.add(None, fingerprint(b"%d" % position).encode("ascii"))
    whole, prefixes = keys.digests([2, 5, 9])

    def blake2b_128(data: bytes) -> str:
        return blake2b(data, digest_size=16).hexdigest()

    assert whole == blake2b_128(bytes(keys.fingerprints))
    assert prefixes == {2: blake2b_128(bytes(keys.fingerprints[:64])), 5: whole}
