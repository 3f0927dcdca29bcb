"""Whole-benchmark runs of the plugin on the upstream data: the oracle ceilings and replayed official verdicts.

These go through everything a user runs (collection, xdist, scoring, the controller, the JSON report), so
they check the numbers the product prints, not only the scoring functions.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from benchmark_modules import benchmark_source

THIN_TEST = benchmark_source("acebench")

# acebench-scoring §4.8: what echoing the ground truth scores under the official scorer (passed samples/steps)
CEILINGS = {
    "en": {"normal_atom_bool": 50, "normal_atom_enum": 50, "normal_atom_number": 50, "normal_atom_list": 50,
           "normal_atom_object_short": 50, "normal_atom_object_deep": 33,
           "normal_single_turn_single_function": 92, "normal_single_turn_parallel_function": 86,
           "normal_similar_api": 48, "normal_preference": 49,
           "normal_multi_turn_user_adjust": 110, "normal_multi_turn_user_switch": 86,
           "special_incomplete": 50, "special_error_param": 50, "special_irrelevant": 50},
    "zh": {"normal_atom_bool": 50, "normal_atom_enum": 50, "normal_atom_number": 50, "normal_atom_list": 49,
           "normal_atom_object_short": 49, "normal_atom_object_deep": 50,
           "normal_single_turn_single_function": 99, "normal_single_turn_parallel_function": 97,
           "normal_similar_api": 48, "normal_preference": 50,
           "normal_multi_turn_user_adjust": 115, "normal_multi_turn_user_switch": 100,
           "special_incomplete": 50, "special_error_param": 50, "special_irrelevant": 50},
}
DIALOGUE_ACCURACY = {("en", "normal_multi_turn_user_adjust"): 0.76, ("en", "normal_multi_turn_user_switch"): 0.74,
                     ("zh", "normal_multi_turn_user_adjust"): 0.98, ("zh", "normal_multi_turn_user_switch"): 0.98}


def run_plugin(pytester: pytest.Pytester, acebench_dir: Path, *args: str) -> dict:
    pytester.makepyfile(test_acebench=THIN_TEST)
    pytester.runpytest_subprocess(
        f"--tooleval-data-dir={acebench_dir}", f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-m", "not agent", "-n", "2", "-p", "no:cacheprovider", "--tooleval-report", "report.json", "-q", *args,
    )
    return json.loads((pytester.path / "report.json").read_text())


def test_oracle_reproduces_the_official_ceilings(pytester: pytest.Pytester, acebench_dir: Path) -> None:
    report = run_plugin(pytester, acebench_dir, "--tooleval-model", "oracle", "--tooleval-language", "all")
    samples = report["samples"]
    assert Counter(sample["language"] for sample in samples) == {"en": 973, "zh": 967}
    assert all(sample["outcome"] in ("passed", "failed") for sample in samples)
    passed = Counter((s["language"], s["category"]) for s in samples if s["outcome"] == "passed")
    assert {(lang, cat): passed[(lang, cat)] for lang in CEILINGS for cat in CEILINGS[lang]} == {
        (lang, cat): count for lang in CEILINGS for cat, count in CEILINGS[lang].items()
    }
    for (lang, category), accuracy in DIALOGUE_ACCURACY.items():
        assert report["summary"]["acebench"][lang]["categories"][category]["accuracy"] == accuracy


def _official_rows(acebench_dir: Path) -> list[dict]:
    path = acebench_dir / "conformance" / "official_verdicts.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("variant", [0, 1, 2])
def test_replayed_outputs_get_the_official_verdicts(pytester: pytest.Pytester, acebench_dir: Path,
                                                    variant: int) -> None:
    rows = [row for row in _official_rows(acebench_dir) if row["variant"] == variant]
    replay = pytester.path / "outputs.jsonl"
    replay.write_text("\n".join(json.dumps({"lang": r["lang"], "id": r["id"], "result": r["output"]}) for r in rows))
    report = run_plugin(pytester, acebench_dir, "--tooleval-model", f"replay:{replay}", "--tooleval-language", "all")
    ours = {(s["language"], s["id"]): s["valid"] for s in report["samples"]}
    official = {(r["lang"], r["id"]): r["valid"] for r in rows}
    disagreements = sorted(key for key in official if ours.get(key) != official[key])
    assert len(ours) == len(official) == 1940
    assert disagreements == []


def test_real_model_outputs_in_the_upstream_result_layout(pytester: pytest.Pytester, acebench_dir: Path) -> None:
    real = acebench_dir / "conformance" / "real"
    official = {}
    for line in (real / "official_verdicts_deepseek-chat.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        official[(row["lang"], row["id"])] = row["valid"]
    report = run_plugin(pytester, acebench_dir, "--tooleval-model", f"replay:{real / 'deepseek-chat'}")
    ours = {(s["language"], s["id"]): s["valid"] for s in report["samples"]}
    assert len(ours) == 973
    assert sorted(key for key in official if ours.get(key) != official[key]) == []
