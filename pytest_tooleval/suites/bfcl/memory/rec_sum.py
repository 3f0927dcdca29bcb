"""`MemoryAPI_rec_sum`: one text buffer of at most 10,000 characters that the model rewrites as it goes
(recursive summarisation; docs/bfcl.md#memory).

Upstream's texts and checks are kept, including its gap: `memory_replace` checks the new text's length, not the
buffer's, so a replacement can grow the buffer past the limit.
"""

from __future__ import annotations

from collections.abc import Mapping

from ....json_value import JSONValue

ENTRY_LENGTH = 10_000

Outcome = dict[str, str]


def _too_long(after: str) -> Outcome:
    return {"error": f"Entry will be too long after {after}. Please shorten the entry to less than {ENTRY_LENGTH} "
                     "characters."}


class MemoryAPI_rec_sum:
    """One text buffer. Every public method is one the model may call (the executor offers them all); the
    helpers of a run are the module's functions below.
    The class has upstream's name: a call that does not bind names it in its error text."""

    def __init__(self) -> None:
        self.memory = ""

    def memory_append(self, text: object) -> Outcome:
        added = str(text)
        if len(self.memory + added) > ENTRY_LENGTH:
            return _too_long("appending")
        self.memory += added
        return {"status": "Memory appended."}

    def memory_update(self, text: object) -> Outcome:
        new = str(text)
        if len(new) > ENTRY_LENGTH:
            return _too_long("updating")
        self.memory = new
        return {"status": "Memory updated."}

    def memory_clear(self) -> Outcome:
        self.memory = ""
        return {"status": "Short term memory cleared."}

    def memory_replace(self, old_text: object, new_text: object) -> Outcome:
        old, new = str(old_text), str(new_text)
        if old not in self.memory:
            return {"error": f"Text '{old}' not found in memory."}
        if len(new) > ENTRY_LENGTH:
            return _too_long("replacing")
        self.memory = self.memory.replace(old, new)
        return {"status": "Memory updated."}

    def memory_retrieve(self) -> Outcome:
        if not self.memory:
            return {"error": "Memory is empty."}
        return {"memory_content": self.memory}


def load_snapshot(api: MemoryAPI_rec_sum, snapshot: Mapping[str, JSONValue] | None) -> None:
    """The buffer of a previous entry's snapshot, or an empty one (the first entry of a scenario)."""
    if snapshot:
        memory = snapshot["memory"]
        if not isinstance(memory, str):  # upstream asserts it
            raise TypeError(f"Memory data should be a string, but got {type(memory)} instead.")
        api.memory = memory


def snapshot(api: MemoryAPI_rec_sum) -> dict[str, str]:
    """What bfcl's flush writes after a prerequisite conversation."""
    return {"memory": api.memory}


def context(api: MemoryAPI_rec_sum) -> str:
    """The buffer as the system prompt shows it."""
    return api.memory if api.memory else "There is no content in the memory at this point."
