"""The four multi-turn categories of BFCL v4, read from a data folder laid out as the wheel's (bfcl-multiturn §1).

A sample is the question entry joined with its possible answer (the two files aligned line by line, by id) and
completed as bfcl-eval's loader completes it at evaluation time (§1.3): the function docs of its involved
classes, in that order, with the held-out docs of `multi_turn_miss_func` moved out to the turn that reveals them.
The Python hint the loop sends with each doc is not added here: the request adds it where it needs it.
"""

from __future__ import annotations

import json
from pathlib import Path

from ....data.files import json_lines, read_text
from ....errors import DataError
from ....json_value import JSONObject, JSONValue
from ....text import did_you_mean
from ..data import answer_file, id_rows, question_file
from .sample import CATEGORIES, MultiTurnSample

#: class -> its file of function docs under multi_turn_func_doc/ (bfcl's MULTI_TURN_FUNC_DOC_FILE_MAPPING)
DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
}


def doc_file(root: Path, class_name: str) -> Path:
    return root / "multi_turn_func_doc" / DOC_FILES[class_name]


def load_samples(root: Path, category: str) -> list[MultiTurnSample]:
    """The samples of one multi-turn category in its file's order. A missing file, a line that is not JSON, an
    entry or a possible answer of the wrong shape, files that do not list the same ids in the same order, or a
    held-out function no involved class documents is a DataError naming the file (and line)."""
    if category not in CATEGORIES:
        hint = did_you_mean(category, CATEGORIES)
        raise DataError(f"{category!r} is no BFCL multi-turn category{f' ({hint})' if hint else ''}; they are "
                        f"{', '.join(CATEGORIES)}")
    questions_path, answers_path = question_file(root, category), answer_file(root, category)
    questions, answers = id_rows(questions_path), id_rows(answers_path)
    if len(questions) != len(answers):
        raise DataError(f"{answers_path}: {len(answers)} possible answers for the {len(questions)} entries of "
                        f"{questions_path}: bfcl pairs them line by line, give one answer per entry")
    docs: dict[str, list[str]] = {}  # class -> its docs as JSON texts, read once: each sample parses its own copies
    samples = []
    for index, ((number, entry), (answer_number, answer)) in enumerate(zip(questions, answers, strict=True)):
        where = f"{questions_path}:{number}"
        if answer["id"] != entry["id"]:
            raise DataError(f"{answers_path}:{answer_number}: the possible answer of {answer['id']!r} where "
                            f"{where} has {entry['id']!r}: bfcl pairs them line by line, keep both files in one order")
        sample_id = entry["id"]
        if not isinstance(sample_id, str) or not sample_id.startswith(f"{category}_"):
            raise DataError(f"{where}: id {sample_id!r} is not of {category} (expected {category}_<n>)")
        turns = read_turns(entry.get("question"), where)
        classes = entry.get("involved_classes")
        if not isinstance(classes, list) or not all(isinstance(name, str) and name in DOC_FILES for name in classes):
            raise DataError(f"{where}: involved_classes must list the API classes, of {', '.join(DOC_FILES)}")
        class_names = [name for name in classes if isinstance(name, str)]  # all of them
        config = entry.get("initial_config")
        if not isinstance(config, dict):
            raise DataError(f"{where}: initial_config must be an object (class -> its scenario)")
        for name in class_names:
            if name not in docs:
                docs[name] = read_docs(doc_file(root, name))
        functions: list[JSONObject] = [json.loads(doc) for name in class_names for doc in docs[name]]
        held_out = _hold_out(entry.get("missed_function", {}), functions, where)
        truth = _ground_truth(answer.get("ground_truth"), f"{answers_path}:{answer_number}")
        if len(truth) != len(turns):
            raise DataError(f"{answers_path}:{answer_number}: {len(truth)} ground-truth turns for the "
                            f"{len(turns)} turns of {sample_id}: give one list of calls per turn")
        samples.append(MultiTurnSample(category, index, sample_id, turns, class_names, config,
                                       functions, held_out, truth))
    return samples


def read_turns(question: JSONValue, where: str) -> list[list[JSONObject]]:
    if not isinstance(question, list) or not all(isinstance(turn, list) and all(isinstance(message, dict)
                                                                                for message in turn)
                                                 for turn in question):
        raise DataError(f"{where}: question must be a list of turns, each a list of messages")
    return [[message for message in turn if isinstance(message, dict)] for turn in question if isinstance(turn, list)]


def entry_object(entry: JSONValue, where: str) -> JSONObject:
    """A data line that must be an entry (an object); a DataError naming `where` otherwise."""
    if not isinstance(entry, dict):
        raise DataError(f"{where}: not an entry (an object)")
    return entry


def entry_text(entry: JSONValue, name: str, where: str) -> str:
    """An entry's text field `name`; a DataError naming `where` when it is missing or not text."""
    value = entry_object(entry, where).get(name)
    if not isinstance(value, str):
        raise DataError(f"{where}: {name} must be text")
    return value


def read_docs(path: Path) -> list[str]:
    """A class's function docs, one a line, in the file's order, each checked and kept as its JSON text."""
    docs = []
    for number, doc in json_lines(read_text(path), path):
        if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
            raise DataError(f"{path}:{number}: not a function doc (an object with a name)")
        docs.append(json.dumps(doc))
    return docs


def _hold_out(missed: JSONValue, functions: list[JSONObject], where: str) -> dict[int, list[JSONObject]]:
    """Moves each held-out doc from `functions` to the turn that reveals it (§1.3 step 2): the first doc of that
    name, turn by turn in the data's order; the key, a string in the data, becomes the turn's index."""
    if not isinstance(missed, dict):
        raise DataError(f"{where}: missed_function must be an object (turn index -> function names)")
    held_out: dict[int, list[JSONObject]] = {}
    for key, names in missed.items():
        if not key.isdecimal() or not isinstance(names, list):
            raise DataError(f"{where}: missed_function must map a turn index to a list of function names, not "
                            f"{key!r}: {names!r}")
        revealed = held_out.setdefault(int(key), [])
        for name in names:
            position = next((i for i, doc in enumerate(functions) if doc["name"] == name), None)
            if position is None:
                raise DataError(f"{where}: missed_function holds out {name!r}, which no involved class documents")
            revealed.append(functions.pop(position))
    return held_out


def _ground_truth(truth: JSONValue, where: str) -> list[list[str]]:
    if not isinstance(truth, list) or not all(isinstance(turn, list) and all(isinstance(call, str) for call in turn)
                                              for turn in truth):
        raise DataError(f"{where}: ground_truth must be a list of turns, each a list of call strings")
    return [[call for call in turn if isinstance(call, str)] for turn in truth if isinstance(turn, list)]
