"""ACEBench's special checker: did the model flag a missing parameter, a bad value or an unusable API?

Reproduces upstream ``special_eval`` (acebench-scoring §5): the raw answer string is searched for
case-sensitive substrings; nothing is parsed, stripped or lowercased. The English sentinel phrases
apply to zh as well.
"""

from __future__ import annotations

from pytest_tooleval.suites.acebench.checker import CheckResult

from .plain import entries, in_text, iterate

__all__ = ["ERROR_PARAM_PHRASE", "INCOMPLETE_PHRASE", "IRRELEVANT_PHRASE", "special_checker"]

# The substrings upstream looks for (part of the output contract the special prompt states).
INCOMPLETE_PHRASE = "Missing necessary parameters"
ERROR_PARAM_PHRASE = "There is incorrect value"
IRRELEVANT_PHRASE = "the limitations of the function"


def special_checker(category: str, output: str, gt: object) -> CheckResult:
    """Check one special-category answer.

    Args:
        category: e.g. ``"special_incomplete"``; dispatched by substring like upstream
            (``incomplete``, then ``error``, then ``irrelevant``).
        output: the model's raw answer.
        gt: the record's ``ground_truth`` (``{api: [params]}``, ``{param: [values]}`` or a sentence).

    Raises:
        ValueError: `category` names none of the three special categories.
    """
    if "incomplete" in category:
        return _incomplete(output, gt)
    if "error" in category:
        return _error_param(output, gt)
    if "irrelevant" in category:
        if IRRELEVANT_PHRASE not in output:
            return CheckResult(False, "error_detection", ["The answer does not say the functions cannot solve this."])
        return CheckResult(True)
    raise ValueError(f"{category!r} is not a special ACEBench category")


def _incomplete(output: str, gt: object) -> CheckResult:  # data.py checked its shape; plain.py reads it
    result = CheckResult(True)
    # Every entry is checked; a later failure replaces an earlier one's message (upstream keeps the last).
    for api, params in entries(gt).items():
        if INCOMPLETE_PHRASE not in output:
            result = CheckResult(False, "error_detection", [f"missing parameters {params} of {api} not reported"])
        elif api not in output:
            result = CheckResult(False, "error_correction", [f"missing parameters {params} reported without {api}"])
        else:
            for param in iterate(params):
                # ACEBench quirk: plain substring tests, so padded answer values need their spaces (§5)
                if not in_text(param, output):
                    result = CheckResult(False, "error_correction", [f"missing parameter {param!r} of {api} not named"])
    return result


def _error_param(output: str, gt: object) -> CheckResult:
    result = CheckResult(True)
    for param, values in entries(gt).items():
        if ERROR_PARAM_PHRASE not in output:
            result = CheckResult(False, "error_detection", [f"incorrect values {values} of {param} not reported"])
            continue
        for value in iterate(values):
            # ACEBench quirk: only the bad value is looked for, never the parameter name (§5)
            if not in_text(value, output):
                result = CheckResult(False, "error_correction", [f"incorrect values {values} of {param} not named"])
    return result
