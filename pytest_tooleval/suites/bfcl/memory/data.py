"""BFCL v4's memory categories read from a data folder laid out as the wheel's (docs/bfcl.md#memory).

Each backend's category (`memory_kv`, `memory_vector`, `memory_rec_sum`) is the 155 questions of
`BFCL_v4_memory.json`, each joined with its accepted answers, and before them, per scenario, that scenario's
prerequisite conversations (`memory_prereq_conversation/memory_<scenario>.json`), which write the memory the
questions read. Ids and dependencies are bfcl's: `memory` in an id becomes the category (`memory_kv_prereq_0-
customer-0`, `memory_kv_3-customer-3`); a prerequisite depends on the ones before it in its file, a question on
all of its scenario's. The order is bfcl's loader's too: the prerequisites of the scenarios in reverse order of
its scenario list, then the questions in file order.

What the request adds is not added here (the answer-format message, the memory system prompt, the Python hint of
the function docs): the request adds it where it needs it, as for the multi-turn categories.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from ....data.files import json_lines, read_text
from ....errors import DataError
from ....json_value import JSONObject
from ....text import did_you_mean
from ..data import answer_file, id_rows, question_file
from ..multi_turn.data import entry_object, entry_text, read_docs, read_turns

BACKENDS = ("kv", "vector", "rec_sum")
CATEGORIES = tuple(f"memory_{backend}" for backend in BACKENDS)
#: bfcl's MEMORY_SCENARIO_NAME, in its order (the prerequisites come out in the reverse of it)
SCENARIOS = ("student", "customer", "finance", "healthcare", "notetaker")
#: backend -> the class name bfcl's entries name, and its file of function docs under multi_turn_func_doc/
CLASSES = {backend: f"MemoryAPI_{backend}" for backend in BACKENDS}
DOC_FILES = {backend: f"memory_{backend}.json" for backend in BACKENDS}


@dataclass(frozen=True)
class MemoryEntry:
    """One prerequisite conversation or question of a memory category.

    Attributes:
        category: `memory_<backend>`.
        id: bfcl's id in that category.
        scenario: the user the conversation is about (one of SCENARIOS).
        prerequisite: a conversation that writes memory (no answer is checked), or a question.
        depends_on: the ids that must run before it, in order.
        turns: the user turns as the data has them, each a list of messages.
        functions: the backend's function docs, in their file's order, without the Python hint.
        accepted: a question's accepted answers (empty for a prerequisite).
        index: its position in the category, in bfcl's order.
    """

    category: str
    id: str
    scenario: str
    prerequisite: bool
    depends_on: tuple[str, ...]
    turns: list[list[JSONObject]] = field(repr=False)
    functions: list[JSONObject] = field(repr=False)
    accepted: tuple[str, ...] = ()
    index: int = 0

    @property
    def backend(self) -> str:
        return self.category.removeprefix("memory_")

    @property
    def first_of_scenario(self) -> bool:
        """The first prerequisite of its scenario, which starts from an empty memory (bfcl's test: `prereq` in the
        id and an id that ends in `-0`)."""
        return "prereq" in self.id and self.id.endswith("-0")


def load_entries(root: Path, category: str) -> list[MemoryEntry]:
    """The entries of one memory category in bfcl's order. A missing file, a line that is not JSON, an entry of
    the wrong shape, an unknown scenario, or question and answer files that do not list the same ids in the same
    order is a DataError naming the file (and line)."""
    if category not in CATEGORIES:
        hint = did_you_mean(category, CATEGORIES)
        raise DataError(f"{category!r} is no BFCL memory category{f' ({hint})' if hint else ''}; they are "
                        f"{', '.join(CATEGORIES)}")
    backend = category.removeprefix("memory_")
    functions_text = read_docs(root / "multi_turn_func_doc" / DOC_FILES[backend])
    prerequisites: dict[str, list[MemoryEntry]] = {}
    for scenario in SCENARIOS:
        path = root / "memory_prereq_conversation" / f"memory_{scenario}.json"
        ids: list[str] = []
        entries = []
        for number, entry in json_lines(read_text(path), path):
            where = f"{path}:{number}"
            entry_id = _renamed(entry_text(entry, "id", where), category)
            entries.append(MemoryEntry(category, entry_id, scenario, True, tuple(ids),
                                       read_turns(entry_object(entry, where).get("question"), where),
                                       _functions(functions_text)))
            ids.append(entry_id)
        prerequisites[scenario] = entries
    questions_path, answers_path = question_file(root, "memory"), answer_file(root, "memory")
    questions, answers = id_rows(questions_path), id_rows(answers_path)
    if len(questions) != len(answers):
        raise DataError(f"{answers_path}: {len(answers)} possible answers for the {len(questions)} entries of "
                        f"{questions_path}: bfcl pairs them line by line, give one answer per entry")
    out = [entry for scenario in reversed(SCENARIOS) for entry in prerequisites[scenario]]
    for (number, entry), (answer_number, answer) in zip(questions, answers, strict=True):
        where = f"{questions_path}:{number}"
        if answer["id"] != entry["id"]:
            raise DataError(f"{answers_path}:{answer_number}: the possible answer of {answer['id']!r} where "
                            f"{where} has {entry['id']!r}: bfcl pairs them line by line, keep both files in one order")
        scenario = entry_text(entry, "scenario", where)
        if scenario not in prerequisites:
            raise DataError(f"{where}: scenario {scenario!r} is none of {', '.join(SCENARIOS)}")
        accepted = answer.get("ground_truth")
        if not isinstance(accepted, list) or not all(isinstance(text, str) for text in accepted):
            raise DataError(f"{answers_path}:{answer_number}: ground_truth must be a list of accepted answers")
        out.append(MemoryEntry(category, _renamed(entry_text(entry, "id", where), category), scenario, False,
                               tuple(prior.id for prior in prerequisites[scenario]),
                               read_turns(entry.get("question"), where), _functions(functions_text),
                               tuple(text for text in accepted if isinstance(text, str))))
    return [dataclasses.replace(entry, index=index) for index, entry in enumerate(out)]


def _renamed(entry_id: str, category: str) -> str:
    return entry_id.replace("memory", category)  # bfcl's str.replace: every occurrence



def _functions(texts: list[str]) -> list[JSONObject]:
    """Each entry's own copies of the docs (a request may edit them)."""
    return [json.loads(text) for text in texts]
