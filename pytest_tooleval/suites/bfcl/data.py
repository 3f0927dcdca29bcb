"""The 13 single-turn categories of BFCL v4, read from a data folder laid out as the wheel's (bfcl §1).

A sample is the question entry (`{"id", "question", "function"}`) joined by id with its possible answer
(`{"id", "ground_truth"}`); the three relevance categories have no possible answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ...data.files import json_lines, read_text
from ...errors import DataError
from ...json_value import JSONObject, JSONValue
from ...text import did_you_mean
from .memory.backends import RUNNABLE as MEMORY_BACKENDS
from .multi_turn.sample import CATEGORIES as MULTI_TURN

#: category -> its leaderboard group, in the leaderboard's column order (bfcl §6)
CATEGORIES: dict[str, str] = {
    "simple_python": "non_live",
    "simple_java": "non_live",
    "simple_javascript": "non_live",
    "multiple": "non_live",
    "parallel": "non_live",
    "parallel_multiple": "non_live",
    "irrelevance": "non_live",
    "live_simple": "live",
    "live_multiple": "live",
    "live_parallel": "live",
    "live_parallel_multiple": "live",
    "live_irrelevance": "live",
    "live_relevance": "live",
}
#: the memory categories (docs/bfcl.md#memory: memory_vector's samples skip where its model is not installed)
MEMORY = tuple(f"memory_{backend}" for backend in MEMORY_BACKENDS)
#: the web search categories (docs/bfcl.md#web-search)
WEB_SEARCH = ("web_search_base", "web_search_no_snippet")
#: reported beside Overall Acc, not in it (docs/bfcl.md#format-sensitivity)
FORMAT_SENSITIVITY = "format_sensitivity"
#: bfcl's own names for sets of categories (`bfcl generate --test-category`)
GROUPS: dict[str, tuple[str, ...]] = {
    "all": (*CATEGORIES, *MULTI_TURN, *MEMORY, *WEB_SEARCH, FORMAT_SENSITIVITY),
    "all_scoring": (*CATEGORIES, *MULTI_TURN, *MEMORY, *WEB_SEARCH),
    "single_turn": tuple(CATEGORIES),
    "multi_turn": MULTI_TURN,
    "non_live": tuple(name for name, group in CATEGORIES.items() if group == "non_live"),
    "live": tuple(name for name, group in CATEGORIES.items() if group == "live"),
    "python": tuple(name for name in CATEGORIES if name not in ("simple_java", "simple_javascript")),
    "non_python": ("simple_java", "simple_javascript"),
    "memory": MEMORY,
    "web_search": WEB_SEARCH,
    "agentic": (*MEMORY, *WEB_SEARCH),
}


def chosen_categories(names: Sequence[str]) -> tuple[str, ...]:
    """--tooleval-bfcl-categories with bfcl's group names (GROUPS) spelt out, in the leaderboard's order, each
    once; () stays () (the 13 single-turn categories). An unknown name is a DataError with the closest one."""
    known = (*CATEGORIES, *MULTI_TURN, *MEMORY, *WEB_SEARCH, FORMAT_SENSITIVITY)
    unknown = [name for name in names if name not in known and name not in GROUPS]
    if unknown:
        hint = did_you_mean(unknown[0], (*known, *GROUPS))
        raise DataError(f"--tooleval-bfcl-categories: unknown {', '.join(unknown)}{f' ({hint})' if hint else ''}; "
                        f"the categories are {', '.join(known)}, and bfcl's groups {', '.join(GROUPS)}")
    wanted = {category for name in names for category in GROUPS.get(name, (name,))}
    return tuple(category for category in known if category in wanted)


#: categories scored by whether the answer decodes to a call at all, not against possible answers (bfcl §5)
RELEVANCE_CATEGORIES = frozenset({"irrelevance", "live_irrelevance", "live_relevance"})
Language = Literal["python", "java", "javascript"]


def language_of(category: str) -> Language:
    """The language bfcl asks, decodes and type-checks a category in: it reads it off the category's name
    (bfcl §2.1.2)."""
    if "javascript" in category:
        return "javascript"
    return "java" if "java" in category else "python"


#: how many samples each category holds in bfcl-eval 2026.3.23 (a folder with other counts is not that data)
SIZES: dict[str, int] = {
    "simple_python": 400, "simple_java": 100, "simple_javascript": 50, "multiple": 200, "parallel": 200,
    "parallel_multiple": 200, "irrelevance": 240, "live_simple": 258, "live_multiple": 1053, "live_parallel": 16,
    "live_parallel_multiple": 24, "live_irrelevance": 884, "live_relevance": 16,
}


@dataclass(frozen=True)
class Sample:
    """One BFCL question with what it is scored against.

    Attributes:
        category: one of CATEGORIES.
        index: position in the category's file.
        entry: the question entry as the file has it (`id`, `question`: a list of turns, each a list of
            messages; `function`: the function docs).
        ground_truth: the possible answers (`[{function name: {parameter: [acceptable values]}}]`), None for the
            relevance categories.
    """

    category: str
    index: int
    entry: JSONObject = field(repr=False)
    ground_truth: list[JSONObject] | None = field(repr=False)

    @property
    def id(self) -> str:
        return str(self.entry["id"])

    @property
    def functions(self) -> list[JSONValue]:
        """The function docs (the loader checked they are a list; each is read as bfcl reads it)."""
        functions = self.entry["function"]
        return functions if isinstance(functions, list) else []

    @property
    def group(self) -> str:
        return CATEGORIES[self.category]


def question_file(root: Path, category: str) -> Path:
    return root / f"BFCL_v4_{category}.json"


def answer_file(root: Path, category: str) -> Path:
    return root / "possible_answer" / f"BFCL_v4_{category}.json"


def load_samples(root: Path, categories: Sequence[str] = ()) -> list[Sample]:
    """The samples of `categories` (all 13 when empty), in the leaderboard's category order and each file's own
    order. A missing file, a line that is not JSON, or a question without its possible answer is a DataError
    naming the file and line."""
    chosen = list(categories) or list(CATEGORIES)
    unknown = [name for name in chosen if name not in CATEGORIES]
    if unknown:
        hint = did_you_mean(unknown[0], CATEGORIES)
        raise DataError(f"--tooleval-bfcl-categories: unknown {', '.join(unknown)}{f' ({hint})' if hint else ''}; "
                        f"the single-turn categories are {', '.join(CATEGORIES)}")
    samples: list[Sample] = []
    for category in CATEGORIES:
        if category not in chosen:
            continue
        questions = id_rows(question_file(root, category))
        answers: dict[str, list[JSONObject]] | None = None
        if category not in RELEVANCE_CATEGORIES:
            path = answer_file(root, category)
            answers = {}
            for number, row in id_rows(path):
                answers[str(row.get("id"))] = _ground_truth(row, path, number)
        for index, (number, entry) in enumerate(questions):
            if not isinstance(entry.get("function"), list) or not isinstance(entry.get("question"), list):
                raise DataError(f"{question_file(root, category)}:{number}: not a BFCL question entry")
            truth = None
            if answers is not None:
                truth = answers.get(str(entry.get("id")))
                if truth is None:
                    raise DataError(f"{answer_file(root, category)}: no possible answer for {entry.get('id')!r}")
            samples.append(Sample(category, index, entry, truth))
    return samples


def id_rows(path: Path) -> list[tuple[int, JSONObject]]:
    """The rows of a JSON Lines file with their line numbers; a row that is no object with an id is a DataError."""
    rows = []
    for number, row in json_lines(read_text(path), path):
        if not isinstance(row, dict) or "id" not in row:
            raise DataError(f"{path}:{number}: a row without an id")
        rows.append((number, row))
    return rows


def _ground_truth(row: JSONObject, path: Path, number: int) -> list[JSONObject]:
    truth = row.get("ground_truth")
    if not isinstance(truth, list) or not all(isinstance(call, dict) for call in truth):
        raise DataError(f"{path}:{number}: ground_truth is not a list of calls")
    return [call for call in truth if isinstance(call, dict)]  # all of them
