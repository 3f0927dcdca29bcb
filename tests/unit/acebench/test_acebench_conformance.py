"""Our ACEBench scoring against verdicts the official evaluator gave, at each pinned revision (needs
TOOLEVAL_DATA_DIR).

Every test runs once per revision (acebench-revisions §1): e6db74b on the data root's acebench/, 56dd66c on its
acebench-56dd66c/, each folder's verdicts given by that revision's own eval_main.py. Three sources, each per
(language, category), each required to agree on every row:
- ``conformance/official_verdicts.jsonl``: synthetic outputs (gold renderings, mistakes, format breaks);
- ``conformance/real/``: one real model's outputs on the 15 en normal/special categories;
- the "echo the ground truth" ceilings of acebench-scoring §4.8 (and 50/50 for the special categories), each
  sample's verdict checked against the official one wherever the official file holds the same output.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from _data import (
    LANGUAGES,
    NORMAL_CATEGORIES,
    SPECIAL_CATEGORIES,
    read_jsonl,
    records,
    records_by_id,
)

from pytest_tooleval.suites.acebench.aggregate import SampleScore, category_score
from pytest_tooleval.suites.acebench.revisions import REVISIONS, Revision
from pytest_tooleval.suites.acebench.scoring import (
    render_ground_truth,
    score_normal,
    score_special,
)
from pytest_tooleval.verdict import Verdict
from upstream_data import recorded

CATEGORIES = NORMAL_CATEGORIES + SPECIAL_CATEGORIES
LANG_CATEGORIES = [(lang, category) for lang in LANGUAGES for category in CATEGORIES]
#: The session fixture (tests/conftest.py) that finds each revision's folder.
DATA_FIXTURES = {"e6db74b": "acebench_dir", "56dd66c": "acebench_56dd66c_dir"}


@dataclass(frozen=True)
class AceData:
    """One revision and its data folder."""

    revision: Revision
    root: Path


@pytest.fixture(params=[known.name for known in REVISIONS])
def ace(request: pytest.FixtureRequest) -> AceData:
    known = next(known for known in REVISIONS if known.name == request.param)
    root: Path = request.getfixturevalue(DATA_FIXTURES[known.name])
    recorded(root, "conformance")  # every test here reads the official verdicts recorded there
    # The folder's manifest names the commit its files and verdicts were made at.
    assert json.loads((root / "MANIFEST.json").read_text(encoding="utf-8"))["commit"] == known.commit
    return AceData(known, root)


def _score(ace: AceData, lang: str, category: str, sample_id: str, output: str) -> Verdict:
    record = records_by_id(ace.root, lang, category)[sample_id]
    if category in SPECIAL_CATEGORIES:
        return score_special(category, record.ground_truth, output)
    return score_normal(record.record["function"], record.ground_truth, output, ace.revision.decoding(category))


def _report(mismatches: list[str], total: int) -> str:
    return f"{len(mismatches)} of {total} rows disagree with the official evaluator:\n" + "\n".join(mismatches)


# --- synthetic outputs ---------------------------------------------------------------------------------


@cache
def _official_rows(path: str) -> dict[tuple[str, str], list[dict[str, Any]]]:
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    rows: list[dict[str, Any]] = read_jsonl(Path(path))
    for row in rows:
        grouped[(row["lang"], row["category"])].append(row)
    return dict(grouped)


def _official(ace: AceData) -> dict[tuple[str, str], list[dict[str, Any]]]:
    return _official_rows(str(ace.root / "conformance" / "official_verdicts.jsonl"))


def test_official_verdicts_cover_every_category(ace: AceData) -> None:
    grouped = _official(ace)
    assert sorted(grouped) == sorted(LANG_CATEGORIES)
    assert sum(map(len, grouped.values())) == 5820


@pytest.mark.parametrize(("lang", "category"), LANG_CATEGORIES)
def test_official_verdicts(ace: AceData, lang: str, category: str) -> None:
    rows = _official(ace)[(lang, category)]
    mismatches = []
    for row in rows:
        verdict = _score(ace, lang, category, row["id"], row["output"])
        if verdict.valid != row["valid"]:
            mismatches.append(
                f"  {row['id']} variant {row['variant']} ({row['kind']}): official {row['valid']}, "
                f"ours {verdict.valid} {verdict.error_type}; output {row['output'][:200]!r}"
            )
    assert not mismatches, _report(mismatches, len(rows))


# --- a real model's outputs --------------------------------------------------------------------------------

REAL_MODEL = "deepseek-chat"
#: The real outputs the official evaluator passes at each revision (DATA.md), of 973.
REAL_VALID = {"e6db74b": 753, "56dd66c": 792}


@cache
def _real_verdicts(path: str) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    rows: list[dict[str, Any]] = read_jsonl(Path(path))
    for row in rows:
        assert (row["lang"], row["model"]) == ("en", REAL_MODEL)
        grouped[row["category"]].append(row)
    return dict(grouped)


def _real(ace: AceData) -> dict[str, list[dict[str, Any]]]:
    return _real_verdicts(str(ace.root / "conformance" / "real" / f"official_verdicts_{REAL_MODEL}.jsonl"))


@pytest.mark.parametrize("category", CATEGORIES)
def test_real_model_verdicts(ace: AceData, category: str) -> None:
    real = ace.root / "conformance" / "real"
    verdicts = _real(ace)[category]
    # The result files use upstream's layout; the multi-turn ones list steps in another order: match by id.
    rows: list[dict[str, Any]] = read_jsonl(real / REAL_MODEL / f"data_{category}_result.json")
    results = {row["id"]: row["result"] for row in rows}
    data_ids = sorted(record.id for record in records(ace.root, "en", category))
    assert sorted(results) == sorted(row["id"] for row in verdicts) == data_ids
    mismatches = []
    for row in verdicts:
        assert results[row["id"]] == row["output"], f"{row['id']}: the result file and the verdict file differ"
        verdict = _score(ace, "en", category, row["id"], results[row["id"]])
        if verdict.valid != row["valid"]:
            mismatches.append(
                f"  {row['id']}: official {row['valid']}, ours {verdict.valid} {verdict.error_type}; "
                f"output {row['output'][:200]!r}"
            )
    assert not mismatches, _report(mismatches, len(verdicts))


def test_real_model_total(ace: AceData) -> None:
    """The revision's headline figure for the real outputs: ours, the official file's, and DATA.md's agree."""
    rows = [row for category in CATEGORIES for row in _real(ace)[category]]
    ours = sum(_score(ace, "en", row["category"], row["id"], row["output"]).valid for row in rows)
    assert (ours, sum(row["valid"] for row in rows), len(rows)) == (REAL_VALID[ace.revision.name],) * 2 + (973,)


# --- ceilings of a model that echoes the ground truth (§4.8) -------------------------------------------

# (correct, total) per language; the data defects behind each shortfall are listed in §4.8 and §4.9.
E6DB74B_CEILINGS: dict[str, dict[str, tuple[int, int]]] = {
    "en": {
        "normal_atom_bool": (50, 50),
        "normal_atom_enum": (50, 50),
        "normal_atom_number": (50, 50),
        "normal_atom_list": (50, 50),
        "normal_atom_object_short": (50, 50),
        "normal_atom_object_deep": (33, 50),  # whitespace deleted inside nested lists
        "normal_single_turn_single_function": (92, 100),
        "normal_single_turn_parallel_function": (86, 100),
        "normal_similar_api": (48, 50),
        "normal_preference": (49, 50),  # preference_40: an array without items
        "normal_multi_turn_user_adjust": (110, 123),
        "normal_multi_turn_user_switch": (86, 100),
        "special_incomplete": (50, 50),  # incomplete_0's padded values pass only when echoed verbatim
        "special_error_param": (50, 50),
        "special_irrelevant": (50, 50),
    },
    "zh": {
        "normal_atom_bool": (50, 50),
        "normal_atom_enum": (50, 50),
        "normal_atom_number": (50, 50),
        "normal_atom_list": (49, 50),  # list_28: an empty GT list
        "normal_atom_object_short": (49, 50),  # object_short_1: the GT omits a required parameter
        "normal_atom_object_deep": (50, 50),
        "normal_single_turn_single_function": (99, 100),
        "normal_single_turn_parallel_function": (97, 100),
        "normal_similar_api": (48, 50),  # similar_api_2 and _22: real names ending in _<digits>
        "normal_preference": (50, 50),
        "normal_multi_turn_user_adjust": (115, 116),
        "normal_multi_turn_user_switch": (100, 101),
        "special_incomplete": (50, 50),
        "special_error_param": (50, 50),
        "special_irrelevant": (50, 50),
    },
}
# 56dd66c: its single-turn decoder keeps whitespace (acebench-revisions §2), so every shortfall acebench-scoring §4.8
# puts down to whitespace deletion is gone and only the data defects remain; the multi-turn and special categories
# read the same files the same way as at e6db74b, so their ceilings are §4.8's (special_incomplete_0's GT lost its
# padding, and an echo passes either way). Each sample's verdict is also checked against the official one wherever
# 56dd66c's official_verdicts.jsonl holds the same rendering: 30-88% of a category's samples, and every remaining
# single-turn failure but en preference_40 and zh similar_api_2, which §4.8 and §4.9 name.
CEILINGS: dict[str, dict[str, dict[str, tuple[int, int]]]] = {
    "e6db74b": E6DB74B_CEILINGS,
    "56dd66c": {
        "en": {
            **E6DB74B_CEILINGS["en"],
            "normal_atom_object_deep": (50, 50),
            "normal_single_turn_single_function": (100, 100),
            "normal_single_turn_parallel_function": (99, 100),  # parallel_42: empty GT lists (event_details=[])
            "normal_similar_api": (50, 50),
        },
        "zh": {
            **E6DB74B_CEILINGS["zh"],
            "normal_single_turn_single_function": (100, 100),
            "normal_single_turn_parallel_function": (98, 100),  # parallel_45 and _80: empty GT {} and []
        },
    },
}
# Dialogue accuracy and dialogue count of the multi-turn categories: the same at both revisions.
DIALOGUE_CEILINGS = {
    ("en", "normal_multi_turn_user_adjust"): (0.76, 50),
    ("en", "normal_multi_turn_user_switch"): (0.74, 50),
    ("zh", "normal_multi_turn_user_adjust"): (0.98, 50),
    ("zh", "normal_multi_turn_user_switch"): (0.98, 50),
}


@pytest.mark.parametrize(("lang", "category"), LANG_CATEGORIES)
def test_ground_truth_ceiling(ace: AceData, lang: str, category: str) -> None:
    # The official verdict of every output the file holds for a sample; an output holds one verdict per revision.
    official: dict[tuple[str, str], bool] = {}
    for row in _official(ace)[(lang, category)]:
        assert official.setdefault((row["id"], row["output"]), row["valid"]) == row["valid"]
    rows, confirmed, mismatches = [], 0, []
    for record in records(ace.root, lang, category):
        output = render_ground_truth(record.ground_truth, category)
        verdict = _score(ace, lang, category, record.id, output)
        rows.append(SampleScore(category, record.id, verdict.valid))
        if (record.id, output) in official:
            confirmed += 1
            if official[(record.id, output)] != verdict.valid:
                mismatches.append(
                    f"  {record.id}: official {not verdict.valid}, ours {verdict.valid} "
                    f"{verdict.error_type}; output {output[:200]!r}"
                )
    assert not mismatches, _report(mismatches, confirmed)
    # Every category has official verdicts for at least a quarter of its renderings (en special_incomplete: 15/50).
    assert confirmed >= len(rows) // 4
    assert (sum(1 for row in rows if row.valid), len(rows)) == CEILINGS[ace.revision.name][lang][category]
    if (lang, category) in DIALOGUE_CEILINGS:
        score = category_score(category, rows)
        assert (score.accuracy, score.n) == DIALOGUE_CEILINGS[(lang, category)]
        assert (score.correct_steps, score.steps) == CEILINGS[ace.revision.name][lang][category]
