"""The memory backends (kv, rec_sum) against bfcl-eval's own classes on 600 seeded call sequences, and the
memory system prompt against bfcl's own on 40 first turns (docs/bfcl.md#memory; memory_cases.py builds both,
record_memory.py and record_memory_prompts.py recorded upstream)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_tooleval.json_value import JSONObject
from pytest_tooleval.suites.bfcl.memory import bm25, kv, rec_sum
from pytest_tooleval.suites.bfcl.memory.data import CATEGORIES, CLASSES, SCENARIOS, load_entries
from pytest_tooleval.suites.bfcl.memory.kv import MemoryAPI_kv
from pytest_tooleval.suites.bfcl.memory.prompts import MemoryPrompts, with_system_prompt
from pytest_tooleval.suites.bfcl.memory.rec_sum import MemoryAPI_rec_sum
from pytest_tooleval.suites.bfcl.upstream import load_memory_prompts, load_pin

from . import memory_cases
from .record_memory_entries import entry_digest
from .record_memory_prompts import messages_digest

RECORDED = json.loads(Path(__file__).with_name("memory_digests.json").read_text(encoding="utf-8"))["sequences"]


def our_lines(backend: str, calls: list[tuple[str, list[Any]]]) -> list[str]:
    return memory_cases.run(MemoryAPI_kv() if backend == "kv" else MemoryAPI_rec_sum(), backend, calls)


@pytest.mark.parametrize("backend", ["kv", "rec_sum"])
def test_every_call_and_state_is_upstreams(bfcl_dir: Path, backend: str) -> None:
    sequences = memory_cases.sequences(bfcl_dir, backend)
    assert [key for key, _ in sequences] == [key for key in RECORDED if key.startswith(f"{backend}/")]
    outcomes: Counter[str] = Counter()
    for key, calls in sequences:
        lines = our_lines(backend, calls)
        digests = [memory_cases.digest(line) for line in lines]
        recorded = RECORDED[key]
        first = next(
            (n for n, (ours, theirs) in enumerate(zip(digests, recorded, strict=True)) if ours != theirs), None
        )
        assert first is None, (
            f"{key}: call {first} {calls[first][0]}{tuple(calls[first][1])!r} differs; ours: {lines[first][:600]} "
            f"(record_memory.py --show {key} prints upstream's)"
        )
        for line in lines:
            shown = json.loads(line)[0]
            entries = shown["result"]["dict"] if isinstance(shown.get("result"), dict) else []
            outcomes[shown.get("raised") or (entries[0][0] if entries else "other")] += 1
    # the sequences reach the error results, the successes, and the exceptions upstream raises
    assert outcomes["error"] > 100 and outcomes["status"] > 100, outcomes
    if backend == "kv":
        assert outcomes["ranked_results"] > 50 and outcomes["ZeroDivisionError"] > 0 and outcomes["TypeError"] > 0, (
            outcomes
        )


def test_bm25_ties_keep_insertion_order_and_unknown_words_score_nothing() -> None:
    index = bm25.Index([["a", "b"], ["c"], ["a", "b"]])
    scores = index.scores(["a", "z"])
    assert scores == index.scores(["a"])  # a word no key holds adds nothing
    assert scores[0] == scores[2] > scores[1] > 0.0  # BM25+'s delta: a key without the word still scores
    memory = MemoryAPI_kv()
    for key in ("alpha_beta", "gamma", "alpha_beta_two"):
        memory.archival_memory_add(key, "v")
    ranked = memory.archival_memory_key_search("alpha")["ranked_results"]
    assert [key for _, key in ranked] == ["alpha_beta", "alpha_beta_two", "gamma"]


def test_a_replacement_may_grow_the_buffer_past_the_limit_as_upstream_lets_it() -> None:
    memory = MemoryAPI_rec_sum()
    memory.memory_update("x" * 9_000)
    assert memory.memory_replace("x", "yy") == {"status": "Memory updated."}
    assert len(memory.memory) == 18_000
    assert "error" in memory.memory_append("z")


# -- the memory system prompt ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def memory_prompts(bfcl_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> MemoryPrompts:
    return load_memory_prompts(tmp_path_factory.mktemp("cache"), True, wheel=bfcl_wheel)


def test_the_lifted_texts_are_the_pinned_ones_and_come_back_from_the_cache(
    bfcl_wheel: Path, tmp_path: Path, memory_prompts: MemoryPrompts
) -> None:
    assert memory_prompts.sha256() == load_pin().memory_prompts_sha256
    assert sorted(memory_prompts.scenarios) == list(memory_cases.SCENARIOS)
    load_memory_prompts(tmp_path, True, wheel=bfcl_wheel)  # writes the cache file
    assert load_memory_prompts(tmp_path, True) == memory_prompts  # offline, from it alone


def test_every_first_turn_is_the_one_bfcl_sends(memory_prompts: MemoryPrompts) -> None:
    recorded = json.loads(Path(__file__).with_name("memory_prompt_digests.json").read_text(encoding="utf-8"))
    assert [key for key, *_ in memory_cases.prompt_cases()] == list(recorded["digests"])
    for key, backend, scenario, written, system in memory_cases.prompt_cases():
        api: MemoryAPI_kv | MemoryAPI_rec_sum = MemoryAPI_kv() if backend == "kv" else MemoryAPI_rec_sum()
        if written:
            memory_cases.run(api, backend, memory_cases.PROMPT_WRITES[backend])
        dump = kv.context(api) if isinstance(api, MemoryAPI_kv) else rec_sum.context(api)
        prompt = memory_prompts.system_prompt(backend, scenario, dump)
        turn = with_system_prompt(memory_cases.first_turn(memory_prompts.answer_format, system), prompt)
        assert messages_digest(turn) == recorded["digests"][key], key


# -- the categories' entries --------------------------------------------------------------------------------


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_entry_is_the_one_bfcls_loader_makes(
    bfcl_dir: Path, memory_prompts: MemoryPrompts, category: str
) -> None:
    """Ids, order, dependencies, scenario, the question as bfcl sends it (a question's answer-format message
    first) and the function docs, against bfcl's own `load_dataset_entry` (record_memory_entries.py)."""
    recorded = json.loads(Path(__file__).with_name("memory_entries.json").read_text(encoding="utf-8"))[category]
    entries = load_entries(bfcl_dir, category)
    assert [entry.id for entry in entries] == list(recorded)
    answer_format: JSONObject = {"role": "system", "content": memory_prompts.answer_format}
    for entry in entries:
        question = [list(turn) for turn in entry.turns]
        if not entry.prerequisite:
            question[0].insert(0, answer_format)
        digest = entry_digest(
            list(entry.depends_on), [CLASSES[entry.backend]], entry.scenario, question, entry.functions
        )
        assert digest == recorded[entry.id], entry.id
    prerequisites = [entry for entry in entries if entry.prerequisite]
    assert len(prerequisites) == 37 and len(entries) - 37 == 155
    assert [entry.id for entry in prerequisites if entry.first_of_scenario] == [
        next(e.id for e in prerequisites if e.scenario == scenario) for scenario in reversed(SCENARIOS)
    ]
    assert all(entry.accepted for entry in entries if not entry.prerequisite)


@pytest.mark.parametrize(("backend", "api"), [("kv", MemoryAPI_kv), ("rec_sum", MemoryAPI_rec_sum)])
def test_the_public_methods_are_the_documented_api_and_nothing_else(bfcl_dir: Path, backend: str, api: type) -> None:
    """The executor offers a class's public methods to the model: they must be the functions bfcl documents."""
    documented = {doc["name"] for doc in load_entries(bfcl_dir, f"memory_{backend}")[0].functions}
    public = {name for name, member in vars(api).items() if callable(member) and not name.startswith("_")}
    assert public == documented
