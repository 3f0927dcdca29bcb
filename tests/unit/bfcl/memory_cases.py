"""Seeded call sequences for the memory backends' differential test (docs/bfcl.md#memory).

Standard library only: the recorder (record_memory.py, run in a scratch venv against bfcl-eval's own
`MemoryAPI_kv` and `MemoryAPI_rec_sum`) and the test (test_memory.py, against ours) both run the same calls and
digest each call's outcome and the state after it the same way. The words come from the memory category's
prerequisite conversations, read from the data folder; the project keeps only digests.

- `sequences(data_dir, backend)`: (key, calls) pairs, a call being (method, args).
- `run(api, backend, calls)`: the outcome line of each call, made on a fresh backend object.
- `outcome_line(result, raised, state)`: the canonical text of one call's outcome and the state after it.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

SEED = 20261207
SEQUENCES = 300
CALLS = (6, 30)

KV_METHODS = [
    "core_memory_add",
    "core_memory_remove",
    "core_memory_replace",
    "core_memory_clear",
    "core_memory_retrieve",
    "core_memory_list_keys",
    "core_memory_key_search",
    "core_memory_retrieve_all",
    "archival_memory_add",
    "archival_memory_remove",
    "archival_memory_replace",
    "archival_memory_clear",
    "archival_memory_retrieve",
    "archival_memory_list_keys",
    "archival_memory_key_search",
]
REC_SUM_METHODS = ["memory_append", "memory_update", "memory_clear", "memory_replace", "memory_retrieve"]
ODD_VALUES: list[Any] = [
    None,
    7,
    2.5,
    True,
    ["a"],
    {"k": "v"},
    "",
    " ",
    "Key",
    "two words",
    "9lives",
    "a__b",
    "a_",
    "_a",
]


def words(data_dir: Path) -> list[str]:
    """The distinct lower-case words of the prerequisite conversations, in order of first use."""
    seen: dict[str, None] = {}
    for path in sorted((data_dir / "memory_prereq_conversation").glob("*.json")):
        for token in re.findall(r"[A-Za-z][A-Za-z0-9]*", path.read_text(encoding="utf-8")):
            seen.setdefault(token.lower(), None)
    return list(seen)


def sequences(data_dir: Path, backend: str) -> list[tuple[str, list[tuple[str, list[Any]]]]]:
    rng = random.Random(f"{SEED}-{backend}")
    vocabulary = words(data_dir)
    out = []
    for index in range(SEQUENCES):
        keys: list[str] = []
        calls: list[tuple[str, list[Any]]] = []
        for _ in range(rng.randint(*CALLS)):
            if backend == "kv":
                calls.append(_kv_call(rng, vocabulary, keys))
            else:
                calls.append(_rec_sum_call(rng, vocabulary, calls))
        out.append((f"{backend}/{index}", calls))
    return out


def _text(rng: random.Random, vocabulary: list[str], low: int, high: int) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(low, high)))


def _key(rng: random.Random, vocabulary: list[str], keys: list[str]) -> Any:
    roll = rng.random()
    if keys and roll < 0.4:
        return rng.choice(keys)  # one used before: unique-key and found paths
    if roll < 0.8:
        key = "_".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 3)))
        keys.append(key)
        return key
    return rng.choice(ODD_VALUES)


def _kv_call(rng: random.Random, vocabulary: list[str], keys: list[str]) -> tuple[str, list[Any]]:
    # adds often, so that the memories fill up (7 and 50 entries) and the searches have keys to rank
    method = rng.choice(KV_METHODS + ["core_memory_add"] * 4 + ["archival_memory_add"] * 10)
    if method.endswith("_add") or method.endswith("_replace"):
        long = rng.random() < 0.1
        value = _text(rng, vocabulary, 60, 400) if long else rng.choice([_text(rng, vocabulary, 1, 12), *ODD_VALUES])
        return method, [_key(rng, vocabulary, keys), value]
    if method.endswith("_remove") or method.endswith("_retrieve"):
        return method, [_key(rng, vocabulary, keys)]
    if method.endswith("_key_search"):
        query = rng.choice([_text(rng, vocabulary, 1, 4), *(k.replace("_", " ") for k in keys[-3:]), "", 5])
        k = rng.choice([None, 1, 3, 5, 10, 0, -1, 2.0, "3"])
        return method, [query] if k is None else [query, k]
    return method, []


def _rec_sum_call(
    rng: random.Random, vocabulary: list[str], calls: list[tuple[str, list[Any]]]
) -> tuple[str, list[Any]]:
    method = rng.choice(REC_SUM_METHODS + ["memory_append"] * 3)
    if method in ("memory_append", "memory_update"):
        long = rng.random() < 0.08
        text = _text(rng, vocabulary, 1500, 2200) if long else rng.choice([_text(rng, vocabulary, 1, 30), *ODD_VALUES])
        return method, [text]
    if method == "memory_replace":
        written = [args[0] for name, args in calls if name in ("memory_append", "memory_update") and args]
        old = rng.choice([*(str(text)[:12] for text in written[-3:]), _text(rng, vocabulary, 1, 2), *ODD_VALUES])
        new = _text(rng, vocabulary, 1500, 2200) if rng.random() < 0.08 else _text(rng, vocabulary, 0, 8)
        return method, [old, new]
    return method, []


def canonical(value: Any) -> Any:
    """A result as JSON that keeps tuples apart from lists and floats by repr (numpy's float64 as a float)."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float) or type(value).__name__ == "float64":
        return {"float": repr(float(value))}
    if isinstance(value, tuple):
        return {"tuple": [canonical(item) for item in value]}
    if isinstance(value, list):
        return [canonical(item) for item in value]
    if isinstance(value, dict):
        return {"dict": [[canonical(key), canonical(item)] for key, item in value.items()]}
    return {"other": repr(value)}


def outcome_line(outcome: Any, raised: BaseException | None, state: Any) -> str:
    """One call: its result (and the result's str(), what the model is shown), or the exception's type and text,
    and the state after it."""
    if raised is not None:
        shown: Any = {"raised": type(raised).__name__, "text": str(raised)}
    else:
        shown = {"result": canonical(outcome), "str": str(outcome)}
    return json.dumps([shown, canonical(state)], ensure_ascii=False, sort_keys=True)


def run(api: Any, backend: str, calls: list[tuple[str, list[Any]]]) -> list[str]:
    """Each call on `api` (ours or upstream's, fresh) and its outcome line. The method names are the sequence's
    own, from KV_METHODS and REC_SUM_METHODS."""
    lines = []
    for method, args in calls:
        outcome: Any = None
        raised: BaseException | None = None
        try:
            outcome = getattr(api, method)(*args)
        except Exception as exc:  # what the executor turns into an error string
            raised = exc
        if backend == "kv":
            state: Any = {"core_memory": api.core_memory, "archival_memory": api.archival_memory}
        else:
            state = {"memory": api.memory}
        lines.append(outcome_line(outcome, raised, state))
    return lines


def digest(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8")).hexdigest()[:16]


# -- the memory system prompt ------------------------------------------------------------------------------

SCENARIOS = ("customer", "finance", "healthcare", "notetaker", "student")
# what a model may have written into memory: braces and quotes a template engine or JSON dump must keep as text
PROMPT_WRITES: dict[str, list[tuple[str, list[Any]]]] = {
    "kv": [
        ("core_memory_add", ["user_name", 'Ada {scenario_setting} "Lovelace"']),
        ("core_memory_add", ["age", "36"]),
        ("core_memory_add", ["unicode_note", "caf\u00e9 \u2014 {0} {} %s"]),
    ],
    "rec_sum": [("memory_append", ['Name: Ada. Likes {memory_content} and "quotes"; caf\u00e9 \u2014 {}'])],
}


def prompt_cases() -> list[tuple[str, str, str, bool, bool]]:
    """(key, backend, scenario, memory written, first message a system one) for every combination."""
    return [
        (
            f"{backend}/{scenario}/{'written' if written else 'empty'}/{'system' if system else 'user'}",
            backend,
            scenario,
            written,
            system,
        )
        for backend in ("kv", "rec_sum")
        for scenario in SCENARIOS
        for written in (False, True)
        for system in (False, True)
    ]


def first_turn(answer_format: str, system: bool) -> list[dict[str, Any]]:
    """A question's first turn: a user message, after the agentic answer-format system message when `system`."""
    user = {"role": "user", "content": "What is my name?"}
    return [{"role": "system", "content": answer_format}, user] if system else [user]
