"""A scripted model for BFCL multi-turn samples, played by the fake server from each request alone
(docs/bfcl-multi-turn.md#requests-through-the-plugin).

Standard library only (and tests/fake_openai.py, which is too): the plugin test
(tests/plugin/test_bfcl_multi_turn_requests.py) puts it behind the fake and runs the plugin against it; the
recorder (tests/unit/bfcl/multi_turn/record_requests.py) puts it behind the same fake and runs bfcl-eval's own
`OpenAICompletionsHandler` against that, in a scratch venv. Both sides therefore get byte-identical assistant
messages, and both digest request bodies the same way.

The model answers each turn's ground-truth calls (FC: tool calls; prompt: `[f(a=1)]` text): the first turn in
one step, the others one call a step, then a text answer ends the turn. A turn whose ground truth is empty gets a
question back instead (the model talks first, and only), and so does the base sample's last turn, where the
sample therefore fails; in FC, the first step of the second turn says a few words beside its calls. Ground-truth
calls only: bfcl's handler executes call text.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fake_openai import ToolCalls

#: one sample per category, with neither TravelAPI (its today is the real one) nor TwitterAPI (bfcl's shared
#: `mentions` default, bfcl-multiturn §2.7), keyword arguments only (FC needs their names), and classes unlike
#: the loop scripts' (tests/unit/bfcl/multi_turn/loop_scripts.py)
SAMPLES = ("multi_turn_base_72", "multi_turn_miss_func_106", "multi_turn_miss_param_81", "multi_turn_long_context_2")
#: turns where the model asks back although the ground truth has calls: the sample fails there
TALKS_INSTEAD = {"multi_turn_base_72": 4}
MODEL = "fake-model"
DONE = "Done."
QUESTION = "Which one do you mean?"
ASIDE = "Let me do that."
#: what a transport adds beside messages and tools: bfcl's model, temperature and `store`; our model, temperature
#: and `tool_choice` (docs/bfcl.md); each side checks its own values, the digests leave them out
TRANSPORT_KEYS = ("model", "temperature", "store", "tool_choice")

Answer = str | ToolCalls


@dataclass(frozen=True)
class Script:
    sample_id: str
    protocol: str  # "fc" | "prompt"
    replies: tuple[Answer, ...]

    @property
    def category(self) -> str:
        return self.sample_id.rsplit("_", 1)[0]

    def digest(self) -> str:
        """What the script is, so a changed script shows as a stale record."""
        shown = [reply if isinstance(reply, str) else reply.message() for reply in self.replies]
        return sha256([self.sample_id, self.protocol, shown])


def sha256(value: Any) -> str:
    """sha256 of a value's canonical JSON: keys sorted, no spaces, non-ASCII kept (as loop_scripts.py)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def request_digest(body: dict[str, Any]) -> str:
    return sha256({key: value for key, value in body.items() if key not in TRANSPORT_KEYS})


def scripts(data_dir: Path) -> list[Script]:
    """The samples' scripts, FC first, in SAMPLES order."""
    loaded = entries(data_dir)
    return [
        script(loaded[sample_id][0], loaded[sample_id][1], protocol)
        for protocol in ("fc", "prompt")
        for sample_id in SAMPLES
    ]


def entries(data_dir: Path) -> dict[str, tuple[dict[str, Any], list[list[str]]]]:
    """Each chosen sample's question entry and ground truth."""
    out: dict[str, tuple[dict[str, Any], list[list[str]]]] = {}
    for category in sorted({sample_id.rsplit("_", 1)[0] for sample_id in SAMPLES}):
        questions = (data_dir / f"BFCL_v4_{category}.json").read_text(encoding="utf-8").splitlines()
        answers = (data_dir / "possible_answer" / f"BFCL_v4_{category}.json").read_text(encoding="utf-8").splitlines()
        for question, answer in zip(questions, answers, strict=True):
            entry = json.loads(question)
            if entry["id"] in SAMPLES:
                out[entry["id"]] = (entry, json.loads(answer)["ground_truth"])
    return out


def script(entry: dict[str, Any], ground_truth: list[list[str]], protocol: str) -> Script:
    replies: list[Answer] = []
    for index, calls in enumerate(ground_truth):
        if not calls or TALKS_INSTEAD.get(entry["id"]) == index:
            replies.append(QUESTION)
            continue
        steps = [calls] if index == 0 else [[call] for call in calls]
        for number, step in enumerate(steps):
            replies.append(_step(step, protocol, aside=index == 1 and number == 0))
        replies.append(DONE)
    return Script(entry["id"], protocol, tuple(replies))


def _step(calls: list[str], protocol: str, *, aside: bool) -> Answer:
    if protocol == "prompt":
        return "[" + ", ".join(calls) + "]"
    parsed = []
    for call in calls:
        node = ast.parse(call, mode="eval").body
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args, call
        parsed.append((node.func.id, {str(keyword.arg): ast.literal_eval(keyword.value) for keyword in node.keywords}))
    return ToolCalls(tuple(parsed), ASIDE if aside else None)


class Model:
    """The fake's responder: a request's sample is known by its first user message and its protocol by its
    tools; how far the sample has got, by the assistant messages the history already holds."""

    def __init__(self, played: list[Script], data_dir: Path) -> None:
        loaded = entries(data_dir)
        self.by_key = {(first_user(loaded[s.sample_id][0]["question"][0]), s.protocol): s for s in played}

    def script_of(self, body: dict[str, Any]) -> Script | None:
        messages = [message for message in body.get("messages") or [] if isinstance(message, dict)]
        first = next((message.get("content") for message in messages if message.get("role") == "user"), None)
        return self.by_key.get((first, "fc" if "tools" in body else "prompt"))

    def __call__(self, body: dict[str, Any]) -> Answer:
        played = self.script_of(body)
        return "Not a scripted sample." if played is None else next_reply(played.replies, body)


def next_reply(replies: tuple[Answer, ...], body: dict[str, Any]) -> Answer:
    """The reply a script gives next: how far it has got is the number of assistant messages the history holds."""
    asked = sum(1 for message in body["messages"] if isinstance(message, dict) and message.get("role") == "assistant")
    return replies[asked] if asked < len(replies) else "Out of script."


def first_user(messages: list[dict[str, Any]]) -> Any:
    return next(message["content"] for message in messages if message["role"] == "user")


def differing_requests(sent: dict[str, list[dict[str, Any]]], recorded: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Per recorded key whose request bodies ours do not match: how many each side sent and the first that differs."""
    differ = {}
    for key, row in recorded.items():
        ours = [request_digest(body) for body in sent.get(key, [])]
        first = next((n for n, pair in enumerate(zip(ours, row["requests"], strict=False)) if pair[0] != pair[1]), None)
        if (len(ours), first) != (len(row["requests"]), None):
            differ[key] = f"{len(ours)} requests, bfcl {len(row['requests'])}; first differing: {first}"
    return differ


def transport_added(sent: dict[str, list[dict[str, Any]]]) -> dict[str, set[tuple[Any, ...]]]:
    """Per key, what the transport put beside messages and tools: model, temperature, whether max_tokens and
    store were sent, tool_choice."""
    return {
        key: {(b["model"], b["temperature"], "max_tokens" in b, "store" in b, b.get("tool_choice")) for b in bodies}
        for key, bodies in sent.items()
    }


def result_entries(rows: list[dict[str, Any]]) -> dict[str, tuple[str, bool, str]]:
    """Per `<id>/<protocol>` of a report's rows: the digest of the result entry, passed, error type."""
    return {
        f"{row['id']}/{row.get('variant') or 'prompt'}": (
            sha256({"id": row["id"], "result": row["output"]}),
            row["outcome"] == "passed",
            row.get("error_type") or "",
        )
        for row in rows
    }
