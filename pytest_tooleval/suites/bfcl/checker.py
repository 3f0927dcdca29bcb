"""bfcl-eval's verdict on one single-turn answer: decoding, the AST checker, and the relevance rules (bfcl §3-§5).

`check_answer` is the whole of it: it decodes the answer (§3), then either applies the relevance rules (§5,
irrelevance, live_irrelevance and live_relevance) or checks the calls against the possible answers (§4). The
verdict carries bfcl's error type, messages of our own naming what was expected and what came, and the decoded
calls as JSON-plain data. Scoring is pure: the same inputs give the same verdict, and no input raises.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, TypeGuard

from ...json_value import JSONObject, JSONValue
from . import ast_rules
from .data import CATEGORIES as CATEGORY_GROUPS
from .data import RELEVANCE_CATEGORIES, language_of
from .decode import Language, decode_function_calls, decode_prompting
from .errors import DecodeError

__all__ = [
    "CATEGORIES",
    "RELEVANCE_CATEGORIES",
    "BfclVerdict",
    "Mode",
    "check_answer",
    "error_message",
    "is_call_format",
    "language_of",
    "plain",
]

Mode = Literal["prompt", "fc"]

CATEGORIES = tuple(CATEGORY_GROUPS)


@dataclass(frozen=True)
class BfclVerdict:
    """bfcl's verdict on one answer.

    Attributes:
        valid: whether bfcl counts the answer as correct.
        error_type: bfcl's error type (``"value_error:dict_value"``, ...), ``""`` when valid.
        errors: what went wrong, naming what was expected and what came.
        decoded: the decoded calls as JSON-plain data (``[{name: {argument: value}}]``), None if decoding failed.
    """

    valid: bool
    error_type: str
    errors: tuple[str, ...]
    decoded: JSONValue


def check_answer(
    category: str,
    mode: Mode,
    output: object,
    functions: list[JSONValue],
    ground_truth: list[JSONObject] | None,
) -> BfclVerdict:
    """bfcl's verdict on `output`, a text answer (`mode` "prompt") or recorded function calls ("fc")."""
    if category not in CATEGORIES:
        raise ValueError(f"not a BFCL single-turn category: {category!r}")
    relevance = category in RELEVANCE_CATEGORIES
    # the relevance categories are always decoded as Python (§5)
    language: Language = "python" if relevance else language_of(category)
    try:
        decoded = decode_function_calls(output) if mode == "fc" else decode_prompting(output, language)
    except DecodeError as exc:
        if relevance:
            return _relevance_verdict(category, None, decode_error=str(exc))
        return BfclVerdict(False, "ast_decoder:decoder_failed", (f"the answer does not decode: {exc}",), None)
    if relevance:
        return _relevance_verdict(category, decoded, decode_error=None)
    if not is_call_format(decoded):
        # (bfcl §4.8) a decoded answer that is not a list of {name: {arguments}} is a format error
        return BfclVerdict(
            False,
            "ast_decoder:decoder_wrong_output_format",
            (f"the decoded answer is not a list of {{function: {{arguments}}}} calls: {_short(decoded)}",),
            plain(decoded),
        )
    if ground_truth is None:
        raise ValueError(f"the category {category!r} needs its possible answers")
    outcome = ast_rules.check_calls(category, mode, language, functions, decoded, ground_truth)
    if outcome.valid:
        return BfclVerdict(True, "", (), plain(decoded))
    return BfclVerdict(False, outcome.error_type, outcome.errors, plain(decoded))


def is_call_format(decoded: object) -> TypeGuard[list[ast_rules.Call]]:
    """Whether `decoded` is a list of one-key dicts whose value is a dict, as bfcl requires (§4.8)."""
    if type(decoded) is not list:
        return False
    return all(type(call) is dict and len(call) == 1 and type(next(iter(call.values()))) is dict for call in decoded)


def _relevance_verdict(category: str, decoded: object, *, decode_error: str | None) -> BfclVerdict:
    """(bfcl §5) an answer holds a call when it decodes to a non-empty list of calls."""
    has_call = decode_error is None and is_call_format(decoded) and len(decoded) > 0
    shown = None if decode_error is not None else plain(decoded)
    if "irrelevance" in category:
        if not has_call:
            return BfclVerdict(True, "", (), shown)
        return BfclVerdict(
            False,
            "irrelevance_error:decoder_success",
            (f"expected no function call, but the answer decodes to calls: {_short(decoded)}",),
            shown,
        )
    if has_call:
        return BfclVerdict(True, "", (), shown)
    why = f"it does not decode ({decode_error})" if decode_error is not None else "it holds no call"
    return BfclVerdict(False, "relevance_error:decoder_failed", (f"expected a function call, but {why}",), shown)


def error_message(verdict: BfclVerdict) -> str:
    """One line: the error type, then what was expected and what came (empty for a valid verdict)."""
    if verdict.valid:
        return ""
    details = "; ".join(verdict.errors)
    return f"{verdict.error_type}: {details}" if details else verdict.error_type


# --- JSON-plain values ------------------------------------------------------------------------------------------

_MAX_PLAIN_DEPTH = 60


def plain(value: object, depth: int = 0) -> JSONValue:
    """`value` as JSON-plain data: tuples and sets become lists, odd scalars and keys become strings."""
    if depth > _MAX_PLAIN_DEPTH:
        return "..."
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        try:
            str(value)
        except ValueError:
            return hex(value)  # beyond Python's decimal conversion limit
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return [plain(item, depth + 1) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((plain(item, depth + 1) for item in value), key=repr)
    if isinstance(value, dict):
        return {_plain_key(key): plain(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (bytes, bytearray)):
        return ast_rules.safe_repr(bytes(value))
    return ast_rules.safe_repr(value)


def _plain_key(key: object) -> str:
    if isinstance(key, str):
        return key
    if key is None:
        return "null"  # a **mapping argument, or a positional Java/JavaScript value
    return ast_rules.safe_repr(key)


def _short(value: object) -> str:
    return ast_rules.safe_repr(value, limit=200)
