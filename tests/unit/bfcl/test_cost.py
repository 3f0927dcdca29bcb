"""bfcl's cost and latency columns (docs/bfcl.md#cost-and-latency): suites/bfcl/cost.py on the cases of
cost_cases.py against bfcl-eval's own `record_cost_latency` and `get_cost_latency_info` (recorded by record_cost.py),
the price table lifted from the pinned wheel against bfcl's `MODEL_CONFIG_MAPPING`, the percentile and its rounding
against numpy where it is installed, and the summary's block and table from report rows."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from pytest_tooleval.outcome import Answer, SampleResult
from pytest_tooleval.suites.bfcl.cost import COLUMNS, KEYS, counted, figures, numpy_round, percentile_95
from pytest_tooleval.suites.bfcl.prices import PriceTable
from pytest_tooleval.suites.bfcl.summary import cost_latency, summarize_bfcl
from pytest_tooleval.suites.bfcl.upstream import load_pin, load_prices
from pytest_tooleval.suites.bfcl.usage import Requests, priced, replayed_state, with_usage
from pytest_tooleval.verdict import Verdict

from . import cost_cases

RECORDED = json.loads((Path(__file__).with_name("cost_figures.json")).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def table(bfcl_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> PriceTable:
    return load_prices(tmp_path_factory.mktemp("cache"), True, wheel=bfcl_wheel)


def test_the_price_table_is_bfcls(table: PriceTable) -> None:
    """Every model bfcl knows, with its two prices, and the two local-model constants: the same canonical content
    as bfcl's own mapping gives, and the pinned one."""
    assert len(table.prices) == RECORDED["models"] == 175
    assert table.sha256() == RECORDED["price_table_sha256"] == load_pin().prices_sha256
    assert [table.gpu_price_per_hour, table.concurrent_requests] == RECORDED["local_constants"]
    assert table.prices[cost_cases.PRICED] == (2.5, 10) and table.prices[cost_cases.LOCAL] == (None, None)
    assert PriceTable.from_content(table.content()) == table


def test_every_case_gives_bfcls_four_columns(table: PriceTable) -> None:
    """Each case: the four values and the text bfcl's CSV prints, or, where bfcl's leaderboard stops with an
    exception, all four N/A and the exception named."""
    cases = cost_cases.cases()
    assert [name for name, _, _ in cases] == list(RECORDED["cases"])
    stops = 0
    for name, model, rows in cases:
        pricing = table.pricing(model)
        assert pricing is not None, model
        values = {key: [value for row in rows for value in counted(row.get(key))] for key in KEYS}
        found = figures(pricing, values["input_token_count"], values["output_token_count"], values["latency"])
        expected = RECORDED["cases"][name]
        if "raises" in expected:
            stops += 1
            assert found.values() == (None,) * 4 and found.cells() == ["N/A"] * 4, name
            assert found.reason is not None and f": {expected['raises']}:" in found.reason, (name, found.reason)
            continue
        assert found.reason is None, (name, found.reason)
        assert list(found.values()) == expected["values"], name
        assert found.cells() == expected["cells"], name
    assert stops == 7


def test_the_quirks_the_cases_hold() -> None:
    """What the recorded cases show of bfcl, said plainly (docs/bfcl.md#cost-and-latency)."""
    cases = RECORDED["cases"]
    assert cases["numpy rounds the percentile its own way"]["cells"] == ["0.0", "90.39", "0.0", "90.38"]
    assert cases["whole latencies: an int mean"]["cells"][1] == "2"  # statistics.mean of ints is an int
    assert cases["local model: the cost from the latencies"]["values"][0] is not None
    assert cases["one latency: stdev stops bfcl"] == {"raises": "StatisticsError"}
    assert cases["only booleans: numpy stops bfcl"] == {"raises": "TypeError"}
    assert cases["no row"]["cells"] == ["N/A"] * 4
    assert RECORDED["unknown_model_raises"] == "KeyError"


def test_counted_is_bfcls_reading_of_a_row() -> None:
    assert counted(1.5) == [1.5] and counted(0) == [] and counted(False) == [] and counted(True) == [True]
    assert counted([[1, 0, 2.5], [], [3]]) == [1, 2.5, 3]
    assert counted([[1], None]) == [] and counted([1, 2]) == [] and counted("2") == [] and counted(None) == []
    assert counted([[1, [2]], ["3", {}]]) == [1]  # one level flattened; what is no number is skipped


def test_the_percentile_and_its_rounding_are_numpys() -> None:
    """numpy's linear percentile and its `round` of a numpy float, bit for bit, on random latencies (ints, floats,
    both, with booleans among them) and on scaled values that sit on a half cent."""
    numpy = pytest.importorskip("numpy")
    seed = random.Random(7)
    for _ in range(3000):
        kind = seed.choice(("float", "int", "mixed"))
        values: list[Any] = []
        for _ in range(seed.randint(1, 60)):
            value: Any = seed.uniform(0.001, 50.0) if kind != "int" else seed.randint(1, 10**6)
            if kind == "mixed" and seed.random() < 0.3:
                value = seed.choice((seed.randint(1, 90), True))
            values.append(round(value, seed.choice((1, 2, 3, 17))) if isinstance(value, float) else value)
        if all(isinstance(value, bool) for value in values):  # numpy refuses them, and so do we
            with pytest.raises(TypeError):
                numpy.percentile(values, 95)
            with pytest.raises(TypeError):
                percentile_95(values)
            continue
        expected = numpy.percentile(values, 95)
        assert percentile_95(values) == float(expected), values
        assert numpy_round(float(expected)) == float(round(expected, 2)), values
    for cents in range(0, 100_000, 7):  # x.xx5 and its neighbours, where numpy and Python part ways
        for value in (cents / 1000, cents / 1000 + 1e-12, -cents / 1000):
            assert numpy_round(value) == float(round(numpy.float64(value), 2)), value
    assert numpy_round(90.385) == 90.38 != round(90.385, 2)
    assert math.copysign(1.0, numpy_round(-0.001)) == -1.0  # numpy's rint keeps the sign of a zero


# -- usage: what a sample carries, and the summary's block -------------------------------------------------------


def usage_row(usage: dict[str, Any] | None, outcome: str = "passed", **extra: Any) -> dict[str, Any]:
    details: dict[str, Any] = {"mode": "prompt"}
    if usage is not None:
        details["_usage"] = usage
    return {"id": "simple_python_0", "category": "simple_python", "outcome": outcome, "details": details, **extra}


def test_a_replayed_row_carries_what_bfcl_counts(table: PriceTable) -> None:
    assert replayed_state({"id": "x", "result": ""}) is None  # a folder bfcl did not generate: nothing to show
    state = replayed_state({"latency": [[1.5, 0], [2]], "input_token_count": "9", "bfcl_model": cost_cases.PRICED})
    assert state == {
        "bfcl_usage": {
            "basis": "replay",
            "model": cost_cases.PRICED,
            "latency": [1.5, 2],
            "input_token_count": [],
            "output_token_count": [],
        }
    }
    result = with_usage(SampleResult(Verdict(True, details={"mode": "prompt"})), Answer("", state=state), table)
    usage: Any = result.verdict.details["_usage"]
    assert result.verdict.details["mode"] == "prompt" and usage["pricing"]["input_price"] == 2.5
    assert with_usage(SampleResult(Verdict(True)), Answer(""), table).verdict.details == {}  # the oracle's
    unknown = str(priced("gpt-4o", table)["unpriced"])
    assert "does not know the model 'gpt-4o'" in unknown and "KeyError" in unknown
    assert "no model folder" in str(priced(None, table)["unpriced"])
    assert priced("m", "the wheel was not at hand") == {"unpriced": "the wheel was not at hand"}


@pytest.mark.asyncio
async def test_a_live_answer_counts_each_request_but_a_memory_questions_prerequisites() -> None:
    from pytest_tooleval.models.base import Reply

    replies = iter([Reply("a", 0.5, 10, 2), Reply("b", 0.25, 20, None), Reply("c", 0.0, 30, 4), Reply("d", 1.0, 0, 1)])

    async def chat(messages: Any, **overrides: Any) -> Reply:
        return next(replies)

    requests = Requests(chat)
    for _ in range(4):
        await requests([])
    memory = requests.measured(Answer([], state={"prerequisite_queries": 1, "queries": 3}), "m")
    assert memory.state == {
        "prerequisite_queries": 1,
        "queries": 3,
        "bfcl_usage": {
            "basis": "measured",
            "model": "m",
            "latency": [0.25, 1.0],  # the zero is not counted, as bfcl counts none
            "input_token_count": [20, 30],
            "output_token_count": [4, 1],
        },
    }
    assert requests.measured(Answer("x"), "m").state["bfcl_usage"]["latency"] == [0.5, 0.25, 1.0]
    assert Requests(chat).measured(Answer("x"), "m").state["bfcl_usage"]["latency"] == []


def test_the_summary_computes_the_columns_over_the_rows_that_carry_counts(table: PriceTable) -> None:
    pricing = table.pricing(cost_cases.PRICED)
    assert pricing is not None
    usage = {"basis": "replay", "model": cost_cases.PRICED, "pricing": pricing.content()}
    rows = [
        usage_row({**usage, "latency": [1.25, 2.0], "input_token_count": [400_000], "output_token_count": [1000]}),
        usage_row({**usage, "latency": [3.5], "input_token_count": [600_000], "output_token_count": [0, 2000]}),
        usage_row(None),  # an oracle's or an errored sample: not counted
    ]
    block = cost_latency(rows)
    assert block is not None
    expected = figures(pricing, [400_000, 600_000], [1000, 2000], [1.25, 2.0, 3.5])
    assert (block["cost"], block["latency_mean"], block["latency_std"], block["latency_p95"]) == expected.values()
    assert block["cells"] == dict(zip(COLUMNS, ["2.53", "2.25", "1.15", "3.35"], strict=True))
    assert block["note"] is None and block["rows"] == 2 and block["counted"]["latency"] == 3
    assert cost_latency([usage_row(None)]) is None
    summary = summarize_bfcl([{**row, "category_size": 400} for row in rows])
    assert summary.data["prompt"]["cost_latency"] == block
    assert not any(name.startswith(("cost", "latency")) or "cost" in name for name in summary.figures)
    (shown,) = [found for found in summary.tables if "cost and latency" in found.title]
    assert shown.title == "BFCL v4 cost and latency (prompt), from the replayed result rows, model gpt-4o-2024-11-20"
    assert shown.rows[0][:2] == ["Total Cost ($)", "$2.53"] and shown.rows[3][:2] == [
        "Latency 95th Percentile (s)",
        "3.35 s",
    ]
    assert shown.rows[0][2] == "2 input and 2 output token counts at $2.5 and $10 per million"


@pytest.mark.parametrize(
    ("usages", "note"),
    [
        (
            [{"basis": "measured", "model": "gpt-4o", "unpriced": "bfcl does not know it", "latency": [1.0, 2.0]}],
            "every column is N/A: bfcl does not know it",
        ),
        (
            [{"basis": "replay", "model": "a", "latency": [1.0]}, {"basis": "replay", "model": "b", "latency": [2.0]}],
            "every column is N/A: the rows were counted under different models or sources (a, b; replay)",
        ),
        ([{"basis": "replay", "model": cost_cases.PRICED, "latency": [1.0]}], "stops here"),
        ([{"basis": "replay", "model": cost_cases.PRICED, "latency": [0, 1.0, 2.0]}], "the cost is N/A"),
        ([{"basis": "replay", "model": cost_cases.PRICED, "input_token_count": [5], "output_token_count": [5]}], None),
    ],
)
def test_what_the_summary_says_when_a_column_is_na(table: PriceTable, usages: list[dict[str, Any]], note: str) -> None:
    for usage in usages:
        if "unpriced" not in usage and (pricing := table.pricing(str(usage["model"]))) is not None:
            usage["pricing"] = pricing.content()
    block = cost_latency([usage_row(usage) for usage in usages])
    assert block is not None
    if note is None:  # tokens but no latency: the cost only
        assert block["note"] == "the latency columns are N/A: no row carries a latency other than 0"
        assert block["cells"]["Total Cost ($)"] == "0.0" and block["latency_mean"] is None
        return
    assert note in block["note"]
    if note.startswith("every") or note == "stops here":
        assert set(block["cells"].values()) == {"N/A"}
