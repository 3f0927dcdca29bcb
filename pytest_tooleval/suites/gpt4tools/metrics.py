"""GPT4Tools test-set metrics, computed the way upstream ``eval/evaluate_result.py`` computes them.

Per item: SR_thought, SR_act, SR_args, SR and IoU (toolalpaca-gpt4tools §5.4); over a run: plain means over
all items, over tool-use items and over no-tool items. Everything here is pure and deterministic.

Upstream computes with numpy. To give the same floats bit for bit we reproduce the few numpy behaviours that
change a result: pairwise summation in sums and means, NaN for the mean of nothing, and string equality that
ignores trailing NUL characters.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "ARGS_PASS",
    "GroundTruthError",
    "ItemMetrics",
    "MetricMeans",
    "Steps",
    "Summary",
    "aggregate",
    "args_match",
    "bleu1",
    "extract_steps",
    "item_metrics",
    "np_mean",
    "np_sum",
    "seq_match",
    "uses_tool",
]

THOUGHT_MARKER = "Thought: Do I need to use a tool? "
ACTION_MARKER = "Action: "
ARGS_MARKER = "Action Input: "
AI_MARKER = "AI: "

ARGS_PASS = 0.5
"""SR needs SR_args of at least this; exactly 0.5 passes (toolalpaca-gpt4tools §5.4)."""

_THOUGHT_RE = re.compile(re.escape(THOUGHT_MARKER) + "(.*)")
_ACTION_RE = re.compile(re.escape(ACTION_MARKER) + "(.*)")
_ARGS_RE = re.compile(re.escape(ARGS_MARKER) + "(.*)")

# pycocoevalcap's BLEU keeps these two constants in every ratio, so even a perfect match scores just under 1.
_BLEU_TINY = 1e-15
_BLEU_SMALL = 1e-9

# numpy's pairwise summation: fewer than 8 values are added in order, up to 128 with 8 running partial sums,
# larger blocks are split in two at a multiple of 8.
_PAIRWISE_UNROLL = 8
_PAIRWISE_BLOCK = 128


class GroundTruthError(ValueError):
    """A ground-truth output upstream cannot score (it stops the whole upstream run with an AssertionError)."""


# --- numeric helpers ---------------------------------------------------------------------------------------


def _pairwise_sum(values: Sequence[float], start: int, count: int) -> float:
    if count < _PAIRWISE_UNROLL:
        total = 0.0
        for i in range(start, start + count):
            total += values[i]
        return total
    if count <= _PAIRWISE_BLOCK:
        partial = [values[start + j] for j in range(_PAIRWISE_UNROLL)]
        stop = start + count - count % _PAIRWISE_UNROLL
        for i in range(start + _PAIRWISE_UNROLL, stop, _PAIRWISE_UNROLL):
            for j in range(_PAIRWISE_UNROLL):
                partial[j] += values[i + j]
        total = ((partial[0] + partial[1]) + (partial[2] + partial[3])) + (
            (partial[4] + partial[5]) + (partial[6] + partial[7])
        )
        for i in range(stop, start + count):
            total += values[i]
        return total
    half = count // 2
    half -= half % _PAIRWISE_UNROLL
    return _pairwise_sum(values, start, half) + _pairwise_sum(values, start + half, count - half)


def np_sum(values: Iterable[float]) -> float:
    """The sum numpy's ``np.sum`` gives for a 1-d float64 array (pairwise, not left to right)."""
    seq = [float(v) for v in values]
    return 0.0 + _pairwise_sum(seq, 0, len(seq))


def np_mean(values: Iterable[float]) -> float:
    """``np.mean`` of a 1-d float64 array: the pairwise sum over the count, NaN when there is nothing."""
    seq = [float(v) for v in values]
    if not seq:
        return math.nan
    return np_sum(seq) / len(seq)


def _numpy_str_equal(a: str, b: str) -> bool:
    # GPT4Tools quirk: numpy compares its fixed-width strings without trailing NULs (toolalpaca-gpt4tools §5.4)
    return a.rstrip("\x00") == b.rstrip("\x00")


# --- BLEU-1 ---------------------------------------------------------------------------------------------


def bleu1(reference: str, hypothesis: str) -> float:
    """BLEU-1 of one hypothesis against one reference, as ``pycocoevalcap`` ``Bleu(n=1)`` reports it.

    Tokens are whitespace-separated and case-sensitive. The score is the clipped unigram precision times the
    brevity penalty; both ratios carry pycocoevalcap's tiny constants (toolalpaca-gpt4tools §5.4).
    """
    ref_tokens = reference.split()
    hyp_tokens = hypothesis.split()
    ref_counts = Counter(ref_tokens)
    matches = 0
    for token, count in Counter(hyp_tokens).items():
        matches += min(count, ref_counts[token])
    score = (matches + _BLEU_TINY) / (len(hyp_tokens) + _BLEU_SMALL)
    length_ratio = (len(hyp_tokens) + _BLEU_TINY) / (len(ref_tokens) + _BLEU_SMALL)
    if length_ratio < 1:
        # Applied even at equal lengths, where the constants make the ratio a hair under 1.
        score *= math.exp(1 - 1 / length_ratio)
    return score


# --- extraction and step matching -----------------------------------------------------------------------


@dataclass(frozen=True)
class Steps:
    """What the markers find in one text: every thought answer, action name and args string, in order."""

    thoughts: tuple[str, ...]
    actions: tuple[str, ...]
    args: tuple[str, ...]


def _find_all(pattern: re.Pattern[str], text: str) -> tuple[str, ...]:
    return tuple(found.strip() for found in pattern.findall(text))


def extract_steps(text: str) -> Steps:
    """Each marker's occurrences anywhere in `text`, each capture running to the end of its line, stripped."""
    return Steps(_find_all(_THOUGHT_RE, text), _find_all(_ACTION_RE, text), _find_all(_ARGS_RE, text))


def uses_tool(gt_output: str) -> bool:
    """Whether upstream scores this ground truth as a tool step (both markers present) or as a no-tool step."""
    return "Action:" in gt_output and "Action Input:" in gt_output


def _gt_mask(gt_len: int, size: int) -> list[float]:
    return [1.0 if i < gt_len else 0.0 for i in range(size)]


def seq_match(gt: Sequence[str], pred: Sequence[str]) -> tuple[list[float], list[float]]:
    """Position-by-position exact match. Returns (flags, gt mask), both of length max(len(gt), len(pred)).

    Missing and extra predicted steps are positions flagged 0.
    """
    size = max(len(gt), len(pred))
    flags = [0.0] * size
    for i, (g, p) in enumerate(zip(gt, pred, strict=False)):  # the shorter one sets the aligned positions
        flags[i] = 1.0 if _numpy_str_equal(g, p) else 0.0
    return flags, _gt_mask(len(gt), size)


def _args_score(gt_args: str, pred_args: str) -> float:
    # GPT4Tools quirk: split on every comma, pieces unstripped; a different piece count scores 0
    # (toolalpaca-gpt4tools §5.4)
    gt_pieces = gt_args.split(",")
    pred_pieces = pred_args.split(",")
    if len(gt_pieces) != len(pred_pieces):
        return 0.0
    scores: list[float] = []
    hard_fail = False
    for g, p in zip(gt_pieces, pred_pieces, strict=True):  # counts checked above
        if ".png" in g:
            # GPT4Tools quirk: any .png path matches a .png path; no .png at all fails the step
            # (toolalpaca-gpt4tools §5.4)
            if ".png" in p:
                scores.append(1.0)
            else:
                hard_fail = True
        else:
            scores.append(bleu1(g, p))
    return 0.0 if hard_fail else np_mean(scores)


def args_match(gt: Sequence[str], pred: Sequence[str]) -> tuple[list[float], list[float]]:
    """Like `seq_match`, but each aligned position scores the similarity of its comma-separated args."""
    size = max(len(gt), len(pred))
    flags = [0.0] * size
    for i, (g, p) in enumerate(zip(gt, pred, strict=False)):  # the shorter one sets the aligned positions
        flags[i] = _args_score(g, p)
    return flags, _gt_mask(len(gt), size)


def _iou(flags: Sequence[float], mask: Sequence[float]) -> float:
    # GPT4Tools quirk: flags are non-zero only at GT positions, so this is recall-like and extra predicted
    # steps never lower it (toolalpaca-gpt4tools §5.4)
    intersection = np_sum(f * m for f, m in zip(flags, mask, strict=False))
    union = max(np_sum(max(f, m) for f, m in zip(flags, mask, strict=False)), 1.0)
    return intersection / union


# --- one item ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ItemMetrics:
    """Upstream's five numbers for one item. A value can be NaN where upstream's is (a mean over no steps)."""

    thought: float
    action: float
    args: float
    sr: float
    iou: float
    uses_tool: bool

    @property
    def passed(self) -> bool:
        return self.sr == 1.0


def _tool_item(gt: Steps, pred: Steps) -> ItemMetrics:
    if len(gt.actions) != len(gt.args):
        raise GroundTruthError(
            f"ground truth has {len(gt.actions)} 'Action:' lines but {len(gt.args)} 'Action Input:' lines; "
            "upstream requires them paired"
        )
    gt_thoughts = gt.thoughts[: len(gt.actions)]

    action_flags, action_mask = seq_match(gt.actions, pred.actions)
    args_flags, args_mask = args_match(gt.args, pred.args)

    pred_thoughts = pred.thoughts
    if len(pred_thoughts) == len(pred.actions) + 1 and pred_thoughts[-1] == "No":
        # GPT4Tools quirk: a trailing "No" after the last action is forgiven (toolalpaca-gpt4tools §5.4)
        pred_thoughts = pred_thoughts[:-1]
    thought_flags, thought_mask = seq_match(gt_thoughts, pred_thoughts)

    thought = np_mean(thought_flags)
    action = np_mean(action_flags)
    args = np_mean(args_flags)
    iou = _iou(thought_flags + action_flags + args_flags, thought_mask + action_mask + args_mask)
    # Written as upstream's failure test so that a NaN mean (no steps on either side) does not fail the item.
    failed = thought < 1.0 or action < 1.0 or args < ARGS_PASS
    return ItemMetrics(thought, action, args, 0.0 if failed else 1.0, iou, uses_tool=True)


def _no_tool_item(gt: Steps, pred: Steps, prediction: str) -> ItemMetrics:
    thought_flags, thought_mask = seq_match(gt.thoughts, pred.thoughts)
    thought = np_mean(thought_flags)
    # GPT4Tools quirk: a no-tool answer needs only a first thought "No" and some "AI: "; the answer text is
    # never scored, and IoU keeps the unforced thought flags (toolalpaca-gpt4tools §5.4)
    if not pred.thoughts or pred.thoughts[0] != "No" or AI_MARKER not in prediction:
        thought = 0.0
    iou = _iou(thought_flags, thought_mask)
    if thought < 1.0:
        return ItemMetrics(thought, 0.0, 0.0, 0.0, iou, uses_tool=False)
    return ItemMetrics(thought, 1.0, 1.0, 1.0, iou, uses_tool=False)


def item_metrics(gt_output: str, prediction: str) -> ItemMetrics:
    """Score one prediction against one ground-truth ``output``, exactly as upstream does.

    Args:
        gt_output: the test item's ``output`` field.
        prediction: the model's continuation (upstream's text after the prompt, stripped).

    Raises:
        GroundTruthError: the ground truth pairs its action and args lines unevenly.
    """
    gt = extract_steps(gt_output)
    pred = extract_steps(prediction)
    if uses_tool(gt_output):
        return _tool_item(gt, pred)
    return _no_tool_item(gt, pred, prediction)


# --- aggregates -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricMeans:
    """Means of the five metrics over `n` items (NaN when n is 0), as fractions; papers print them x100."""

    n: int
    thought: float
    action: float
    args: float
    sr: float
    iou: float


@dataclass(frozen=True)
class Summary:
    """Upstream's table over all items, plus the same over tool-use items and over no-tool items."""

    overall: MetricMeans
    tool: MetricMeans
    no_tool: MetricMeans

    def rows(self) -> list[tuple[str, MetricMeans]]:
        return [("overall", self.overall), ("tool", self.tool), ("no_tool", self.no_tool)]


def _means(items: Sequence[ItemMetrics]) -> MetricMeans:
    return MetricMeans(
        n=len(items),
        thought=np_mean(i.thought for i in items),
        action=np_mean(i.action for i in items),
        args=np_mean(i.args for i in items),
        sr=np_mean(i.sr for i in items),
        iou=np_mean(i.iou for i in items),
    )


def aggregate(items: Iterable[ItemMetrics]) -> Summary:
    """Plain means in the given order (upstream's order is that of the prediction file)."""
    scored = list(items)
    return Summary(
        overall=_means(scored),
        tool=_means([i for i in scored if i.uses_tool]),
        no_tool=_means([i for i in scored if not i.uses_tool]),
    )
