"""How evenly --tooleval-shard splits the benchmark, and how much moves when samples come and go.

    python perf/shard_balance.py --shards 2 3 4 8

For each shard count it prints one JSON line per method: `weighted` (the plugin's: each category cut into
arcs of equal weight, shards.py) and `hash` (the sample's hash modulo the count, which the plugin used before,
kept here as the reference). Fields: max_over_mean (the heaviest shard's weight over the mean: the wall time
of the slowest runner relative to a perfect split), category_spread (over categories of at least `count`
clusters, the largest difference between two shards' counts, as a share of the category), moved_share
(the share of samples that change shard when 1% of every category is removed, which a response cache per
shard pays for). Weight is the suite's `weight` (the prompt length for ACEBench); the ACEBench data of both
languages is used (TOOLEVAL_DATA_DIR or --data-dir).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pytest_tooleval.run.shards import assign_shards, cluster_key
from pytest_tooleval.suites.acebench.categories import ALL_CATEGORIES
from pytest_tooleval.suites.acebench.data import select
from pytest_tooleval.suites.acebench.plugin_suite import SUITE


def hash_shards(cases: list[Any], count: int) -> dict[tuple[str, str, str], int]:
    def shard(case: Any) -> int:
        key = "\0".join(cluster_key(case))
        return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") % count + 1

    return {cluster_key(case): shard(case) for case in cases}


def measure(cases: list[Any], count: int, method: str) -> dict[str, Any]:
    split = assign_shards(cases, count, SUITE.weight) if method == "weighted" else hash_shards(cases, count)
    load: Counter[int] = Counter()
    per_category: dict[tuple[str, str], Counter[int]] = defaultdict(Counter)
    clusters: dict[tuple[str, str], set[tuple[str, str, str]]] = defaultdict(set)
    for case in cases:
        shard = split[cluster_key(case)]
        load[shard] += SUITE.weight(case)
        per_category[(case.language, case.category)][shard] += 1
        clusters[(case.language, case.category)].add(cluster_key(case))
    spreads = [
        (max(counts[s] for s in range(1, count + 1)) - min(counts[s] for s in range(1, count + 1)))
        / sum(counts.values())
        for key, counts in per_category.items()
        if len(clusters[key]) >= count
    ]
    rng = random.Random(0)
    kept = [
        case
        for key, members in _by_category(cases).items()
        for case in rng.sample(members, len(members) - max(1, len(members) // 100))
    ]
    after = assign_shards(kept, count, SUITE.weight) if method == "weighted" else hash_shards(kept, count)
    moved = sum(1 for case in kept if after[cluster_key(case)] != split[cluster_key(case)])
    mean = sum(load.values()) / count
    return {
        "shards": count,
        "method": method,
        "samples": len(cases),
        "max_over_mean": round(max(load.values()) / mean, 4),
        "category_spread": round(max(spreads), 4),
        "moved_share": round(moved / len(kept), 4),
    }


def _by_category(cases: list[Any]) -> dict[tuple[str, str], list[Any]]:
    grouped: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for case in cases:
        grouped[(case.language, case.category)].append(case)
    return grouped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--shards", type=int, nargs="+", default=[2, 3, 4, 8])
    parser.add_argument("--data-dir", default=os.environ.get("TOOLEVAL_DATA_DIR"))
    args = parser.parse_args()
    if not args.data_dir:
        parser.error("needs the upstream data: pass --data-dir or set TOOLEVAL_DATA_DIR")
    cases = list(select(Path(args.data_dir) / "acebench", ("en", "zh"), ALL_CATEGORIES))
    for count in args.shards:
        for method in ("hash", "weighted"):
            print(json.dumps(measure(cases, count, method)))


if __name__ == "__main__":
    main()
