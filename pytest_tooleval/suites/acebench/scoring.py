"""Per-sample ACEBench scoring for the normal and special categories, and the oracle's renderer.

`score_normal` and `score_special` turn one model answer into a `Verdict` the way upstream's
``eval_main`` does for one sample (acebench-scoring §4.1, §5); `details["fixed_valid"]` carries the
fixed scorer's opinion. `render_ground_truth` writes the answer a perfect model would give, for the
oracle backend. All of it is pure.
"""

from __future__ import annotations

import math
import re

from pytest_tooleval.json_value import JSONObject, JSONValue
from pytest_tooleval.suites.acebench.checker import UPSTREAM_CRASH, CheckResult, normal_checker
from pytest_tooleval.suites.acebench.decode import DecodedCall, DecodeError, decode_fixed, decode_official
from pytest_tooleval.suites.acebench.plain import entries, iterate, joined
from pytest_tooleval.suites.acebench.special import special_checker
from pytest_tooleval.suites.acebench.tool_calls import ToolCallFormatError, decoded_calls, render_calls
from pytest_tooleval.verdict import FIXED_VALID, Verdict

__all__ = [
    "ground_truth_calls",
    "jsonable",
    "render_ground_truth",
    "score_normal",
    "score_normal_tool_calls",
    "score_special",
]

_SUFFIX = re.compile(r"_\d+$")

#: A normal category's ground truth: one ``{api: {param: value}}`` alternative or a list of them (the shape
#: data.py's loader checks).
GroundTruth = dict[str, JSONObject] | list[dict[str, JSONObject]]


def score_normal(functions: object, ground_truth: GroundTruth, output: str,
                 decoding: str = "delete_whitespace") -> Verdict:
    """Score one answer of a normal category (single-turn, or one step of a multi-turn dialogue).

    Args:
        functions: the record's ``function`` list.
        ground_truth: the answer record's ``ground_truth``: one ``{api: {param: value}}`` dict, or a list
            of such dicts meaning alternatives (any may match).
        output: the model's raw answer.
        decoding: how the revision's evaluator reads it first (`Revision.decoding` of the category).

    Returns:
        A `Verdict`. ``calls`` holds the officially decoded calls made JSON-safe by `jsonable` (None
        when decoding failed); ``error``/``error_type`` are those of the first alternative when none
        matches, as upstream writes them; ``details["fixed_valid"]`` is the fixed decoder and checker's verdict,
        and ``details["fixed_error_type"]`` its error type when that differs from the official one.
    """
    official = _check_normal(functions, ground_truth, output, fixed=False, decoding=decoding)
    fixed = _check_normal(functions, ground_truth, output, fixed=True, decoding=decoding)
    return _normal_verdict(official, fixed)


def _normal_verdict(official: tuple[CheckResult, list[DecodedCall] | None],
                    fixed: tuple[CheckResult, list[DecodedCall] | None]) -> Verdict:
    details: dict[str, object] = {FIXED_VALID: fixed[0].valid}
    if fixed[0].error_type != official[0].error_type:
        details["fixed_error_type"] = fixed[0].error_type
    result, calls = official
    return Verdict(
        valid=result.valid,
        error_type=result.error_type if not result.valid else "",
        error=None if result.valid else jsonable(result.error),
        calls=None if calls is None else jsonable(calls),
        details=details,
    )


def score_normal_tool_calls(functions: object, ground_truth: GroundTruth,
                            tool_calls: list[dict[str, object]], names: dict[str, str] | None = None) -> Verdict:
    """Score a function-calling answer of a normal category: the same checkers on the calls the JSON arguments
    give. Both scorers see the same calls (no text decoding, so none of its quirks); malformed arguments are
    a format error, with the raw text kept in the error."""
    try:
        calls = decoded_calls(tool_calls, names)
    except ToolCallFormatError as exc:
        failed: tuple[CheckResult, list[DecodedCall] | None] = (CheckResult(False, "wrong_output_format", [str(exc)]),
                                                                None)
        official = fixed = failed
    else:
        official = _check_calls(functions, ground_truth, calls, fixed=False)
        fixed = _check_calls(functions, ground_truth, calls, fixed=True)
    return _normal_verdict(official, fixed)


def _check_normal(
    functions: object, ground_truth: GroundTruth, output: str, *, fixed: bool, decoding: str
) -> tuple[CheckResult, list[DecodedCall] | None]:
    decode = decode_fixed if fixed else decode_official
    try:
        calls = decode(output, decoding)
    except DecodeError as exc:
        return CheckResult(False, "wrong_output_format", [f"Could not decode the answer as a call list: {exc}"]), None
    return _check_calls(functions, ground_truth, calls, fixed=fixed)


def _check_calls(
    functions: object, ground_truth: GroundTruth, calls: list[DecodedCall], *, fixed: bool
) -> tuple[CheckResult, list[DecodedCall] | None]:
    # §4.1: a list ground truth holds alternatives; the first failure is the one reported.
    alternatives = ground_truth if isinstance(ground_truth, list) else [ground_truth]
    first_failure: CheckResult | None = None
    for alternative in alternatives:
        result = normal_checker(functions, calls, alternative, fixed=fixed)
        if result.valid:
            return result, calls
        first_failure = first_failure or result
    return first_failure or CheckResult(False, "wrong functions number", ["The answer has no alternatives."]), calls


def score_special(category: str, ground_truth: object, output: str) -> Verdict:
    """Score one answer of a special category (``special_incomplete``/``_error_param``/``_irrelevant``).

    The special checker has no known bug to fix, so ``details["fixed_valid"]`` equals ``valid``.
    """
    try:
        result = special_checker(category, output, ground_truth)
    except (TypeError, AttributeError) as exc:
        # A ground truth of an unexpected shape (a non-string value): upstream raises on it too.
        result = CheckResult(False, UPSTREAM_CRASH, [f"the official evaluator raises here: {exc}"])
    return Verdict(
        valid=result.valid,
        error_type=result.error_type,
        error=None if result.valid else jsonable(result.error),
        details={FIXED_VALID: result.valid},
    )


# --- JSON-safe values -------------------------------------------------------------------------------


def jsonable(value: object) -> JSONValue:
    """`value` with only JSON types: tuples and sets become lists, non-string keys become strings.

    Keys follow ``json.dumps``: None -> "null", True -> "true", numbers -> their text; any other key
    (a tuple, say) -> its repr. Non-finite floats, bytes, complex numbers and other objects become their
    repr, so a report never fails to serialise.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, dict):
        return {_json_key(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(item) for item in value), key=repr)
    return repr(value)


def _json_key(key: object) -> str:
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, str):
        return key
    if isinstance(key, (int, float)):
        return str(key)
    return repr(key)


# --- the oracle's answer -----------------------------------------------------------------------------


def render_ground_truth(ground_truth: object, category: str | None = None) -> str:
    """The answer a model that knows the ground truth would give, in the prompt's output format.

    Normal categories: the first alternative as ``[name(k=repr(v), ...), ...]``, with the ``_<digits>``
    suffix that marks repeated calls stripped from each key (acebench-scoring §4.8). Special categories:
    the sentinel sentence the special prompt asks for, naming the ground truth's keys and values
    verbatim (padded values keep their spaces, which is what the official checker needs).

    Args:
        ground_truth: the answer record's ``ground_truth``.
        category: the category name; needed to tell ``special_incomplete`` from ``special_error_param``
            (both are ``{str: [str]}``). Without it only normal and irrelevant answers can be rendered.

    Raises:
        ValueError: the ground truth's shape does not say which sentence to write.
    """
    if category is not None and "special" in category:
        return _render_special(category, ground_truth)
    if isinstance(ground_truth, str):
        return _render_special("special_irrelevant", ground_truth)
    alternative = ground_truth[0] if isinstance(ground_truth, list) else ground_truth
    if isinstance(alternative, dict) and all(isinstance(args, dict) for args in alternative.values()):
        return render_calls(ground_truth_calls(alternative))
    raise ValueError("cannot tell which special category this ground truth belongs to; pass category=")


def ground_truth_calls(alternative: dict[str, JSONObject]) -> list[dict[str, JSONObject]]:
    """One ground-truth alternative as the calls a perfect model makes: names without the ``_<digits>``
    suffix of repeated calls (acebench-scoring §4.9)."""
    return [{_SUFFIX.sub("", name): dict(args)} for name, args in alternative.items()]


def _render_special(category: str, ground_truth: object) -> str:  # used as its category's shape (plain.py)
    if "incomplete" in category:
        sentences = [
            f"Missing necessary parameters ({joined(', ', params)}) for the api ({api})"
            for api, params in entries(ground_truth).items()
        ]
    elif "error" in category:
        keys = joined(", ", ground_truth)
        values = ", ".join(str(value) for values in entries(ground_truth).values() for value in iterate(values))
        sentences = [f"There is incorrect value ({values}) for the parameters ({keys}) in the conversation history."]
    elif "irrelevant" in category:
        sentences = ["Due to the limitations of the function, I cannot solve this problem."]
    else:
        raise ValueError(f"{category!r} is not a special ACEBench category")
    # Written by hand rather than with repr(), so quotes or backslashes in a value are not escaped away.
    return "[" + ", ".join(f'"{sentence}"' for sentence in sentences) + "]"
