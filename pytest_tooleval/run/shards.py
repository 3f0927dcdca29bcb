"""--tooleval-shard i/n: a run that asks only its share of the samples, so n CI runners split one evaluation.

Each category is cut into n parts of equal expected cost (docs/scaling.md#shards): its clusters (a sample, or
the dialogue a multi-turn step belongs to) are laid on a ring in the order of a hash of what names them (suite,
language, cluster), each taking an arc as long as its weight (the suite's `weight`, e.g. its prompt length;
1 by default), and the ring, turned by a hash of the category, is cut into n equal arcs. So every shard gets
its share of every category, balanced by cost to within one cluster; the assignment depends neither on `-k`/
`-m` nor on the order of collection; and a sample added to or removed from a category moves only the few
clusters beside the cuts, never those of another category. A sample's protocol variants and repeats are the
same cluster, so they land in the same shard (the pairs of a comparison stay together).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..suites.base import Case

ClusterKey = tuple[str, str, str]  # suite, language, cluster


def cluster_key(case: Case) -> ClusterKey:
    return case.suite, case.language, _cluster(case)


def assign_shards(cases: Iterable[Case], count: int,
                  weight: Callable[[Case], float] = lambda case: 1.0) -> dict[ClusterKey, int]:
    """The 1-based shard of every cluster of `cases` among `count`, category by category (see the module)."""
    weights: dict[tuple[str, str, str], dict[ClusterKey, float]] = {}
    for case in cases:
        stratum = weights.setdefault((case.suite, case.language, case.category), {})
        key = cluster_key(case)
        stratum[key] = stratum.get(key, 0.0) + max(float(weight(case)), 1e-9)
    shards: dict[ClusterKey, int] = {}
    for (suite, language, category), clusters in weights.items():
        total = sum(clusters.values())
        turn = _fraction(f"{suite}\0{language}\0{category}")
        passed = 0.0
        for key in sorted(clusters, key=lambda key: (_fraction("\0".join(key)), key)):
            middle = (passed + clusters[key] / 2) / total
            passed += clusters[key]
            shards[key] = min(count - 1, math.floor(((middle + turn) % 1.0) * count)) + 1
    return shards


def subsample(cases: list[Case], fraction: float | None, seed: int) -> list[Case]:
    """--tooleval-sample: the same share of every category (at least one cluster each), whole clusters (a
    multi-turn dialogue is taken with all its steps), chosen by a hash of the seed and the cluster, so a seed
    always takes the same samples and a larger fraction takes a superset of a smaller one's."""
    if fraction is None or fraction >= 1:
        return cases
    clusters: dict[tuple[str, str, str], set[str]] = {}
    for case in cases:
        clusters.setdefault((case.suite, case.language, case.category), set()).add(_cluster(case))
    chosen: set[tuple[str, str, str, str]] = set()
    for (suite, language, category), names in clusters.items():
        ranked = sorted(names, key=lambda name: hashlib.sha256(f"{seed}\0{suite}\0{language}\0{name}".encode())
                        .digest())
        chosen.update((suite, language, category, name) for name in ranked[:max(1, math.ceil(fraction * len(ranked)))])
    return [case for case in cases if (case.suite, case.language, case.category, _cluster(case)) in chosen]


def _cluster(case: Case) -> str:
    return case.cluster or case.id


def _fraction(text: str) -> float:
    """A hash of `text` as a number in [0, 1)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2.0 ** 64
