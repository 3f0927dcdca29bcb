"""The multi-turn checker: a stored result (per turn, the raw model answers) against a sample's ground truth
(docs/bfcl-multi-turn.md#the-checker).

Pure apart from the time budget: fresh instances on both sides, the stored answers re-decoded and re-executed
turn by turn beside the ground truth, upstream's gates and checks in upstream's order (bfcl-multiturn §5.1-§5.4).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date

from ....json_value import JSONObject, JSONValue
from .apis.file_system import Directory, File
from .execute import Side
from .sample import MultiTurnSample
from .tables import Tables

# The instance names upstream uses are `<result dir>_eval_<id>` and `<result dir>_ground_truth_eval_<id>`; they
# matter only where the rewrite pastes them into string literals (spec §4.2), and no ground-truth string holds a
# `(`, so any two distinct fixed names give upstream's verdicts
MODEL_SIDE = "tooleval_eval"
GROUND_TRUTH_SIDE = "tooleval_ground_truth_eval"

#: a judgment that has run this long stops at the next call (hostile traces only: the 800 ground truths take
#: well under a second each)
BUDGET_SECONDS = 60.0
#: how deep `jsonable` renders a value (a file tree can be made deep, or cyclic by moving a directory into itself)
MAX_DEPTH = 64
_MAX_INT_BITS = 10_000  # an int wider than this has no str() past CPython's digit limit

INFERENCE_ERROR = "multi_turn:inference_error"
FORCE_TERMINATED = "multi_turn:force_terminated"
EMPTY_TURN = "multi_turn:empty_turn_model_response"
STATE_MISMATCH = "multi_turn:instance_state_mismatch"
RESPONSE_MISMATCH = "multi_turn:execution_response_mismatch"
BUDGET_EXCEEDED = "multi_turn:execution_budget_exceeded"  # ours: upstream has no bound


@dataclass(frozen=True)
class MultiTurnVerdict:
    """The checker's answer for one sample.

    Attributes:
        valid: every turn passed.
        error_type: bfcl's name for the first failure (None when valid).
        message: upstream's error message for it ("" when valid).
        turn: the failing turn (None when valid or when an entry-level gate failed).
        details: what a failure report shows, JSON-safe: the turn's decoded calls, the state differences, the
            missing results.
    """

    valid: bool
    error_type: str | None
    message: str
    turn: int | None
    details: JSONObject


class _OutOfTime(Exception):
    pass


def judge(sample: MultiTurnSample, result: JSONValue, decode: Callable[[JSONValue], list[str]], tables: Tables,
          *, today: date | None = None, budget: float = BUDGET_SECONDS) -> MultiTurnVerdict:
    """Judge one stored result as bfcl's multi-turn checker does (spec §5).

    Args:
        sample: the sample, with its ground truth.
        result: the stored result: per turn, the list of raw model answers (one per query).
        decode: one raw answer -> its call strings (decode.decode_fc or decode.decode_prompt); any exception
            or `[]` drops the answer, as upstream's runner does.
        tables: the literals the API classes need.
        today: TravelAPI's date on both sides.
        budget: seconds after which judging stops at the next call (error type BUDGET_EXCEEDED).
    """
    ground_truth = sample.ground_truth
    if not isinstance(result, list):
        return _invalid(INFERENCE_ERROR, "Error during inference phase. Model did not output a list of model "
                        "responses.", None, {})
    if len(result) != len(ground_truth):
        return _invalid(FORCE_TERMINATED, "Model was force-terminated during inference phase. The length of the "
                        f"model result turns ({len(result)}) does not match the length of the ground truth turns "
                        f"({len(ground_truth)}).", None, {"model_turns": len(result),
                                                          "ground_truth_turns": len(ground_truth)})
    decoded = [_decode_turn(turn, decode) for turn in result]
    model = Side.create(sample, tables, f"{MODEL_SIDE}_{sample.id}", today=today)
    reference = Side.create(sample, tables, f"{GROUND_TRUTH_SIDE}_{sample.id}", today=today)
    deadline = time.monotonic() + budget
    pool: list[str] = []  # every model result of every turn so far
    executed: list[JSONValue] = []  # per turn, the model's results per step and the ground truth's
    for index, (steps, expected_calls) in enumerate(zip(decoded, ground_truth, strict=True)):
        try:
            step_results = [_run(model, step, deadline) for step in steps]
            expected = _run(reference, expected_calls, deadline)
        except _OutOfTime:
            return _invalid(BUDGET_EXCEEDED, f"Judging stopped after {budget:g} s, in turn {index}.", index,
                            {"decoded": _jsonable(steps)})
        pool.extend(item for results in step_results for item in results)
        executed.append({"model": _jsonable(step_results), "ground_truth": _jsonable(expected)})
        if not expected_calls:
            continue  # a turn the model cannot complete: not checked, its calls still count (spec §5.2)
        if not steps:
            return _invalid(EMPTY_TURN, f"Model response list is empty for turn {index}", index,
                            {"execution_result": executed})
        verdict = _compare_states(model, reference, index, steps)
        if verdict is not None:
            return verdict
        missing = _missing(expected, pool)
        if missing:
            return _invalid(RESPONSE_MISMATCH, "Model response execution results so far does not contain all the "
                            f"ground truth response execution results for turn {index}.", index,
                            {"decoded": _jsonable(steps), "missing_items": _jsonable(missing),
                             "model_results": _jsonable(pool), "ground_truth_results": _jsonable(expected)})
    return MultiTurnVerdict(True, None, "", None, {})


def _decode_turn(turn: JSONValue, decode: Callable[[JSONValue], list[str]]) -> list[list[str]]:
    """The turn's decoded steps: an answer that fails to decode, or decodes to nothing, is dropped (spec §5.1)."""
    answers: Sequence[JSONValue] = turn if isinstance(turn, list) else list(turn) if isinstance(turn, (str, dict)) \
        else []  # upstream iterates whatever the turn is: a string by character, an object by key
    steps = []
    for answer in answers:
        try:
            calls = decode(answer)
        except Exception:  # upstream drops any failed decoding
            continue
        if not calls or (len(calls) == 1 and not calls[0]):  # upstream's is_empty_execute_response
            continue
        steps.append(calls)
    return steps


def _run(side: Side, calls: Sequence[str], deadline: float) -> list[str]:
    """The calls' results, one call at a time so that the budget is checked between calls."""
    results = []
    for call in calls:
        if time.monotonic() > deadline:
            raise _OutOfTime
        results.extend(side.execute([call]))
    return results


def _compare_states(model: Side, reference: Side, index: int, steps: list[list[str]]) -> MultiTurnVerdict | None:
    """The first class, in the sample's order, whose ground-truth public attributes the model's differ from
    by `!=` (spec §5.3); None when all match."""
    model_states = model.state()
    for class_name, expected in reference.state().items():
        actual = model_states[class_name]
        differences: JSONObject = {}
        for name, value in expected.items():
            if _differs(actual[name], value):
                differences[name] = {"model": _jsonable(actual[name]), "ground_truth": _jsonable(value)}
        if differences:
            return _invalid(STATE_MISMATCH, f"Model instance for {class_name} does not match the state with ground "
                            "truth instance.", index, {"class": class_name, "differences": differences,
                                                       "decoded": _jsonable(steps)})
    return None


def _differs(actual: object, expected: object) -> bool:
    """Python's `!=`; a comparison too deep to finish (a tree made cyclic or very deep) counts as a difference."""
    try:
        return bool(actual != expected)
    except RecursionError:
        return True


def _missing(expected: list[str], pool: list[str]) -> list[str]:
    """The ground-truth results not matched one for one in the pool (a sub-multiset test, spec §5.4)."""
    remaining = list(pool)
    missing = []
    for item in expected:
        try:
            remaining.remove(item)
        except ValueError:
            missing.append(item)
    return missing


def _invalid(error_type: str, message: str, turn: int | None, details: JSONObject) -> MultiTurnVerdict:
    return MultiTurnVerdict(False, error_type, message, turn, {"turn": turn, **details})


def jsonable(value: object) -> JSONValue:
    """A JSON-safe rendering of a state value for failure reports: sets as sorted lists, tuples as lists,
    `Directory`/`File` as objects, non-finite floats and huge ints as text; cycles and depth bounded."""
    return _jsonable(value)


def _jsonable(value: object, depth: int = 0, path: frozenset[int] = frozenset()) -> JSONValue:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= _MAX_INT_BITS else f"<int of {value.bit_length()} bits>"
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if id(value) in path:
        return "<cycle>"
    if depth >= MAX_DEPTH:
        return "<too deep>"
    inner = path | {id(value)}

    def render(item: object) -> JSONValue:
        return _jsonable(item, depth + 1, inner)

    if isinstance(value, (list, tuple)):
        return [render(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((render(item) for item in value), key=repr)
    if isinstance(value, dict):
        return {key if isinstance(key, str) else repr(key): render(item) for key, item in value.items()}
    if isinstance(value, Directory):
        return {"name": render(value.name), "contents": render(value.contents)}
    if isinstance(value, File):
        return {"name": render(value.name), "content": render(value.content)}
    try:
        return repr(value)  # mpf, Decimal, ...
    except Exception:
        return f"<{type(value).__name__}>"
