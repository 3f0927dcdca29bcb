"""A report scored again under another revision of its benchmark (`python -m pytest_tooleval rescore`).

The answers a report keeps (and, where it cut them, the response cache) are scored by the suite against the other
revision's data and evaluator: nothing is asked again, except, with `ask`, the samples whose prompt changed. The
result is a report of the same schema (a baseline, a shard to merge) whose fingerprint names the new revision and
whose `rescore` block says what was done, and a rendering of the difference the benchmark alone made: the same
answers scored under each revision, figure by figure, and every sample that flipped with its reason.

A suite takes part through an optional SuitePlugin member (suites/base.py), `rescore(rows, block, target, context)
-> SuiteRescore`; its other members here are `revision_of` and `title`. Rows of other suites are carried over.
"""

from __future__ import annotations

import datetime
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tabulate import tabulate

from .. import __version__
from ..errors import ToolevalUsageError
from ..text import counted
from ..transport import row_key
from .json_report import SCHEMA, assemble
from .rescoring import RescoreContext, RowRescore, SuiteRescore
from .summary import RunSummary, SuiteSummary, run_totals, summarize

if TYPE_CHECKING:
    from ..models.access import ModelAccess
    from ..models.engine import Engine
    from ..settings.options import Settings
    from ..suites.base import RescoreFn, SuitePlugin

#: exit statuses of the command (docs/ci.md#rescoring-a-baseline-of-another-acebench-revision)
RESCORED, NOT_FAITHFUL, REFUSED = 0, 1, 2
LISTED = 50  # flipped samples printed before "and N more" (the report's rescore block lists them all)


@dataclass(frozen=True)
class RescoreOptions:
    """What the command was asked (docs/ci.md#rescoring-a-baseline-of-another-acebench-revision).

    Attributes:
        revisions: suite -> the revision to rescore it to (the command's revision option).
        ask: ask the samples whose prompt changed again, through the report's model.
        base_url: the endpoint of the report's model (its response cache is keyed by it); default
            TOOLEVAL_BASE_URL, then OPENAI_BASE_URL, as for a run.
        api_key: its key, only used with `ask` (default TOOLEVAL_API_KEY, then OPENAI_API_KEY); never written.
        data_dir: where the revisions' data are (default TOOLEVAL_DATA_DIR, then the download cache).
        cache_dir: the downloads and the response cache (default TOOLEVAL_CACHE_DIR, then ~/.cache/pytest-tooleval).
        offline: never download data.
    """

    revisions: Mapping[str, str]
    ask: bool = False
    base_url: str | None = None
    api_key: str | None = None
    data_dir: str | None = None
    cache_dir: str | None = None
    offline: bool = False


@dataclass(frozen=True)
class Rescored:
    path: str
    document: dict[str, Any]
    suites: dict[str, SuiteRescore]
    before: RunSummary  # the report's answers under its own revisions, as this plugin scores them
    after: RunSummary
    reported: list[dict[str, Any]]  # the report's rows as they were
    requests: int
    titles: dict[str, str] = field(default_factory=dict)

    @property
    def carried(self) -> list[tuple[str, str]]:
        return [(str(row.after.get("test_id")), row.carried) for result in self.suites.values()
                for row in result.rows if row.carried is not None]

    @property
    def asked_errors(self) -> list[str]:
        return [str(row.after.get("test_id")) for result in self.suites.values() for row in result.rows
                if row.asked and row.after.get("outcome") == "error"]

    @property
    def exit_status(self) -> int:
        """0 when every row of the rescored suites was rescored; 1 when one was not (it is listed, and keeps its
        verdict), or a sample asked again ended in an error."""
        return NOT_FAITHFUL if self.carried or self.asked_errors else RESCORED

    def lines(self) -> list[str]:
        """What the command prints: per suite, the figures before and after with their difference (the benchmark's
        alone: the same answers), then each sample that flipped with its reason, the samples whose prompt changed,
        and those not rescored."""
        lines = []
        for name, result in self.suites.items():
            title = self.titles.get(name, name)
            rescored = sum(1 for row in result.rows if row.carried is None)
            lines.append(f"tooleval rescore: {self.path}: {title} {result.source} -> {result.target}, "
                         f"{rescored} of {len(result.rows)} samples rescored, {counted(self.requests, 'request')}")
            lines += _figure_table(title, result, self.before.suites.get(name), self.after.suites.get(name))
            lines += _flip_lines(result)
            lines += _prompt_lines(result)
            lines += [f"note: {note}" for note in result.notes]
            differently = _scored_differently(self.reported, result)
            if differently:
                shown = ", ".join(differently[:10]) + (f" and {len(differently) - 10} more"
                                                       if len(differently) > 10 else "")
                lines.append(f"scored differently: {counted(len(differently), 'sample')}: this plugin "
                             f"({__version__}) scores "
                             f"the report's answer under {result.source} otherwise than the report did; the "
                             f"{result.source} column is this plugin's: {shown}")
        for test_id, reason in self.carried:
            lines.append(f"not rescored: {test_id}: {reason} (its verdict is the report's)")
        for test_id in self.asked_errors:
            lines.append(f"asked again: {test_id} ended in an error (see its row)")
        return lines


def _figure_table(title: str, result: SuiteRescore, before: SuiteSummary | None, after: SuiteSummary | None
                  ) -> list[str]:
    if before is None or after is None:
        return []
    names = list(dict.fromkeys([*after.figures, *before.figures]))
    body = []
    for name in names:
        old, new = before.figures.get(name), after.figures.get(name)
        difference = "-" if old is None or new is None else f"{new - old:+.3f}"
        body.append([name, "-" if old is None else f"{old:.3f}", "-" if new is None else f"{new:.3f}", difference])
    asked = sum(1 for row in result.rows if row.asked)
    alone = ("the benchmark's alone: the same answers scored under each revision" if not asked else
             f"the same answers scored under each revision, but for {asked} asked again under the new prompts")
    return [f"{title}: the difference is {alone}",
            tabulate(body, headers=["figure", result.source, result.target, "difference"], tablefmt="simple",
                     disable_numparse=True)]


def _flip_lines(result: SuiteRescore) -> list[str]:
    flips = [row for row in result.rows if row.before.get("outcome") != row.after.get("outcome")]
    if not flips:
        return ["flipped: none (every sample has the outcome it had)"]
    ups = sum(1 for row in flips if row.after.get("outcome") == "passed")
    lines = [f"flipped: {counted(len(flips), 'sample')}: {ups} fail -> pass, {len(flips) - ups} pass -> fail"]
    for row in flips[:LISTED]:
        lines.append(f"  {row.after.get('test_id')}: {row.before.get('outcome')} -> {row.after.get('outcome')} "
                     f"({'; '.join(_reason_texts(row, result))})")
    if len(flips) > LISTED:
        lines.append(f"  and {len(flips) - LISTED} more (the report's rescore block lists them all)")
    return lines


def _reason_texts(row: RowRescore, result: SuiteRescore) -> list[str]:
    texts = [reason for reason in row.reasons if reason != "prompt changed"]
    if row.asked:
        texts.insert(0, f"prompt changed: asked again under {result.target}'s")
    elif row.prompt_changed:
        texts.insert(0, f"prompt changed: scored on the answer to {row.answered or result.source}'s")
    return texts or ["not the benchmark's"]


def _prompt_lines(result: SuiteRescore) -> list[str]:
    changed = [row for row in result.rows if row.prompt_changed]
    if not changed:
        return []
    ids = ", ".join(str(row.after.get("test_id")) for row in changed)
    asked = [row for row in changed if row.asked]
    if asked:
        return [f"prompt changed: {counted(len(changed), 'sample')}, asked again under {result.target}'s prompts: "
                f"{ids}"]
    answered = ", ".join(sorted({row.answered or result.source for row in changed if not row.asked}))
    return [f"prompt changed: {counted(len(changed), 'sample')}, scored on their answers to {answered}'s prompts "
            "(--ask "
            f"asks them again): {ids}"]


def _scored_differently(reported: list[dict[str, Any]], result: SuiteRescore) -> list[str]:
    outcomes = {row_key(row): row.get("outcome") for row in reported}
    return [str(row.before.get("test_id")) for row in result.rows if row.carried is None and not row.asked
            and outcomes.get(row_key(row.before), row.before.get("outcome")) != row.before.get("outcome")]


# -- reading the report --------------------------------------------------------------------------------------------


def read_input(path: str) -> dict[str, Any]:
    """The report to rescore, checked as a merge checks a shard (report/shard_check.py): one line naming the file
    and the field when it is not a report of this plugin, not strict JSON, or damaged."""
    from .shard_check import check_category_sizes, check_rows, check_shard, read_strict

    hint = "name a file a run wrote with --tooleval-report"
    try:
        document = read_strict(path, "rescore", hint)
        if (not isinstance(document, dict) or document.get("schema") != SCHEMA
                or not isinstance(document.get("samples"), list) or not isinstance(document.get("fingerprint"), dict)):
            raise ToolevalUsageError(f"rescore: {path} is not a pytest-tooleval report (schema {SCHEMA!r} with a "
                                     f"fingerprint and samples): {hint}")
        if isinstance(document.get("run"), dict):
            check_shard(path, document)
        else:  # a report from before shard records: its rows alone
            rows = document["samples"]
            if not all(isinstance(row, dict) for row in rows):
                raise ToolevalUsageError(f"rescore: {path}: a sample row is not an object")
            check_rows(path, rows)
            check_category_sizes([(path, rows)])
    except ToolevalUsageError as exc:  # the shard checks speak for the merge
        raise ToolevalUsageError(re.sub(r"^merge: ", "rescore: ", str(exc)).replace(
            "run its shard again", "run it again")) from None
    return document


# -- the rescore ---------------------------------------------------------------------------------------------------


def rescore(path: str, options: RescoreOptions, *, output: str | None = None,
            now: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.timezone.utc)) -> Rescored:
    """Rescore the report at `path` to `options.revisions`; a usage error (one line) when it cannot be: not a
    report, a revision not pinned, a report already of that revision, a suite without revisions or samples, data
    that cannot be found, or (with `ask`) a model that cannot be asked."""
    from ..models.engine import Engine
    from ..suites import plugin, registered

    document = read_input(path)
    fingerprint: dict[str, Any] = document["fingerprint"]
    rows: list[dict[str, Any]] = document["samples"]
    if output is not None and Path(output).resolve() == Path(path).resolve():
        raise ToolevalUsageError(f"rescore: -o names the report being rescored ({path}): write the rescored report "
                                 "to another file, e.g. -o rescored.json")
    plan: dict[str, tuple[RescoreFn, dict[str, Any], str, str]] = {}
    for name, wanted in options.revisions.items():
        suite = registered().get(name)
        rescorer = None if suite is None else suite.upstream.rescore
        if suite is None or rescorer is None:
            raise ToolevalUsageError(f"rescore: {name} has no revisions to rescore to")
        block = fingerprint.get(name)
        if not any(row.get("suite") == name for row in rows):
            raise ToolevalUsageError(f"rescore: {path} has no {name} samples to rescore")
        if not isinstance(block, dict):
            raise ToolevalUsageError(f"rescore: {path}: its fingerprint has no {name} block (a damaged report: run "
                                     "it again)")
        target = _target(suite, name, wanted)
        named = suite.upstream.revision_of(block)
        if named is None:  # a suite that can rescore declares its revisions too
            raise ToolevalUsageError(f"rescore: {name} has no revisions to rescore to")
        source = str(named)
        if source == target:
            raise ToolevalUsageError(f"rescore: {path} is already scored against {suite.figures.title} "
                                     f"{target}: nothing to rescore (--{name}-revision names the revision to "
                                     "rescore it to)")
        plan[name] = (rescorer, block, source, target)
    settings = _model_settings(path, fingerprint, options, [plugin(name) for name in plan])
    engine = Engine()
    try:
        context = RescoreContext(settings.data_dir, settings.cache_path, settings.offline, options.ask,
                                 str(fingerprint.get("scorer") or "official"), engine,
                                 _Access(settings, engine, fingerprint, [plugin(name) for name in plan],
                                         _served(document)),
                                 {name: _run_revision(document, name, source) for name, (_, _, source, _) in
                                  plan.items()}, score_timeout=settings.score_timeout)
        results = {name: rescorer(_rows_of(rows, name), block, target, context)
                   for name, (rescorer, block, _, target) in plan.items()}
        engine.flush()
        requests = _requests(engine)
    finally:
        engine.close()
    return _assembled(path, document, results, requests, now(), {name: plugin(name).figures.title for name in plan})


def _run_revision(document: dict[str, Any], suite: str, source: str) -> str:
    """The revision the report's run scored `suite` against: the first of its rescores' (`previous`) sources."""
    revision, block, seen = source, document.get("rescore"), 0
    while isinstance(block, dict) and seen < 100:
        entry = (block.get("revisions") or {}).get(suite) if isinstance(block.get("revisions"), dict) else None
        if isinstance(entry, dict) and isinstance(entry.get("from"), str):
            revision = entry["from"]
        block, seen = block.get("previous"), seen + 1
    return revision


def _rows_of(rows: list[dict[str, Any]], suite: str) -> list[dict[str, Any]]:
    return [row for row in rows if row.get("suite") == suite]


def _target(suite: SuitePlugin[Any], name: str, wanted: str) -> str:
    """The revision `wanted` names, as the suite's own option reads it; a usage error naming this command's option."""
    option = next((option for option in suite.options_model.declared_options()
                   if option.name == f"{name}-revision"), None)
    if option is None or option.parse is None:
        return wanted
    try:
        return str(option.parse(option.name, wanted))
    except ToolevalUsageError as exc:
        raise ToolevalUsageError("rescore: " + str(exc).replace(f"--tooleval-{name}-revision", f"--{name}-revision")
                                 ) from None


def _model_settings(path: str, fingerprint: dict[str, Any], options: RescoreOptions,
                    suites: Sequence[SuitePlugin[Any]]) -> Settings:
    """The settings the report's run asked its model with (its fingerprint), where this command's options say where
    the data, the cache and the endpoint are: what builds its model access as the run built it."""
    from pydantic import ValidationError

    from ..settings.options import build_settings
    from ..suites import all_options

    parameters: dict[str, Any] = fingerprint["parameters"] if isinstance(fingerprint.get("parameters"), dict) else {}
    values: dict[str, Any] = {
        "model": fingerprint.get("model"),
        "base_url": options.base_url or os.environ.get("TOOLEVAL_BASE_URL") or None,
        "api_key": options.api_key or os.environ.get("TOOLEVAL_API_KEY") or None,
        **{name: parameters[name] for name in ("temperature", "top_p", "max_tokens", "reasoning_effort")
           if name in parameters},
        **{name: fingerprint[name] for name in ("reasoning", "sampling", "scorer", "tools_system")
           if fingerprint.get(name) is not None},
        "data_dir": options.data_dir or os.environ.get("TOOLEVAL_DATA_DIR") or None,
        "cache_dir": options.cache_dir or os.environ.get("TOOLEVAL_CACHE_DIR") or None,
        "offline": options.offline,
        "no_probe": True,
    }
    for suite in suites:  # the suite's helper models, as its block names them (a `user_model`, say)
        block: dict[str, Any] = fingerprint[suite.name] if isinstance(fingerprint.get(suite.name), dict) else {}
        values.update({role.model_key: block[role.model_key] for role in suite.roles if block.get(role.model_key)})
    if not isinstance(values["model"], str) or not values["model"]:
        raise ToolevalUsageError(f"rescore: {path}: fingerprint.model is {values['model']!r}, not a model name "
                                 "(a damaged report: run it again)")
    try:
        return build_settings({key: value for key, value in values.items() if value is not None}, {},
                              all_options())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ToolevalUsageError(f"rescore: {path}: its fingerprint's {where} cannot be read: {first['msg']}") from None


class _Access:
    """The report's model, built once per kind when a suite first needs it (RescoreContext.access)."""

    def __init__(self, settings: Settings, engine: Engine, fingerprint: dict[str, Any],
                 suites: Sequence[SuitePlugin[Any]], served: dict[str, dict[str, Any]] | None = None) -> None:
        self.settings, self.engine, self.fingerprint, self.suites = settings, engine, fingerprint, suites
        self.served = served  # what the report's run found each endpoint serving: its cache keys hold it
        self.built: dict[bool, ModelAccess] = {}

    def __call__(self, asking: bool) -> ModelAccess:
        if asking not in self.built:
            self.built[asking] = self._build(asking)
        return self.built[asking]

    def _build(self, asking: bool) -> ModelAccess:
        from ..models.access import access_kind
        from ..models.cache import CacheRun, new_run
        from ..models.factory import build_access

        settings = self.settings
        if access_kind(settings) == "chat":
            problem = _endpoint_problem(self.fingerprint, settings.base_url)
            if problem is not None:
                raise ToolevalUsageError(problem)
        roles = [role for suite in self.suites for role in suite.roles]
        readers = [suite.upstream.replay_rows for suite in self.suites]  # None from a suite without a format of its own
        try:
            # the report's answers, whichever run of its model cached them (its run, or the run it reused)
            reading: CacheRun = new_run("reuse")
            return build_access(settings, settings.cache_path, self.engine,
                                lambda: settings.cache_path / "rescore.board.sqlite", roles, readers,
                                say=lambda line: None, cache_only=not asking, cache_run=reading, served=self.served)
        except ToolevalUsageError as exc:  # a replay file that is not there any more
            raise ToolevalUsageError(str(exc).replace("--tooleval-model ", "the report's model ")) from None


def _served(document: Mapping[str, Any]) -> dict[str, dict[str, Any]] | None:
    """What the report's run found each endpoint serving (its `run.cache.served`), or None."""
    run = document.get("run")
    cache = run.get("cache") if isinstance(run, Mapping) else None
    served = cache.get("served") if isinstance(cache, Mapping) else None
    if not isinstance(served, dict):
        return None
    return {str(label): dict(value) for label, value in served.items() if isinstance(value, dict)}


def _endpoint_problem(fingerprint: Mapping[str, object], base_url: str | None) -> str | None:
    """Why the endpoint this command would reach is not the report's (its response cache is keyed by the endpoint),
    or None. The report names its host; its probe, when it ran, the whole host[:port]/path."""
    from ..models.openai_compat import DEFAULT_BASE_URL, endpoint_label

    label = endpoint_label(base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
    profile = fingerprint.get("endpoint_profile")
    probed = (profile.get("model") or {}).get("endpoint") if isinstance(profile, dict) else None
    host = fingerprint.get("endpoint_host")
    if isinstance(probed, str) and probed and probed != label:
        return f"the report's model was served at {probed}, not {label}: pass --base-url with that endpoint"
    if isinstance(host, str) and host and label.split("/", 1)[0].rsplit(":", 1)[0] != host.lower():
        return f"the report's model was served at {host}, not {label}: pass --base-url with that endpoint"
    return None


def _requests(engine: Engine) -> int:
    backends = {id(probe.backend): probe.backend for probe in engine.probes}.values()
    return sum(int(getattr(backend, "sent", 0)) for backend in backends)


# -- the new report ------------------------------------------------------------------------------------------------


def _assembled(path: str, document: dict[str, Any], results: dict[str, SuiteRescore], requests: int,
               when: datetime.datetime, titles: dict[str, str]) -> Rescored:
    from ..suites import plugin

    reported: list[dict[str, Any]] = document["samples"]
    after_of = {row_key(row.before): row.after for result in results.values() for row in result.rows}
    before_of = {row_key(row.before): row.before for result in results.values() for row in result.rows}
    everything = [after_of.get(row_key(row), row) for row in reported]
    before_rows = [before_of.get(row_key(row), row) for row in reported]
    kept = [row for row in everything if row.get("outcome") != "skipped" and not row.get("quarantined")]
    before_kept = [row for row in before_rows if row.get("outcome") != "skipped" and not row.get("quarantined")]
    if not kept:
        raise ToolevalUsageError(f"rescore: {path} holds no scored sample: nothing to rescore")
    summary, before = summarize(kept, plugin), summarize(before_kept, plugin)
    made = dict(document["fingerprint"])
    made.update({name: result.fingerprint for name, result in results.items()})
    made["plugin_version"] = __version__  # the verdicts are this version's
    old_totals: dict[str, Any] = document["totals"] if isinstance(document.get("totals"), dict) else {}
    run: dict[str, Any] | None = document["run"] if isinstance(document.get("run"), dict) else None
    counted = None
    if "requests" in old_totals:
        counted = {"requests": int(old_totals.get("requests") or 0) + requests,
                   "retries": int(old_totals.get("retries") or 0)}
    totals = run_totals(kept, float(old_totals.get("wall_s") or 0.0), requests=counted,
                        role_models=(run or {}).get("role_models") or None, prices=_prices((run or {}).get("prices")))
    for block in ("cost_ceiling", "batch"):
        if old_totals.get(block) is not None:
            totals[block] = old_totals[block]
    new = assemble(made, summary, everything, None, totals, list(document.get("storage_faults") or []), None, run)
    record = _record(path, document, results, requests, when, titles)
    samples = new.pop("samples")
    non_finite = new.pop("non_finite", None)
    new["rescore"] = record
    new["samples"] = samples
    if non_finite:
        new["non_finite"] = non_finite
    return Rescored(path, new, results, before, summary, reported, requests, titles)


def _record(path: str, document: dict[str, Any], results: dict[str, SuiteRescore], requests: int,
            when: datetime.datetime, titles: dict[str, str]) -> dict[str, Any]:
    """The new report's `rescore` block: from what, to what, when, and what happened to which samples."""
    rows = [row for result in results.values() for row in result.rows]
    flips = [row for row in rows if row.before.get("outcome") != row.after.get("outcome")]
    previous = document.get("rescore")
    return {
        "report": os.path.basename(path),
        "at": when.isoformat(timespec="seconds"),
        "plugin_version": __version__,
        "from_plugin_version": (document.get("fingerprint") or {}).get("plugin_version"),
        "revisions": {name: {"title": titles.get(name, name), "from": result.source, "to": result.target}
                      for name, result in results.items()},
        "notes": [note for result in results.values() for note in result.notes],
        "asked": any(row.asked for row in rows),
        "requests": requests,
        "flipped": {"fail_to_pass": sum(1 for row in flips if row.after.get("outcome") == "passed"),
                    "pass_to_fail": sum(1 for row in flips if row.before.get("outcome") == "passed")},
        "flips": [{"suite": row.after.get("suite"), "test_id": row.after.get("test_id"),
                   "before": row.before.get("outcome"), "after": row.after.get("outcome"),
                   "reasons": list(row.reasons)} for row in flips],
        "prompt_changed": [{"suite": row.after.get("suite"), "test_id": row.after.get("test_id"), "asked": row.asked}
                           for row in rows if row.prompt_changed],
        "not_rescored": [{"suite": row.after.get("suite"), "test_id": row.after.get("test_id"),
                          "reason": row.carried} for row in rows if row.carried is not None],
        **({"previous": previous} if isinstance(previous, dict) else {}),
    }


def _prices(value: object) -> dict[str, tuple[float, float]] | None:
    if not isinstance(value, dict) or not value:
        return None
    return {str(model): (float(pair[0]), float(pair[1])) for model, pair in value.items()}
