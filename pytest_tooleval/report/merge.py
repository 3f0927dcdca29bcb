"""Shard reports -> the report of the whole run (`python -m pytest_tooleval merge shards/*.json -o full.json`).

The samples of the shards are joined and everything else is computed from them again, by the same functions a
single run uses (the summary, the totals, the comparison with a baseline, the gate), so the merged report is
the one a single run of every sample would have written: the same summary, gate and per-sample verdicts
(docs/scaling.md#merging-shards). Shards made differently (another model, other settings, another version of
the plugin) or holding the same sample are refused; a shard or sample that is missing makes the merged run
incomplete, which no gate passes. Each shard is first checked against itself (report/shard_check.py): strict
JSON, the fields the merge reads, its rows against the samples it collected; then it is read as the typed
report (report/document.py), which is all the merge reads of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ToolevalUsageError
from ..json_value import JSONObject, JSONValue
from ..settings.options import shard_parts
from ..text import counted
from ..transport import row_key, row_key_or_none
from .compare import fingerprint_differences
from .document import ReportDocument, Run, SampleRow, Totals
from .gate import GateResult, evaluate_gate, evaluate_regressions, sort_thresholds, unknown_name_line
from .json_report import SCHEMA, assemble, read_report
from .row import member_text, object_entries
from .shard_check import DAMAGED, Shard, check_category_sizes, read_shard, read_strict
from .summary import RunSummary, run_totals, summarize

if TYPE_CHECKING:
    from .compare import Comparison

# what two shards of one run may differ in: what each one's probe saw of the endpoint (latency, server ids)
PER_SHARD = frozenset({"endpoint_profile"})
LISTED = 10  # samples named in a line before "and N more"


@dataclass(frozen=True)
class GateOptions:
    """The gate of the merged run: the plugin's options of the same names (docs/ci.md#ci-gating)."""

    fail_under: Mapping[str, float]
    max_error_rate: float
    max_regression: Mapping[str, float]
    alpha: float
    baseline: str | None = None

    @property
    def gated(self) -> bool:
        return bool(self.fail_under or self.max_regression)


@dataclass(frozen=True)
class Merged:
    document: ReportDocument
    summary: RunSummary
    totals: JSONObject
    gate: GateResult | None
    comparison: Comparison | None
    incomplete: str | None  # what is missing (shards, samples never run), or None


@dataclass(frozen=True)
class _Part:
    path: str
    document: ReportDocument
    checked: Shard

    @property
    def run(self) -> Run:
        return self.document.run or Run()

    @property
    def totals(self) -> Totals:
        return self.document.totals or Totals()

    @property
    def made(self) -> JSONObject:
        return self.document.fingerprint.plain()

    @cached_property
    def rows(self) -> list[SampleRow]:
        return self.document.rows()  # every entry is an object (shard_check.py)


def read_part(path: str) -> _Part:
    """One shard's report, checked against itself (report/shard_check.py): one line naming the file when it is
    not a report of this plugin, not strict JSON, or damaged."""
    hint = "name the reports the shards wrote with --tooleval-report"
    document = read_strict(path, "merge", hint)
    if not isinstance(document, dict) or document.get("schema") != SCHEMA or not isinstance(document.get("samples"),
                                                                                              list):
        raise ToolevalUsageError(f"merge: {path} is not a pytest-tooleval report (schema {SCHEMA!r} with samples): "
                                 f"{hint}")
    if not isinstance(document.get("run"), dict):
        raise ToolevalUsageError(f"merge: {path} was written by a plugin version without shard records: run its "
                                 "shard again with this version")
    return _Part(path, *read_shard(path, document))


def merge(paths: Sequence[str], gate: GateOptions) -> Merged:
    """The merged run of the shard reports at `paths`; a usage error (one line) for shards of different runs,
    a sample in two shards, or a gate name no figure has."""
    parts = [read_part(path) for path in paths]
    made = _common_fingerprint(parts)
    shards, missing_shards = _check_shards(parts)
    joined = _joined_rows(parts)
    check_category_sizes([(part.path, [row.plain() for row in part.rows]) for part in parts])
    # the suites' summarisers, the totals and the report take rows as JSON-plain objects
    everything = [row.plain() for row in joined if row.outcome != "skipped"]
    kept = [row for row in everything if not row.get("quarantined")]  # the rows every figure is made of
    if not kept:
        # a run stopped before any answer (a dead endpoint) is incomplete, which says more than "nothing"
        stopped = _incomplete_line(missing_shards, sorted({str(test_id) for part in parts
                                                           for test_id in part.run.not_run}), 0)
        raise ToolevalUsageError("merge: the shards hold no scored sample: "
                                 + (f"INCOMPLETE: {stopped}" if stopped else "nothing to merge"))
    summary = _summary(parts, kept)
    first = parts[0].run
    totals = run_totals(kept, max(float(part.totals.wall_s or 0.0) for part in parts),
                        requests=_summed(parts, ("requests", "retries", "timeouts")),
                        role_models=first.role_models or None, prices=_prices(first.prices))
    not_run = sorted({str(test_id) for part in parts for test_id in part.run.not_run})
    ceilings = [part.totals.cost_ceiling for part in parts]
    cut_by_cost = sum(_count(ceiling.get("not_run")) for ceiling in ceilings if isinstance(ceiling, dict))
    if any(isinstance(ceiling, dict) for ceiling in ceilings):
        usd = next(ceiling["usd"] for ceiling in ceilings if isinstance(ceiling, dict))
        totals["cost_ceiling"] = {"usd": usd, "not_run": cut_by_cost}
    batches = [part.totals.batch for part in parts]
    left_in_batch = sum(_count(batch.get("not_run")) for batch in batches if isinstance(batch, dict))
    without_rows = [line for part in parts if (line := part.checked.incomplete()) is not None]
    without_rows += [f"{Path(part.path).name} was interrupted ({part.run.signal or 'a signal'})"
                     for part in parts if part.run.interrupted is True]  # (its not_run may be empty)
    incomplete = _incomplete_line(missing_shards, not_run, cut_by_cost, left_in_batch, without_rows)
    comparison = _compare(kept, everything, made, gate.baseline) if gate.baseline else None
    result = _gate(summary, gate, comparison, incomplete, kept) if gate.gated else None
    run = {"sample": first.sample, "seed": first.seed, "role_models": first.role_models, "prices": first.prices,
           "shard": None, "shards": shards, "missing_shards": missing_shards,
           "collected": sum(int(part.run.collected or 0) for part in parts), "not_run": not_run,
           "merged_from": [Path(part.path).name for part in parts], "incomplete": incomplete}
    storage = [fault.plain() for part in parts for fault in part.document.storage_faults if fault is not None]
    document = assemble(made, summary, everything, result, totals, storage,
                        None if comparison is None else comparison.as_dict(), run)
    noted = document.pop("non_finite", None)
    non_finite: list[JSONValue] = [*_carried_non_finite(parts, object_entries(document["samples"])),
                                   *(noted if isinstance(noted, list) else [])]
    if non_finite:
        document["non_finite"] = non_finite
    return Merged(ReportDocument.model_validate(document), summary, totals, result, comparison, incomplete)


def _summary(parts: list[_Part], kept: list[JSONObject]) -> RunSummary:
    """The suites' summary of the joined rows. Their fields are checked (report/shard_check.py), but a
    suite's summariser reads what its rows mean too: rows it cannot read are refused, naming the shard whose
    rows alone cannot be summarised either (otherwise the error is ours, and raised as it is)."""
    from ..suites import plugin

    failures = (ArithmeticError, AttributeError, IndexError, KeyError, TypeError, ValueError)
    try:
        return summarize(kept, plugin)
    except failures:
        for part in parts:
            mine = [row.plain() for row in part.rows if row.outcome != "skipped" and not row.quarantined]
            try:
                summarize(mine, plugin)
            except failures as exc:
                raise ToolevalUsageError(f"merge: {part.path}: its sample rows cannot be summarised "
                                         f"({type(exc).__name__}: {exc}) ({DAMAGED})") from None
        raise


def _carried_non_finite(parts: list[_Part], merged_rows: list[JSONObject]) -> list[str]:
    """The shards' notes of non-finite numbers written as null in their rows (json_report.strict_plain), with
    each row's place in the merged report: as a single run of every sample notes them."""
    place = {row_key(row): index for index, row in enumerate(merged_rows)}
    carried: list[tuple[int, str]] = []
    for part in parts:
        rows = part.rows
        for note in (str(note) for note in part.document.non_finite):
            head, bracket, rest = note.partition("]")
            index = head.removeprefix("samples[")
            if note.startswith("samples[") and bracket and index.isdigit() and int(index) < len(rows):
                key = rows[int(index)].key()
                new = None if key is None else place.get(key)
                if new is not None:
                    carried.append((new, f"samples[{new}]{rest}"))
    return [note for _, note in sorted(carried, key=lambda item: item[0])]


def _common_fingerprint(parts: list[_Part]) -> JSONObject:
    """The shards' fingerprint, which must be one: a difference names the key and both files. A suite's block
    may be missing from a shard that has none of its samples."""
    from ..suites import registered

    merged = dict(parts[0].made)
    for part in parts[1:]:
        for key in sorted(set(merged) | set(part.made)):
            if key in PER_SHARD:
                continue
            if (key not in merged or key not in part.made) and key in registered():
                merged.setdefault(key, part.made.get(key))
                continue
            old, new = merged.get(key), part.made.get(key)
            if old != new:
                where = (key, old, new)
                if isinstance(old, Mapping) and isinstance(new, Mapping):  # the first entry that differs in it
                    where = fingerprint_differences(old, new, f"{key}.")[0]
                    if old.get("revision") != new.get("revision"):  # figures of two benchmarks: never one run
                        raise ToolevalUsageError(
                            f"merge: {part.path} was scored against {key} {new.get('revision')}, {parts[0].path} "
                            f"against {old.get('revision')}: shards of two revisions are not one run; rescore one "
                            f"(python -m pytest_tooleval rescore) or merge the shards of one revision")
                raise ToolevalUsageError(
                    f"merge: {part.path} was made differently from {parts[0].path}: {where[0]} is {where[2]!r}, "
                    f"not {where[1]!r}; merge the shards of one run (the same options, data and plugin version)")
    return merged


def _check_shards(parts: list[_Part]) -> tuple[int | None, list[str]]:
    """The shard count, and the shards (`I/N`) no part is; a usage error when the parts are shards of different
    splits, of different subsamples, or the same shard twice."""
    seen: dict[str, str] = {}
    counts: set[int | None] = set()
    for part in parts:
        for key in ("sample", "seed"):
            if getattr(part.run, key) != getattr(parts[0].run, key):
                raise ToolevalUsageError(f"merge: {part.path} ran --tooleval-{key} {getattr(part.run, key)}, "
                                         f"{parts[0].path} {getattr(parts[0].run, key)}: merge the shards of one run")
        shard = part.run.shard
        if not shard:
            counts.add(None)
            continue
        if shard in seen:
            raise ToolevalUsageError(f"merge: shard {shard} is given twice: {seen[shard]} and {part.path}")
        seen[shard] = part.path
        counts.add(shard_parts(str(shard))[1])
    if len(counts) > 1:
        named = ", ".join(f"{Path(part.path).name}: {part.run.shard or 'not sharded'}" for part in parts)
        raise ToolevalUsageError(f"merge: the reports are not shards of one split ({named}): run every shard with "
                                 "the same --tooleval-shard I/N count")
    count = next(iter(counts))
    if count is None:
        return None, []
    missing = [f"{index}/{count}" for index in range(1, count + 1) if f"{index}/{count}" not in seen]
    return count, missing


def _joined_rows(parts: list[_Part]) -> list[SampleRow]:
    owner: dict[tuple[str, str, str, str, int], str] = {}
    rows = []
    for part in parts:
        for row in part.rows:
            key = row.key()
            if key is None:
                raise ToolevalUsageError(f"merge: {part.path} has a sample row without suite, language and id")
            if key in owner:
                raise ToolevalUsageError(f"merge: sample {row.test_id or key[2]} is in both {owner[key]} and "
                                         f"{part.path}: the shards overlap (merge each shard's report once)")
            owner[key] = part.path
            rows.append(row)
    return rows


def _summed(parts: list[_Part], keys: tuple[str, ...]) -> dict[str, int] | None:
    totals = [part.totals for part in parts]
    if not any(key in shard for shard in totals for key in keys):
        return None  # the oracle's runs count no requests
    return {key: sum(int(getattr(shard, key) or 0) for shard in totals) for key in keys}


def _count(value: JSONValue) -> int:
    """A count the shard holds (checked: a whole number, or null for none)."""
    return int(value) if isinstance(value, (int, float)) else 0


def _prices(value: object) -> dict[str, tuple[float, float]] | None:
    if not isinstance(value, dict) or not value:
        return None
    return {str(model): (float(pair[0]), float(pair[1])) for model, pair in value.items()}


def _incomplete_line(missing_shards: list[str], not_run: list[str], cut_by_cost: int,
                     left_in_batch: int = 0, without_rows: Sequence[str] = ()) -> str | None:
    reasons = []
    if missing_shards:
        reasons.append(f"shard{'s' if len(missing_shards) > 1 else ''} {', '.join(missing_shards)} "
                       f"{'are' if len(missing_shards) > 1 else 'is'} missing")
    reasons.extend(without_rows)  # a report cut short: rows gone that the shard says it collected
    if not_run:
        more = f" and {len(not_run) - LISTED} more" if len(not_run) > LISTED else ""
        reasons.append(f"{counted(len(not_run), 'sample')} a shard collected never ran: "
                       f"{', '.join(not_run[:LISTED])}{more}")
    if cut_by_cost:
        reasons.append(f"{counted(cut_by_cost, 'sample')} {'was' if cut_by_cost == 1 else 'were'} not run for the "
                       "cost ceiling")
    if left_in_batch:
        reasons.append(f"{counted(left_in_batch, 'sample')} {'was' if left_in_batch == 1 else 'were'} not run: "
                       "their batch was still running")
    return "; ".join(reasons) or None


def _compare(kept: list[JSONObject], everything: list[JSONObject], made: JSONObject,
             baseline_path: str) -> Comparison:
    """As the controller compares a run (controller.py `_compare`): a sample quarantined now is left out of
    the baseline's figures too."""
    from ..suites import plugin
    from .compare import compare, suite_members

    baseline = read_report(baseline_path)
    summary_suites = sorted({member_text(row, "suite") for row in kept})
    members = {name: suite_members(plugin(name)) for name in summary_suites}
    current = {key: value for key, value in made.items() if key not in PER_SHARD}
    left_out = {row_key(row)[:4] for row in everything if row.get("quarantined")}
    baseline = {**baseline, "samples": [
        row for row in object_entries(baseline.get("samples"))
        if (key := row_key_or_none(row)) is not None and key[:4] not in left_out]}
    return compare(kept, baseline, baseline_path, current, members)


def _gate(summary: RunSummary, options: GateOptions, comparison: Comparison | None,
          incomplete: str | None, rows: list[JSONObject]) -> GateResult:
    """The gate of the merged run, as the controller's: thresholds by figure name, the error rate, regressions
    against the baseline; incomplete when a shard or sample is missing."""
    from ..settings.options import build_settings
    from ..suites import all_options, registered

    ran: dict[str, list[str] | None] = {name: list(suite.figures) for name, suite in summary.suites.items()}
    defaults = build_settings({}, {}, all_options())
    elsewhere: dict[str, list[str] | None] = {}
    for name, suite in registered().items():
        if name not in ran:
            declared = suite.figures.figure_names(defaults)
            elsewhere[name] = None if declared is None else list(declared)
    thresholds = dict(options.fail_under)
    valid = [f"{suite}.{figure}" for suite, figures in ran.items() for figure in figures or []]
    for option, gated in (("--fail-under", thresholds), ("--max-regression", dict(options.max_regression))):
        unknown, _ = sort_thresholds(gated, ran, elsewhere)
        if unknown:
            raise ToolevalUsageError(unknown_name_line(f"merge: {option}", unknown[0], "the merged run", valid))
    _, outside = sort_thresholds(thresholds, ran, elsewhere)
    notes = tuple(f"{name}: not checked (its suite did not run)" for name in outside)
    regressions = () if comparison is None else tuple(
        evaluate_regressions(comparison, options.max_regression, options.alpha))
    result = evaluate_gate(summary, {name: value for name, value in thresholds.items() if name not in outside},
                           options.max_error_rate, notes, regressions, rows=rows)
    return result if incomplete is None else replace(result, incomplete=incomplete)
