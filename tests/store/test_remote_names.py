"""Names on object storage round-trip: garbage collection reads back the generation a part, a
checkpoint or a manifest was written under, and readers order manifests by generation."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from traceidx.domain.model import TABLES
from traceidx.runtimes import names
from traceidx.storage import is_uri
from traceidx.store.dataset import Partition
from traceidx.store.open import reader
from traceidx.store.remote import MANIFEST_FILE, NAMED_GENERATION, manifest_name

generations = st.integers(min_value=0, max_value=10**12 - 1)


@given(
    generation=generations,
    table=st.sampled_from(sorted(TABLES)),
    runtime=st.sampled_from(names()),
    bucket=st.integers(min_value=0, max_value=63),
    remote=st.booleans(),
)
def test_a_part_name_gives_back_its_generation(
    generation: int, table: str, runtime: str, bucket: int, remote: bool
) -> None:
    tag = reader("s3://team/index" if remote else "index").tag  # no request made
    name = Partition(runtime, "2026-12", bucket).path(table, generation, tag).rsplit("/")[-1]
    found = NAMED_GENERATION.search(name)
    assert found is not None and int(found.group(1)) == generation


@given(source=st.integers(min_value=0, max_value=2**63 - 1), generation=generations)
def test_a_checkpoint_name_gives_back_its_generation(source: int, generation: int) -> None:
    name = f"{source:016x}-{generation:06d}.pickle"  # as traceidx.pipeline.plan names checkpoints
    found = NAMED_GENERATION.search(name)
    assert found is not None and int(found.group(2)) == generation


@given(st.lists(generations, min_size=1, unique=True))
def test_manifest_names_sort_as_their_generations(gens: list[int]) -> None:
    names = [manifest_name(g).split("/")[-1] for g in gens]
    parsed = [int(m.group(1)) for n in sorted(names) if (m := MANIFEST_FILE.fullmatch(n))]
    assert parsed == sorted(gens)


def test_uris_and_paths() -> None:
    assert is_uri("s3://traces/") and is_uri("gs://b/p") and is_uri("s3://traces")
    assert not is_uri("file:///home/a") and not is_uri("/home/a") and not is_uri("s3:/x")
    assert not is_uri(b"s3://traces")
