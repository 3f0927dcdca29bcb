"""The per-sample payload that rides on test reports (user_properties) from any worker to the controller.

Plain JSON-safe dicts, versioned, so `-n0` and `-n8` share one path (xdist serialises reports).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .json_value import JSONObject, JSONValue
from .outcome import SampleResult
from .text import clip, plain_data, strings_mapped

if TYPE_CHECKING:
    from .suites.base import Case

PROPERTY = "tooleval"
PAYLOAD_VERSION = 1
OUTPUT_LIMIT = 20_000  # characters of raw output kept per sample in reports


def json_safe(value: Mapping[str, object]) -> JSONObject:
    """Round-trip through JSON: tuples become lists, odd keys and objects become strings, text `plain_text`. A
    field that cannot make the trip (nested past the JSON encoder's depth) is kept as a note, so that the
    sample's verdict still travels (docs/reliability.md)."""
    try:
        return _round_trip(value)
    except (RecursionError, ValueError, TypeError):
        kept: JSONObject = {}
        for name, item in value.items():
            try:
                kept[name] = _round_trip({"v": item})["v"]
            except (RecursionError, ValueError, TypeError) as exc:
                kept[name] = f"<not kept: {type(exc).__name__} when written as JSON>"
        return kept


def _round_trip(value: Mapping[str, object]) -> JSONObject:
    safe: JSONObject = plain_data(json.loads(json.dumps(value, default=str, ensure_ascii=False,
                                                            skipkeys=False)))
    return safe


def as_property(payload: JSONObject) -> str:
    """The payload as it rides on a report: JSON text. xdist's pipe (execnet) refuses values JSON takes (an
    integer below -2**31 a model wrote in a call, say, crashed the whole run); a string always travels."""
    return json.dumps(payload, ensure_ascii=False, allow_nan=True)


def from_property(value: object) -> JSONObject | None:
    """A payload from a report's property (`as_property`'s text), or None for anything else."""
    if isinstance(value, dict):  # a payload attached in this process before it was encoded
        return value
    if not isinstance(value, str):
        return None
    try:
        payload = json.loads(value)
    except (ValueError, RecursionError):
        return None
    return payload if isinstance(payload, dict) else None


def case_fields(case: Case, category_size: int) -> JSONObject:
    fields: JSONObject = {
        "v": PAYLOAD_VERSION,
        "suite": case.suite,
        "id": case.id,
        "category": case.category,
        "language": case.language,
        "index": case.index,
        "category_size": category_size,
        "test_id": case.test_id,  # the pytest id (-k selects it; a merge of shards checks by it)
    }
    if case.variant:  # only then: rows of the default protocol are what they always were
        fields["variant"] = case.variant
    if case.revision:  # the benchmark's revision the sample was scored against (an optional Case member)
        fields["revision"] = case.revision
    if case.data_unverified:  # its data was not checked against the revision's pin
        fields["data_unverified"] = True
    if case.repeat > 1:  # --tooleval-repeats: rows without it are the first ask
        fields["repeat"] = case.repeat
    return fields


def row_key_or_none(row: Mapping[str, JSONValue]) -> tuple[str, str, str, str, int] | None:
    """`row_key` of a row read from a file, which may lack the fields."""
    try:
        return row_key(row)
    except KeyError:
        return None


def row_key(row: Mapping[str, JSONValue]) -> tuple[str, str, str, str, int]:
    """What tells one sample's row from another's: the same sample in two variants, or asked twice, is two rows."""
    return (_key_text(row, "suite"), _key_text(row, "language"), _key_text(row, "id"), _key_text(row, "variant", ""),
            _whole(row.get("repeat", 1)))


def _key_text(row: Mapping[str, JSONValue], name: str, default: str | None = None) -> str:
    """A text member of the key: a KeyError when it is missing (and has no default) or is no text, as for a row
    the document reads (document.py `SampleRow.key`)."""
    value = row.get(name, default)
    if not isinstance(value, str):
        raise KeyError(name)
    return value


def _whole(value: JSONValue) -> int:
    """``int(value)``: a TypeError for a list, an object or None (as report/row.py `whole`, which sits above)."""
    if isinstance(value, (int, float, str)):
        return int(value)
    raise TypeError(f"int() argument must be a string or a real number, not '{type(value).__name__}'")


def result_payload(case: Case, category_size: int, result: SampleResult, scorer: str) -> JSONObject:
    verdict = result.verdict
    passed = verdict.passed(scorer)
    output = clipped_strings(result.output)  # a model's text, hostile ones' megabytes included: cut in each field
    payload: dict[str, object] = {**case_fields(case, category_size)}
    payload.update(
        outcome="passed" if passed else "failed",
        valid=verdict.valid,
        error_type=verdict.error_type,
        error=clipped_strings(verdict.error),
        output=output,
        calls=clipped_strings(verdict.calls),
        process=verdict.process,
        details=clipped_strings(verdict.details),
        latency_s=round(result.latency_s, 4),
        tokens=result.tokens,
    )
    if result.transcript is not None:
        payload["transcript"] = result.transcript
    if result.reasoning is not None:
        payload["reasoning"] = clip(result.reasoning, OUTPUT_LIMIT)
    if result.cached_tokens:
        payload["cached_tokens"] = result.cached_tokens
    if result.finish_reason is not None:  # the model's, when the sample asked it once
        payload["finish_reason"] = result.finish_reason
    if result.cut:  # replies that stopped at max_tokens, per role (a rollout's several requests counted)
        payload["cut"] = result.cut
    if result.tool_answers:
        payload["tool_answers"] = result.tool_answers
    if result.source is not None:  # where the answer came from: asked, the response cache, a replay
        payload["source"] = result.source
    if result.cached_at is not None:
        payload["cached_at"] = round(result.cached_at, 3)
    if result.cached_runs:
        payload["cached_runs"] = list(result.cached_runs)
    return json_safe(payload)


def clipped_strings(value: object) -> object:
    """`value` with every string in it, keys too, cut to OUTPUT_LIMIT (tuples made lists, as JSON has them): a
    structured output (a multi-turn result, tool calls) and a verdict's error, decoded calls and details carry a
    model's text as it came, megabytes of it from a hostile model; a value too deep to walk is TOO_DEEP."""
    return strings_mapped(value, _clip_output, tuples=False)


def _clip_output(text: str) -> str:
    return clip(text, OUTPUT_LIMIT)


def error_payload(case: Case, category_size: int, reason: str, outcome: str = "error") -> JSONObject:
    payload = case_fields(case, category_size)
    payload.update(outcome=outcome, valid=None, error_type="", error=reason, output=None)
    return payload
