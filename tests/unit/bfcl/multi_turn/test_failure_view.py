"""The failure view of a multi-turn sample (docs/bfcl-multi-turn.md#the-failure-view): real samples, real
results judged by the checker, and the failure text pytest prints for them."""

from __future__ import annotations

import json

from pytest_tooleval.hooks.collect import describe_failure
from pytest_tooleval.json_value import JSONObject, JSONValue
from pytest_tooleval.outcome import SampleResult
from pytest_tooleval.suites.bfcl.multi_turn import run
from pytest_tooleval.suites.bfcl.multi_turn.checker import judge
from pytest_tooleval.suites.bfcl.multi_turn.decode import decode_prompt
from pytest_tooleval.suites.bfcl.multi_turn.failure import CALL_LIMIT, VALUE_LIMIT, state_lines
from pytest_tooleval.suites.bfcl.multi_turn.oracle import oracle_result
from pytest_tooleval.suites.bfcl.multi_turn.sample import MultiTurnSample
from pytest_tooleval.suites.bfcl.multi_turn.tables import Tables
from pytest_tooleval.suites.bfcl.suite import BfclMultiTurnCase
from pytest_tooleval.verdict import Verdict

REPORT = "Year2024 This is the final report content including budget analysis and other sections."


def answered(sample: MultiTurnSample, mode: str, **turns: JSONValue) -> list[JSONValue]:
    """The ground truth as the oracle writes it, with the turns named `t<index>` answered otherwise."""
    result = oracle_result(sample, mode)
    for name, answers in turns.items():
        result[int(name.removeprefix("t"))] = answers
    return result


def scored(sample: MultiTurnSample, result: list[JSONValue], tables: Tables, mode: str = "prompt") -> Verdict:
    verdict = run.score(sample, "fc" if mode == "fc" else "prompt", result, tables)
    json.dumps([verdict.error, verdict.calls, verdict.details], allow_nan=False)  # what the report writes
    return verdict


def test_a_state_mismatch_names_the_turn_its_request_both_calls_and_each_difference(
    samples: dict[str, MultiTurnSample], tables: Tables
) -> None:
    sample = samples["multi_turn_base_0"]
    wrong = "[cd(folder='document'), mkdir(dir_name='tmp'), mv(source='final_report.pdf', destination='tmp')]"
    verdict = scored(sample, answered(sample, "prompt", t0=[wrong]), tables)
    assert (verdict.valid, verdict.error_type) == (False, "multi_turn:instance_state_mismatch")
    moved = repr({"name": "final_report.pdf", "content": REPORT})
    assert verdict.error == [
        "Model instance for GorillaFileSystem does not match the state with ground truth instance.",  # bfcl's own
        f"GorillaFileSystem.root/document/temp: expected {{'name': 'temp', 'contents': {{'final_report.pdf': "
        f"{moved}}}}}, actual (absent)",
        f"GorillaFileSystem.root/document/tmp: expected (absent), actual {{'name': 'tmp', 'contents': "
        f"{{'final_report.pdf': {moved}}}}}",
    ]
    assert verdict.calls == ["cd(folder='document')", "mkdir(dir_name='tmp')",
                             "mv(source='final_report.pdf', destination='tmp')"]  # fmt: skip
    assert verdict.details == {
        "mode": "prompt",
        "category": "multi_turn_base",
        "turn": 1,  # as users count: bfcl's message says turn 0
        "turns": 4,
        "request": sample.turns[0][0]["content"],
        "ground_truth": sample.ground_truth[0],
    }


def test_the_failure_text_reads_in_a_few_lines(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    sample = samples["multi_turn_base_0"]
    wrong = "[cd(folder='document'), mkdir(dir_name='tmp'), mv(source='final_report.pdf', destination='tmp')]"
    output = answered(sample, "prompt", t0=[wrong])
    text = describe_failure(BfclMultiTurnCase(sample), SampleResult(scored(sample, output, tables), output), "official")
    lines = text.splitlines()
    assert lines[0] == "bfcl multi_turn_base_0: multi_turn:instance_state_mismatch (scorer: official)"
    assert lines[1].startswith('  error:    ["Model instance for GorillaFileSystem does not match the state')
    assert "GorillaFileSystem.root/document/temp: expected {'name': 'temp'" in lines[1]
    assert lines[2:9] == [
        "  decoded:  [\"cd(folder='document')\", \"mkdir(dir_name='tmp')\", "
        "\"mv(source='final_report.pdf', destination='tmp')\"]",
        "  mode: prompt",
        "  category: multi_turn_base",
        "  turn: 1",
        "  turns: 4",
        "  request: Move 'final_report.pdf' within document directory to 'temp' directory in document. Make sure "
        "to create the directory",
        "  ground_truth: [\"cd(folder='document')\", \"mkdir(dir_name='temp')\", "
        "\"mv(source='final_report.pdf', destination='temp')\"]",
    ]
    assert lines[9].startswith("  output:   ") and len(lines) == 10  # no `expected:` line of every turn


def test_a_response_mismatch_lists_the_missing_ground_truth_results(
    samples: dict[str, MultiTurnSample], tables: Tables
) -> None:
    sample = samples["multi_turn_base_1"]
    output = answered(sample, "prompt", t2=["[cd(folder='archive'), grep(file_name='log.txt', pattern='Warn')]"])
    verdict = scored(sample, output, tables)
    assert verdict.error_type == "multi_turn:execution_response_mismatch"
    assert isinstance(verdict.error, list) and len(verdict.error) == 2
    assert verdict.error[1] == (
        'missing result: {"matching_lines": ["This is a log file. No errors found. Another line. Yet another line. '
        'Error: Something went wrong. Final line."]}'
    )
    assert verdict.calls == ["cd(folder='archive')", "grep(file_name='log.txt', pattern='Warn')"]
    assert (verdict.details["turn"], verdict.details["turns"]) == (3, 4)
    assert verdict.details["ground_truth"] == ["cd(folder='archive')", "grep(file_name='log.txt',pattern='Error')"]


def test_an_empty_turn_shows_what_the_model_said_and_a_held_out_turn_says_it_has_no_message(
    samples: dict[str, MultiTurnSample], tables: Tables
) -> None:
    sample = samples["multi_turn_miss_func_0"]
    assert sample.turns[3] == [] and 3 in sample.held_out
    verdict = scored(sample, answered(sample, "fc", t3=["I still cannot sort it."]), tables, "fc")
    assert verdict.error == ["Model response list is empty for turn 3"]
    assert verdict.calls == []
    assert verdict.details == {
        "mode": "fc",
        "category": "multi_turn_miss_func",
        "turn": 4,
        "turns": 5,
        "request": "(no message of its own: this turn offers 1 more function: sort)",
        "ground_truth": ["sort('final_report.pdf')"],
        "answers": ["I still cannot sort it."],
    }


def test_a_gate_before_any_turn_names_no_turn(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    sample = samples["multi_turn_base_0"]
    verdict = scored(sample, answered(sample, "prompt")[:3], tables)
    assert verdict.error_type == "multi_turn:force_terminated" and verdict.calls is None
    assert verdict.details == {"mode": "prompt", "category": "multi_turn_base", "answered_turns": 3, "turns": 4}
    inference = run.score(sample, "prompt", "Error during inference: timeout", tables)
    assert inference.error_type == "multi_turn:inference_error" and inference.details["turns"] == 4


def test_a_long_context_state_is_cut_to_its_differences(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    """The long-context file tree is 18,000 characters as the checker renders the differing attribute; the view
    keeps the two files that differ."""
    sample = samples["multi_turn_long_context_2"]
    output = answered(sample, "prompt", t0=["[cd(folder='documents'), touch(file_name='teamnotes.txt')]"])
    checked = judge(sample, output, decode_prompt, tables)
    verdict = scored(sample, output, tables)
    assert (verdict.valid, verdict.error_type) == (checked.valid, checked.error_type)  # scoring untouched
    assert isinstance(verdict.error, list)
    assert verdict.error[1:] == [
        "GorillaFileSystem.root/documents/TeamNotes.txt: expected {'name': 'TeamNotes.txt', 'content': ''}, "
        "actual (absent)",
        "GorillaFileSystem.root/documents/teamnotes.txt: expected (absent), actual {'name': 'teamnotes.txt', "
        "'content': ''}",
    ]
    shown = len(json.dumps([verdict.error, verdict.calls, verdict.details]))
    assert len(json.dumps(checked.details)) > 15_000 and shown < 1_000


def test_trading_figures_differ_leaf_by_leaf(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    sample = samples["multi_turn_long_context_100"]
    verdict = scored(sample, answered(sample, "prompt", t1=["[fund_account(amount=2203.5)]"]), tables)
    assert isinstance(verdict.error, list)
    assert verdict.error[1:] == [
        "TradingBot.account_info.balance: expected 12203.4, actual 12203.5",
        "TradingBot.transaction_history[0].amount: expected 2203.4, actual 2203.5",
    ]


def test_values_lines_and_calls_are_clipped() -> None:
    differences: JSONObject = {"note": {"model": "x" * 10_000, "ground_truth": "y"}}
    differences.update({f"k{i}": {"model": i, "ground_truth": -i - 1} for i in range(12)})
    lines = state_lines("TicketAPI", differences)
    assert len(lines) == 9 and lines[-1] == "... and 5 more state differences"
    assert lines[0].startswith("TicketAPI.note: expected 'y', actual 'xxx") and len(lines[0]) < VALUE_LIMIT + 80
    assert lines[1] == "TicketAPI.k0: expected -1, actual 0"


def test_a_difference_only_in_python_type_still_has_a_line() -> None:
    """A tuple against a list is `!=` to the checker and the same once JSON-safe: the attribute is named whole."""
    lines = state_lines("VehicleControlAPI", {"doors": {"model": ["a", "b"], "ground_truth": ["a", "b"]}})
    assert lines == ["VehicleControlAPI.doors: expected ['a', 'b'], actual ['a', 'b'] (differs in type)"]


def test_a_flood_of_calls_is_cut(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    sample = samples["multi_turn_base_1"]
    huge = "[mkdir(dir_name='" + "w" * 5_000 + "')]"
    flood = "[" + ", ".join(f"mkdir(dir_name='d{n}')" for n in range(30)) + "]"
    verdict = scored(sample, answered(sample, "prompt", t0=[huge, flood]), tables)
    assert verdict.error_type == "multi_turn:instance_state_mismatch"
    assert isinstance(verdict.calls, list) and len(verdict.calls) == 21
    assert verdict.calls[-1] == "... and 11 more calls"
    assert all(len(call) <= CALL_LIMIT + 40 for call in verdict.calls)
    assert isinstance(verdict.error, list) and len(verdict.error) == 10  # the message, 8 new folders, the rest
    assert verdict.error[-1] == "... and 23 more state differences"
    assert all(len(line) < 2 * VALUE_LIMIT + 100 for line in verdict.error[1:])


def test_a_passing_sample_keeps_only_its_mode(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    sample = samples["multi_turn_base_0"]
    verdict = scored(sample, answered(sample, "prompt"), tables)
    assert (verdict.valid, verdict.error, verdict.calls, dict(verdict.details)) == (
        True,
        None,
        None,
        {"mode": "prompt"},
    )
