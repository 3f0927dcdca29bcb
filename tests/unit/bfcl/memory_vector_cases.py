"""Seeded call sequences for the vector memory backend's differential test (docs/bfcl.md#memory).

Standard library only: the recorder (record_memory_vector.py, run in a scratch venv against bfcl-eval's own
`MemoryAPI_vector`) and the test (test_memory_vector.py, against ours) run the same calls and write each call's
outcome line the same way (memory_cases.outcome_line); each side says how to read its state and how to write and
load a snapshot (`Side`). The words come from the memory category's prerequisite conversations.

- `sequences(data_dir)`: (key, steps) pairs, a step being (method, args) or (SNAPSHOT, []).
- `run(side, steps)`: the outcome line of each step, on a fresh backend object.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING or __package__:  # a module of the tests' package
    from .memory_cases import outcome_line, words
else:  # imported by the recorder, a script beside it
    from memory_cases import outcome_line, words

SEED = 20261208
SEQUENCES = 60
FULL = 2  # the first ones are long, mostly adds, to fill both memories
CALLS = (6, 30)
SNAPSHOT = "snapshot"  # a step: bfcl's snapshot written, and loaded into a new object that goes on

METHODS = [
    "core_memory_add",
    "core_memory_remove",
    "core_memory_update",
    "core_memory_clear",
    "core_memory_retrieve",
    "core_memory_retrieve_all",
    "archival_memory_add",
    "archival_memory_remove",
    "archival_memory_update",
    "archival_memory_clear",
    "archival_memory_retrieve",
    "archival_memory_retrieve_all",
]
# what a model may send where the docs ask for a string: lists and dicts reach the encoder, which takes some
ODD_TEXTS: list[Any] = [
    None,
    7,
    2.5,
    True,
    [],
    ["a note"],
    ["one", "two"],
    [["first", "second"]],
    [7],
    [None],
    {"k": "v"},
    {"text": "a note"},
    "",
    " ",
]
REFUSED: list[Any] = [[7], [None], {"k": "v"}]  # short enough, but no text the encoder takes
ODD_IDS: list[Any] = [-1, 99, "0", 1.0, True, None, [0], 2.5]
TOP_KS: list[Any] = [1, 2, 3, 5, 10, 50, 0, -1, 2.0, "3", True, None]
OMITTED = object()


class Side(Protocol):
    """How one side (ours, or upstream's in the recorder) makes, reads, writes and loads a backend object."""

    def fresh(self) -> Any: ...

    def state(self, api: Any) -> Any: ...

    def write(self, api: Any) -> str: ...

    def read(self, api: Any, text: str) -> None: ...


def sequences(data_dir: Path) -> list[tuple[str, list[tuple[str, list[Any]]]]]:
    rng = random.Random(f"{SEED}-vector")
    vocabulary = words(data_dir)
    out = []
    for index in range(SEQUENCES):
        full = index < FULL
        written: list[str] = []
        steps: list[tuple[str, list[Any]]] = []
        for _ in range(rng.randint(80, 90) if full else rng.randint(*CALLS)):
            steps.append(_call(rng, vocabulary, written, full))
            if rng.random() < 0.05:
                steps.append((SNAPSHOT, []))
        steps.append((SNAPSHOT, []))
        out.append((f"vector/{index}", steps))
    return out


def _words(rng: random.Random, vocabulary: list[str], low: int, high: int) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(low, high)))


def _text(rng: random.Random, vocabulary: list[str], written: list[str], limit: int) -> Any:
    roll = rng.random()
    if roll < 0.1:
        return rng.choice(ODD_TEXTS)
    if roll < 0.3 and written:
        return rng.choice(written[-4:])  # a recent text again: the same vector, so tied scores
    if roll < 0.37:
        filler = _words(rng, vocabulary, limit // 4, limit // 3)
        return (filler * 3)[: limit + rng.choice([-1, 0, 1, 40])]  # about the limit: below, at, past
    text = _words(rng, vocabulary, 1, 25)
    written.append(text)
    return text


def _vec_id(rng: random.Random, written: list[str]) -> Any:
    if rng.random() < 0.8:
        return rng.randint(0, len(written) + 1)  # ids count the adds: mostly ones in the store or just removed
    return rng.choice(ODD_IDS)


def _query(rng: random.Random, vocabulary: list[str], written: list[str]) -> Any:
    roll = rng.random()
    if roll < 0.45 and written:
        return rng.choice(written[-4:])  # a recent text, maybe stored twice: ties at the top
    if roll < 0.55 and written:
        return " ".join(rng.choice(written).split()[:3])
    if roll < 0.65:
        return rng.choice(ODD_TEXTS)
    return _words(rng, vocabulary, 1, 6)


def _call(rng: random.Random, vocabulary: list[str], written: list[str], full: bool) -> tuple[str, list[Any]]:
    # adds often, so that the memories fill up (7 and 50 entries) and the searches have texts to rank
    extra = ["core_memory_add"] * 3 + ["archival_memory_add"] * 6 + ["archival_memory_retrieve"] * 3
    method = rng.choice(METHODS + extra + ["core_memory_retrieve"] * 2)
    if full:
        method = rng.choice([method] + ["archival_memory_add"] * 7 + ["core_memory_add"] * 2)
    limit = 300 if method.startswith("core") else 2000
    if method.endswith("_add"):
        return method, [_text(rng, vocabulary, written, limit)]
    if method.endswith("_update"):
        # the encoder refuses some texts after the vector's removal: the entry is left unfound
        text = rng.choice(REFUSED) if rng.random() < 0.2 else _text(rng, vocabulary, written, limit)
        return method, [_vec_id(rng, written), text]
    if method.endswith("_remove"):
        return method, [_vec_id(rng, written)]
    if method.endswith("_retrieve"):
        top_k = rng.choice([OMITTED, *TOP_KS])
        query = _query(rng, vocabulary, written)
        return method, [query] if top_k is OMITTED else [query, top_k]
    return method, []


def vectors_digest(data: bytes) -> str:
    """The stored vectors' bytes (float32, in storage order), digested."""
    return hashlib.sha256(data).hexdigest()[:16]


def run(side: Side, steps: list[tuple[str, list[Any]]]) -> list[str]:
    """Each step on a fresh object and its outcome line. A snapshot step's result is the snapshot's text; the
    object that loads it (maybe failing halfway, as a load of a text the encoder refuses does) takes over."""
    api = side.fresh()
    lines = []
    for method, args in steps:
        outcome: Any = None
        raised: BaseException | None = None
        try:
            if method == SNAPSHOT:
                outcome = side.write(api)
                api = side.fresh()
                side.read(api, outcome)
            else:
                outcome = getattr(api, method)(*args)
        except Exception as exc:  # what the executor turns into an error string
            raised = exc
        lines.append(outcome_line(outcome, raised, side.state(api)))
    return lines


# -- the index alone, on each faiss build ---------------------------------------------------------------------

KERNEL_CASES = 200
POOL = 120


def _unit(rng: random.Random, dim: int) -> list[float]:
    """A random unit vector as float32 values, made with Python floats only (both sides get the same bits)."""
    raw = [rng.uniform(-1.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(math.fsum(value * value for value in raw))
    return [struct.unpack("f", struct.pack("f", value / norm))[0] for value in raw]


def kernel_cases(dim: int = 384) -> tuple[list[list[float]], list[tuple[str, list[tuple[str, int, int]]]]]:
    """A pool of unit vectors, and cases of index operations on it: ("add", pool index, id), ("remove", id, 0),
    ("search", pool index, k). Adds repeat pool vectors often, for exact ties."""
    rng = random.Random(f"{SEED}-kernel")
    pool = [_unit(rng, dim) for _ in range(POOL)]
    cases = []
    for index in range(KERNEL_CASES):
        ops: list[tuple[str, int, int]] = []
        ids: list[int] = []
        for step in range(rng.randint(5, 90)):
            roll = rng.random()
            if roll < 0.55 or not ids:
                ids.append(step)
                ops.append(("add", rng.randrange(POOL if rng.random() < 0.5 else 12), step))
            elif roll < 0.7:
                victim = rng.choice(ids)
                ids.remove(victim)
                ops.append(("remove", victim, 0))
            else:
                ops.append(("search", rng.randrange(POOL), rng.randint(1, min(50, len(ids) + 2))))
        cases.append((f"kernel/{index}", ops))
    return pool, cases


def kernel_line(found: list[tuple[float, int]]) -> str:
    """One search's results, scores by repr."""
    return json.dumps([[repr(score), vec_id] for score, vec_id in found])
