"""ACEBench aggregation: per-sample verdicts -> per-category figures -> groups -> OVERALL.

Pure functions over `SampleScore` rows (acebench-scoring §6, §8). A *full* run (all 17 categories,
every sample scored) is aggregated exactly like upstream's leaderboard: fixed denominators, figures
rounded to 3 decimals, ``OVERALL = round(0.578·NORMAL + 0.2676·SPECIAL + 0.1545·AGENT, 3)``. Anything
less is *partial*: groups average only the categories that ran and OVERALL is renormalised over the
groups present; upstream has no such figure (it would count every missing category as 0), so a
partial summary says so.

Aggregate one language at a time: ids repeat across languages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import groupby

# Aggregation runs in upstream's order (categories.py): the order upstream sums and lists categories in.
from ...text import counted
from .categories import ALL_CATEGORIES, GROUPS

__all__ = [
    "WEIGHTS",
    "CategoryScore",
    "GroupScore",
    "SampleScore",
    "Summary",
    "category_score",
    "dialogue_key",
    "official_groups",
    "partial_groups",
    "summarize",
]

#: OVERALL weights (√-proportional to 700 normal, 150 special and 50 agent units; §8.3). They sum to 1.0001.
WEIGHTS: dict[str, float] = {"SPECIAL": 0.2676, "NORMAL": 0.578, "AGENT": 0.1545}  # upstream's summation order


@dataclass(frozen=True)
class SampleScore:
    """One scored sample (one step, for the normal multi-turn categories).

    Attributes:
        category: e.g. ``"normal_atom_bool"``.
        id: the record id, e.g. ``"normal_multi_turn_user_adjust_3_1"``.
        valid: the verdict; None when the sample has none (an infrastructure error).
        process: agent process accuracy of the sample (None elsewhere; taken as 1.0/0.0 from `valid`).
    """

    category: str
    id: str
    valid: bool | None
    process: float | None = None


@dataclass(frozen=True)
class CategoryScore:
    """A category's figures. Units are samples, or dialogues for the normal multi-turn categories.

    Attributes:
        n: units in the input; scored: units with a verdict (a dialogue needs one for every step).
        correct: units correct. accuracy: the official per-category figure, over the scored units, rounded
            as upstream does (3 decimals, except special categories: unrounded).
        process_acc: multi-turn step or agent milestone accuracy, rounded to 3; None elsewhere.
        steps / correct_steps: multi-turn only, the step counts upstream reports as total/correct_count.
    """

    category: str
    n: int
    scored: int
    correct: int
    accuracy: float
    process_acc: float | None = None
    steps: int | None = None
    correct_steps: int | None = None


@dataclass(frozen=True)
class GroupScore:
    """A group figure and the categories behind it (`missing` ones count as 0 in a full-run figure)."""

    name: str
    value: float
    categories: tuple[str, ...]
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class Summary:
    """Everything a report shows. ``partial`` marks the renormalised, non-official figures."""

    categories: dict[str, CategoryScore]
    groups: dict[str, GroupScore]
    overall: float | None
    partial: bool
    reasons: tuple[str, ...] = field(default=())


# --- per category ----------------------------------------------------------------------------------


def dialogue_key(sample_id: str) -> str:
    """The dialogue index of a multi-turn step: the second-to-last ``_`` field of its id (§6)."""
    return sample_id.split("_")[-2]


def _step_order(row: SampleScore) -> tuple[int, int] | tuple[()]:
    fields = row.id.split("_")
    try:
        return int(fields[-2]), int(fields[-1])
    except (IndexError, ValueError):
        return ()


def category_score(category: str, rows: Iterable[SampleScore]) -> CategoryScore:
    """The per-category figure for `rows` of one category and language (§6, §8.1)."""
    rows = [row for row in rows if row.category == category]
    if "normal_multi_turn" in category:
        return _multi_turn_score(category, rows)
    scored = [row for row in rows if row.valid is not None]
    correct = sum(1 for row in scored if row.valid)
    fraction = correct / len(scored) if scored else 0.0
    if category.startswith("special"):
        # ACEBench quirk: special accuracy is the only figure left unrounded (§8.1)
        return CategoryScore(category, len(rows), len(scored), correct, fraction)
    if category.startswith("agent"):
        process = [_agent_process(row) for row in scored]
        process_acc = round(sum(process) / len(process), 3) if process else 0.0
        return CategoryScore(category, len(rows), len(scored), correct, round(fraction, 3), process_acc)
    return CategoryScore(category, len(rows), len(scored), correct, round(fraction, 3))


def _agent_process(row: SampleScore) -> float:
    if row.process is not None:
        return row.process
    return 1.0 if row.valid else 0.0


def _multi_turn_score(category: str, rows: list[SampleScore]) -> CategoryScore:
    # Upstream groups *adjacent* steps of its (dialogue, step)-sorted file; sorting first gives the same
    # groups whatever order the verdicts arrived in (§6).
    ordered = sorted(rows, key=_step_order)
    dialogues = [list(steps) for _, steps in groupby(ordered, key=lambda row: dialogue_key(row.id))]
    complete = [steps for steps in dialogues if all(step.valid is not None for step in steps)]
    ends = [all(step.valid for step in steps) for steps in complete]
    process = [round(sum(bool(step.valid) for step in steps) / len(steps), 3) for steps in complete]
    return CategoryScore(
        category,
        n=len(dialogues),
        scored=len(complete),
        correct=sum(ends),
        accuracy=round(sum(ends) / len(ends), 3) if ends else 0.0,
        process_acc=round(sum(process) / len(process), 3) if process else 0.0,
        steps=len(rows),
        correct_steps=sum(1 for row in rows if row.valid),
    )


# --- the summary ----------------------------------------------------------------------------------


def summarize(rows: Iterable[SampleScore], *, expected: Mapping[str, int] | None = None) -> Summary:
    """Aggregate one language's verdicts.

    Args:
        rows: every scored sample of the run, any order.
        expected: samples per category in the full benchmark; when given, a category with fewer
            rows also makes the run partial (e.g. after ``-k``).

    Returns:
        The official groups and OVERALL for a full run; the renormalised ones, flagged partial,
        otherwise.
    """
    rows = list(rows)
    present = {row.category for row in rows}
    unknown = present - set(ALL_CATEGORIES)
    if unknown:
        raise ValueError(f"unknown ACEBench categories: {sorted(unknown)}")
    categories = {name: category_score(name, rows) for name in ALL_CATEGORIES if name in present}

    reasons: list[str] = []
    missing = [name for name in ALL_CATEGORIES if name not in present]
    if missing:
        reasons.append(f"{len(missing)} of {len(ALL_CATEGORIES)} categories did not run")
    unscored = sum(score.n - score.scored for score in categories.values())
    if unscored:
        reasons.append(f"{counted(unscored, 'sample or dialogue', 'samples or dialogues')} "
                       f"{'has' if unscored == 1 else 'have'} no verdict")
    if expected is not None:
        counts = {name: sum(1 for row in rows if row.category == name) for name in present}
        short = [name for name in present if name in expected and counts[name] < expected[name]]
        if short:
            reasons.append(f"{counted(len(short), 'category', 'categories')} ran only part of "
                           f"{'its' if len(short) == 1 else 'their'} samples")

    accuracies = {name: score.accuracy for name, score in categories.items()}
    if reasons:
        # a category with no verdict at all has no accuracy: it is left out, not counted as 0
        groups, overall = partial_groups({name: value for name, value in accuracies.items() if categories[name].scored})
        return Summary(categories, groups, overall, partial=True, reasons=tuple(reasons))
    groups, overall = official_groups(accuracies)
    return Summary(categories, groups, overall, partial=False)


def official_groups(accuracies: Mapping[str, float]) -> tuple[dict[str, GroupScore], float]:
    """Upstream's leaderboard: unweighted means over fixed members, a missing one counting 0 (§8.2)."""
    groups = {}
    for name, members in GROUPS.items():
        total = 0.0
        for member in members:  # summed in upstream's order
            total += accuracies.get(member, 0)
        absent = tuple(member for member in members if member not in accuracies)
        groups[name] = GroupScore(name, round(total / len(members), 3), members, absent)
    overall = 0.0
    for name, weight in WEIGHTS.items():
        overall += groups[name].value * weight
    return groups, round(overall, 3)


def partial_groups(accuracies: Mapping[str, float]) -> tuple[dict[str, GroupScore], float | None]:
    """Means over the members that ran; OVERALL = Σ w·g / Σ w over the groups present."""
    groups = {}
    for name, members in GROUPS.items():
        ran = tuple(member for member in members if member in accuracies)
        if not ran:
            continue
        value = round(sum(accuracies[member] for member in ran) / len(ran), 3)
        groups[name] = GroupScore(name, value, ran, tuple(m for m in members if m not in accuracies))
    weighted = [(weight, groups[name].value) for name, weight in WEIGHTS.items() if name in groups]
    if not weighted:
        return groups, None
    overall = sum(weight * value for weight, value in weighted) / sum(weight for weight, _ in weighted)
    return groups, round(overall, 3)
