"""A BFCL result folder made of the recorded official verdicts: one row per sample, written in bfcl's own layout.

Standard library only: tests/unit/bfcl/multi_turn/record_leaderboard.py imports it in the scratch venv that has
bfcl-eval, so the figures it records are computed on the very rows the replay tests write.
"""

from __future__ import annotations

import json
import random
import tempfile
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any

NON_LIVE = {
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
}
SINGLE_TURN_VERDICTS = "conformance/official_verdicts.jsonl"
MULTI_TURN_VERDICTS = "conformance/multi_turn_official_verdicts.jsonl"


def pick_rows(verdicts: Path, mode: str = "prompt") -> dict[str, list[dict[str, Any]]]:
    """One row of a conformance file per sample of `mode`, by category: the one at crc32(id) modulo the sample's
    rows, in variant order, ties in file order (as tests/unit/bfcl/leaderboard_expected*.json were made)."""
    rows: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    with verdicts.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["mode"] == mode:
                rows[(row["category"], row["id"])].append(row)
    picked: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (category, sample_id), found in rows.items():
        found.sort(key=lambda row: row["variant"])
        picked[category].append(found[zlib.crc32(sample_id.encode()) % len(found)])
    return dict(picked)


#: the agentic categories the package runs, by the name their ids are made from, and what each synthetic answer
#: looks like (agentic_rows)
AGENTIC = {
    "memory_kv": "memory",
    "memory_vector": "memory",
    "memory_rec_sum": "memory",
    "web_search_base": "web_search",
    "web_search_no_snippet": "web_search",
}
SHAPES = ("answer", "read then answer", "wrong", "only a call", "no turn", "shouted", "inside a word")


def agentic_rows(answers: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """One prompt-mode result per question of each agentic category, as bfcl's result file holds it (`id`,
    `result`), its shape chosen by a seed of the id (SHAPES): some hold an accepted answer, some not. `answers`:
    per file name (`memory`, `web_search`) its possible answers, in order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for category, name in AGENTIC.items():
        rows = []
        for answer in answers[name]:
            entry_id = answer["id"].replace(name, category)
            accepted = answer["ground_truth"]
            shape = random.Random(entry_id).choice(SHAPES)
            result: Any = {
                "answer": [[accepted[0]]],
                "read then answer": [["[core_memory_list_keys()]", f"It is {accepted[-1]}."]],
                "wrong": [["I do not know."]],
                "only a call": [["[memory_retrieve()]"]],
                "no turn": [],
                "shouted": [[accepted[0].upper() + "!"]],
                "inside a word": [[f"un{accepted[0]}ed"]],
            }[shape]
            rows.append({"id": entry_id, "result": result})
        out[category] = rows
    return out


def format_rows(data_dir: Path, verdicts: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """One synthetic answer per format-sensitivity entry, (id, answer, bfcl's recorded label): one of
    format_sensitivity_cases.py's answers to the entry, picked by crc32 of its id; `verdicts` is fs_verdicts.json."""
    import format_sensitivity_cases as fs_cases

    labels, codes = verdicts["labels"], verdicts["verdicts"]
    by_entry: dict[int, list[tuple[Any, str]]] = {}
    for (_key, index, answer), code in zip(fs_cases.cases(data_dir), codes, strict=True):
        by_entry.setdefault(index, []).append((answer, labels[ord(code) - ord("A")]))
    rows = []
    for entry in fs_cases.entries(data_dir):
        answer, label = by_entry[entry.index][zlib.crc32(entry.id.encode()) % len(by_entry[entry.index])]
        rows.append((entry.id, answer, label))
    return rows


def possible_answers(text: str) -> list[dict[str, Any]]:
    """The rows of a possible-answer file's text."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def write_result_folder(folder: Path, picked: dict[str, list[dict[str, Any]]]) -> Path:
    """bfcl's own layout: <non_live|live|multi_turn>/BFCL_v4_<category>_result.json and
    agentic/[memory/<backend>/]BFCL_v4_<category>_result.json, JSON Lines of {"id", "result"}. A single-turn
    verdict row keeps the answer under "output", a multi-turn or agentic one under "result"."""
    for category, rows in picked.items():
        group = "multi_turn" if category.startswith("multi_turn_") else "non_live" if category in NON_LIVE else "live"
        if category == "format_sensitivity":
            group = "format_sensitivity"
        elif category.startswith("memory_"):
            group = f"agentic/memory/{category.removeprefix('memory_')}"
        elif category.startswith("web_search_"):
            group = "agentic"
        path = folder / group / f"BFCL_v4_{category}_result.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = (
            json.dumps({"id": row["id"], "result": row["output"] if "output" in row else row["result"]}) for row in rows
        )
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return folder


def accuracies(picked: dict[str, list[dict[str, Any]]]) -> dict[str, float]:
    """Each category's accuracy by the official verdicts of the picked rows."""
    return {category: sum(bool(row["valid"]) for row in rows) / len(rows) for category, rows in picked.items()}


def leaderboard_rows(helper: Any, table: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """bfcl's leaderboard arithmetic on a score table (`helper`: its eval_runner_helper module, in the scratch venv):
    per CSV file the one row it would write, by column, captured before it is formatted."""
    captured: dict[str, dict[str, Any]] = {}

    def capture(data: list[list[Any]], file_path: Path, header: list[str], **_: Any) -> None:
        (row,) = data
        captured[Path(file_path).name] = dict(zip(header, row, strict=True))

    helper.write_score_csv_file = capture
    with tempfile.TemporaryDirectory() as folder:
        helper.generate_leaderboard_csv(table, Path(folder))
    return captured
