"""The oracle: the ground truth written as a model's answers passes every sample in both protocols, as bfcl-eval
scores the same answers (800/800, bfcl-multiturn §1.4)."""

from __future__ import annotations

import json

import pytest

from pytest_tooleval.suites.bfcl.multi_turn.checker import judge
from pytest_tooleval.suites.bfcl.multi_turn.decode import decode_fc, decode_prompt
from pytest_tooleval.suites.bfcl.multi_turn.oracle import keyword_calls, oracle_result
from pytest_tooleval.suites.bfcl.multi_turn.sample import CATEGORIES, MultiTurnSample
from pytest_tooleval.suites.bfcl.multi_turn.tables import Tables


@pytest.mark.parametrize("mode", ["fc", "prompt"])
@pytest.mark.parametrize("category", CATEGORIES)
def test_the_ground_truth_passes_every_sample(
    category: str, mode: str, samples: dict[str, MultiTurnSample], tables: Tables
) -> None:
    decode = decode_fc if mode == "fc" else decode_prompt
    chosen = [sample for sample in samples.values() if sample.category == category]
    failed = {
        sample.id: verdict.error_type
        for sample in chosen
        if not (verdict := judge(sample, oracle_result(sample, mode), decode, tables)).valid
    }
    assert len(chosen) == 200 and failed == {}


def test_positional_ground_truth_is_named_by_signature(samples: dict[str, MultiTurnSample]) -> None:
    sample = samples["multi_turn_base_0"]
    named = keyword_calls(sample, ["sort('final_report.pdf')", "mv(source='a', destination='b')"])
    assert named == [("sort", {"file_name": "final_report.pdf"}), ("mv", {"source": "a", "destination": "b"})]
    fc_turns = oracle_result(sample, "fc")
    assert len(fc_turns) == len(sample.ground_truth)
    first_turn = fc_turns[0]
    assert isinstance(first_turn, list) and len(first_turn) == 1
    first_step = first_turn[0]
    assert isinstance(first_step, list)
    for call in first_step:
        assert isinstance(call, dict) and len(call) == 1
        (arguments,) = call.values()
        assert isinstance(arguments, str) and isinstance(json.loads(arguments), dict)


def test_a_call_of_no_involved_class_is_refused(samples: dict[str, MultiTurnSample]) -> None:
    sample = samples["multi_turn_base_0"]
    with pytest.raises(ValueError, match="calls no method"):
        keyword_calls(sample, ["book_flight(x=1)"])
