"""A run against a baseline run (a previous JSON report), sample by sample (docs/release-gate.md).

Pure: the current rows, the baseline document and the suites' optional comparison members in, a `Comparison`
out. A suite declares its units (`Figures.units`: one sample, or one dialogue whose steps all count, per
unit, each counted in one proportion figure) and how its other figures follow from those proportions
(`Figures.combine`). Units are paired by key; a unit without a verdict in either run, or present in one run
only, is counted and named, never paired. A proportion figure gets the exact McNemar test on its discordant
pairs and Newcombe's paired score interval; a figure combined from several (a group, OVERALL) gets a paired
bootstrap that resamples units within each proportion, so every category keeps its size, or, with too little to
resample, the exact sign-flip test on the units that moved and a square-and-add interval (`_paired_test`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from ..json_value import JSONObject, JSONValue
from . import stats
from .row import member_text, object_entries, object_or_empty, whole
from .suite_summary import CombineFn, Unit, UnitsFn

#: fingerprint keys that describe the model under test (or where it was served): they may differ
MODEL_KEYS = frozenset({"model", "endpoint_host", "endpoint_profile"})
BOOTSTRAP_SEED = 20261201
BOOTSTRAP_REPLICATES = 2000
# a combination of categories is evaluated as the weighted sum it is after this many seeded checks (_as_linear)
LINEAR_CHECKS = 3
LINEAR_CHECK_SEED = 7


@dataclass(frozen=True)
class FigureComparison:
    figure: str  # the full name, <suite>.<figure>
    # "proportion" (McNemar, Newcombe), "combined" (paired bootstrap), or "mean": a proportion whose units were
    # asked several times (--tooleval-repeats), by the paired bootstrap over units whole
    kind: str
    baseline: float | None
    current: float | None
    difference: float | None
    interval: tuple[float, float] | None
    p: float | None
    units: int  # paired units behind it
    pass_to_fail: int = 0
    fail_to_pass: int = 0
    mde: float | None = None  # the smallest difference detectable at 80% power with this many units
    # what gave the p-value: "McNemar" (a proportion), "bootstrap", or "exact", the sign-flip test a figure
    # gets when there is too little to resample (docs/release-gate.md, "Small samples")
    test: str = "McNemar"

    def as_dict(self) -> JSONObject:
        return {"figure": self.figure, "kind": self.kind, "baseline": self.baseline, "current": self.current,
                "difference": self.difference, "interval": None if self.interval is None else list(self.interval),
                "p": self.p, "units": self.units, "pass_to_fail": self.pass_to_fail,
                "fail_to_pass": self.fail_to_pass, "mde": self.mde, "test": self.test}


@dataclass(frozen=True)
class Flip:
    suite: str
    figure: str
    key: str
    samples: tuple[str, ...]
    direction: str  # "pass_to_fail" or "fail_to_pass"
    # the unit's tests as their parametrize ids (`en-special_irrelevant_0`, a dialogue's steps), what `-k` selects;
    # the unit's key (`en.special_irrelevant/special_irrelevant_0`) names it in the figures, not among the tests
    test_ids: tuple[str, ...] = ()

    @property
    def shown(self) -> str:
        """The flip as the terminal lists it: its test ids, or its key where the rows named none."""
        return ", ".join(self.test_ids) or self.key


@dataclass(frozen=True)
class Comparison:
    baseline_path: str
    baseline_model: str | None
    figures: list[FigureComparison]
    flips: list[Flip]
    only_current: list[str]  # "<suite>:<unit key>"
    only_baseline: list[str]
    unscored: list[str]  # units without a verdict in one run or both
    fingerprint_differences: list[tuple[str, JSONValue, JSONValue]]  # (key, baseline, current)
    not_compared: list[str] = field(default_factory=list)  # suites that declare no units
    # a baseline rescored to other benchmark revisions: which, when, its samples that answer an older prompt
    # (report/rescore.py rescore_note); None for a baseline as its run wrote it
    baseline_rescored: JSONObject | None = None
    # samples of this run whose answers the response cache served from the baseline's own run (its `run.cache`
    # tag): those pairs compare the baseline with itself
    own_answers: int = 0

    def figure(self, name: str) -> FigureComparison | None:
        return next((entry for entry in self.figures if entry.figure == name), None)

    def as_dict(self) -> JSONObject:
        return {
            "baseline": {"path": self.baseline_path, "model": self.baseline_model,
                         **({"rescored": self.baseline_rescored} if self.baseline_rescored else {})},
            "fingerprint_differences": [{"key": key, "baseline": base, "current": current}
                                        for key, base, current in self.fingerprint_differences],
            "figures": [entry.as_dict() for entry in self.figures],
            "flips": {direction: [{"suite": flip.suite, "figure": flip.figure, "unit": flip.key,
                                   "samples": list(flip.samples), "test_ids": list(flip.test_ids)}
                                  for flip in self.flips if flip.direction == direction]
                      for direction in ("pass_to_fail", "fail_to_pass")},
            **({"own_answers": self.own_answers} if self.own_answers else {}),
            "only_current": [*self.only_current],
            "only_baseline": [*self.only_baseline],
            "unscored": [*self.unscored],
            "not_compared": [*self.not_compared],
            "bootstrap": {"seed": BOOTSTRAP_SEED, "replicates": BOOTSTRAP_REPLICATES},
        }


class _Figures(Protocol):  # suites/base.py Figures, as far as a comparison reads it (the contract stands above)
    @property
    def units(self) -> UnitsFn | None: ...

    @property
    def combine(self) -> CombineFn | None: ...


class _Suite(Protocol):
    @property
    def figures(self) -> _Figures: ...


def suite_members(suite: _Suite) -> tuple[UnitsFn, CombineFn] | None:
    """A suite's optional `Figures.units` and `Figures.combine` (suites/base.py), or None when it lacks either."""
    figures = suite.figures
    units, combine = figures.units, figures.combine
    return None if units is None or combine is None else (units, combine)


def compare(rows: list[JSONObject], baseline: Mapping[str, JSONValue], baseline_path: str,
            current_fingerprint: Mapping[str, JSONValue], members: Mapping[str, tuple[UnitsFn, CombineFn] | None],
            *, seed: int = BOOTSTRAP_SEED, replicates: int = BOOTSTRAP_REPLICATES) -> Comparison:
    """Compare this run's `rows` with the `baseline` report document.

    Args:
        members: for each suite of the run, its `(units, combine)` members, or None when it has none.
    """
    base_rows = object_entries(baseline.get("samples"))
    figures: list[FigureComparison] = []
    flips: list[Flip] = []
    only_current: list[str] = []
    only_baseline: list[str] = []
    unscored: list[str] = []
    not_compared: list[str] = []
    for suite in sorted({member_text(row, "suite") for row in rows}):
        hooks = members.get(suite)
        if hooks is None:
            not_compared.append(suite)
            continue
        units_of, combine = hooks
        mine = [row for row in rows if row["suite"] == suite]
        current = _shares(units_of, mine)
        tests = _test_ids(units_of, mine)
        before = _shares(units_of, [row for row in base_rows if row.get("suite") == suite])
        only_current += [f"{suite}:{key}" for key in current if key not in before]
        only_baseline += [f"{suite}:{key}" for key in before if key not in current]
        pairs: dict[str, list[tuple[float, float]]] = {}
        # in key order: the bootstrap draws by position, and the order rows arrived in must not matter
        for key, (unit, share) in sorted(current.items(), key=lambda item: _natural(item[0])):
            old = before.get(key)
            if old is None:
                continue
            if share is None or old[1] is None:
                unscored.append(f"{suite}:{key}")
                continue
            pairs.setdefault(unit.figure, []).append((old[1], share))
            if old[1] != share:
                flips.append(Flip(suite, unit.figure, key, unit.samples,
                                  "pass_to_fail" if share < old[1] else "fail_to_pass", tests.get(key, ())))
        binary = all(value in (0.0, 1.0) for units in pairs.values() for pair in units for value in pair)
        if binary:  # one ask of each sample in both runs: the exact test on the flips
            figures += _proportions(suite, {name: [(old == 1.0, new == 1.0) for old, new in units]
                                            for name, units in pairs.items()})
        figures += _combined(suite, pairs, combine, seed, replicates, proportions_too=not binary)
    flips.sort(key=lambda flip: (flip.suite, _natural(flip.key)))
    return Comparison(baseline_path, _text(baseline.get("fingerprint"), "model"), figures, flips, only_current,
                      only_baseline, unscored, fingerprint_differences(object_or_empty(baseline.get("fingerprint")),
                                                                        current_fingerprint), not_compared,
                      rescore_note(baseline), own_answers(rows, baseline))


def own_answers(rows: list[JSONObject], baseline: Mapping[str, JSONValue]) -> int:
    """How many of this run's samples the response cache answered from the baseline run itself: the run's tag in
    the baseline's `run.cache` among a row's `cached_runs` (--tooleval-cache reuse, or a run resuming the one that
    wrote the baseline)."""
    run = baseline.get("run")
    cache = run.get("cache") if isinstance(run, Mapping) else None
    tag = cache.get("id") if isinstance(cache, Mapping) else None
    if not isinstance(tag, str) or not tag:
        return 0
    return sum(1 for row in rows if isinstance(runs := row.get("cached_runs"), list) and tag in runs)


def rescore_note(baseline: Mapping[str, JSONValue]) -> JSONObject | None:
    """What a comparison says of a baseline that was rescored (its `rescore` block, report/rescore.py): the revisions,
    when, and how many of its samples answer an older prompt; None for a baseline as its run wrote it."""
    block = baseline.get("rescore")
    if not isinstance(block, dict) or not isinstance(block.get("revisions"), dict):
        return None
    changed = object_entries(block.get("prompt_changed"))
    not_rescored = block.get("not_rescored")
    return {"revisions": block["revisions"], "at": block.get("at"),
            "prompt_changed": sum(1 for entry in changed if not entry.get("asked")),
            "asked": sum(1 for entry in changed if entry.get("asked")),
            "not_rescored": len(not_rescored) if isinstance(not_rescored, (list, dict, str)) else 0}


def rescore_sentence(note: Mapping[str, JSONValue]) -> str:
    """`rescore_note` as the sentence the terminal and the Markdown print under "Compared with ..."."""
    revisions = object_or_empty(note.get("revisions"))
    moved = ", ".join(f"{entry.get('title', name)} {entry.get('from')} to {entry.get('to')}"
                      for name, entry in revisions.items() if isinstance(entry, dict))
    when = f" on {str(note['at'])[:10]}" if note.get("at") else ""
    parts = [f"the baseline was rescored from {moved}{when} (python -m pytest_tooleval rescore)"]
    if note.get("prompt_changed"):
        parts.append(f"{note['prompt_changed']} of its samples answer the older prompt")
    if note.get("asked"):
        parts.append(f"{note['asked']} were asked again")
    if note.get("not_rescored"):
        parts.append(f"{note['not_rescored']} keep their old verdicts (not rescored)")
    return "; ".join(parts)


def _proportions(suite: str, pairs: Mapping[str, Sequence[tuple[bool, bool]]]) -> list[FigureComparison]:
    return [_proportion(f"{suite}.{figure}", units) for figure, units in pairs.items()]


def _proportion(name: str, units: Sequence[tuple[float, float]]) -> FigureComparison:
    """One proportion's pass/fail pairs: exact McNemar on the discordant pairs, Newcombe's paired interval."""
    both = sum(1 for old, new in units if old and new)
    lost = sum(1 for old, new in units if old and not new)
    gained = sum(1 for old, new in units if new and not old)
    neither = len(units) - both - lost - gained
    n = len(units)
    before, after = (both + lost) / n, (both + gained) / n
    return FigureComparison(name, "proportion", before, after, after - before,
                            stats.paired_difference_interval(both, lost, gained, neither),
                            stats.mcnemar_exact(lost, gained), n, lost, gained,
                            stats.mde_two_proportions(_smoothed(both + lost, n), n))


def _alone(weights: Mapping[str, Mapping[str, float]], combine: CombineFn,
           categories: Mapping[str, Sequence[object]]) -> dict[str, str]:
    """The combined figures that are one category's accuracy and nothing else (weight 1, no constant part: a
    group of a partial run that ran one of its categories, BFCL's `live.ast` over live_simple alone or its
    `hallucination.relevance`), each with that category: the same samples must show the same interval."""
    base = combine({category: 0.0 for category, units in categories.items() if units})
    return {name: next(iter(read)) for name, read in weights.items()
            if len(read) == 1 and abs(next(iter(read.values())) - 1.0) < 1e-12 and abs(base.get(name, 0.0)) < 1e-12}


def _smoothed(successes: float, n: int) -> float:
    """The baseline accuracy for a detectable-difference figure, kept off 0 and 1 ((k + ½) / (n + 1)), where
    the binomial variance, and so the formula, would say any change is detectable."""
    return (successes + 0.5) / (n + 1)


def _test_ids(units_of: UnitsFn, rows: list[JSONObject]) -> dict[str, tuple[str, ...]]:
    """Each unit's test ids (the first ask's: a repeat's id ends in -r2), by unit key: the suite's own `units` asked
    of one row at a time, so a suite need declare nothing more (a dialogue's steps each give the dialogue's key)."""
    found: dict[str, list[str]] = {}
    for row in rows:
        test_id = row.get("test_id")
        if whole(row.get("repeat", 1)) != 1 or not isinstance(test_id, str):
            continue
        for unit in units_of([row]):
            found.setdefault(unit.key, []).append(test_id)
    return {key: tuple(sorted(ids, key=_natural)) for key, ids in found.items()}


def _shares(units_of: UnitsFn, rows: list[JSONObject]) -> dict[str, tuple[Unit, float | None]]:
    """Each unit's share of passed asks over the run's repeats (1.0 or 0.0 with one ask); None when an ask has
    no verdict. Units are made per repeat (a unit is one ask of a sample), then joined by key."""
    by_repeat: dict[int, list[JSONObject]] = {}
    for row in rows:
        by_repeat.setdefault(whole(row.get("repeat", 1)), []).append(row)
    asks: dict[str, tuple[Unit, list[bool | None]]] = {}
    for repeat in sorted(by_repeat):
        for unit in units_of(by_repeat[repeat]):
            asks.setdefault(unit.key, (unit, []))[1].append(unit.passed)
    times = len(by_repeat)
    return {key: (unit, None if len(outcomes) < times or None in outcomes
                  else sum(bool(outcome) for outcome in outcomes) / times)
            for key, (unit, outcomes) in asks.items()}


def _combined(suite: str, pairs: Mapping[str, Sequence[tuple[float, float]]], combine: CombineFn, seed: int,
              replicates: int, *, proportions_too: bool = False) -> list[FigureComparison]:
    """Figures combined from the proportions (groups, OVERALL), and with repeats the proportions themselves
    (their units' shares of passed asks are no longer pass or fail): the paired difference by a stratified
    bootstrap that resamples units whole, or by the exact sign-flip test when there is too little to resample
    (`_paired_test`)."""
    def figures_of(sample: Mapping[str, Sequence[tuple[float, float]]]) -> tuple[dict[str, float], dict[str, float]]:
        before_p = {name: sum(old for old, _ in units) / len(units) for name, units in sample.items() if units}
        after_p = {name: sum(new for _, new in units) / len(units) for name, units in sample.items() if units}
        if proportions_too:
            return {**before_p, **combine(before_p)}, {**after_p, **combine(after_p)}
        return combine(before_p), combine(after_p)

    before, after = figures_of(pairs)
    names = [name for name in before if name in after]  # in the suite's own order (groups, then overall)
    if not names:
        return []
    results = stats.paired_bootstrap_many(
        pairs, lambda sample: _differences(figures_of(sample), names), seed=seed, replicates=replicates)
    weights = _weights(pairs, combine, names)
    detectable = _detectable(pairs, weights)
    alone = _alone(weights, combine, pairs)
    out = []
    for name in names:
        if name in alone and not proportions_too:
            # one category's accuracy under another name (a partial run's group, `hallucination.relevance`):
            # the same pairs, so the same test and interval as the category's row (McNemar, Newcombe)
            entry = _proportion(f"{suite}.{name}", pairs[alone[name]])
            out.append(replace(entry, kind="combined", baseline=before[name], current=after[name],
                               difference=after[name] - before[name]))
            continue
        # a proportion with repeats is its own category, at weight 1
        read = {name: 1.0} if name in pairs else weights[name]
        test, interval, p = _paired_test(pairs, read, results[name])
        n = sum(len(pairs[category]) for category in read)  # the units behind it, and how they moved
        lost = sum(1 for category in read for old, new in pairs[category] if new < old)
        gained = sum(1 for category in read for old, new in pairs[category] if new > old)
        if name in pairs:
            share = sum(old for old, _ in pairs[name])
            mde = stats.mde_two_proportions(_smoothed(share, n), n)
            out.append(FigureComparison(f"{suite}.{name}", "mean", before[name], after[name],
                                        after[name] - before[name], interval, p, n, lost, gained, mde, test))
            continue
        out.append(FigureComparison(f"{suite}.{name}", "combined", before[name], after[name],
                                    after[name] - before[name], interval, p, n, lost, gained,
                                    detectable.get(name), test))
    return out


#: what the clustered bootstrap needs to be trusted (docs/release-gate.md, "Small samples"): below any of these a
#: figure gets the exact sign-flip test and a square-and-add interval instead
BOOTSTRAP_MIN_UNITS = 30  # paired units behind the figure
BOOTSTRAP_MIN_CATEGORY = 5  # units in each category it reads: a category of m units keeps (m - 1) / m of its variance
BOOTSTRAP_MIN_DISCORDANT = 10  # units that moved: 2 * 0.5^10 = 0.002, about the bootstrap's own floor of 0.001


def _paired_test(pairs: Mapping[str, Sequence[tuple[float, float]]], weights: Mapping[str, float],
                 result: stats.BootstrapResult) -> tuple[str, tuple[float, float], float]:
    """(test, interval, p) of a figure that reads these categories at these weights: the bootstrap's when it has
    enough to resample, its p-value never below the smallest an exact test on the units that moved can give;
    otherwise the exact sign-flip test on those units and the MOVER interval of the categories' Newcombe
    intervals (fractional counts for shares), which never has zero width."""
    changes = [weight / len(pairs[category]) * (new - old)
               for category, weight in weights.items() for old, new in pairs[category]]
    discordant = sum(1 for change in changes if change != 0.0)
    sizes = [len(pairs[category]) for category in weights]
    parts = [(weight, sum(new - old for old, new in pairs[category]) / len(pairs[category]),
              _share_interval(pairs[category])) for category, weight in weights.items()]
    if (sum(sizes) < BOOTSTRAP_MIN_UNITS or min(sizes, default=0) < BOOTSTRAP_MIN_CATEGORY
            or discordant < BOOTSTRAP_MIN_DISCORDANT):
        return "exact", stats.mover_interval(parts), stats.sign_flip_test(changes)
    low, high = result.interval
    # every replicate alike (each unit of a category moved the same way) is no evidence of a precise difference
    interval = result.interval if low < high else stats.mover_interval(parts)
    return "bootstrap", interval, max(result.p_value, stats.mcnemar_exact(discordant, 0))


def _share_interval(units: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """Newcombe's interval for one category's paired difference, each unit's shares spread over the 2x2 table
    (exactly the table for pass/fail units)."""
    both = sum(min(old, new) for old, new in units)
    lost = sum(max(old - new, 0.0) for old, new in units)
    gained = sum(max(new - old, 0.0) for old, new in units)
    return stats.paired_difference_interval(both, lost, gained, len(units) - both - lost - gained)


def _weights(pairs: Mapping[str, Sequence[tuple[float, float]]], combine: CombineFn,
             names: Sequence[str]) -> dict[str, dict[str, float]]:
    """Each combined figure's weight on each category's accuracy, the categories it does not read left out: the
    figures are linear in the accuracies, so a weight is the figure with that category at 1 and the others at 0."""
    zeros = {category: 0.0 for category, units in pairs.items() if units}
    base = combine(zeros)
    weights: dict[str, dict[str, float]] = {name: {} for name in names}
    for category in zeros:
        moved = combine({**zeros, category: 1.0})
        for name in names:
            weight = moved.get(name, 0.0) - base.get(name, 0.0)
            if abs(weight) > 1e-12:
                weights[name][category] = weight
    return weights


def _as_linear(combine: CombineFn, categories: Sequence[str], combined: Mapping[str, float]) -> CombineFn | None:
    """`combine` as a weighted sum of the category accuracies plus a constant, when it is one (a suite's groups
    and overall are means and weighted means): the same figures for a fraction of the cost of calling it in each
    of the bootstrap's replicates. Checked at a few seeded points (to 1e-9); None when it is not linear there."""
    zeros = {category: 0.0 for category in categories}
    base = combine(zeros)
    if set(base) != set(combined):
        return None
    weights: dict[str, dict[str, float]] = {name: {} for name in combined}
    for category in categories:
        moved = combine({**zeros, category: 1.0})
        for name in combined:
            if (weight := moved.get(name, 0.0) - base[name]) != 0.0:
                weights[name][category] = weight
    terms = [(name, base[name], list(weights[name].items())) for name in combined]

    def linear(shares: Mapping[str, float]) -> dict[str, float]:
        return {name: constant + sum(weight * shares[category] for category, weight in read)
                for name, constant, read in terms}

    checker = random.Random(LINEAR_CHECK_SEED)
    for _ in range(LINEAR_CHECKS):
        point = {category: checker.random() for category in categories}
        expected, got = combine(point), linear(point)
        if set(expected) != set(got) or any(abs(expected[name] - got[name]) > 1e-9 for name in got):
            return None
    return linear


@dataclass(frozen=True)
class Spread:
    """One run's figure with its 95% interval and the difference it could detect (80% power, 5% test)."""

    value: float
    interval: tuple[float, float]
    detectable: float


def run_spreads(units: Sequence[Unit], combine: CombineFn, *, seed: int = BOOTSTRAP_SEED,
                replicates: int = BOOTSTRAP_REPLICATES) -> dict[str, Spread]:
    """Error bars for one run, by figure (relative names): Wilson intervals for the proportions, a bootstrap
    resampling units within each proportion for the combined figures (each resampled count of passes drawn as
    the binomial it is: `stats.proportion_bootstrap_many`); units without a verdict left out. A
    combined figure with too little to resample (`BOOTSTRAP_MIN_UNITS`, `BOOTSTRAP_MIN_CATEGORY`), or whose
    replicates are all alike, gets the MOVER interval of its categories' Wilson intervals instead."""
    strata: dict[str, list[bool]] = {}
    for unit in sorted(units, key=lambda unit: _natural(unit.key)):  # the order rows arrived in must not matter
        if unit.passed is not None:
            strata.setdefault(unit.figure, []).append(unit.passed)
    spreads = {}
    for figure, outcomes in strata.items():
        passed = sum(outcomes)
        spreads[figure] = Spread(passed / len(outcomes), stats.wilson_interval(passed, len(outcomes)),
                                 stats.mde_two_proportions(_smoothed(passed, len(outcomes)), len(outcomes)))
    if not strata:
        return spreads
    combined = combine({figure: sum(outcomes) / len(outcomes) for figure, outcomes in strata.items()})
    counts = {figure: (sum(outcomes), len(outcomes)) for figure, outcomes in strata.items()}
    statistic = _as_linear(combine, list(strata), combined) or combine
    results = stats.proportion_bootstrap_many(counts, statistic, seed=seed, replicates=replicates)
    paired = {figure: [(float(outcome), float(outcome)) for outcome in outcomes] for figure, outcomes in strata.items()}
    weights = _weights(paired, combine, list(combined))
    detectable = _detectable(paired, weights)
    alone = _alone(weights, combine, strata)
    for name, value in combined.items():
        if name in alone:  # one category under another name: its own Wilson interval, not a bootstrap's
            spreads[name] = Spread(value, spreads[alone[name]].interval, spreads[alone[name]].detectable)
            continue
        if name not in results:
            continue
        interval = results[name].interval
        sizes = [len(strata[category]) for category in weights[name]]
        if (sum(sizes) < BOOTSTRAP_MIN_UNITS or min(sizes, default=0) < BOOTSTRAP_MIN_CATEGORY
                or interval[0] >= interval[1]):  # a one-case category is the same in every replicate
            low, high = stats.mover_interval([(weight, spreads[category].value, spreads[category].interval)
                                              for category, weight in weights[name].items()])
            # the interval of a level, not of a difference: within the figure's own range
            floor = sum(min(weight, 0.0) for weight in weights[name].values())
            ceiling = sum(max(weight, 0.0) for weight in weights[name].values())
            interval = (max(floor, low), min(ceiling, high))
        spreads[name] = Spread(value, interval, detectable[name])
    return spreads


def _detectable(pairs: Mapping[str, Sequence[tuple[float, float]]],
                weights: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The smallest change of each combined figure a 5% test finds with 80% power, as for a proportion: the
    categories' two-run variances (baseline accuracy smoothed, as `_smoothed`) carried through the figure's
    weights (`_weights`)."""
    out = {}
    for name, read in weights.items():
        variance = 0.0
        for category, weight in read.items():
            value = _smoothed(sum(old for old, _ in pairs[category]), len(pairs[category]))
            variance += weight * weight * 2 * value * (1 - value) / len(pairs[category])
        out[name] = min(1.0, stats.POWER_FACTOR * variance ** 0.5)
    return out


def _differences(figures: tuple[dict[str, float], dict[str, float]], names: Sequence[str]) -> dict[str, float]:
    before, after = figures
    return {name: after[name] - before[name] for name in names if name in before and name in after}


def fingerprint_differences(baseline: Mapping[str, JSONValue], current: Mapping[str, JSONValue],
                            prefix: str = "") -> list[tuple[str, JSONValue, JSONValue]]:
    """Every fingerprint entry that differs, by dotted key, except those naming the model under test."""
    out: list[tuple[str, JSONValue, JSONValue]] = []
    for key in sorted(set(baseline) | set(current)):
        if not prefix and key in MODEL_KEYS:
            continue
        old, new = baseline.get(key), current.get(key)
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            out += fingerprint_differences(old, new, f"{prefix}{key}.")
        elif old != new:
            out.append((f"{prefix}{key}", old, new))
    return out


def _natural(key: str) -> tuple[int | str, ...]:
    """`key` with its digit runs as numbers: normal_atom_bool_9 before normal_atom_bool_10."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", key))


def _text(mapping: object, key: str) -> str | None:
    value = mapping.get(key) if isinstance(mapping, Mapping) else None
    return value if isinstance(value, str) else None
