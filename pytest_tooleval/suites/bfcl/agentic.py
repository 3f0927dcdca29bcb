"""bfcl's checker of its agentic categories, web search and memory: the model's last message that is no call must
hold one of the accepted answers (docs/bfcl.md#the-agentic-checker).

`check_agentic` reproduces `_evaluate_single_agentic_entry` and `agentic_checker` of bfcl-eval 2026.3.23 on a
stored result, quirks included (each marked `A1`..`A6`, described in that docs section). It is pure: the steps are
decoded with the multi-turn decoders (multi_turn/decode.py), which parse and never evaluate text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ...errors import SampleError
from ...json_value import JSONValue
from ...verdict import Verdict
from .multi_turn.decode import Undecodable, decode_fc, decode_prompt

# the characters bfcl's standardisation takes out (it keeps whitespace, whatever its docstring says: A5)
_DROPPED = re.compile(r"[,./\-_*^()]")

INFERENCE_ERROR = "agentic:inference_error"
NO_LAST_MESSAGE = "agentic:no_last_message"
ANSWER_NOT_FOUND = "agentic:answer_not_found"


@dataclass(frozen=True)
class AgenticVerdict:
    """What bfcl decides of one agentic entry: valid, or the error type and message it records; `answer` is the
    message it searched (None when it found none)."""

    valid: bool
    error_type: str = ""
    error: str = ""
    answer: object = None


def standardized(text: str) -> str:
    """Text as bfcl compares it: without `, . / - _ * ^ ( )`, lower case, single quotes made double (A5)."""
    return _DROPPED.sub("", text).lower().replace("'", '"')


def check_agentic(result: JSONValue, accepted: Sequence[str], decode: Callable[[JSONValue], list[str]]
                  ) -> AgenticVerdict:
    """bfcl's verdict on one stored agentic result.

    Args:
        result: the result entry's `result`: a list of one turn, the turn a list of steps (A1).
        accepted: the entry's `ground_truth`, the answers any one of which passes.
        decode: the protocol's step decoder (`decode_fc` or `decode_prompt`); a step it cannot decode, or decodes to
            no call, is a message.
    """
    if type(result) is not list or len(result) != 1:  # A1: exactly a list of one turn
        return AgenticVerdict(False, INFERENCE_ERROR, "Model did not output a list of model responses.")
    last: object = None
    for step in _steps(result[0]):
        try:
            calls = decode(step)
        except Undecodable:
            last = step
            continue
        if not calls or (len(calls) == 1 and not calls[0]):  # upstream's is_empty_execute_response
            last = step
    if not last:  # A3: a falsy last message ("" or []) counts as none
        return AgenticVerdict(False, NO_LAST_MESSAGE, "Cannot find the last chat message that is not a function call.")
    if _found(last, accepted):
        return AgenticVerdict(True, answer=last)
    return AgenticVerdict(False, ANSWER_NOT_FOUND, "None of the expected answers were found in the model response.",
                          answer=last)


def agentic_verdict(output: JSONValue, accepted: Sequence[str], protocol: str, **details: JSONValue) -> Verdict:
    """bfcl's verdict on a stored agentic result in `protocol` ("fc" or "prompt") as a report keeps it: on a
    failure, the message it searched (as text) beside `details`."""
    found = check_agentic(output, accepted, decode_fc if protocol == "fc" else decode_prompt)
    kept: dict[str, JSONValue] = {"mode": protocol, **details}
    if found.valid:
        return Verdict(True, details=kept)
    shown = found.answer if found.answer is None or isinstance(found.answer, str) else str(found.answer)
    return Verdict(False, found.error_type, found.error, details={**kept, "answer": shown})


def oracle_result(entry_id: str, accepted: Sequence[str]) -> list[JSONValue]:
    """The result a model answering with the first accepted answer leaves: one turn of one text step (a text is no
    call in either protocol)."""
    if not accepted:
        raise SampleError(f"bfcl {entry_id}: no accepted answer to render")
    return [[accepted[0]]]


def _steps(turn: JSONValue) -> Iterable[JSONValue]:
    """What upstream's `for` takes from a turn (A2): a list's steps, a text's characters, an object's keys; a number,
    a boolean or null, which Python cannot iterate, crash bfcl's evaluation: here they are a turn of no step."""
    if isinstance(turn, list):
        return turn
    if isinstance(turn, (str, dict)):
        return list(turn)
    return ()


def _found(message: object, accepted: Sequence[str]) -> bool:
    """Whether an accepted answer stands in the message as a whole word run (A4, A6)."""
    if type(message) is list:  # A4: a list stands for its first element
        message = message[0]
    # A4: anything else as Python's str() prints it (dicts with single quotes, True, None): JSON values only
    text = message if type(message) is str else str(message)
    searched = standardized(text)
    return any(re.search(rf"\b{re.escape(standardized(answer))}\b", searched) for answer in accepted)

