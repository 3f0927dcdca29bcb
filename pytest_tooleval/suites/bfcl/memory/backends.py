"""A memory backend opened for one entry: its API instance loaded from the scenario's snapshot, and what the run
reads of it (docs/bfcl.md#memory)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache

from ....json_value import JSONValue

#: the backends the package runs, in bfcl's order (vector where its embedding model is installed: `unavailable`)
RUNNABLE = ("kv", "vector", "rec_sum")


@dataclass(frozen=True)
class Memory:
    """One entry's memory.

    Attributes:
        class_name: bfcl's class name (`MemoryAPI_kv`): the entry's only involved class, which names its variable.
        api: the instance the model's calls run on.
        snapshot: what bfcl's flush would write of it now (a prerequisite conversation's end).
        context: its dump for the memory system prompt.
    """

    class_name: str
    api: object
    snapshot: Callable[[], Mapping[str, object]]
    context: Callable[[], str]


def open_memory(backend: str, snapshot: Mapping[str, JSONValue] | None) -> Memory:
    """A fresh instance of `backend` holding `snapshot` (None: empty, as a scenario's first conversation starts)."""
    if backend == "kv":
        from . import kv

        memory_kv = kv.MemoryAPI_kv()
        kv.load_snapshot(memory_kv, snapshot)
        return Memory("MemoryAPI_kv", memory_kv, lambda: kv.snapshot(memory_kv), lambda: kv.context(memory_kv))
    if backend == "vector":
        from . import vector

        store = vector.MemoryAPI_vector()
        vector.load_snapshot(store, snapshot)
        return Memory("MemoryAPI_vector", store, lambda: vector.snapshot(store), lambda: vector.context(store))
    if backend == "rec_sum":
        from . import rec_sum

        buffer = rec_sum.MemoryAPI_rec_sum()
        rec_sum.load_snapshot(buffer, snapshot)
        return Memory("MemoryAPI_rec_sum", buffer, lambda: rec_sum.snapshot(buffer), lambda: rec_sum.context(buffer))
    raise ValueError(f"memory backend {backend!r} cannot run here (runnable: {', '.join(RUNNABLE)})")


@cache  # the model's files are checked by their sha256: once per process
def unavailable(backend: str) -> str | None:
    """Why `backend` cannot run here, in one line with the fix, or None (only vector needs what may be missing:
    its embedding model, never fetched from a hub)."""
    if backend != "vector":
        return None
    from .vector import unavailable as vector_unavailable

    return vector_unavailable()
