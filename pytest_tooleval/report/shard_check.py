"""A shard's report as the merge reads it: strict JSON, the fields the merge reads of the types and in the ranges
the plugin writes them, and consistent with itself (its rows against what it collected).

The merge trusts nothing a CI artefact holds: a file may be cut short, edited, or written by something else.
Whatever is wrong with it is one line naming the file and the field (`ToolevalUsageError`, exit status 2), or,
for rows that are missing, the count the merge names as incomplete (`Shard.missing`); never a traceback and never
a figure computed from rows the shard did not have.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from ..data.files import FileRefused, read_bytes
from ..errors import ToolevalUsageError
from ..text import counted
from .document import ReportDocument

# levels of nesting a report may have: the plugin's own have about ten, unless a model's output decoded to values
# nested some 90 levels deeper (its shard is then refused, with the place named)
MAX_DEPTH = 100
MAX_SHARDS = 10_000  # the largest split a merge takes (it names every missing shard)
DAMAGED = "a damaged report: run its shard again"

# -- strict JSON ------------------------------------------------------------------------------------------------

_ESCAPE = re.compile(r"\\.", re.DOTALL)
_STRING = re.compile(r'"[^"]*"')  # once the escapes are gone
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},:]', re.DOTALL)


@dataclass(frozen=True)
class _NonFinite:
    """What the decoder read for NaN, Infinity, -Infinity or a number too large for a float (1e999999)."""

    text: str


def _constant(text: str) -> _NonFinite:
    return _NonFinite(text)


def _float(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


def read_strict(path: str, what: str, hint: str) -> Any:
    """The JSON value of the report at `path` (`loads_strict`), or a usage error of one line: no such file (with
    `hint`, what to name instead), a file that cannot be read or is not UTF-8."""
    try:
        text = read_bytes(Path(path)).decode("utf-8")
    except FileNotFoundError:
        raise ToolevalUsageError(f"{what}: no such file {path}: {hint}") from None
    except FileRefused as exc:
        raise ToolevalUsageError(f"{what}: {path}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolevalUsageError(f"{what}: {path} is not a JSON report ({exc})") from None
    return loads_strict(path, text, what)


def loads_strict(path: str, text: str, what: str = "merge") -> Any:
    """The JSON value of `text`, or a usage error of one line: nesting deeper than MAX_DEPTH (found before the
    decoder recurses), a non-finite number (NaN, Infinity, 1e999999), text that is not JSON."""
    if _depth(text) > MAX_DEPTH:
        raise ToolevalUsageError(f"{what}: {path} nests deeper than {MAX_DEPTH} levels, at {_deep_path(text)} "
                                 f"(a report of this plugin nests about ten)")
    try:
        value = json.loads(text, parse_constant=_constant, parse_float=_float)
    except ValueError as exc:  # JSONDecodeError, and integers past Python's digit limit
        raise ToolevalUsageError(f"{what}: {path} is not a JSON report ({exc})") from None
    if not _holds_non_finite(value):
        return value
    for where, item in walk(value):  # again, with the paths: to name the first one
        if isinstance(item, _NonFinite):
            raise ToolevalUsageError(f"{what}: {path} is not strict JSON: {where} is {item.text}, which is no "
                                     f"finite number ({DAMAGED}: this version writes null there)")
    return value


def _holds_non_finite(value: object) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, _NonFinite):
            return True
    return False


def _depth(text: str) -> int:
    """The deepest nesting of arrays and objects in the JSON `text` (brackets inside strings not counted)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", _ESCAPE.sub("", text)))
    return max(accumulate(1 if char in "[{" else -1 for char in brackets), default=0)


def _deep_path(text: str) -> str:
    """Where `text` first nests deeper than MAX_DEPTH, as a path (samples[0].calls[0]...), its start shown."""
    stack: list[list[Any]] = []  # per open container: [kind, key or index]
    last = ""
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            if len(stack) == MAX_DEPTH:
                return _clipped(_path_text([entry[1] for entry in stack]))
            stack.append([token, 0 if token == "[" else None])
        elif token in "]}":
            if stack:
                stack.pop()
        elif token == ",":
            if stack and stack[-1][0] == "[":
                stack[-1][1] += 1
        elif token == ":":
            if stack:
                stack[-1][1] = last
        else:
            try:
                last = str(json.loads(token))
            except ValueError:
                last = token
    return "?"


def _clipped(path: str, limit: int = 80) -> str:
    return path if len(path) <= limit else path[:limit] + "..."


def _path_text(parts: list[Any]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def walk(value: object) -> Iterator[tuple[str, object]]:
    """Every value nested in `value` with its path (samples[3].tokens.prompt), depth first, without recursion."""
    stack: list[tuple[object, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        yield path, item
        if isinstance(item, dict):
            children = [(child, f"{path}.{key}" if path else str(key)) for key, child in item.items()]
        elif isinstance(item, list):
            children = [(child, f"{path}[{index}]") for index, child in enumerate(item)]
        else:
            continue
        stack.extend(reversed(children))


# -- the fields the merge reads ------------------------------------------------------------------------------

_NO_SURROGATE = "^[^\ud800-\udfff]*$"
TEXT = {"type": "string", "pattern": _NO_SURROGATE, "x-says": "holds a lone surrogate, which is no Unicode text"}
TEXT_OR_NULL = {**TEXT, "type": ["string", "null"]}
COUNT = {"type": "integer", "minimum": 0}
FRACTION_OR_NULL = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
TOKENS = {"type": "object", "additionalProperties": COUNT}

ROW: dict[str, Any] = {
    "type": "object",
    "required": ["suite", "language", "id", "category", "index", "category_size", "test_id", "outcome"],
    "properties": {
        **{name: TEXT for name in ("suite", "language", "id", "category", "test_id", "variant")},
        "index": COUNT, "category_size": COUNT, "repeat": {"type": "integer", "minimum": 1},
        "outcome": {"enum": ["passed", "failed", "error", "skipped"]},
        # fixed_valid: an older report's, beside valid (ACEBench's rows keep it in their details now)
        "valid": {"type": ["boolean", "null"]}, "fixed_valid": {"type": ["boolean", "null"]},
        "error_type": TEXT_OR_NULL, "batched": TEXT_OR_NULL, "quarantined": TEXT_OR_NULL,
        "latency_s": {"type": ["number", "null"], "minimum": 0},
        "tokens": TOKENS, "cached_tokens": TOKENS, "cut": TOKENS, "tool_answers": TOKENS,
        "finish_reason": TEXT_OR_NULL, "source": TEXT_OR_NULL,
        "cached_at": {"type": ["number", "null"], "minimum": 0}, "cached_runs": {"type": "array", "items": TEXT},
        "process": FRACTION_OR_NULL,
        "details": {"type": ["object", "null"]},
    },
}

REPORT: dict[str, Any] = {  # a report's blocks but its rows, which are checked one by one (ROW)
    "type": "object",
    "required": ["run", "samples"],
    "properties": {
        "fingerprint": {"type": "object"},
        "run": {"type": "object", "required": ["collected"], "properties": {
            "shard": {**TEXT_OR_NULL, "pattern": "^[1-9][0-9]*/[1-9][0-9]*$",
                      "x-says": "not a shard: expected I/N with 1 <= I <= N"},
            "sample": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1},
            "seed": {"type": ["integer", "null"]},
            "collected": COUNT,
            "not_run": {"type": "array", "items": TEXT},
            "skipped": COUNT,
            "interrupted": {"type": "boolean"},  # a signal stopped the shard: its merge is incomplete
            "signal": TEXT_OR_NULL,
            "role_models": {"type": ["object", "null"], "additionalProperties": TEXT_OR_NULL},
            "prices": {"type": ["object", "null"], "additionalProperties": {
                "type": "array", "items": {"type": "number", "minimum": 0}, "minItems": 2, "maxItems": 2,
                "x-says": "not an [input, output] pair of prices"}},
        }},
        "totals": {"type": "object", "properties": {
            "wall_s": {"type": ["number", "null"], "minimum": 0},
            "requests": COUNT, "retries": COUNT, "timeouts": COUNT,
            "cost_ceiling": {"type": ["object", "null"], "required": ["usd"], "properties": {
                "usd": {"type": "number", "minimum": 0}, "not_run": COUNT}},
            "batch": {"type": ["object", "null"], "properties": {"not_run": COUNT}},
        }},
        "storage_faults": {"type": ["array", "null"], "items": {"type": "object"}},
        "non_finite": {"type": "array", "items": TEXT},
        "samples": {"type": "array", "items": {"type": "object"}},
    },
}

_REPORT = Draft202012Validator(REPORT)
_ROW = Draft202012Validator(ROW)
_TYPES = {"string": "a text", "integer": "an integer", "number": "a number", "boolean": "true or false",
          "object": "an object", "array": "an array", "null": "null"}


def check_fields(path: str, document: dict[str, Any]) -> None:
    """The fields the merge reads, of their types and in their ranges: a usage error of one line naming the file
    and the field otherwise. Rows are checked after the count (`check_counts`), so that a report of a million
    rows is refused before they are read one by one."""
    _raise_first(path, "", _REPORT.iter_errors(document))
    shard = document["run"].get("shard")
    if shard is not None:
        index, count = (int(part) for part in shard.split("/"))
        if index > count:
            raise ToolevalUsageError(f"merge: {path}: run.shard is {shard!r}, not a shard: expected I/N with "
                                     f"1 <= I <= N ({DAMAGED})")
        if count > MAX_SHARDS:
            raise ToolevalUsageError(f"merge: {path}: run.shard is {shard!r}: a split into more than {MAX_SHARDS} "
                                     f"shards is not one the merge takes ({DAMAGED})")


def check_rows(path: str, rows: list[dict[str, Any]]) -> None:
    from ..suites import registered

    suites = registered()
    # what each suite's summariser reads of a row's details (Figures.row_details_schema): a validator per
    # suite, half the time of an if/then per row
    row_of = {name: Draft202012Validator({**ROW, "properties": {**ROW["properties"], "details": details}})
              for name, suite in suites.items() if (details := suite.figures.row_details_schema()) is not None}
    for index, row in enumerate(rows):
        suite = row.get("suite")
        validator = row_of.get(suite, _ROW) if isinstance(suite, str) else _ROW
        if not validator.is_valid(row):
            _raise_first(path, f"samples[{index}]", validator.iter_errors(row))
        if row["suite"] not in suites:
            raise ToolevalUsageError(f"merge: {path}: samples[{index}].suite is {row['suite']!r}, no suite installed "
                                     f"here ({', '.join(suites)})")


def _raise_first(path: str, prefix: str, errors: Iterator[ValidationError]) -> None:
    error = best_match(errors)
    if error is None:
        return
    parts = list(error.absolute_path)
    where = _path_text([prefix, *parts] if prefix else parts) if prefix or parts else "the report"
    raise ToolevalUsageError(f"merge: {path}: {_said(where, error)} ({DAMAGED})")


def _said(where: str, error: ValidationError) -> str:
    value, rule = cast(Any, error.instance), cast(Any, error.validator_value)
    shown = _clipped(repr(value), 60)
    says = error.schema.get("x-says") if isinstance(error.schema, dict) else None
    if error.validator == "type":
        names = [rule] if isinstance(rule, str) else list(rule)
        return f"{where} is {shown}, not {' or '.join(_TYPES.get(name, name) for name in names)}"
    if error.validator == "required":
        missing = next((name for name in rule if name not in value), "?")
        return f"{where} has no {missing!r}"
    if error.validator == "minimum":
        return f"{where} is {shown}, below {rule}"
    if error.validator == "exclusiveMinimum":
        return f"{where} is {shown}, not above {rule}"
    if error.validator == "maximum":
        return f"{where} is {shown}, above {rule}"
    if error.validator == "enum":
        return f"{where} is {shown}, not one of {', '.join(map(repr, rule))}"
    if says and error.validator == "pattern" and says.startswith("holds"):
        return f"{where} {says}"
    if says:
        return f"{where} is {shown}, {says}"
    return f"{where}: {_clipped(error.message, 120)}"


# -- the shard against itself --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shard:
    """What a shard's report says of itself, checked: how many samples it collected and how many of them have
    no row (neither a row, nor listed as not run, nor skipped)."""

    path: str
    shard: str | None
    collected: int
    missing: int

    def incomplete(self) -> str | None:
        if not self.missing:
            return None
        named = self.path + (f" (shard {self.shard})" if self.shard else "")
        return f"{named} has no row for {self.missing} of the {counted(self.collected, 'sample')} it collected"


def check_counts(path: str, document: dict[str, Any]) -> None:
    """More rows, and samples not run, than the shard collected: a usage error (before the rows are read)."""
    run = document["run"]
    collected, rows, not_run = int(run["collected"]), len(document["samples"]), len(run.get("not_run") or ())
    if rows + not_run > collected:
        raise ToolevalUsageError(f"merge: {path} holds {counted(rows, 'sample row')} and "
                                 f"{counted(not_run, 'sample')} not run, more than the {counted(collected, 'sample')} "
                                 f"it collected ({DAMAGED})")


def check_shard(path: str, document: dict[str, Any]) -> Shard:
    """Every check of a shard's report against itself (after `loads_strict`): the fields, the counts, the rows,
    each sample once, no category holding more samples than it has. A usage error of one line, or the Shard."""
    check_fields(path, document)
    check_counts(path, document)
    rows: list[dict[str, Any]] = document["samples"]
    check_rows(path, rows)
    run = document["run"]
    seen: set[tuple[str, str, str, str, int]] = set()
    test_ids: set[str] = set()
    for row in rows:
        key = (row["suite"], row["language"], row["id"], row.get("variant", ""), int(row.get("repeat", 1)))
        if key in seen or row["test_id"] in test_ids:
            raise ToolevalUsageError(f"merge: {path} holds sample {row['test_id']} twice ({DAMAGED})")
        seen.add(key)
        test_ids.add(row["test_id"])
    not_run: list[str] = run.get("not_run") or []
    listed: set[str] = set()
    for test_id in not_run:
        if test_id in listed:
            raise ToolevalUsageError(f"merge: {path} lists sample {test_id} as not run twice ({DAMAGED})")
        listed.add(test_id)
    if (both := sorted(test_ids.intersection(not_run))):
        raise ToolevalUsageError(f"merge: {path} has a row for sample {both[0]}, which it lists as not run "
                                 f"({DAMAGED})")
    check_category_sizes([(path, rows)])
    collected = int(run["collected"])
    if "skipped" in run:
        accounted = len(rows) + len(not_run) + int(run["skipped"])
        if accounted > collected:
            raise ToolevalUsageError(f"merge: {path} holds {counted(len(rows), 'sample row')}, "
                                     f"{counted(len(not_run), 'sample')} not run and {run['skipped']} skipped, more "
                                     f"than the {counted(collected, 'sample')} it collected ({DAMAGED})")
    else:  # a report that does not count its skipped samples: those it knows of are the ones cut short
        totals = document.get("totals") or {}
        cut = sum(int((totals.get(block) or {}).get("not_run") or 0) for block in ("cost_ceiling", "batch"))
        accounted = len(rows) + len(not_run) + cut
    return Shard(path, run.get("shard"), collected, max(0, collected - accounted))


def read_shard(path: str, document: dict[str, Any]) -> tuple[ReportDocument, Shard]:
    """A shard's report JSON value checked (`check_shard`), then read as the typed report the merge reads."""
    checked = check_shard(path, document)
    return ReportDocument.model_validate(document), checked


def check_category_sizes(shards: list[tuple[str, list[dict[str, Any]]]]) -> None:
    """Every row of a category gives it one size (`category_size`, the samples it has in the benchmark), and no
    more of its samples than that are in the rows of `shards` (a shard's path, its rows) together."""
    sizes: dict[tuple[str, ...], tuple[int, str]] = {}
    members: dict[tuple[str, ...], set[str]] = {}
    for path, rows in shards:
        for row in rows:
            key: tuple[str, ...] = (row["suite"], row["language"], row.get("variant", ""), row["category"])
            size = int(row["category_size"])
            said = sizes.setdefault(key, (size, path))
            if said[0] != size:
                other = f"{said[0]} and {size}" if said[1] == path else f"{size}, {said[1]} {said[0]}"
                raise ToolevalUsageError(f"merge: {path} gives {_category(key)} {other} samples (category_size): "
                                         f"a category has one size ({DAMAGED})")
            members.setdefault(key, set()).add(row["id"])
    for category, ids in members.items():
        if len(ids) > sizes[category][0]:
            held = shards[0][0] if len(shards) == 1 else "the shards"
            raise ToolevalUsageError(f"merge: {held} hold{'s' if len(shards) == 1 else ''} "
                                     f"{counted(len(ids), 'sample')} of "
                                     f"{_category(category)}, a category of {sizes[category][0]} (its category_size) "
                                     f"({DAMAGED})")


def _category(key: tuple[str, ...]) -> str:
    return " ".join(part for part in key if part)  # suite, language, variant, category
