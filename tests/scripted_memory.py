"""A scripted model for BFCL memory entries, played by the fake server from each request alone
(docs/bfcl.md#the-memory-run).

Standard library only (and tests/fake_openai.py): the plugin test (tests/plugin/test_bfcl_memory_requests.py)
puts it behind the fake and runs the plugin against it; the recorder (tests/unit/bfcl/record_memory_requests.py)
puts it behind the same fake and runs bfcl-eval's own `OpenAICompletionsHandler` on the same entries, in a scratch
venv. Both sides get byte-identical assistant messages and digest request bodies the same way.

One scenario (healthcare: 5 prerequisite conversations) and a few of its questions, for the three backends. In a
prerequisite conversation the model writes to memory in every turn (kv: a core entry, past the core's 7 an error,
every third turn an archival entry, a key that breaks the key format; vector: the same texts, and a removal;
rec_sum: an append, and a replace), then says it noted it. Asked a question, it reads memory (kv: key searches
and the whole core; vector: similarity searches of both memories; rec_sum: the buffer), then answers: the first
accepted answer for every other question, else a wrong one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fake_openai import ToolCalls
from scripted_multi_turn import first_user, next_reply, sha256

MODEL = "fake-model"
SCENARIO = "healthcare"
#: the questions asked (bfcl's question ids without the category), in file order
QUESTIONS = ("memory_30-healthcare-0", "memory_31-healthcare-1", "memory_39-healthcare-9", "memory_54-healthcare-24")
BACKENDS = ("kv", "vector", "rec_sum")
NOTED = "Noted."
WRONG = "I do not remember that."

Answer = str | ToolCalls


@dataclass(frozen=True)
class Script:
    entry_id: str  # bfcl's id in the backend's category (memory_kv_prereq_10-healthcare-0)
    backend: str
    protocol: str  # "fc" | "prompt"
    replies: tuple[Answer, ...]

    @property
    def key(self) -> str:
        return f"{self.entry_id}/{self.protocol}"

    def digest(self) -> str:
        shown = [reply if isinstance(reply, str) else reply.message() for reply in self.replies]
        return sha256([self.entry_id, self.protocol, shown])


@dataclass(frozen=True)
class Entry:
    """What the scripts need of a memory entry: bfcl's id in the backend's category, its turns, its answers."""

    entry_id: str
    backend: str
    prerequisite: bool
    turns: list[list[dict[str, Any]]]
    accepted: list[str]


def entries(data_dir: Path) -> list[Entry]:
    """The scripted entries of both backends: the scenario's prerequisites in order, then the chosen questions."""
    prereqs = [
        json.loads(line)
        for line in (data_dir / "memory_prereq_conversation" / f"memory_{SCENARIO}.json")
        .read_text(encoding="utf-8")
        .splitlines()
        if line.strip()
    ]
    questions = {
        json.loads(line)["id"]: json.loads(line)
        for line in (data_dir / "BFCL_v4_memory.json").read_text(encoding="utf-8").splitlines()
        if line.strip()
    }
    answers = {
        json.loads(line)["id"]: json.loads(line)["ground_truth"]
        for line in (data_dir / "possible_answer" / "BFCL_v4_memory.json").read_text(encoding="utf-8").splitlines()
        if line.strip()
    }
    out = []
    for backend in BACKENDS:
        category = f"memory_{backend}"
        out += [
            Entry(entry["id"].replace("memory", category), backend, True, entry["question"], []) for entry in prereqs
        ]
        out += [
            Entry(
                question_id.replace("memory", category),
                backend,
                False,
                questions[question_id]["question"],
                answers[question_id],
            )
            for question_id in QUESTIONS
        ]
    return out


def scripts(data_dir: Path) -> list[Script]:
    """Every scripted entry in both protocols, FC first."""
    return [script(entry, protocol) for protocol in ("fc", "prompt") for entry in entries(data_dir)]


def script(entry: Entry, protocol: str) -> Script:
    replies: list[Answer] = []
    if entry.prerequisite:
        conversation = int(entry.entry_id.rsplit("-", 1)[1])
        for turn, messages in enumerate(entry.turns):
            words = str(messages[-1]["content"]).split()
            replies += [_step(_writes(entry.backend, conversation, turn, words), protocol), NOTED]
    else:
        number = int(entry.entry_id.rsplit("-", 1)[1])
        question = str(entry.turns[0][-1]["content"])
        calls: dict[str, list[tuple[str, dict[str, Any]]]] = {
            "kv": [
                ("archival_memory_key_search", {"query": question, "k": 3}),
                ("archival_memory_key_search", {"query": "fact c1 t3"}),
                ("core_memory_retrieve_all", {}),
            ],
            "vector": [
                ("archival_memory_retrieve", {"query": question, "top_k": 3}),
                ("core_memory_retrieve", {"query": question}),
            ],
            "rec_sum": [("memory_retrieve", {})],
        }
        reads = calls[entry.backend]
        replies += [_step(reads, protocol), entry.accepted[0] if number % 2 == 0 else WRONG]
    return Script(entry.entry_id, entry.backend, protocol, tuple(replies))


def _writes(backend: str, conversation: int, turn: int, words: list[str]) -> list[tuple[str, dict[str, Any]]]:
    if backend == "vector":
        writes: list[tuple[str, dict[str, Any]]] = [("core_memory_add", {"text": " ".join(words[:8])})]
        if turn % 3 == 0:
            writes.append(("archival_memory_add", {"text": " ".join(words[:30])}))
        if turn == 4:
            writes.append(("core_memory_remove", {"vec_id": 1}))
        return writes
    if backend == "rec_sum":
        if turn == 2:  # a replacement of what the first append wrote
            return [("memory_replace", {"old_text": " ".join(words[:1]), "new_text": "(replaced)"})]
        return [("memory_append", {"text": f"c{conversation}t{turn}: " + " ".join(words[:12])})]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("core_memory_add", {"key": f"note_c{conversation}_t{turn}", "value": " ".join(words[:8])})
    ]
    if turn % 3 == 0:
        calls.append(("archival_memory_add", {"key": f"fact_c{conversation}_t{turn}", "value": " ".join(words[:30])}))
    if turn == 4:
        calls.append(("archival_memory_add", {"key": "Bad-Key", "value": "x"}))  # breaks the key format
    return calls


def _step(calls: list[tuple[str, dict[str, Any]]], protocol: str) -> Answer:
    if protocol == "prompt":
        rendered = (
            f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})" for name, arguments in calls
        )
        return "[" + ", ".join(rendered) + "]"
    return ToolCalls(tuple(calls))


def backend_of(body: dict[str, Any]) -> str:
    """The backend a request is of, by the function its docs alone name (as tools, or in the system prompt)."""
    docs = json.dumps(body.get("tools") or body.get("messages"))
    return "rec_sum" if "memory_append" in docs else "vector" if "core_memory_update" in docs else "kv"


class Model:
    """The fake's responder: a request's entry is known by its first user message, its protocol by its tools, its
    backend by its docs; how far the entry has got, by the assistant messages the history already holds."""

    def __init__(self, played: list[Script], data_dir: Path) -> None:
        turns = {entry.entry_id: entry.turns for entry in entries(data_dir)}
        self.by_key: dict[tuple[Any, str, str], Script] = {}
        for played_script in played:
            key = (first_user(turns[played_script.entry_id][0]), played_script.protocol, played_script.backend)
            assert key not in self.by_key, f"two scripted entries start alike: {played_script.entry_id}"
            self.by_key[key] = played_script

    def script_of(self, body: dict[str, Any]) -> Script | None:
        messages = [message for message in body.get("messages") or [] if isinstance(message, dict)]
        first = next((message.get("content") for message in messages if message.get("role") == "user"), None)
        return self.by_key.get((first, "fc" if "tools" in body else "prompt", backend_of(body)))

    def __call__(self, body: dict[str, Any]) -> Answer:
        played = self.script_of(body)
        return "Not a scripted entry." if played is None else next_reply(played.replies, body)
