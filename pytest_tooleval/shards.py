"""--tooleval-shard i/n: a run that asks only its share of the samples, so n CI runners split one evaluation.

A sample's shard is a hash of what names it (suite, language and its cluster: the sample, or the dialogue a
multi-turn step belongs to), so the assignment does not depend on which other samples exist, on `-k`/`-m`, or
on the order of collection, and a sample's protocol variants and repeats land in the same shard as the sample
itself (so the pairs of a comparison stay together). Every category is split evenly in expectation, not
exactly: with a hash, a shard's share of a 50-sample category varies by a few samples.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from .errors import ToolevalUsageError


def parse_shard(name: str, text: str) -> str:
    """`2/3`, checked: the second of three shards (1-based), as `shard_parts` reads it."""
    index, sep, count = str(text).partition("/")
    try:
        shard = (int(index), int(count))
    except ValueError:
        shard = (0, 0)
    if not sep or not 1 <= shard[0] <= shard[1]:
        raise ToolevalUsageError(f"--tooleval-{name}: {text!r} is not a shard; expected I/N with 1 <= I <= N, e.g. 2/3")
    return f"{shard[0]}/{shard[1]}"


def shard_parts(shard: str) -> tuple[int, int]:
    index, _, count = shard.partition("/")
    return int(index), int(count)


def shard_of(case: Any, count: int) -> int:
    """The 1-based shard of `case` among `count`."""
    cluster = _cluster(case)
    digest = hashlib.sha256(f"{case.suite}\0{case.language}\0{cluster}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def subsample(cases: list[Any], fraction: float | None, seed: int) -> list[Any]:
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


def _cluster(case: Any) -> str:
    return str(getattr(case, "cluster", None) or case.id)


def in_shard(case: Any, shard: str | None) -> bool:
    """Whether `case` is in the shard `I/N` (every case is, without one)."""
    if not shard:
        return True
    index, count = shard_parts(shard)
    return shard_of(case, count) == index
