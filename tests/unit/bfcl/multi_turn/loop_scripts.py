"""The driving-loop conformance's shared half (docs/bfcl-multi-turn.md#the-driving-loop).

Standard library only: the recorder (record_loop.py, bfcl-eval's own `OpenAICompletionsHandler` against a
loopback chat-completions fake in a scratch venv) and the test (test_loop.py, our loop) both import it, so both
play the same scripted assistant messages and digest requests and result entries the same way.

A script is a sample, a protocol and the assistant messages the model answers with, in order. Every call in
them is a ground-truth call of the sample (or, for the step-limit scripts, its first one again): harmless, since
bfcl's executor evaluates call text.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:  # under pytest, a package; run by the recorder, a plain module beside it
    from .differential import samples
else:
    from differential import samples  # stdlib only

MODEL = "loop-model/v1.0"  # the model name both sides are driven with: `/`, `-` and `.` all get replaced
DONE = "Done."  # a text answer: undecodable in both protocols, so it ends the turn


@dataclass(frozen=True)
class Script:
    key: str
    sample_id: str
    protocol: str  # "fc" | "prompt"
    replies: list[dict[str, Any]]

    @property
    def category(self) -> str:
        return self.sample_id.rsplit("_", 1)[0]

    def digest(self) -> str:
        """What the script is, so a changed script shows as a stale record."""
        return sha256([self.sample_id, self.protocol, self.replies])


def sha256(value: Any) -> str:
    """sha256 of a value's canonical JSON: keys sorted, no spaces, non-ASCII kept."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chosen(data_dir: Path) -> dict[str, list[tuple[dict[str, Any], list[list[str]]]]]:
    """Per category two samples of at least three turns whose ground truth is all keyword arguments (FC needs
    names for the arguments): the first, and the first on two classes neither of which is the file system."""
    out: dict[str, list[tuple[dict[str, Any], list[list[str]]]]] = {}
    for entry, ground_truth in samples(data_dir):
        category = entry["id"].rsplit("_", 1)[0].removeprefix("multi_turn_")
        picked = out.setdefault(category, [])
        classes = entry["involved_classes"]
        wanted = not picked or (len(picked) == 1 and len(classes) == 2 and "GorillaFileSystem" not in classes)
        calls = [call for turn in ground_truth for call in turn]
        if (
            wanted
            and len(ground_truth) >= 3
            and ground_truth[0]
            and calls
            and all(not _parse(call)[1] for call in calls)
        ):
            picked.append((entry, ground_truth))
    return out


def scripts(data_dir: Path) -> list[Script]:
    out: list[Script] = []
    picked = chosen(data_dir)
    for protocol in ("fc", "prompt"):
        for pairs in picked.values():
            for entry, truth in pairs:
                key = f"gold/{entry['id']}/{protocol}"
                out.append(_script(key, entry, protocol, [_gold(turn) for turn in truth]))
        entry, truth = picked["base"][0]
        first = truth[0][0]
        gold = [_gold(turn) for turn in truth]
        out.append(_script(f"text-first/{protocol}", entry, protocol, [[DONE], *gold[1:]]))
        endings: list[Any] = ["", None, {"content": None, "tool_calls": []} if protocol == "fc" else "[]"]
        turns = [[*turn[:-1], ending] for turn, ending in zip(gold, endings, strict=False)] + gold[3:]
        out.append(_script(f"endings/{protocol}", entry, protocol, turns))
        out.append(_script(f"limit-middle/{protocol}", entry, protocol, [gold[0], [[first]] * 21]))
        out.append(_script(f"limit-last/{protocol}", entry, protocol, [*gold[:-1], [[first]] * 21]))
        extras = {"refusal": None, "reasoning_content": "Thinking it over."}
        out.append(_script(f"extras/{protocol}", entry, protocol, gold, extras))
    entry, truth = picked["base"][0]
    bad = {"name": _parse(truth[0][0])[0], "arguments": '{"oops": '}
    dangling = [[[truth[0][0], bad]], *[_gold(turn) for turn in truth[1:]]]
    out.append(_script("dangling/fc", entry, "fc", dangling))
    # as the SDK reads them: no id (None), no function (the content is the output), no arguments (None)
    name, _, keywords = _parse(truth[0][0])
    no_id = {
        "content": None,
        "tool_calls": [{"type": "function", "function": {"name": name, "arguments": json.dumps(keywords)}}],
    }
    no_function = {"content": DONE, "tool_calls": [{"id": "call_x", "type": "function"}]}
    no_arguments = {"content": None, "tool_calls": [{"id": "call_y", "type": "function", "function": {"name": name}}]}
    odd: list[list[Any]] = [[no_id, no_function], [no_arguments], *[_gold(turn) for turn in truth[2:]]]
    out.append(_script("odd-tool-calls/fc", entry, "fc", odd))
    return out


def _gold(turn: list[str]) -> list[Any]:
    """One step with the turn's calls (none when the turn has none), then a text answer."""
    return [turn, DONE] if turn else [DONE]


def _script(
    key: str, entry: dict[str, Any], protocol: str, turns: list[list[Any]], extras: dict[str, Any] | None = None
) -> Script:
    """A step is a list of calls (ground-truth strings, or a raw {name, arguments} tool call), a text, None
    (content null) or a message's fields."""
    replies: list[dict[str, Any]] = []
    for turn in turns:
        for step in turn:
            reply = _reply(step, protocol, len(replies))
            replies.append({**reply, **(extras or {})})
    return Script(key, entry["id"], protocol, replies)


def _reply(step: Any, protocol: str, number: int) -> dict[str, Any]:
    if isinstance(step, dict):
        return {"role": "assistant", **step}
    if not isinstance(step, list):
        return {"role": "assistant", "content": step}
    if protocol == "prompt":
        return {"role": "assistant", "content": "[" + ", ".join(step) + "]"}
    calls = []
    for index, call in enumerate(step):
        if isinstance(call, str):
            name, _, keywords = _parse(call)
            call = {"name": name, "arguments": json.dumps(keywords)}
        calls.append({"id": f"call_{number}_{index}", "type": "function", "function": call})
    return {"role": "assistant", "content": None, "tool_calls": calls}


def _parse(call: str) -> tuple[str, list[Any], dict[str, Any]]:
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name), call
    keywords = {str(keyword.arg): ast.literal_eval(keyword.value) for keyword in node.keywords}
    return node.func.id, [ast.literal_eval(arg) for arg in node.args], keywords
