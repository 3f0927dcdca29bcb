"""The JSON report as one typed value: `ReportDocument` and its parts, frozen pydantic models.

Reading a report is `ReportDocument.model_validate(value)` (or `read_document`); writing one is `plain()`, the
document as JSON-plain values, which json_report.py writes. Every part keeps what it was given and nothing more:
the keys it was given, in their order (a member the model does not name included), and only those, so a report
read and written again is the same text.

A report is read from files other runs, other versions and other tools wrote, so reading never fails on a value
of another shape: a value that is not of its field's type reads as None (a number that is text, say), a list
entry that is not an object as None (the readers skip it or show it empty, as they did with the raw JSON), and a
block that is not an object as absent. The merge checks a shard's raw JSON first (shard_check.py) and refuses
such values with one line; the renderers show what they can. A suite's own blocks (its fingerprint and summary
blocks) stay the JSON values they are: the suite reads them (suites/base.py `report_sections`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Annotated, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    PlainValidator,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_serializer,
    model_validator,
)
from pydantic_core import core_schema

from ..json_value import JSONObject, JSONValue

__all__ = ["CategoryTotals", "ComparedFigure", "Comparison", "Fingerprint", "Flip", "Gate", "GateCheck", "Part",
           "Regression", "ReportDocument", "Run", "SampleRow", "StorageFault", "Totals"]

T = TypeVar("T")


def _text(value: object) -> str:
    """Any Python text, a lone surrogate included (replayed model text may hold one; pydantic's own `str` refuses
    it): a report is read as the JSON decoder gave it."""
    if not isinstance(value, str):
        raise ValueError("not a text")
    return value


def _or_none(value: object, handler: ValidatorFunctionWrapHandler) -> object:
    """The value as its field's type, or None when it is of another shape."""
    try:
        return handler(value)
    except ValidationError:
        return None


def _entries(value: object) -> list[object]:
    """A list of objects: a value that is no list reads as none, an entry that is no object as None."""
    if not isinstance(value, list):
        return []
    return [item if isinstance(item, dict) else None for item in value]


def _items(value: object) -> list[object]:
    """A list of values: a value that is no list reads as none."""
    return value if isinstance(value, list) else []


def _mapping(value: object) -> dict[object, object]:
    """An object of JSON values: a value that is no object reads as an empty one."""
    return value if isinstance(value, dict) else {}


#: text as the report holds it
Text = Annotated[str, PlainValidator(_text)]
#: a value of this type, or None (absent, null, or of another shape)
Maybe = Annotated[T | None, WrapValidator(_or_none)]
#: a number as it was written: an integer stays one (a float field would turn 3 into 3.0 when written again)
Number = int | float
#: a list of objects of this type; an entry that is not an object is None
Entries = Annotated[list[T | None], BeforeValidator(_entries)]
class _AsGiven:
    """Pydantic keeps the value as the JSON decoder gave it: no schema of `JSONValue` (a recursive alias pydantic
    cannot build), no check (a lone surrogate in a text stays)."""

    @staticmethod
    def __get_pydantic_core_schema__(source: object, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.any_schema()


#: a JSON value the report holds as it is (a model's output, a suite's block)
Json = Annotated[JSONValue, _AsGiven()]


class Part(BaseModel):
    """A part of the report: frozen, the keys it was given (any the model does not name too) in their order.

    `plain()` is the part as JSON-plain values, only the keys it was given; `key in part` says whether it was
    given one (a member that is missing and one that is null are told apart, as the readers did).
    """

    model_config = ConfigDict(frozen=True, extra="ignore", strict=True, populate_by_name=True)

    _keys: tuple[str, ...] = PrivateAttr(default=())  # the keys given, in their order
    _rest: JSONObject = {}  # the members the model does not name, as given (pydantic copies the default)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_all(cls, value: object, handler: ValidatorFunctionWrapHandler) -> Part:
        made: Part
        if not isinstance(value, dict):
            made = handler(value)
            return made
        named = cls._json_names()
        made = handler({key: item for key, item in value.items() if key in named})
        # kept out of pydantic's hands: a key may be any text the JSON decoder gave, a lone surrogate included
        made._keys, made._rest = tuple(value), {key: item for key, item in value.items() if key not in named}
        return made

    @classmethod
    def _json_names(cls) -> frozenset[str]:
        return frozenset(field.alias or name for name, field in cls.model_fields.items())

    @model_serializer(mode="wrap")
    def _in_given_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = {**handler(self), **self._rest}
        ordered = {key: data[key] for key in self._keys if key in data}
        ordered.update((key, value) for key, value in data.items() if key not in ordered)
        return ordered

    def plain(self) -> JSONObject:
        """The part as JSON-plain values: the keys it was given, in their order."""
        return self.model_dump(mode="python", by_alias=True, exclude_unset=True)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self.plain_keys()

    def plain_keys(self) -> tuple[str, ...]:
        """The keys the part was given (by their JSON names), in their order."""
        if self._keys:
            return self._keys
        aliases = {name: field.alias or name for name, field in type(self).model_fields.items()}
        return tuple(aliases[name] for name in self.model_fields_set)

    def extras(self) -> JSONObject:
        """The members the model does not name, in their order."""
        return dict(self._rest)


# --- the rows -------------------------------------------------------------------------------------------------


class SampleRow(Part):
    """One sample's row (transport.py `result_payload`, `error_payload`): what it is, its outcome, both verdicts,
    its output and costs. A suite's own keys, and the controller's (`quarantined`, `batched`), are kept."""

    v: Maybe[int] = None
    suite: Maybe[Text] = None
    id: Maybe[Text] = None
    category: Maybe[Text] = None
    language: Maybe[Text] = None
    index: Maybe[int] = None
    category_size: Maybe[int] = None
    test_id: Maybe[Text] = None
    variant: Maybe[Text] = None
    revision: Maybe[Text] = None
    data_unverified: Maybe[bool] = None
    repeat: Maybe[int] = None
    outcome: Maybe[Text] = None
    valid: Maybe[bool] = None
    fixed_valid: Maybe[bool] = None  # older reports: ACEBench's rows keep it in `details` now
    error_type: Maybe[Text] = None
    error: Json = None  # a message, or a suite's list of them
    output: Json = None
    calls: Json = None
    process: Maybe[Number] = None
    details: Json = None
    latency_s: Maybe[Number] = None
    tokens: Maybe[dict[str, int]] = None
    transcript: Json = None
    reasoning: Maybe[Text] = None
    cached_tokens: Maybe[dict[str, int]] = None
    finish_reason: Maybe[Text] = None
    cut: Maybe[dict[str, int]] = None
    tool_answers: Maybe[dict[str, int]] = None
    quarantined: Maybe[Text] = None  # --tooleval-quarantine: why (the sample is in no figure)
    batched: Maybe[Text] = None  # answered through the Batch API
    source: Maybe[Text] = None  # where the answer came from: asked, cache, replay (transport.py)
    cached_at: Maybe[Number] = None  # when the oldest cached reply of the sample was made (epoch seconds)
    cached_runs: Maybe[list[Text]] = None  # the response cache's tags of the runs that asked them

    def key(self) -> tuple[str, str, str, str, int] | None:
        """What tells one sample's row from another's (transport.py `row_key`), or None for a row without its
        suite, language and id."""
        if self.suite is None or self.language is None or self.id is None:
            return None
        return self.suite, self.language, self.id, self.variant or "", self.repeat or 1


# --- the blocks -----------------------------------------------------------------------------------------------


class Fingerprint(Part):
    """Everything that changes a score (json_report.py `fingerprint`); each suite's own block is a member named
    by the suite, kept as its JSON value (`suite_blocks`)."""

    plugin_version: Maybe[Text] = None
    model: Maybe[Text] = None
    endpoint_host: Maybe[Text] = None
    parameters: Json = None
    reasoning: Json = None
    sampling: Json = None
    scorer: Maybe[Text] = None
    tools_system: Maybe[Text] = None  # --tooleval-tools-system, when not as-is
    endpoint_adaptations: Json = None
    endpoint_profile: Json = None

    def objects(self) -> Iterator[tuple[str, JSONObject]]:
        """Every member that is an object (the suites' blocks, and the parameters), in the report's order."""
        for key, value in self.plain().items():
            if isinstance(value, dict):
                yield key, value


class GateCheck(Part):
    figure: Json = None
    actual: Maybe[Number] = None
    threshold: Maybe[Number] = None
    met: Maybe[bool] = None


class Paired(Part):
    """A figure of this run against the baseline's: the difference, its 95% interval and its p-value."""

    figure: Json = None
    baseline: Maybe[Number] = None
    current: Maybe[Number] = None
    difference: Maybe[Number] = None
    interval: Maybe[list[Number]] = None
    p: Maybe[Number] = None


class Regression(Paired):
    """A regression check against the baseline (gate.py `RegressionCheck.as_dict`)."""

    margin: Maybe[Number] = None
    p_holm: Maybe[Number] = None
    alpha: Maybe[Number] = None
    regression: Maybe[bool] = None


class Gate(Part):
    """The gate's verdict (json_report.py `assemble`)."""

    passed: Maybe[bool] = None
    regressions: Entries[Regression] = []
    incomplete: Maybe[Text] = None
    checks: Entries[GateCheck] = []
    error_rate: Maybe[Number] = None
    max_error_rate: Maybe[Number] = None
    notes: Annotated[list[Json], BeforeValidator(_items)] = []
    largest_cause: Json = None  # gate.py `ErrorCause.as_dict`
    partial: Json = None


class ComparedFigure(Paired):
    """One figure against the baseline (compare.py `FigureComparison.as_dict`)."""

    kind: Json = None
    units: Json = None
    pass_to_fail: Json = None
    fail_to_pass: Json = None
    mde: Maybe[Number] = None
    test: Json = None


class Flip(Part):
    """A unit whose verdict changed from the baseline's."""

    suite: Json = None
    figure: Json = None
    unit: Json = None
    samples: Annotated[list[Json], BeforeValidator(_items)] = []
    test_ids: Annotated[list[Json], BeforeValidator(_items)] = []  # what -k selects; absent in older reports


class Flips(Part):
    pass_to_fail: Entries[Flip] = []
    fail_to_pass: Entries[Flip] = []


class Difference(Part):
    """A fingerprint entry that differs from the baseline's."""

    key: Json = None
    baseline: Json = None
    current: Json = None


class Baseline(Part):
    path: Json = None
    model: Json = None
    rescored: Json = None  # a baseline rescored to another benchmark revision (rescore.py)


class Comparison(Part):
    """This run against --tooleval-baseline (compare.py `Comparison.as_dict`)."""

    baseline: Annotated[Baseline, BeforeValidator(_mapping)] = Baseline()
    fingerprint_differences: Entries[Difference] = []
    figures: Entries[ComparedFigure] = []
    flips: Annotated[Flips, BeforeValidator(_mapping)] = Flips()
    only_current: Annotated[list[Json], BeforeValidator(_items)] = []
    only_baseline: Annotated[list[Json], BeforeValidator(_items)] = []
    unscored: Annotated[list[Json], BeforeValidator(_items)] = []
    not_compared: Annotated[list[Json], BeforeValidator(_items)] = []
    bootstrap: Annotated[dict[str, Json], BeforeValidator(_mapping)] = {}


class Run(Part):
    """The share of the benchmark the run was, and what a merge of shards needs (controller.py `_run_block`)."""

    shard: Maybe[Text] = None
    sample: Maybe[Number] = None
    seed: Maybe[int] = None
    collected: Maybe[int] = None
    not_run: Annotated[list[Json], BeforeValidator(_items)] = []
    skipped: Maybe[int] = None
    interrupted: Maybe[bool] = None
    signal: Maybe[Text] = None
    role_models: Maybe[dict[str, Text | None]] = None
    prices: Maybe[dict[str, list[Number]]] = None
    # a merged report's (merge.py)
    shards: Maybe[int] = None
    incomplete: Maybe[Text] = None
    missing_shards: Annotated[list[Json], BeforeValidator(_items)] = []
    merged_from: Annotated[list[Json], BeforeValidator(_items)] = []


class Costs(Part):
    """What some samples cost: tokens of every model role, the samples' latency, the estimated cost."""

    samples: Maybe[int] = None
    prompt_tokens: Maybe[int] = None
    completion_tokens: Maybe[int] = None
    reasoning_tokens: Maybe[int] = None
    """A part of the completion tokens."""
    latency_p50_s: Maybe[Number] = None
    latency_p95_s: Maybe[Number] = None
    """Seconds, over the samples asked in this run (answers from the cache are left out)."""
    cost_usd: Maybe[Number] = None
    """Estimated at --tooleval-prices; absent without them, null when a model has no price."""


class CategoryTotals(Costs):
    """What one category cost (summary.py `category_totals`)."""

    suite: Json = None
    language: Json = None
    variant: Json = None
    category: Json = None


class Totals(Costs):
    """What the run cost (summary.py `run_totals`, and the controller's additions)."""

    scored: Maybe[int] = None
    errors: Maybe[int] = None
    cut: Annotated[dict[str, Json], BeforeValidator(_mapping)] = {}
    """Answers that stopped at max_tokens, per role."""
    wall_s: Maybe[Number] = None
    """Seconds, the run's (a merge's: its slowest shard's)."""
    requests: Maybe[int] = None
    retries: Maybe[int] = None
    timeouts: Maybe[int] = None
    """HTTP requests sent, retried and timed out; absent for the oracle, which sends none."""
    samples_from_cache: Maybe[int] = None
    tool_answers: Json = None
    cached_cost_usd: Maybe[Number] = None
    unpriced_models: Annotated[list[Json], BeforeValidator(_items)] = []
    categories: Entries[CategoryTotals] = []
    concurrency: Annotated[list[Json], BeforeValidator(_items)] = []  # models/limits.py, per endpoint
    cost_ceiling: Json = None
    batch: Json = None


class StorageFault(Part):
    """What the response cache or the run board failed to keep (run/storage.py)."""

    store: Json = None
    folder: Json = None
    error: Json = None
    lost: Maybe[Number] = None
    skipped_locked: Maybe[Number] = None
    off: Maybe[bool] = None


def _part_or_none(value: object, handler: ValidatorFunctionWrapHandler) -> object:
    """A block that is not an object reads as absent."""
    return handler(value) if isinstance(value, dict) else None


class ReportDocument(Part):
    """The JSON report (docs/reports.md): what --tooleval-report writes, and what the Markdown, the HTML page and
    the merge of shards read."""

    schema_: Maybe[Text] = Field(None, alias="schema")
    fingerprint: Annotated[Fingerprint, BeforeValidator(_mapping)] = Fingerprint()
    run: Annotated[Run | None, WrapValidator(_part_or_none)] = None
    summary: Annotated[dict[str, Json], BeforeValidator(_mapping)] = {}  # suite -> its own block (its JSON)
    totals: Annotated[Totals | None, WrapValidator(_part_or_none)] = None
    storage_faults: Entries[StorageFault] = []
    comparison: Annotated[Comparison | None, WrapValidator(_part_or_none)] = None
    gate: Annotated[Gate | None, WrapValidator(_part_or_none)] = None
    rescore: Json = None  # what rescore.py did to it
    samples: Entries[SampleRow] = []
    non_finite: Annotated[list[Json], BeforeValidator(_items)] = []  # json_report.py `strict_plain`

    def rows(self) -> list[SampleRow]:
        """The sample rows (an entry that is no object left out)."""
        return [row for row in self.samples if row is not None]


def read_document(value: object) -> ReportDocument:
    """A report's JSON value as the document (a value that is no object reads as an empty report)."""
    return ReportDocument.model_validate(value if isinstance(value, dict) else {})


def as_document(report: ReportDocument | Mapping[str, object]) -> ReportDocument:
    """The document itself, or a report's JSON value read as one (`read_document`): the renderers take either."""
    return report if isinstance(report, ReportDocument) else read_document(dict(report))
