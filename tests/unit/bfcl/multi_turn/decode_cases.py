"""The decoder corpus's shared half: the steps built from the benchmark data (docs/bfcl-multi-turn.md#how-it-is-tested).

Standard library only: the recorder (record_decode.py, run in a scratch venv against bfcl-eval's own decoders) and
the test (test_decode.py, against ours) both import it, so that both build the same steps from the data folder
and digest the outcomes the same way. The project commits no copy of the data: for these steps the corpus file
holds only a digest per step and one over all of them.

- `ground_truth_cases(data_dir)`: every distinct ground-truth turn of the four multi-turn categories, once as a
  text step (some with the wrappings models add) and once as a function-calling step, each under a stable key
  `<category>/<sample id>/<turn>/<mode>` (the first sample and turn that holds it).
- `case_digest(mode, raw, calls)`: sha256 of a canonical JSON of the step and its outcome (`calls`, or None where
  the decoder raises).
- `total_digest(digests)`: sha256 over every key and digest.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CATEGORIES = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")


@dataclass(frozen=True)
class Case:
    key: str
    mode: str  # "prompt" or "fc"
    raw: Any  # the step as stored: text, or a function-calling list of {name: arguments JSON}


def ground_truth_turns(data_dir: Path) -> list[tuple[str, list[str]]]:
    """(`<category>/<sample id>/<turn>`, calls) for each distinct non-empty ground-truth turn, first holder's key."""
    seen: set[tuple[str, ...]] = set()
    out: list[tuple[str, list[str]]] = []
    for category in CATEGORIES:
        text = (data_dir / "possible_answer" / f"BFCL_v4_{category}.json").read_text(encoding="utf-8")
        for line in text.splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            for number, turn in enumerate(entry["ground_truth"]):
                if turn and tuple(turn) not in seen:
                    seen.add(tuple(turn))
                    out.append((f"{category}/{entry['id']}/{number}", list(turn)))
    return out


def ground_truth_cases(data_dir: Path) -> list[Case]:
    """Every distinct ground-truth turn as a text step and as a function-calling step (texts first, as recorded)."""
    turns = ground_truth_turns(data_dir)
    prompts: list[Case] = []
    fc: list[Case] = []
    for index, (key, turn) in enumerate(turns):
        text = "[" + ", ".join(turn) + "]"
        variant = index % 4  # each turn once, as written or with one of the wrappings models add
        wrapped = (text, ", ".join(turn), f"```\n{text}\n```", f"\n {text} \n")[variant]
        prompts.append(Case(f"{key}/prompt", "prompt", wrapped))
        calls = []
        for call in turn:  # the data's calls are literal-only: literal_eval, never eval
            node = ast.parse(call, mode="eval").body
            assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name), call
            arguments = {keyword.arg: ast.literal_eval(keyword.value) for keyword in node.keywords}
            calls.append({node.func.id: json.dumps(arguments)})
        fc.append(Case(f"{key}/fc", "fc", calls))
    return prompts + fc


def case_digest(mode: str, raw: Any, calls: list[str] | None) -> str:
    """sha256 of `{mode, raw, calls}` (or `{mode, raw, raises: true}`) as canonical JSON."""
    record: dict[str, Any] = {"mode": mode, "raw": raw}
    if calls is None:
        record["raises"] = True
    else:
        record["calls"] = calls
    text = json.dumps(record, sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def total_digest(digests: dict[str, str]) -> str:
    """sha256 over every `key digest` line, keys sorted."""
    text = "".join(f"{key} {digests[key]}\n" for key in sorted(digests))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
