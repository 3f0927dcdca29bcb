"""A repeated run's figures (--tooleval-repeats k): per figure, the mean over the k asks with its 95% interval,
pass^k (the share of units that passed every time) and the flaky units (passed some times, failed others).

Units are the suite's (`Figures.units`), one set per repeat, joined by key. The mean of a proportion is the
mean over units of each unit's share of passed asks (pass@1, estimated from all k), its interval a bootstrap
over units within each proportion (units are resampled whole, with all their asks: the repeats of a sample are
not independent samples), and the combined figures (groups, OVERALL) follow from those means by the suite's
`combine`. Figures are named `<figure>.mean` and `<figure>.pass_k`, so a gate can take them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..json_value import JSONObject
from . import stats
from .compare import BOOTSTRAP_REPLICATES, BOOTSTRAP_SEED, _natural
from .row import whole
from .suite_summary import Table, Unit


def repeat_figures(rows: list[JSONObject], units_of: Callable[[list[JSONObject]], list[Unit]],
                   combine: Callable[[Mapping[str, float]], dict[str, float]]
                   ) -> tuple[Table, dict[str, float], JSONObject]:
    """(the repeats table, the gateable figures, the report's `repeats` block) of a suite's rows."""
    by_repeat: dict[int, list[JSONObject]] = {}
    for row in rows:
        by_repeat.setdefault(whole(row.get("repeat", 1)), []).append(row)
    times = len(by_repeat)
    outcomes: dict[tuple[str, str], list[bool]] = {}
    for repeat in sorted(by_repeat):
        for unit in units_of(by_repeat[repeat]):
            if unit.passed is not None:
                outcomes.setdefault((unit.figure, unit.key), []).append(unit.passed)
    # a unit counts where it has a verdict every time (an error in one ask leaves it out, as in a comparison)
    complete = {key: passes for key, passes in sorted(outcomes.items(), key=lambda item: _natural(item[0][1]))
                if len(passes) == times}
    shares: dict[str, list[float]] = {}
    every: dict[str, list[bool]] = {}
    flaky: list[str] = []
    for (figure, key), passes in complete.items():
        shares.setdefault(figure, []).append(sum(passes) / times)
        every.setdefault(figure, []).append(all(passes))
        if any(passes) and not all(passes):
            flaky.append(key)
    figures: dict[str, float] = {}
    body: list[list[Any]] = []
    if not shares:
        return Table(f"repeats: {times} asks of each sample", [], []), figures, {"times": times, "flaky": []}

    def means(strata: Mapping[str, list[float]]) -> dict[str, float]:
        proportions = {figure: sum(values) / len(values) for figure, values in strata.items() if values}
        return {**proportions, **combine(proportions)}

    results = stats.paired_bootstrap_many(shares, means, seed=BOOTSTRAP_SEED, replicates=BOOTSTRAP_REPLICATES)
    all_ok = {figure: sum(values) / len(values) for figure, values in every.items()}
    for name, value in means(shares).items():
        result = results.get(name)
        interval = None if result is None else result.interval
        figures[f"{name}.mean"] = value
        pass_k = all_ok.get(name)
        if pass_k is not None:
            figures[f"{name}.pass_k"] = pass_k
        units = len(shares.get(name, [])) or None
        body.append([name, units, value, None if interval is None else f"[{interval[0]:.3f}, {interval[1]:.3f}]",
                     pass_k, sum(1 for key in flaky if key.startswith(name + "/")) if units else None])
    table = Table(f"repeats: {times} asks of each sample (mean = pass@1; pass^{times}: passed all {times})",
                  ["figure", "units", "mean", "95% interval", f"pass^{times}", "flaky"], body)
    data: JSONObject = {"times": times, "figures": dict(figures), "flaky": [*flaky],
                        "intervals": {name: [*result.interval] for name, result in results.items()}}
    return table, figures, data
