"""`MemoryAPI_kv`: a core memory of at most 7 key-value pairs and an archival memory of at most 50, with a BM25+
key search (docs/bfcl.md#memory).

Upstream's error texts, limits and order of checks are kept; values and keys are made `str` first where upstream
does so (add and replace), and not where it does not (remove and retrieve compare what was given).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from ....json_value import JSONValue
from . import bm25

CORE_SIZE = 7
CORE_ENTRY_LENGTH = 300
ARCHIVAL_SIZE = 50
ARCHIVAL_ENTRY_LENGTH = 2000
_KEY = re.compile(r"^[a-z]+(_[a-z0-9]+)*$")  # snake_case, checked with re.match as upstream does

Outcome = dict[str, object]
Ranked = dict[str, list[tuple[float, str]]]  # {"ranked_results": [(score, key), ...]}


class MemoryAPI_kv:
    """The two memories as dicts in insertion order (what upstream snapshots). Every public method is one the
    model may call (the executor offers them all); the helpers of a run are the module's functions below.
    The class has upstream's name: a call that does not bind names it in its error text."""

    def __init__(self) -> None:
        self.core_memory: dict[str, str] = {}
        self.archival_memory: dict[str, str] = {}

    # -- core memory ----------------------------------------------------------------------------------------

    def core_memory_add(self, key: object, value: object) -> Outcome:
        return _add(self.core_memory, str(key), str(value), CORE_SIZE, CORE_ENTRY_LENGTH,
                    "Core memory is full. Please clear some entries.", "Key-value pair added.")

    def core_memory_remove(self, key: object) -> Outcome:
        return _remove(self.core_memory, key)

    def core_memory_replace(self, key: object, value: object) -> Outcome:
        return _replace(self.core_memory, str(key), str(value), CORE_ENTRY_LENGTH)

    def core_memory_clear(self) -> Outcome:
        self.core_memory = {}
        return {"status": "Short term memory cleared."}

    def core_memory_retrieve(self, key: object) -> Outcome:
        return _retrieve(self.core_memory, key)

    def core_memory_list_keys(self) -> Outcome:
        return {"keys": list(self.core_memory)}

    def core_memory_key_search(self, query: str, k: int = 5) -> Ranked:
        return _search(query, list(self.core_memory), k)

    def core_memory_retrieve_all(self) -> dict[str, str]:
        return self.core_memory  # the dict itself, as upstream returns it

    # -- archival memory ------------------------------------------------------------------------------------

    def archival_memory_add(self, key: object, value: object) -> Outcome:
        return _add(self.archival_memory, str(key), str(value), ARCHIVAL_SIZE, ARCHIVAL_ENTRY_LENGTH,
                    "Long term memory is full. Please clear some entries.", "Key added.")

    def archival_memory_remove(self, key: object) -> Outcome:
        return _remove(self.archival_memory, key)

    def archival_memory_replace(self, key: object, value: object) -> Outcome:
        return _replace(self.archival_memory, str(key), str(value), ARCHIVAL_ENTRY_LENGTH)

    def archival_memory_clear(self) -> Outcome:
        self.archival_memory = {}
        return {"status": "Long term memory cleared."}

    def archival_memory_retrieve(self, key: object) -> Outcome:
        return _retrieve(self.archival_memory, key)

    def archival_memory_list_keys(self) -> Outcome:
        return {"keys": list(self.archival_memory)}

    def archival_memory_key_search(self, query: str, k: int = 5) -> Ranked:
        return _search(query, list(self.archival_memory), k)


def load_snapshot(api: MemoryAPI_kv, snapshot: Mapping[str, JSONValue] | None) -> None:
    """The memories of a previous entry's snapshot, or empty ones (the first entry of a scenario)."""
    if snapshot:
        api.core_memory = _copy(snapshot["core_memory"])
        api.archival_memory = _copy(snapshot["archival_memory"])


def snapshot(api: MemoryAPI_kv) -> dict[str, dict[str, str]]:
    """What bfcl's flush writes after a prerequisite conversation."""
    return {"core_memory": dict(api.core_memory), "archival_memory": dict(api.archival_memory)}


def context(api: MemoryAPI_kv) -> str:
    """The core memory as the system prompt shows it."""
    if not api.core_memory:
        return "There is no content in the core memory at this point."
    return json.dumps(api.core_memory, indent=4)


def _add(memory: dict[str, str], key: str, value: str, size: int, length: int, full: str, added: str) -> Outcome:
    if len(memory) >= size:  # the checks in upstream's order: full, too long, key format, unique
        return {"error": full}
    if len(value) > length:
        return {"error": f"Entry is too long. Please shorten the entry to less than {length} characters."}
    if not _KEY.match(key):
        return {"error": "Key must be in snake_case format and cannot contain spaces."}
    if key in memory:
        return {"error": "Key name must be unique."}
    memory[key] = value
    return {"status": added}


def _remove(memory: dict[str, str], key: object) -> Outcome:
    if key in memory:  # a key that cannot be hashed raises TypeError, as upstream's `in` does
        del memory[key]
        return {"status": "Key removed."}
    return {"error": "Key not found."}


def _replace(memory: dict[str, str], key: str, value: str, length: int) -> Outcome:
    if key not in memory:
        return {"error": "Key not found."}
    if len(value) > length:
        return {"error": f"Entry is too long. Please shorten the entry to less than {length} characters."}
    memory[key] = value
    return {"status": "Key replaced."}


def _retrieve(memory: dict[str, str], key: object) -> Outcome:
    if key not in memory:
        return {"error": "Key not found."}
    return {"value": memory[key]}


def _search(query: str, keys: list[str], k: int) -> Ranked:
    """The k best keys for the query by BM25+, best first, ties in insertion order (a stable sort, reversed)."""
    index = bm25.Index([key.replace("_", " ").lower().split() for key in keys])  # before the query, as upstream
    scored = index.scores(query.replace("_", " ").lower().split())
    ranked = sorted(zip(scored, keys, strict=True), key=lambda pair: pair[0], reverse=True)
    return {"ranked_results": ranked[:k]}


def _copy(value: JSONValue) -> dict[str, str]:
    if not isinstance(value, dict):
        raise TypeError(f"a memory snapshot holds objects, not {type(value).__name__}")
    return {str(key): item if isinstance(item, str) else str(item) for key, item in value.items()}
