"""GPT4Tools scoring: one item to a Verdict (the run's table is summary.py, over the items' metrics)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...verdict import Verdict
from .data import Case
from .metrics import ARGS_PASS, ItemMetrics, extract_steps, item_metrics

__all__ = ["prediction_text", "score_item"]


def prediction_text(output: str | Sequence[str], instruction: str, *, strip_prompt: bool = True) -> str:
    """The text upstream scores from a saved prediction ``output`` (toolalpaca-gpt4tools §5.4).

    Args:
        output: the saved output; for a list, its first element, as upstream.
        instruction: the test item's instruction (the prompt).
        strip_prompt: True for local models, whose saved output starts with the decoded prompt: the first
            ``len(instruction)`` characters are cut, whatever they are (upstream's ``evaluate``). False for
            GPT models, whose output is the continuation alone (upstream's ``evaluate_gpt``).
    """
    text = output if isinstance(output, str) else output[0]
    if strip_prompt:
        # GPT4Tools quirk: the prompt is cut by length, not matched; residue stays if the decode differs
        # (toolalpaca-gpt4tools §5.4)
        text = text[len(instruction) :]
    return text.strip()


def _failed_checks(metrics: ItemMetrics) -> list[str]:
    # Upstream's own failure test, in its order; NaN means never fail it.
    if not metrics.uses_tool:
        return ["thought"] if metrics.thought < 1.0 else []
    checks = [("thought", metrics.thought < 1.0), ("action", metrics.action < 1.0), ("args", metrics.args < ARGS_PASS)]
    return [name for name, failed in checks if failed]


def score_item(gt_record: Case | Mapping[str, object], prediction: str) -> Verdict:
    """Score one model continuation against one test item.

    Args:
        gt_record: the test item (a `Case`, or a raw record that validates as one).
        prediction: the model's continuation after the prompt (for saved upstream outputs, pass
            `prediction_text(...)`); it is stripped as upstream strips it.

    Returns:
        A Verdict that is valid iff SR == 1. ``details`` holds upstream's five numbers (``thought``,
        ``action``, ``args``, ``sr``, ``iou``) and ``uses_tool``; ``error`` lists the failed checks
        (``thought``, ``action``, ``args``) and ``error_type`` is the first of them; ``calls`` holds the
        predicted thoughts, actions and args as found.

    Raises:
        GroundTruthError: the test item's output pairs action and args lines unevenly.
    """
    case = gt_record if isinstance(gt_record, Case) else Case.model_validate(gt_record)
    text = prediction.strip()
    metrics = item_metrics(case.output, text)
    failed = _failed_checks(metrics)
    steps = extract_steps(text)
    return Verdict(
        valid=metrics.passed,
        error_type=failed[0] if failed else "",
        error=failed or None,
        calls={"thoughts": list(steps.thoughts), "actions": list(steps.actions), "args": list(steps.args)},
        details={
            "thought": metrics.thought,
            "action": metrics.action,
            "args": metrics.args,
            "sr": metrics.sr,
            "iou": metrics.iou,
            "uses_tool": metrics.uses_tool,
        },
    )
