"""--tooleval-shard i/n: a run that asks only its share of the samples, so n CI runners split one evaluation.

A sample's shard is a hash of what names it (suite, language and its cluster: the sample, or the dialogue a
multi-turn step belongs to), so the assignment does not depend on which other samples exist, on `-k`/`-m`, or
on the order of collection, and a sample's protocol variants and repeats land in the same shard as the sample
itself (so the pairs of a comparison stay together). Every category is split evenly in expectation, not
exactly: with a hash, a shard's share of a 50-sample category varies by a few samples.
"""

from __future__ import annotations

import hashlib
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
    cluster = str(getattr(case, "cluster", None) or case.id)
    digest = hashlib.sha256(f"{case.suite}\0{case.language}\0{cluster}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def in_shard(case: Any, shard: str | None) -> bool:
    """Whether `case` is in the shard `I/N` (every case is, without one)."""
    if not shard:
        return True
    index, count = shard_parts(shard)
    return shard_of(case, count) == index
