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


def write_result_folder(folder: Path, picked: dict[str, list[dict[str, Any]]], usage: bool = False) -> Path:
    """bfcl's own layout: <non_live|live|multi_turn>/BFCL_v4_<category>_result.json and
    agentic/[memory/<backend>/]BFCL_v4_<category>_result.json, JSON Lines of {"id", "result"}. A single-turn
    verdict row keeps the answer under "output", a multi-turn or agentic one under "result". With `usage`, each row
    also carries the latency and token counts bfcl's generation records (`usage_fields`)."""
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
            json.dumps(
                {
                    "id": row["id"],
                    "result": row["output"] if "output" in row else row["result"],
                    **(usage_fields(category, row["id"]) if usage else {}),
                }
            )
            for row in rows
        )
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return folder


#: what a row's latency and token counts look like (usage_fields), by weight
USAGE_SHAPES = {"measured": 14, "some zeros": 3, "inference error": 1, "odd values": 2}
#: per request, as bfcl's handlers record them: seconds, and the endpoint's prompt and completion token counts
_KEYS = ("latency", "input_token_count", "output_token_count")


def usage_fields(category: str, entry_id: str) -> dict[str, Any]:
    """The latency and token counts bfcl's generation writes into a result row, seeded by the id: one value per key
    for a single-turn row (and a format-sensitivity entry), a list per turn of one value per request for a
    multi-turn or agentic one; some zero, some rows with none (an inference error keeps only its traceback), and
    some values bfcl's leaderboard skips or counts oddly (text, null, a flat list, a list inside a turn, booleans)."""
    seed = random.Random(f"usage:{entry_id}")
    shape = seed.choices(list(USAGE_SHAPES), weights=list(USAGE_SHAPES.values()))[0]
    if shape == "inference error":
        return {"traceback": "Traceback (most recent call last): ..."}
    turns = category.startswith(("multi_turn_", "memory_", "web_search_"))

    def request() -> list[Any]:
        return [round(seed.uniform(0.2, 9.0), seed.choice((2, 3, 17))), seed.randint(80, 6000), seed.randint(3, 700)]

    if not turns:
        values = request()
        if shape == "some zeros":
            values[seed.randrange(3)] = seed.choice((0, 0.0, False))
        elif shape == "odd values":
            values[seed.randrange(3)] = seed.choice(("1.5", None, [1.0, 2.0], True, {"total": 3}))
        return dict(zip(_KEYS, values, strict=True))
    grid = [[request() for _ in range(seed.randint(1, 3))] for _ in range(seed.randint(1, 4))]
    fields: dict[str, Any] = {key: [[step[index] for step in turn] for turn in grid] for index, key in enumerate(_KEYS)}
    if shape == "some zeros":
        key = seed.choice(_KEYS)
        fields[key][seed.randrange(len(grid))][0] = seed.choice((0, 0.0, False))
    elif shape == "odd values":
        key = seed.choice(_KEYS)
        odd = seed.choice(("flat", "nested", "text", "true", "null turn"))
        if odd == "flat":  # not a list of lists: bfcl's leaderboard skips it whole
            fields[key] = [value for turn in fields[key] for value in turn]
        elif odd == "nested":
            fields[key][0].append([1.0, 2.0])
        elif odd == "text":
            fields[key][-1][-1] = "2.5"
        elif odd == "true":
            fields[key][0][0] = True
        else:
            fields[key][0] = None  # a turn that is no list: the whole value is skipped
    return fields


def write_prerequisites(folder: Path) -> Path:
    """bfcl writes the memory prerequisite conversations' results beside the questions': its leaderboard reads
    neither their verdicts nor their counts, so these are made to stand out were they counted."""
    path = folder / "agentic" / "memory" / "kv" / "BFCL_v4_memory_kv_prereq_result.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    row = {
        "id": "memory_kv_prereq_0-student-0",
        "result": "not a list of turns",
        "latency": [[500.0, 700.0]],
        "input_token_count": [[10**6, 10**6]],
        "output_token_count": [[10**6]],
    }
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


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
