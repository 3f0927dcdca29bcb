"""The vector memory backend against bfcl-eval's own `MemoryAPI_vector` on seeded step sequences, snapshots
included, and its index against faiss's on each of faiss's x86 builds (docs/bfcl.md#memory;
memory_vector_cases.py builds both, record_memory_vector.py recorded upstream). The tests that embed skip, in one
line, where the model or sentence-transformers is not installed."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_tooleval.suites.bfcl.memory import vector
from pytest_tooleval.suites.bfcl.memory.data import load_entries
from pytest_tooleval.suites.bfcl.memory.vector import MemoryAPI_vector, Store

from . import memory_cases, memory_vector_cases

RECORDED = json.loads(Path(__file__).with_name("memory_vector_digests.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def embed() -> vector.Embedder:
    reason = vector.unavailable()
    if reason:
        pytest.skip(reason)
    return vector.embedder()


class Ours:
    """Our side of the sequences: the recorded faiss build, bfcl's snapshot text as our snapshot writes it."""

    def __init__(self, embed: vector.Embedder) -> None:
        self.embed = embed

    def fresh(self) -> MemoryAPI_vector:
        return MemoryAPI_vector(self.embed, RECORDED["faiss_build"])

    def state(self, api: MemoryAPI_vector) -> Any:
        def one(store: Store) -> dict[str, Any]:
            return {
                "next_id": store.next_id,
                "store": store.store,
                "index": store.index.ids,
                "vectors": memory_vector_cases.vectors_digest(store.index.vectors.tobytes()),
            }

        return {
            "core_memory": one(api.core_memory),
            "archival_memory": one(api.archival_memory),
            "context": vector.context(api),
        }

    def write(self, api: MemoryAPI_vector) -> str:
        return json.dumps(vector.snapshot(api), indent=4)

    def read(self, api: MemoryAPI_vector, text: str) -> None:
        vector.load_snapshot(api, json.loads(text))


def test_every_step_and_state_is_upstreams(bfcl_dir: Path, embed: vector.Embedder) -> None:
    sequences = memory_vector_cases.sequences(bfcl_dir)
    recorded = RECORDED["sequences"]
    assert [key for key, _ in sequences] == list(recorded)
    side = Ours(embed)
    outcomes: Counter[str] = Counter()
    for key, steps in sequences:
        lines = memory_vector_cases.run(side, steps)
        digests = [memory_cases.digest(line) for line in lines]
        first = next(
            (n for n, (ours, theirs) in enumerate(zip(digests, recorded[key], strict=True)) if ours != theirs), None
        )
        assert first is None, (
            f"{key}: step {first} {steps[first][0]}{tuple(steps[first][1])!r} differs; ours: {lines[first][:800]} "
            f"(record_memory_vector.py --show {key} prints upstream's)"
        )
        for (method, _), line in zip(steps, lines, strict=True):
            shown = json.loads(line)[0]
            result = shown.get("result")
            entries = result["dict"] if isinstance(result, dict) and "dict" in result else []
            outcomes[shown.get("raised") or (entries[0][0] if entries else method)] += 1
            outcomes[f"{method.split('_memory_')[-1]} {shown.get('raised')}"] += 1
            if entries and entries[0][0] == "error":
                outcomes[entries[0][1]] += 1
            if method.endswith("_retrieve") and entries and entries[0][0] == "result" and entries[0][1]:
                scores = [item["dict"][1][1]["float"] for item in entries[0][1]]
                outcomes["found"] += 1
                outcomes["tied"] += len(scores) - len(set(scores))
    # the sequences reach successes, each error text, the exceptions upstream raises, ranked results with ties
    # (rare here: a text's vector differs in its last bits once a snapshot's load has embedded it in a batch; the
    # index test below has them by the hundred), snapshots, and both memories full
    assert outcomes["id"] > 100 and outcomes["status"] > 50 and outcomes["found"] > 60, outcomes
    assert outcomes["tied"] > 5 and outcomes[memory_vector_cases.SNAPSHOT] >= len(sequences), outcomes
    for limit in ("300 characters", "2000 characters", "7 entries", "50 entries"):
        assert any(limit in text for text in outcomes), (limit, outcomes)
    assert outcomes["ID 99 not present in store."] > 0, outcomes
    assert outcomes["update ValueError"] > 3 and outcomes["add AssertionError"] > 0, outcomes  # failed halfway
    assert {"AssertionError", "TypeError", "ValueError"} <= set(outcomes), outcomes


@pytest.mark.parametrize("build", ["generic", "avx2", "avx512"])
def test_every_search_is_faiss_own_on_each_build(build: str) -> None:
    """Scores to the last bit and results in faiss's order, ties included, for the build faiss would load."""
    np = pytest.importorskip("numpy", reason=f"the vector memory's index needs numpy: {vector.INSTALL}")
    from pytest_tooleval.suites.bfcl.memory.flat_ip import FlatIP

    pool, cases = memory_vector_cases.kernel_cases()
    vectors = np.array(pool, dtype=np.float32)
    recorded = RECORDED["kernels"][build]
    assert [key for key, _ in cases] == list(recorded)
    ties = 0
    for key, ops in cases:
        index = FlatIP(vectors.shape[1], build)
        lines = []
        for op, a, b in ops:
            if op == "add":
                index.add_with_ids(vectors[a : a + 1], [b])
            elif op == "remove":
                index.remove_ids([a])
            else:
                found = index.search(vectors[a : a + 1], b)
                ties += len(found) - len({score for score, _ in found})
                lines.append(memory_vector_cases.kernel_line(found))
        digests = [memory_cases.digest(line) for line in lines]
        assert digests == recorded[key], f"{key}: {lines}"
    assert ties > 500  # repeated vectors: the order of ties is faiss's


def test_a_fused_multiply_add_rounds_once_where_rounding_twice_would_differ() -> None:
    """a * b = 0.5 - 2**-47 exactly; + c lands, in float64, halfway between two float32: rounding that to even
    is wrong, the exact sum is below (or, negated, above) the halfway point."""
    np = pytest.importorskip("numpy", reason=f"the vector memory's index needs numpy: {vector.INSTALL}")
    from pytest_tooleval.suites.bfcl.memory.flat_ip import fma

    a = np.array([0.5 * (1 + 2**-23), -0.5 * (1 + 2**-23), 0.5], dtype=np.float32)
    b = np.array([1 - 2**-23, 1 - 2**-23, 0.5], dtype=np.float32)
    c = np.array([2**23 + 1, -(2**23 + 1), 1], dtype=np.float32)
    assert (a.astype(np.float64) * b + c).astype(np.float32).tolist() == [2**23 + 2, -(2**23 + 2), 1.25]
    assert fma(a, b, c).tolist() == [2**23 + 1, -(2**23 + 1), 1.25]


def test_a_folder_without_the_model_says_why_in_one_line(tmp_path: Path) -> None:
    reason = vector.unavailable(tmp_path)
    assert reason is not None and "\n" not in reason, reason
    with pytest.raises(LookupError, match=r"model\.safetensors is missing"):
        vector.model_folder(tmp_path)
    (tmp_path / "model.safetensors").write_bytes(b"other weights")
    with pytest.raises(LookupError, match="not all-MiniLM-L6-v2's weights"):
        vector.model_folder(tmp_path)


def test_the_installed_model_is_the_one_bfcl_loads_by_name(embed: vector.Embedder) -> None:
    """The package's copy has the hub revision's weights (model_folder checks their sha256) and is what loads."""
    assert embed.folder == vector.model_folder()
    assert embed.folder.parts[-2:] == (vector.MODEL_PACKAGE, "model")
    assert embed(["a note", "another"]).shape == (2, vector.DIMENSION)


def test_an_empty_core_memory_shows_as_an_empty_object_as_upstreams_does() -> None:
    """Upstream tests its store object, always true, for emptiness: the prompt shows `{}`, never its sentence."""
    pytest.importorskip("numpy", reason=f"the vector memory's index needs numpy: {vector.INSTALL}")
    api = MemoryAPI_vector(kernel="generic")
    assert vector.context(api) == "{}"
    api.core_memory.store[0] = "Ada"
    assert vector.context(api) == '{\n    "0": "Ada"\n}'


def test_the_public_methods_are_the_documented_api_and_nothing_else(bfcl_dir: Path) -> None:
    """The executor offers a class's public methods to the model: they must be the functions bfcl documents."""
    documented = {doc["name"] for doc in load_entries(bfcl_dir, "memory_vector")[0].functions}
    public = {name for name, member in vars(MemoryAPI_vector).items() if callable(member) and not name.startswith("_")}
    assert public == documented
