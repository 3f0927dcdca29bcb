"""Synthetic stored results of bfcl's agentic categories, for the checker's conformance
(docs/bfcl.md#the-agentic-checker).

Standard library only: the recorder (record_agentic.py, run in a scratch venv against bfcl-eval's own
`_evaluate_single_agentic_entry`) and the test (test_agentic.py, against ours) both build the same cases from a
seed, the decoder corpus's steps (multi_turn/decode_corpus.json, our own) and, by id, the accepted answers of
the memory category's data (the project keeps no copy of them: a case names the entry it takes them from).

`cases(data_dir)` gives (key, mode, result, accepted) tuples: mode "prompt" or "fc", result the stored `result`,
accepted the list of answers.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SEED = 20261207
COUNT = 1500

# answers of our own, with the punctuation, case, quotes and word edges the standardisation plays with
OWN_ANSWERS: list[list[str]] = [
    ["Paris"],
    ["42", "forty two"],
    ["New York"],
    ["April 1, 2024"],
    ["e-mail"],
    ["O'Brien"],
    ["3.14"],
    ["$100"],
    ["C++"],
    ["(555) 123-4567"],
    ["snake_case"],
    ["a/b"],
    ["x^2"],
    ["*bold*"],
    ["it's"],
    ["Ünïcode"],
    [""],
    ["well.known"],
    ["the answer"],
    ["yes", "no"],
]
# message texts: some hold an answer as a word, some inside another word, some in another case or spelling
TEXTS = [
    "The capital is Paris.",
    "paris",
    "Parisian food",
    "It is 42.",
    "forty-two",
    "forty two!",
    "New-York",
    "NEW YORK",
    "Newyork",
    "April 1 2024",
    "april 1,2024",
    "email me",
    "E-Mail",
    'O"Brien',
    "o'brien said",
    "It is 3,14",
    "314",
    "$100 total",
    "100$",
    "c++ is fine",
    "C",
    "555 1234567",
    "(555)123-4567",
    "snakecase",
    "ab",
    "x2",
    "bold",
    "its",
    "IT'S",
    "ünïcode",
    "unicode",
    "wellknown",
    "The answer is here.",
    "theanswer",
    "yes",
    "Yesterday",
    "no",
    "",
    " ",
    "[]",
    "None",
    "{}",
    "I don't know.",
    "f(x=1)",
    "[f(x=1)]",
    "Paris and 42",
    "\nParis\n",
]
ODD_TURNS: list[Any] = ["Paris", "", {"Paris": 1}, {}, 7, None, True, 1.5]


def corpus_steps() -> list[dict[str, Any]]:
    """The decoder corpus's own steps (rows of decode_corpus.json), each `{mode, raw}`."""
    corpus = json.loads((HERE / "multi_turn" / "decode_corpus.json").read_text(encoding="utf-8"))
    return [{"mode": row["mode"], "raw": row["raw"]} for row in corpus["rows"]]


def memory_answers(data_dir: Path) -> dict[str, list[str]]:
    """id -> accepted answers of the memory category's entries."""
    text = (data_dir / "possible_answer" / "BFCL_v4_memory.json").read_text(encoding="utf-8")
    entries = [json.loads(line) for line in text.splitlines() if line.strip()]
    return {entry["id"]: entry["ground_truth"] for entry in entries}


def _message(rng: random.Random, accepted: list[str], mode: str) -> Any:
    """A message step: one of TEXTS, or an accepted answer in a sentence, sometimes respelt; in FC mode now and
    then wrapped as a list or an object, or empty."""
    text = rng.choice(TEXTS)
    if rng.random() < 0.4:  # an accepted answer in a sentence, sometimes respelt
        answer = rng.choice(accepted)
        answer = rng.choice(
            [
                answer,
                answer.upper(),
                answer.lower(),
                answer.replace(" ", "-"),
                answer.replace("'", '"'),
                answer + "s",
            ]
        )
        text = rng.choice(["{} is it.", "It is {}.", "{}", "({})", "not{}", "{}ly", "I think {}, yes"]).format(answer)
    return text if mode == "prompt" or rng.random() < 0.8 else rng.choice([[text], [{"a": text}], ""])


def cases(data_dir: Path) -> list[tuple[str, str, Any, list[str]]]:
    """(key, mode, result, accepted) for COUNT seeded cases; keys are stable for a seed and inputs."""
    rng = random.Random(SEED)
    steps = corpus_steps()
    memory = memory_answers(data_dir)
    memory_ids = sorted(memory)
    out: list[tuple[str, str, Any, list[str]]] = []
    for index in range(COUNT):
        mode = "fc" if index % 3 == 0 else "prompt"
        own = [step["raw"] for step in steps if step["mode"] == mode]
        if rng.random() < 0.5:
            source, accepted = "own", rng.choice(OWN_ANSWERS)
        else:
            source = rng.choice(memory_ids)
            accepted = memory[source]

        shape = rng.random()
        if shape < 0.08:  # not one turn
            two = [[_message(rng, accepted, mode)], [_message(rng, accepted, mode)]]
            result: Any = rng.choice([[], two, "text", {"a": 1}, None, 3])
        elif shape < 0.14:  # a turn that is not a list of steps
            result = [rng.choice([*ODD_TURNS, _message(rng, accepted, mode)])]
        else:
            turn = [
                rng.choice(own) if rng.random() < 0.5 else _message(rng, accepted, mode)
                for _ in range(rng.randint(0, 5))
            ]
            result = [turn]
        out.append((f"{index}/{source}", mode, result, list(accepted)))
    return out
