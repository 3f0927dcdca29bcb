"""Statistics for a release gate that compares a model's run with a baseline run, sample by sample.

Pure functions over counts or per-unit outcomes, standard library only, every result deterministic (the bootstrap
takes a seed). Conventions: a "unit" is what is resampled and paired (one sample or one dialogue, scored in both
runs); a difference is always current minus baseline; a 2x2 table of paired units is (a, b, c, d) with
a = passed in both, b = passed in the baseline only (pass -> fail), c = passed in the current run only
(fail -> pass), d = failed in both.
"""

from __future__ import annotations

import bisect
import math
import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = [
    "BootstrapResult",
    "bootstrap_interval",
    "holm",
    "mcnemar_exact",
    "mde_paired",
    "mde_two_proportions",
    "mover_interval",
    "paired_bootstrap",
    "paired_difference_interval",
    "proportion_bootstrap_many",
    "sign_flip_test",
    "wilson_interval",
]

T = TypeVar("T")

_NORMAL = statistics.NormalDist()


def _check_level(value: float, name: str) -> None:
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {value!r}")


def _z_two_sided(confidence: float) -> float:
    """The standard normal quantile z with P(|Z| <= z) = confidence."""
    _check_level(confidence, "confidence")
    return _NORMAL.inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def wilson_interval(successes: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (Wilson 1927, JASA 22:209-212).

    The interval is the set of proportions pi whose score test |p - pi| <= z * sqrt(pi * (1 - pi) / n) does
    not reject, p = successes / n: solving that quadratic in pi gives the limits
    (p + z^2 / 2n -/+ z * sqrt(p (1 - p) / n + z^2 / 4n^2)) / (1 + z^2 / n). Unlike the Wald interval it stays
    inside [0, 1] and does not collapse to a point at 0 or n successes. n == 0 carries no information:
    (0.0, 1.0). Fractional counts are taken as they are (a paired table of shares, `paired_difference_interval`).
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    z = _z_two_sided(confidence)
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    scale = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / scale
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n)) / scale
    lower = 0.0 if successes == 0 else max(0.0, centre - half)
    upper = 1.0 if successes == n else min(1.0, centre + half)
    return (lower, upper)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar test p-value on the discordant counts (McNemar 1947, Psychometrika 12:153-157).

    Under the null of equal paired proportions each of the b + c discordant pairs is equally likely to go either
    way, so the exact (conditional) test is the binomial test of min(b, c) under Binomial(b + c, 1/2):
    p = min(1, 2 * P(X <= min(b, c))). The tail sum is computed in integers (binomial coefficients divided by
    2^(b + c) once, at the end), so it neither underflows nor loses precision for thousands of pairs; a p-value
    below the smallest float comes out as 0.0. b + c == 0 gives 1.0.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b}, c={c}")
    total = b + c
    if total == 0:
        return 1.0
    k_max = min(b, c)
    term = 1  # C(total, k), updated exactly
    tail = 0
    for k in range(k_max + 1):
        tail += term
        term = term * (total - k) // (k + 1)
    return min(1.0, (2 * tail) / (1 << total))


#: sums told apart by the sign-flip test: contributions are figure weights (1/3, 0.1/50, ...) whose float sums
#: differ from the exact ones by far less than this, and distinct sums of them by far more
_SUM_DIGITS = 12


def sign_flip_test(changes: Sequence[float], *, max_states: int = 1 << 16, draws: int = 20000,
                   seed: int = 20261201) -> float:
    """Two-sided p-value of the paired sign-flip (randomisation) test of a difference that is a sum of per-unit
    changes, each change current minus baseline times the unit's weight in the figure (Fisher 1935, "The Design
    of Experiments", section 21; Good 2005, "Permutation, Parametric and Bootstrap Tests of Hypotheses", ch. 3).

    Under no change (McNemar's null, for any weights) each unit that moved was as likely to move the other way:
    the 2^k sign patterns of the k non-zero changes are equally likely, and p is the share of them whose sum is at
    least as far from 0 as the observed sum. With equal weights and changes of ±1 (one proportion, pass/fail) it
    is the exact McNemar test, `mcnemar_exact(b, c)`; one change gives 1.0; k changes can give no less than
    2 * 0.5^k. Changes of equal size are counted together (binomial coefficients), so the exact distribution
    has at most one entry per distinct sum; when that would pass `max_states`, `draws` random sign patterns
    (`random.Random(seed)`) estimate p, one added to both counts so that the estimate is itself a valid test.
    No non-zero change gives 1.0.
    """
    moved = [change for change in changes if change != 0.0]
    if not moved:
        return 1.0
    observed = abs(sum(moved))
    tolerance = 10.0 ** -(_SUM_DIGITS - 3) * max(1.0, sum(abs(change) for change in moved))
    sizes: dict[float, int] = {}
    for change in moved:
        sizes[abs(change)] = sizes.get(abs(change), 0) + 1
    sums: dict[float, int] | None = {0.0: 1}
    for size, count in sorted(sizes.items()):
        assert sums is not None
        spread: dict[float, int] = {}
        for total, ways in sums.items():
            choose = 1
            for ups in range(count + 1):  # `ups` of the `count` changes of this size positive
                key = round(total + size * (2 * ups - count), _SUM_DIGITS)
                spread[key] = spread.get(key, 0) + ways * choose
                choose = choose * (count - ups) // (ups + 1)
        if len(spread) > max_states:
            sums = None
            break
        sums = spread
    if sums is not None:
        extreme = sum(ways for total, ways in sums.items() if abs(total) >= observed - tolerance)
        return min(1.0, extreme / (1 << len(moved)))
    rng = random.Random(seed)
    magnitudes = [abs(change) for change in moved]
    hits = 0
    for _ in range(draws):
        total = sum(size if rng.random() < 0.5 else -size for size in magnitudes)
        hits += abs(total) >= observed - tolerance
    return min(1.0, (hits + 1) / (draws + 1))


def mover_interval(parts: Sequence[tuple[float, float, tuple[float, float]]]) -> tuple[float, float]:
    """Interval for a weighted sum of independent estimates, sum of w * theta, from each estimate's own interval:
    the method of variance estimates recovery (MOVER; Zou & Donner 2008, "Construction of confidence limits
    about effect measures: a general approach", Statistics in Medicine 27:1693-1702), the square-and-add that
    Newcombe's paired interval itself is made by. Each part is (w, theta, (low, high)); with w * theta's limits
    (l, u) (swapped for a negative w):

        lower = sum(w theta) - sqrt(sum((w theta - l)^2)),  upper = sum(w theta) + sqrt(sum((u - w theta)^2))

    clipped to +-sum(|w|), the range of a weighted sum of differences in [-1, 1]. One part gives its own
    interval, scaled. No parts gives (0.0, 0.0).
    """
    estimate = sum(weight * theta for weight, theta, _ in parts)
    down = up = 0.0
    for weight, theta, (low, high) in parts:
        first, second = sorted((weight * low, weight * high))
        down += (weight * theta - first) ** 2
        up += (second - weight * theta) ** 2
    bound = sum(abs(weight) for weight, _, _ in parts)
    return (max(-bound, estimate - math.sqrt(down)), min(bound, estimate + math.sqrt(up)))


def _newcombe_phi(a: float, b: float, c: float, d: float) -> float:
    """Newcombe's (1998) continuity-corrected phi for the paired table: 0 when a margin is empty."""
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        return 0.0
    n = a + b + c + d
    cross = a * d - b * c
    if cross > n / 2:
        return (cross - n / 2) / math.sqrt(margins)
    if cross >= 0:
        return 0.0
    return cross / math.sqrt(margins)


def paired_difference_interval(a: float, b: float, c: float, d: float,
                               confidence: float = 0.95) -> tuple[float, float]:
    """Interval for the difference of two paired proportions, current minus baseline: (c - b) / n.

    Newcombe's hybrid score method 10 (Newcombe 1998, "Improved confidence intervals for the difference between
    binomial proportions based on paired data", Statistics in Medicine 17:2635-2650), as reproduced by
    Altman et al. (2000, "Statistics with Confidence", ch. 6) and by Fagerland, Lydersen & Laake (2014,
    Statistics in Medicine 33, as "Newcombe square-and-add"). With p1 = (a + c) / n the current pass rate, p2 =
    (a + b) / n the baseline one, (l1, u1) and (l2, u2) their Wilson intervals and theta = p1 - p2:

        delta   = sqrt((p1 - l1)^2 - 2 phi (p1 - l1)(u2 - p2) + (u2 - p2)^2)
        epsilon = sqrt((u1 - p1)^2 - 2 phi (u1 - p1)(p2 - l2) + (p2 - l2)^2)
        interval = (theta - delta, theta + epsilon), clipped to [-1, 1]

    phi estimates the correlation of the two outcomes of a unit, with Newcombe's correction: for
    A = ad - bc and M = (a + b)(c + d)(a + c)(b + d), phi = (A - n/2) / sqrt(M) if A > n/2, 0 if
    0 <= A <= n/2, A / sqrt(M) if A < 0, and 0 when M == 0. n == 0 gives (-1.0, 1.0).

    The counts may be fractional: a unit asked several times enters with its shares of passed asks x (baseline)
    and y (current) spread over the cells, min(x, y) in a, x - y in b or y - x in c, 1 - max(x, y) in d, which
    keeps both margins; a share varies less than a pass or fail of the same mean, so the Wilson limits of the
    margins are, if anything, too wide.
    """
    if min(a, b, c, d) < 0:
        raise ValueError(f"table counts must be non-negative, got {(a, b, c, d)}")
    n = a + b + c + d
    _check_level(confidence, "confidence")
    if n == 0:
        return (-1.0, 1.0)
    p1, p2 = (a + c) / n, (a + b) / n
    l1, u1 = wilson_interval(a + c, n, confidence)
    l2, u2 = wilson_interval(a + b, n, confidence)
    phi = _newcombe_phi(a, b, c, d)
    down1, up1, down2, up2 = p1 - l1, u1 - p1, p2 - l2, u2 - p2
    delta = math.sqrt(max(0.0, down1 * down1 - 2.0 * phi * down1 * up2 + up2 * up2))
    epsilon = math.sqrt(max(0.0, up1 * up1 - 2.0 * phi * up1 * down2 + down2 * down2))
    theta = (c - b) / n
    return (max(-1.0, theta - delta), min(1.0, theta + epsilon))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm (1979) step-down adjusted p-values, in the input order (Scand. J. Statistics 6:65-70).

    With the m p-values sorted ascending, p_(1) <= ... <= p_(m), the adjusted value of the i-th is
    max over j <= i of min(1, (m - j + 1) * p_(j)): monotone in the raw p-values and capped at 1. Rejecting where
    the adjusted value is <= alpha controls the family-wise error rate at alpha under any dependence.
    """
    m = len(p_values)
    for p in p_values:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must lie in [0, 1], got {p!r}")
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def _z_sum(alpha: float, power: float) -> float:
    _check_level(alpha, "alpha")
    _check_level(power, "power")
    return _NORMAL.inv_cdf(1.0 - alpha / 2.0) + _NORMAL.inv_cdf(power)


#: z(0.975) + z(0.8): a difference this many standard errors wide is found by a two-sided 5% test 80% of the time
POWER_FACTOR = _NORMAL.inv_cdf(0.975) + _NORMAL.inv_cdf(0.8)


def mde_paired(n: int, discordance: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Minimum detectable difference of two paired proportions (normal approximation to McNemar's test).

    MDE = (z_{1 - alpha/2} + z_{power}) * sqrt(discordance / n), where discordance is the expected share of
    units whose outcome differs between the runs, (b + c) / n. This is the usual McNemar sample-size
    approximation n = (z_{1-alpha/2} + z_power)^2 * psi / delta^2 solved for delta; Connor (1987, Biometrics
    43:207-211) gives the refinement with sqrt(psi - delta^2) on the power term, which the simplified form
    ignores, so the figure here is slightly conservative (a little larger). n == 0 gives 1.0; capped at 1.0.
    """
    if not 0.0 <= discordance <= 1.0:
        raise ValueError(f"discordance must lie in [0, 1], got {discordance!r}")
    z = _z_sum(alpha, power)
    if n <= 0:
        return 1.0
    return min(1.0, z * math.sqrt(discordance / n))


def mde_two_proportions(p: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """Minimum detectable difference of two independent proportions near p, n units in each sample.

    MDE = (z_{1 - alpha/2} + z_{power}) * sqrt(2 p (1 - p) / n): the textbook normal-approximation power formula
    for a two-sided two-sample test of proportions with equal variances (e.g. Fleiss, Levin & Paik 2003,
    "Statistical Methods for Rates and Proportions", ch. 4, without their continuity correction). n == 0 gives
    1.0; capped at 1.0.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must lie in [0, 1], got {p!r}")
    z = _z_sum(alpha, power)
    if n <= 0:
        return 1.0
    return min(1.0, z * math.sqrt(2.0 * p * (1.0 - p) / n))


@dataclass(frozen=True)
class BootstrapResult:
    """Outcome of `paired_bootstrap`.

    Attributes:
        estimate: the statistic on the original data (not a bootstrap mean).
        interval: the percentile interval of the replicates at the requested confidence.
        p_value: two-sided percentile-bootstrap p-value for "the statistic is 0" (see `paired_bootstrap`).
        replicates: how many replicates had a defined statistic (the ones the interval and p-value use).
        standard_error: the replicates' standard deviation (None with fewer than two).
    """

    estimate: float
    interval: tuple[float, float]
    p_value: float
    replicates: int
    standard_error: float | None = None


def _result(estimate: float, values: list[float], confidence: float) -> BootstrapResult:
    """The interval, p-value and spread of sorted replicate values (see `paired_bootstrap`)."""
    valid = len(values)
    tail = (1.0 - confidence) / 2.0
    at_or_below = sum(1 for v in values if v <= 0.0)
    at_or_above = sum(1 for v in values if v >= 0.0)
    return BootstrapResult(
        estimate=estimate,
        interval=(_quantile(values, tail), _quantile(values, 1.0 - tail)),
        # one added to both counts (Davison & Hinkley 1997, section 4.2): never 0 from finitely many replicates
        p_value=min(1.0, 2.0 * (min(at_or_below, at_or_above) + 1) / (valid + 1)),
        replicates=valid,
        standard_error=statistics.stdev(values) if valid > 1 else None,
    )


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (Hyndman & Fan 1996, definition 7)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def paired_bootstrap(
    clusters: Mapping[str, Sequence[T]],
    statistic: Callable[[list[T]], float | None],
    *,
    seed: int = 20261201,
    replicates: int = 2000,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Paired, stratified cluster bootstrap of a difference computed from per-unit outcomes (Efron 1979).

    `clusters` maps a stratum name (e.g. a benchmark category) to its units; a unit is whatever `statistic`
    reads, typically the pair (baseline outcome, current outcome) of one sample or dialogue, so resampling a
    unit keeps its two outcomes together (the pairing) and keeps a dialogue's turns together (the cluster).
    Each replicate draws, within every stratum independently, as many units as the stratum holds, with
    replacement (stratified resampling, Davison & Hinkley 1997, "Bootstrap Methods and their Application",
    section 3.2), so every category keeps its size, as a figure weighted by category sizes needs. The strata are
    concatenated in name order and passed to `statistic`; a replicate whose statistic is None is skipped.

    `estimate` is the statistic on the original data; `interval` is the percentile interval (Efron & Tibshirani
    1993, "An Introduction to the Bootstrap", ch. 13) of the valid replicates; `p_value` tests "the statistic is
    0" by inverting that interval, p = min(1, 2 * (min(#(replicate <= 0), #(replicate >= 0)) + 1) / (valid + 1)),
    one added to each count so that it is never 0 (at 2,000 replicates it is at least 0.001). It is coarse for
    small differences and counts replicates equal to 0 on both sides (conservative). Only `random.Random(seed)`
    is used: the same inputs and seed give the same result in every run and process. Raises ValueError when the
    statistic is None on the original data or on every replicate.
    """
    values: list[float | None] = []  # the first is the statistic on the original data

    def named(strata: dict[str, list[T]]) -> dict[str, float]:
        value = statistic([unit for name in sorted(strata) for unit in strata[name]])
        values.append(value)
        return {} if value is None else {"value": value}

    results = paired_bootstrap_many(clusters, named, seed=seed, replicates=replicates, confidence=confidence)
    if values[0] is None:
        raise ValueError("the statistic is undefined (None) on the original data")
    if "value" not in results:
        raise ValueError("the statistic is undefined (None) on every bootstrap replicate")
    return results["value"]


def paired_bootstrap_many(
    clusters: Mapping[str, Sequence[T]],
    statistic: Callable[[dict[str, list[T]]], Mapping[str, float]],
    *,
    seed: int = 20261201,
    replicates: int = 2000,
    confidence: float = 0.95,
) -> dict[str, BootstrapResult]:
    """`paired_bootstrap` for several statistics at once, on the same replicates: `statistic` takes the
    resampled strata by name (each stratum as many units as it has) and returns named values; a name missing
    from a replicate's values skips that replicate for that name. One result per name the original data gives
    (the replicates resample exactly as `paired_bootstrap`'s do with the same seed)."""
    _check_level(confidence, "confidence")
    if replicates < 1:
        raise ValueError(f"replicates must be positive, got {replicates}")
    names = [name for name in sorted(clusters) if clusters[name]]
    strata = {name: list(clusters[name]) for name in names}
    estimates = dict(statistic(strata))
    rng = random.Random(seed)
    values: dict[str, list[float]] = {name: [] for name in estimates}
    for _ in range(replicates):
        drawn = {name: rng.choices(units, k=len(units)) for name, units in strata.items()}
        _keep(values, statistic(drawn))
    return _results(estimates, values, confidence)


def _keep(values: dict[str, list[float]], replicate: Mapping[str, float]) -> None:
    """A replicate's values of the names the original data gives (a name it lacks skips it for that name)."""
    for name, value in replicate.items():
        if name in values:
            values[name].append(value)


def _results(estimates: Mapping[str, float], values: Mapping[str, list[float]],
             confidence: float) -> dict[str, BootstrapResult]:
    """One result per estimate with at least one valid replicate."""
    return {name: _result(estimate, sorted(values[name]), confidence)
            for name, estimate in estimates.items() if values[name]}


def proportion_bootstrap_many(
    counts: Mapping[str, tuple[int, int]],
    statistic: Callable[[dict[str, float]], Mapping[str, float]],
    *,
    seed: int = 20261201,
    replicates: int = 2000,
    confidence: float = 0.95,
) -> dict[str, BootstrapResult]:
    """`paired_bootstrap_many` for strata of pass/fail units whose statistic reads only each stratum's share of
    passes: `counts` maps a stratum to (passed, units), and `statistic` takes the shares by name. Drawing n units
    with replacement from a stratum that passed k of n gives a binomial(n, k/n) count of passes, so each
    replicate draws that count directly, by inverting its distribution function, instead of unit by unit: the
    same bootstrap distribution, one random number per stratum instead of n
    (docs/release-gate.md#a-runs-own-error-bars). The replicates are not those `paired_bootstrap_many` draws from
    the same seed."""
    _check_level(confidence, "confidence")
    if replicates < 1:
        raise ValueError(f"replicates must be positive, got {replicates}")
    strata = {name: counts[name] for name in sorted(counts) if counts[name][1] > 0}
    estimates = dict(statistic({name: passed / units for name, (passed, units) in strata.items()}))
    tables = {name: _binomial_cdf(units, passed) for name, (passed, units) in strata.items()}
    rng = random.Random(seed)
    values: dict[str, list[float]] = {name: [] for name in estimates}
    for _ in range(replicates):
        drawn = {}
        for name, (passed, units) in strata.items():
            table = tables[name]
            # a stratum that passed all or none draws the same count every time (and no random number)
            count = passed if table is None else min(bisect.bisect_right(table, rng.random()), units)
            drawn[name] = count / units
        _keep(values, statistic(drawn))
    return _results(estimates, values, confidence)


def _binomial_cdf(n: int, k: int) -> list[float] | None:
    """The distribution function of binomial(n, k/n) at 0..n (None when k is 0 or n: the count is k), from
    log-probabilities, so that a large n does not overflow."""
    if k in (0, n):
        return None
    log_p, log_q, log_n = math.log(k / n), math.log1p(-k / n), math.lgamma(n + 1)
    table, total = [], 0.0
    for j in range(n + 1):
        total += math.exp(log_n - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * log_p + (n - j) * log_q)
        table.append(total)
    return [value / total for value in table]


def bootstrap_interval(
    clusters: Mapping[str, Sequence[T]],
    statistic: Callable[[list[T]], float | None],
    *,
    seed: int = 20261201,
    replicates: int = 2000,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile interval of a single run's figure (not a difference), by the stratified resampling of
    `paired_bootstrap` (same strata, seed and skipping of None replicates; no p-value)."""
    return paired_bootstrap(clusters, statistic, seed=seed, replicates=replicates, confidence=confidence).interval
