"""Our multi-turn verdicts against the ones bfcl-eval's own checker gave, row by row (needs TOOLEVAL_DATA_DIR and
the wheel's tables, TOOLEVAL_BFCL_WHEEL; bfcl-multiturn §5, §7.2).

``bfcl/conformance/multi_turn_official_verdicts.jsonl`` holds 28,696 result entries (one per sample and kind of
trace: gold renderings, realistic mistakes, decoder quirks) for the 800 samples of the four categories, in
prompting and function-calling form, each with bfcl's ``valid`` and ``error_type``. Every row must agree on both.
The rows are judged in 32 chunks (category x mode x a quarter of the ids) so that xdist spreads them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from pytest_tooleval.json_value import JSONValue
from pytest_tooleval.suites.bfcl.multi_turn.checker import judge
from pytest_tooleval.suites.bfcl.multi_turn.data import load_samples
from pytest_tooleval.suites.bfcl.multi_turn.decode import decode_fc, decode_prompt
from pytest_tooleval.suites.bfcl.multi_turn.replay import read_results, result_file
from pytest_tooleval.suites.bfcl.multi_turn.sample import CATEGORIES, MultiTurnSample
from pytest_tooleval.suites.bfcl.multi_turn.tables import Tables
from upstream_data import recorded

VERDICTS = "conformance/multi_turn_official_verdicts.jsonl"
EXPECTED_ROWS = 28_696
EXPECTED_KINDS = 23
DECODERS: dict[str, Callable[[JSONValue], list[str]]] = {"fc": decode_fc, "prompt": decode_prompt}
QUARTERS = ((0, 49), (50, 99), (100, 149), (150, 199))  # sample numbers of each chunk, both ends included
# long context first: its rows take the longest (its instances load the long extras), so -n 2 does not end on them
ORDER = sorted(CATEGORIES, key=lambda category: category != "multi_turn_long_context")
CHUNKS = [(category, mode, quarter) for category in ORDER for mode in DECODERS for quarter in QUARTERS]
SHOWN = 10  # differing rows shown in a failure


@pytest.fixture(scope="module")
def folder(bfcl_dir: Path) -> Path:
    """The data root's bfcl/, with the verdicts recorded from bfcl-eval's checker (the test skips without them)."""
    recorded(bfcl_dir, VERDICTS)
    return bfcl_dir


@cache
def rows(folder: Path) -> tuple[dict[str, Any], ...]:
    with (folder / VERDICTS).open(encoding="utf-8") as lines:
        return tuple(json.loads(line) for line in lines if line.strip())


@cache
def samples(folder: Path) -> dict[str, MultiTurnSample]:
    """Every sample of the four categories by id, loaded once per process."""
    return {sample.id: sample for category in CATEGORIES for sample in load_samples(folder, category)}


def number(sample_id: str) -> int:
    return int(sample_id.rsplit("_", 1)[1])


def in_chunk(row: dict[str, Any], chunk: tuple[str, str, tuple[int, int]]) -> bool:
    category, mode, (first, last) = chunk
    return row["category"] == category and row["mode"] == mode and first <= number(row["id"]) <= last


def test_the_chunks_cover_every_row(folder: Path) -> None:
    every = rows(folder)
    assert len(every) == EXPECTED_ROWS
    assert len({row["kind"] for row in every}) == EXPECTED_KINDS
    assert sorted(Counter(sum(in_chunk(row, chunk) for chunk in CHUNKS) for row in every).items()) == [
        (1, EXPECTED_ROWS)
    ], "a row in no chunk or in two"
    assert {row["id"] for row in every} == set(samples(folder))


def ours(sample: MultiTurnSample, result: JSONValue, mode: str, tables: Tables) -> tuple[bool, str | None, str]:
    verdict = judge(sample, result, DECODERS[mode], tables)
    return verdict.valid, verdict.error_type, verdict.message


@pytest.mark.parametrize("chunk", CHUNKS, ids=[f"{c}-{m}-{first}to{last}" for c, m, (first, last) in CHUNKS])
def test_every_verdict_agrees(folder: Path, tables: Tables, chunk: tuple[str, str, tuple[int, int]]) -> None:
    by_id = samples(folder)
    chosen = [row for row in rows(folder) if in_chunk(row, chunk)]
    assert chosen, f"no conformance rows for {chunk}"
    differing = Counter[tuple[object, object]]()
    shown: list[str] = []
    for row in chosen:
        valid, error_type, message = ours(by_id[row["id"]], row["result"], row["mode"], tables)
        expected = (row["valid"], row["error_type"])
        if (valid, error_type) != expected:
            differing[(valid, error_type), expected] += 1
            if len(shown) < SHOWN:
                shown.append(
                    f"{row['id']} {row['kind']} ({row['mode']}, variant {row['variant']}): ours {(valid, error_type)} "
                    f"{message[:160]!r}, official {expected}"
                )
    assert not differing, (
        f"{differing.total()} of {len(chosen)} rows disagree with bfcl-eval: "
        + ", ".join(
            f"ours {mine} where official {theirs}: {count}" for (mine, theirs), count in differing.most_common()
        )
        + f"; the first {len(shown)}:\n"
        + "\n".join(shown)
    )


@pytest.mark.parametrize("mode", DECODERS)
def test_results_read_from_bfcls_layout(folder: Path, tables: Tables, tmp_path: Path, mode: str) -> None:
    """The gold rows written as bfcl's result files and read back through our reader: the same results, and every
    one valid (the rows' `result` is what a result file stores, bfcl-multiturn §7.2)."""
    gold = [row for row in rows(folder) if row["kind"] == "gold" and row["mode"] == mode]
    for category in CATEGORIES:
        path = result_file(tmp_path, category)
        path.parent.mkdir(parents=True, exist_ok=True)
        mine = [row for row in gold if row["category"] == category][::-1]  # bfcl's order is the reader's to make
        path.write_text("".join(json.dumps({"id": row["id"], "result": row["result"]}) + "\n" for row in mine))
        results = read_results(tmp_path, category)
        assert list(results) == [f"{category}_{n}" for n in range(200)]
        assert results == {row["id"]: row["result"] for row in mine}
        by_id = samples(folder)
        invalid = [
            sample_id for sample_id, result in results.items() if not ours(by_id[sample_id], result, mode, tables)[0]
        ]
        assert invalid == [], f"gold results judged invalid: {invalid[:10]}"
