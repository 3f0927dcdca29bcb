"""What a failed multi-turn sample shows (docs/bfcl-multi-turn.md#the-failure-view): the turn, its request, the
model's calls beside the ground truth's, and the state differences or the missing results, every piece clipped.

Pure: read off the sample, the stored result and the checker's verdict after judging, so scoring is untouched.
bfcl's own failure record keeps both whole states (bfcl-multiturn §5.5); this keeps what differs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeGuard

from ....json_value import JSONObject, JSONValue
from ....text import clip, counted
from .checker import EMPTY_TURN, FORCE_TERMINATED, MultiTurnVerdict
from .sample import MultiTurnSample

REQUEST_LIMIT = 300  # characters of the turn's user request
CALL_LIMIT = 200  # characters of one call, one raw answer, one missing result
VALUE_LIMIT = 200  # characters of an expected or actual value
KEY_LIMIT = 60  # characters of one key on a difference's path
CALLS_SHOWN = 20  # calls (and raw answers) listed per turn
LINES_SHOWN = 8  # state differences, or missing results, listed

ABSENT = "(absent)"


@dataclass(frozen=True)
class FailureView:
    """A failed verdict as the plugin shows it.

    Attributes:
        error: upstream's message, then one line per state difference (`Class.path: expected ..., actual ...`)
            or per missing ground-truth result.
        calls: the failing turn's decoded calls, in order (None where no turn failed).
        details: JSON-safe: `mode`, `category`, `turns`, and where a turn failed `turn` (counted from 1),
            `request`, `ground_truth` (its calls); `answers` (the turn's raw answers) for an empty turn,
            `answered_turns` for a forced termination.
    """

    error: list[str]
    calls: list[str] | None
    details: JSONObject


def failure_view(sample: MultiTurnSample, protocol: str, output: JSONValue, found: MultiTurnVerdict) -> FailureView:
    """The view of a failed verdict of `sample` (`output`: the stored result the checker judged)."""
    details: JSONObject = {"mode": protocol, "category": sample.category}
    turns = len(sample.ground_truth)
    checked = found.details
    if found.error_type == FORCE_TERMINATED:
        details["answered_turns"] = checked.get("model_turns")
    if found.turn is None:
        details["turns"] = turns
        return FailureView([found.message], None, details)
    index = found.turn
    ground_truth: list[JSONValue] = [*_clipped(sample.ground_truth[index], "call")]
    details.update(turn=index + 1, turns=turns, request=request_text(sample, index), ground_truth=ground_truth)
    if found.error_type == EMPTY_TURN:  # what the model said instead of a call
        raw = output[index] if isinstance(output, list) and index < len(output) else None
        answers: list[JSONValue] = [*_clipped([item if isinstance(item, str) else repr(item)
                                               for item in (raw if isinstance(raw, list) else [raw])], "answer")]
        details["answers"] = answers
    decoded = checked.get("decoded")
    calls = [str(call) for step in decoded if isinstance(step, list) for call in step] \
        if isinstance(decoded, list) else []
    error = [found.message]
    class_name, differences = checked.get("class"), checked.get("differences")
    if isinstance(class_name, str) and isinstance(differences, dict):
        error += state_lines(class_name, differences)
    missing = checked.get("missing_items")
    if isinstance(missing, list):
        error += _limited([f"missing result: {clip(str(item), CALL_LIMIT)}" for item in missing], "missing result")
    return FailureView(error, _clipped(calls, "call"), details)


def request_text(sample: MultiTurnSample, index: int) -> str:
    """The user's request of turn `index`, clipped; a held-out turn has none of its own (spec §1.2)."""
    messages = sample.turns[index] if index < len(sample.turns) else []
    text = " / ".join(str(message.get("content")) for message in messages)
    if not text and index in sample.held_out:
        names = [str(doc.get("name")) for doc in sample.held_out[index]]
        return f"(no message of its own: this turn offers {counted(len(names), 'more function')}: {', '.join(names)})"
    return clip(text, REQUEST_LIMIT)


def state_lines(class_name: str, differences: JSONObject) -> list[str]:
    """One line per differing leaf of the class's differing attributes (the checker's `differences`:
    name -> {model, ground_truth}), expected beside actual, values clipped."""
    found = []
    for name, pair in differences.items():
        if not isinstance(pair, dict):
            continue
        expected, actual = pair.get("ground_truth"), pair.get("model")
        leaves = list(_leaves(f"{class_name}.{name}", expected, actual))
        if not leaves:  # equal once JSON-safe: they differ only in Python type (a tuple against a list, say)
            leaves = [(f"{class_name}.{name}", _shown(expected), f"{_shown(actual)} (differs in type)")]
        found += [f"{path}: expected {want}, actual {got}" for path, want, got in leaves]
    return _limited(found, "state difference")


def _leaves(path: str, expected: JSONValue, actual: JSONValue, step: str = ".") -> Iterator[tuple[str, str, str]]:
    """(path, expected, actual) for each place the two values differ, walking objects by key (`step` joins a
    key to the path), lists of one length by position, and a directory (as checker.jsonable writes one) by the
    names of its contents."""
    if _directory(expected) and _directory(actual) and expected["name"] == actual["name"]:
        yield from _leaves(path, expected["contents"], actual["contents"], "/")  # root/document/notes.txt
    elif isinstance(expected, dict) and isinstance(actual, dict):
        for key in [*expected, *(key for key in actual if key not in expected)]:
            name = clip(key, KEY_LIMIT)  # a model names files and folders
            where = f"{path}{step}{name}" if step == "/" or key.isidentifier() else f"{path}[{name!r}]"
            if key not in actual:
                yield where, _shown(expected[key]), ABSENT
            elif key not in expected:
                yield where, ABSENT, _shown(actual[key])
            else:
                yield from _leaves(where, expected[key], actual[key])
    elif isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for position, (want, got) in enumerate(zip(expected, actual, strict=True)):
            yield from _leaves(f"{path}[{position}]", want, got)
    elif expected != actual:
        yield path, _shown(expected), _shown(actual)


def _directory(value: JSONValue) -> TypeGuard[JSONObject]:
    return isinstance(value, dict) and value.keys() == {"name", "contents"} and isinstance(value["contents"], dict)


def _shown(value: JSONValue) -> str:
    return clip(repr(value), VALUE_LIMIT)  # Python's spelling: the state is Python values, upstream compares them


def _clipped(items: list[str], noun: str) -> list[str]:
    return [clip(item, CALL_LIMIT) for item in items[:CALLS_SHOWN]] + (
        [f"... and {counted(len(items) - CALLS_SHOWN, 'more ' + noun)}"] if len(items) > CALLS_SHOWN else [])


def _limited(lines: list[str], noun: str) -> list[str]:
    return lines[:LINES_SHOWN] + (
        [f"... and {counted(len(lines) - LINES_SHOWN, 'more ' + noun)}"] if len(lines) > LINES_SHOWN else [])
