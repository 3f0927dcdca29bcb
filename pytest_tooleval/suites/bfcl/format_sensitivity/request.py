"""The request bfcl's prompting handler sends for one format-sensitivity entry (docs/bfcl.md#format-sensitivity).

As for any single-turn question (requests.py), but the system prompt is the one of the entry's configuration,
and every function description carries the Python hint twice: bfcl's loader hints the docs when it reads the
question's own category, and again when it completes the format-sensitivity entries made of them.
"""

from __future__ import annotations

import copy

from ....json_value import JSONObject, JSONValue
from ...json_ops import as_getter, as_object
from ..requests import BfclRequest, hinted_functions
from ..templates import Templates
from .entries import CATEGORY, Entry
from .prompts import FormatPrompts


def entry_functions(templates: Templates, entry: Entry) -> list[JSONObject]:
    """The entry's function docs as bfcl sends them: hinted for the question's category, then for this one."""
    once = hinted_functions(templates, entry.sample.category, entry.sample.entry["function"])
    return hinted_functions(templates, CATEGORY, list(once))


def entry_request(templates: Templates, prompts: FormatPrompts, entry: Entry) -> BfclRequest:
    """The messages of the entry's first turn with its configuration's system prompt put first: before the
    question's own system text when it has one (joined by a blank line), else as a message of its own."""
    system = prompts.system_prompt(entry.config, entry_functions(templates, entry))
    turns = entry.sample.entry["question"]
    messages: list[JSONValue] = copy.deepcopy(as_object_list(turns[0] if isinstance(turns, list) else None))
    first = as_getter(messages[0]) if messages else {}
    if first.get("role") == "system":
        as_object(messages[0])["content"] = f"{system}\n\n{first.get('content')}"
    else:
        messages.insert(0, {"role": "system", "content": system})
    return BfclRequest(messages, None)


def as_object_list(value: JSONValue) -> list[JSONValue]:
    """A turn's messages (a list); a TypeError for anything else."""
    if not isinstance(value, list):
        raise TypeError(f"a turn is a {type(value).__name__}, not a list of messages")
    return value
