"""Grading an agent rollout: end-state check and process accuracy (acebench-scoring §7.2-§7.3, acebench-agent §7-§8).

Pure functions over JSON data: the recorded end state, the process list and the sample's possible answer.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence

from pytest_tooleval.json_value import JSONObject
from pytest_tooleval.text import counted
from pytest_tooleval.verdict import Verdict

from ..plain import contains, entries, iterate, subscript

WRONG_CLASS_COUNT = "wrong number of class"
WRONG_ATTRIBUTES = "class attributes wrong"

# The ground truth is the answer file's, unchecked: plain.py reads it as upstream's expressions do.


def _only_item(entry: Mapping[str, object]) -> tuple[str, object]:
    return next(iter(entry.items()))


def check_class(model_entry: Mapping[str, object], gt_entry: Mapping[str, object]) -> tuple[bool, list[str]]:
    """Upstream's per-class state check: (valid, error strings) (acebench-scoring §7.2 step 3).

    Every attribute the model entry holds is compared: a dict-valued GT attribute is a subset check (extra
    model keys pass), anything else must be equal.
    """
    scenario, expected = _only_item(gt_entry)
    _, actual = _only_item(model_entry)
    valid = True
    errors: list[str] = []
    for attr, value in entries(actual).items():
        if not contains(expected, attr):
            valid = False
            errors.append(f"class({scenario}) attributes({attr}) missing in possible_answer.")
            continue
        wanted = subscript(expected, attr)
        if isinstance(wanted, dict):
            # ACEBench quirk: GT keys must be present and equal; extra model keys are ignored (§7.2).
            for key, sub in wanted.items():
                if not contains(value, key):
                    valid = False
                    errors.append(f"class({scenario}) attributes({attr}) wrong, [expected: {wanted}, real: {value}]")
                elif sub != subscript(value, key):
                    valid = False
                    errors.append(f"class({scenario}) attributes({attr}.{key}) wrong, [expected: {sub}, real: "
                                  f"{subscript(value, key)}]")
        elif wanted != value:
            valid = False
            errors.append(f"class({scenario}) attributes({attr}) wrong, [expected: {wanted}, real: {value}]")
    return valid, errors


def check_end_state(
    end_state: Sequence[Mapping[str, object]], ground_truth: object
) -> tuple[bool, str, list[list[str]], list[str]]:
    """Upstream's ``agent_eval`` for one sample.

    Returns:
        (valid, error_type, error, unchecked): ``error`` is upstream's list of per-class error lists;
        ``unchecked`` names GT classes no recorded class matched (a GT typo such as ``ReminderAPI``).
    """
    # as upstream reads it back from its file: a list of objects, as end_state is a list of mappings
    state: list[JSONObject] = json.loads(json.dumps(list(end_state), default=str))
    gt: list[object] = ground_truth if isinstance(ground_truth, list) else [ground_truth]
    if len(gt) != len(state):
        return False, WRONG_CLASS_COUNT, [], []
    valid = True
    error_type = ""
    errors: list[list[str]] = []
    unchecked: list[str] = []
    verdict: tuple[bool, list[str]] = (True, [])
    for gt_entry in gt:
        match = next((entry for entry in state if set(entry) == set(iterate(gt_entry))), None)
        if match:
            verdict = check_class(match, entries(gt_entry))
        else:
            # ACEBench quirk: an unmatched GT class reuses the previous class's verdict, so a misspelt
            # class name is never checked (acebench-scoring §7.2, ACEBench#25).
            unchecked.extend(str(name) for name in iterate(gt_entry))
        if not verdict[0]:
            valid = False
            errors.append(verdict[1])
            error_type = WRONG_ATTRIBUTES
    return valid, error_type, errors, unchecked


def milestone_score(milestones: Collection[object], process: Sequence[str]) -> float:
    """Greedy in-order matching of stripped strings; the cursor never rewinds (acebench-agent §8)."""
    if not milestones:
        return 1.0
    hits = 0
    cursor = 0
    for stone in milestones:
        target = _stripped(stone)
        while cursor < len(process):
            cursor += 1
            if process[cursor - 1].strip() == target:
                hits += 1
                break
    return hits / len(milestones)


def _stripped(stone: object) -> str:
    """``stone.strip()``: an AttributeError for anything but a string."""
    if isinstance(stone, str):
        return stone.strip()
    raise AttributeError(f"'{type(stone).__name__}' object has no attribute 'strip'")


def _alternative(value: object) -> Collection[object]:
    """A milestone list as `milestone_score` uses it: a falsy value scores 1.0, another non-collection fails
    where upstream's loop over it fails."""
    if isinstance(value, Collection):
        return value
    if not value:
        return ()
    raise TypeError(f"'{type(value).__name__}' object is not iterable")


def _milestones(value: object) -> Sequence[object]:
    """The record's ``mile_stone`` as upstream indexes it (``mile_stone[0]``): a falsy value reads as none."""
    if isinstance(value, (list, str)):
        return value
    if not value:
        return ()
    if isinstance(value, dict):
        raise KeyError(0)
    raise TypeError(f"'{type(value).__name__}' object is not subscriptable")


def process_accuracy(mile_stone: Sequence[object], process: Sequence[str], end_to_end_valid: bool) -> float:
    """The sample's contribution to the category's process accuracy.

    1.0 when the end state is correct. With alternative milestone lists, the best of the per-alternative
    scores, each rounded to 3 decimals; a single list's score is not rounded (upstream sums it raw).
    """
    if end_to_end_valid:
        return 1.0
    if not mile_stone:
        return 1.0  # upstream would crash on an empty list (it reads mile_stone[0]); no sample has one
    if isinstance(mile_stone[0], list):  # upstream looks at the first entry only
        return max(round(milestone_score(_alternative(alt), process), 3) for alt in mile_stone)
    return milestone_score(mile_stone, process)


def state_diff(end_state: Sequence[Mapping[str, object]], ground_truth: object) -> list[str]:
    """Readable lines for every graded attribute that differs from the ground truth."""
    gt: list[object] = ground_truth if isinstance(ground_truth, list) else [ground_truth]
    state: list[JSONObject] = json.loads(json.dumps(list(end_state), default=str))
    lines: list[str] = []
    by_class = {name: attrs for entry in state for name, attrs in entry.items()}
    if len(gt) != len(state):
        lines.append(f"recorded {counted(len(state), 'class', 'classes')} {sorted(by_class)}, ground truth has "
                     f"{len(gt)}")
    for gt_entry in gt:
        for name, expected in entries(gt_entry).items():
            if name not in by_class:
                lines.append(f"{name}: not recorded (a ground-truth typo is never checked)")
                continue
            actual = by_class[name]
            for attr in _names(set(iterate(expected)) | set(iterate(actual))):
                if not contains(actual, attr):
                    continue  # upstream only checks attributes the model entry holds
                if not contains(expected, attr):
                    lines.append(f"{name}.{attr}: not in the ground truth")
                    continue
                want, got = subscript(expected, attr), subscript(actual, attr)
                if isinstance(want, dict) and isinstance(got, dict):
                    for key in want:
                        if key not in got:
                            lines.append(f"{name}.{attr}[{key!r}]: missing, expected {_show(want[key])}")
                        elif want[key] != got[key]:
                            lines.append(f"{name}.{attr}[{key!r}]: expected {_show(want[key])}, got {_show(got[key])}")
                    for key in got:
                        if key not in want:
                            lines.append(f"{name}.{attr}[{key!r}]: extra {_show(got[key])} (not graded)")
                elif want != got:
                    lines.append(f"{name}.{attr}: expected {_show(want)}, got {_show(got)}")
    return lines


def _names(names: set[object]) -> list[str]:
    """Attribute names in order: the members of JSON objects, strings (other values cannot be ordered here)."""
    strings = {name for name in names if isinstance(name, str)}
    if len(strings) != len(names):
        raise TypeError("'<' not supported between an attribute name and a value that is not a string")
    return sorted(strings)


def _show(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def grade(
    possible_answer: Mapping[str, object], end_state: Sequence[Mapping[str, object]], process: Sequence[str]
) -> Verdict:
    """Score one agent sample as upstream does.

    Args:
        possible_answer: the sample's possible-answer record (``ground_truth``, ``mile_stone``).
        end_state: the recorded end state (``[]`` when upstream would have recorded none).
        process: the agent messages that reached the executor, in order.
    """
    valid, error_type, error, unchecked = check_end_state(end_state, possible_answer["ground_truth"])
    mile_stone = _milestones(possible_answer.get("mile_stone", []))
    process_score = process_accuracy(mile_stone, process, valid)
    details: dict[str, object] = {
        "process_rounded": round(process_score, 3),
        "state_diff": state_diff(end_state, possible_answer["ground_truth"]),
        "unchecked_classes": unchecked,
        "process_steps": len(process),
    }
    if mile_stone and isinstance(mile_stone[0], list):
        details["process_alternatives"] = [round(milestone_score(_alternative(alt), process), 3)
                                           for alt in mile_stone]
    return Verdict(valid=valid, error_type=error_type, error=None if valid else error, process=process_score,
                   details=details)
