"""Whole-benchmark runs of the plugin on the upstream data: the oracle ceilings and replayed official verdicts, at
each pinned ACEBench revision.

These go through everything a user runs (collection, xdist, the data folder's check against the revision's pin,
scoring, the controller, the JSON report), so they check the numbers the product prints, not only the scoring
functions. Every run is given the data root, which holds both revisions' folders (acebench/ for e6db74b,
acebench-56dd66c/), and picks one with --tooleval-acebench-revision.

What runs at which revision: 56dd66c, the default, gets every run (the oracle, the three replayed variants, the
real outputs); e6db74b gets the oracle, variant 0 and the real outputs. Each run is about 1,900 samples on two
workers, and the unit conformance tests already replay every official row at both revisions: one replayed variant
is enough to show an e6db74b run scores with e6db74b's decoder and data.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from upstream_data import acebench_at, recorded

THIN_TEST = benchmark_source("acebench")

# acebench-scoring §4.8: what echoing the ground truth scores under the official scorer at e6db74b (passed
# samples/steps); at 56dd66c the whitespace shortfalls of the single-turn categories are gone. Both tables are the
# unit conformance tests' (tests/unit/acebench/test_acebench_conformance.py), where each sample's verdict is checked
# against the official one wherever the revision's official_verdicts.jsonl holds the same output.
E6DB74B = {
    "en": {
        "normal_atom_bool": 50,
        "normal_atom_enum": 50,
        "normal_atom_number": 50,
        "normal_atom_list": 50,
        "normal_atom_object_short": 50,
        "normal_atom_object_deep": 33,
        "normal_single_turn_single_function": 92,
        "normal_single_turn_parallel_function": 86,
        "normal_similar_api": 48,
        "normal_preference": 49,
        "normal_multi_turn_user_adjust": 110,
        "normal_multi_turn_user_switch": 86,
        "special_incomplete": 50,
        "special_error_param": 50,
        "special_irrelevant": 50,
    },
    "zh": {
        "normal_atom_bool": 50,
        "normal_atom_enum": 50,
        "normal_atom_number": 50,
        "normal_atom_list": 49,
        "normal_atom_object_short": 49,
        "normal_atom_object_deep": 50,
        "normal_single_turn_single_function": 99,
        "normal_single_turn_parallel_function": 97,
        "normal_similar_api": 48,
        "normal_preference": 50,
        "normal_multi_turn_user_adjust": 115,
        "normal_multi_turn_user_switch": 100,
        "special_incomplete": 50,
        "special_error_param": 50,
        "special_irrelevant": 50,
    },
}
CEILINGS = {
    "e6db74b": E6DB74B,
    "56dd66c": {
        "en": {
            **E6DB74B["en"],
            "normal_atom_object_deep": 50,
            "normal_single_turn_single_function": 100,
            "normal_single_turn_parallel_function": 99,
            "normal_similar_api": 50,
        },
        "zh": {**E6DB74B["zh"], "normal_single_turn_single_function": 100, "normal_single_turn_parallel_function": 98},
    },
}
# The same at both revisions: the multi-turn categories read the same files the same way.
DIALOGUE_ACCURACY = {
    ("en", "normal_multi_turn_user_adjust"): 0.76,
    ("en", "normal_multi_turn_user_switch"): 0.74,
    ("zh", "normal_multi_turn_user_adjust"): 0.98,
    ("zh", "normal_multi_turn_user_switch"): 0.98,
}
#: deepseek-chat's 973 real outputs that the official evaluator passes at each revision (DATA.md).
REAL_VALID = {"e6db74b": 753, "56dd66c": 792}

BOTH = pytest.mark.parametrize("revision", ["56dd66c", "e6db74b"])


@pytest.fixture
def folder(request: pytest.FixtureRequest, revision: str) -> Path:
    """The revision's folder under the data root, which the runs are given: the test skips where it is missing."""
    return acebench_at(request, revision)


def run_plugin(pytester: pytest.Pytester, data_root: Path, revision: str, *args: str) -> dict[str, Any]:
    pytester.makepyfile(test_acebench=THIN_TEST)
    pytester.runpytest_subprocess(
        f"--tooleval-data-dir={data_root}",
        "--tooleval-acebench-revision",
        revision,
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-m",
        "not agent",
        "-n",
        "2",
        "-p",
        "no:cacheprovider",
        "--tooleval-report",
        "report.json",
        "-q",
        *args,
    )
    report = json.loads((pytester.path / "report.json").read_text())
    assert isinstance(report, dict)
    assert {sample.get("revision") for sample in report["samples"]} == {revision}
    return report


@BOTH
@pytest.mark.usefixtures("folder")
def test_oracle_reproduces_the_official_ceilings(pytester: pytest.Pytester, data_root: Path, revision: str) -> None:
    report = run_plugin(pytester, data_root, revision, "--tooleval-model", "oracle", "--tooleval-language", "all")
    samples = report["samples"]
    assert Counter(sample["language"] for sample in samples) == {"en": 973, "zh": 967}
    assert all(sample["outcome"] in ("passed", "failed") for sample in samples)
    passed = Counter((s["language"], s["category"]) for s in samples if s["outcome"] == "passed")
    ceilings = CEILINGS[revision]
    assert {(lang, cat): passed[(lang, cat)] for lang in ceilings for cat in ceilings[lang]} == {
        (lang, cat): count for lang in ceilings for cat, count in ceilings[lang].items()
    }
    for (lang, category), accuracy in DIALOGUE_ACCURACY.items():
        assert report["summary"]["acebench"][lang]["categories"][category]["accuracy"] == accuracy


def _official_rows(folder: Path) -> list[dict[str, Any]]:
    path = recorded(folder, "conformance/official_verdicts.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize(("revision", "variant"), [("56dd66c", 0), ("56dd66c", 1), ("56dd66c", 2), ("e6db74b", 0)])
def test_replayed_outputs_get_the_official_verdicts(
    pytester: pytest.Pytester, data_root: Path, folder: Path, revision: str, variant: int
) -> None:
    rows = [row for row in _official_rows(folder) if row["variant"] == variant]
    replay = pytester.path / "outputs.jsonl"
    replay.write_text("\n".join(json.dumps({"lang": r["lang"], "id": r["id"], "result": r["output"]}) for r in rows))
    report = run_plugin(
        pytester, data_root, revision, "--tooleval-model", f"replay:{replay}", "--tooleval-language", "all"
    )
    ours = {(s["language"], s["id"]): s["valid"] for s in report["samples"]}
    official = {(r["lang"], r["id"]): r["valid"] for r in rows}
    disagreements = sorted(key for key in official if ours.get(key) != official[key])
    assert len(ours) == len(official) == 1940
    assert disagreements == []


@BOTH
def test_real_model_outputs_in_the_upstream_result_layout(
    pytester: pytest.Pytester, data_root: Path, folder: Path, revision: str
) -> None:
    real = recorded(folder, "conformance/real")
    official = {}
    for line in (real / "official_verdicts_deepseek-chat.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        official[(row["lang"], row["id"])] = row["valid"]
    report = run_plugin(pytester, data_root, revision, "--tooleval-model", f"replay:{real / 'deepseek-chat'}")
    ours = {(s["language"], s["id"]): s["valid"] for s in report["samples"]}
    assert len(ours) == 973
    assert sorted(key for key in official if ours.get(key) != official[key]) == []
    assert sum(ours.values()) == sum(official.values()) == REAL_VALID[revision]
