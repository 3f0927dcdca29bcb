"""The JSON report: fingerprint, summary and one object per sample (its schema: docs/reports.md)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .. import __version__
from ..json_value import JSONObject, JSONValue
from ..settings.options import Settings
from .document import ReportDocument
from .gate import GateResult
from .summary import RunSummary

SCHEMA = "pytest-tooleval/report/1"


def fingerprint(settings: Settings, suites: list[str] | None = None) -> JSONObject:
    """Everything that changes a score, and nothing secret (the API key never appears): the model and the
    shared request parameters, then one block per suite that ran, from the suite's own fingerprint."""
    from ..suites import plugin

    base_url = settings.base_url or ""
    blocks = {name: plugin(name).fingerprint(settings) for name in suites or []}
    return {
        "plugin_version": __version__,
        "model": settings.model,
        "endpoint_host": urlsplit(base_url).hostname if base_url else None,
        "parameters": {"temperature": settings.temperature, "top_p": settings.top_p,
                       "max_tokens": settings.max_tokens, "reasoning_effort": settings.reasoning_effort},
        # strip: a leading think block was taken off each answer before scoring (not upstream's reading)
        "reasoning": settings.reasoning,
        "sampling": settings.sampling,  # upstream: each suite's own (its block says what was sent)
        "scorer": settings.scorer,
        # empty: requests with tools and no system message got an empty one (absent: sent as the benchmark makes
        # them; kept out then, so reports from before the option compare equal)
        **({"tools_system": settings.tools_system} if settings.tools_system != "as-is" else {}),
        **{name: block for name, block in blocks.items() if block is not None},
    }


def report_document(settings: Settings, summary: RunSummary, rows: Sequence[Mapping[str, JSONValue]],
                    gate: GateResult | None, totals: Mapping[str, object],
                    storage: Sequence[Mapping[str, object]] | None = None,
                    adaptations: dict[str, dict[str, str]] | None = None,
                    endpoint_profile: Mapping[str, object] | None = None,
                    comparison: Mapping[str, object] | None = None,
                    run: Mapping[str, object] | None = None) -> ReportDocument:
    """The report as one document: what --tooleval-report writes and the Markdown and HTML render."""
    # what the endpoints' models refused, and what was sent instead: part of what the figures mean
    made = {**fingerprint(settings, list(summary.suites)), "endpoint_adaptations": adaptations or {},
            "endpoint_profile": endpoint_profile}
    return ReportDocument.model_validate(assemble(made, summary, rows, gate, totals, storage, comparison, run))


def assemble(made: Mapping[str, object], summary: RunSummary, rows: Sequence[Mapping[str, JSONValue]],
             gate: GateResult | None, totals: Mapping[str, object],
             storage: Sequence[Mapping[str, object]] | None = None, comparison: Mapping[str, object] | None = None,
             run: Mapping[str, object] | None = None) -> JSONObject:
    """The report's JSON value from its parts (a run's, or a merge of shards', report/merge.py): what
    `ReportDocument.model_validate` reads; each part is written as JSON (`strict_plain`)."""
    document: dict[str, object] = {
        "schema": SCHEMA,
        "fingerprint": made,
        # which share of the benchmark this run was (--tooleval-shard, --tooleval-sample), what it collected
        # but never ran, and what its costs were priced at: what a merge of shards needs
        "run": run,
        "summary": {name: suite.data for name, suite in summary.suites.items()},
        "totals": totals,
        "storage_faults": list(storage or []),  # what the cache and the run board failed to keep (storage.py)
        "comparison": comparison,  # against --tooleval-baseline (report/compare.py)
        "gate": None if gate is None else {
            "passed": gate.passed,
            "regressions": [check.as_dict() for check in gate.regressions],
            "incomplete": gate.incomplete,
            "checks": [{"figure": name, "actual": actual, "threshold": threshold, "met": met}
                       for name, actual, threshold, met in gate.checks],
            "error_rate": gate.error_rate,
            "max_error_rate": gate.max_error_rate,
            "notes": list(gate.notes),
            "largest_cause": None if gate.largest_cause is None else gate.largest_cause.as_dict(),
            "partial": gate.partial,
        },
        "samples": sorted(rows, key=lambda row: (row["suite"], row["language"], row["category"], row["index"])),
    }
    return strict_plain(document)


def strict_plain(document: Mapping[str, object]) -> JSONObject:
    """`document` as JSON-plain values (tuples become lists, other objects their text) that strict JSON can hold:
    a non-finite number (NaN, an infinity: a model's argument 1e999999, say) becomes null, and the report says
    where in `non_finite`, a list of paths such as samples[3].calls[0].set_level.level."""
    plain: JSONObject = json.loads(json.dumps(document, default=str))
    noted = plain.pop("non_finite", None) if "non_finite" in document else None
    found: list[JSONValue] = [*noted] if isinstance(noted, (list, dict, str)) else []
    stack: list[tuple[Any, str]] = [(plain, "")]
    while stack:  # without recursion: a value may be nested as deep as the JSON decoder allowed
        value, path = stack.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        children = []
        for key, item in items:
            where = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else str(key)
            if isinstance(item, float) and not math.isfinite(item):
                value[key] = None
                found.append(where)
            elif isinstance(item, (dict, list)):
                children.append((item, where))
        stack.extend(reversed(children))  # depth first, in the document's order
    if found:
        plain["non_finite"] = found
    return plain


def write_report(path: str, document: ReportDocument) -> None:
    """The report as strict JSON (no NaN or Infinity: `strict_plain`), written atomically."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    plain = document.plain()
    try:
        text = json.dumps(plain, ensure_ascii=False, indent=1, default=str, allow_nan=False)
    except ValueError:  # a document not made by `assemble` may still hold a non-finite number
        text = json.dumps(strict_plain(plain), ensure_ascii=False, indent=1, allow_nan=False)
    # a lone surrogate (replayed text may hold one) is not UTF-8; written as its \uXXXX escape it stays valid JSON
    temporary.write_text(text, encoding="utf-8", errors="backslashreplace")
    os.replace(temporary, target)


def read_report(path: str, what: str = "--tooleval-baseline",
                hint: str = "name a file a previous run wrote with --tooleval-report") -> JSONObject:
    """A report another run wrote (the baseline, a shard): a usage error of one line when it is not one.
    `what` starts each message (the option or the command), `hint` says which file was meant."""
    from ..data.files import FileRefused, read_bytes, unreadable_json
    from ..errors import ToolevalUsageError

    try:
        document = json.loads(read_bytes(Path(path)).decode("utf-8"))
    except FileNotFoundError:
        raise ToolevalUsageError(f"{what}: no such file {path}: {hint}") from None
    except FileRefused as exc:
        raise ToolevalUsageError(f"{what}: {path}: {exc}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ToolevalUsageError(f"{what}: {path} is not a JSON report ({exc})") from None
    except (RecursionError, ValueError) as exc:  # nested too deeply, an integer too long
        raise ToolevalUsageError(f"{what}: {path} is not a JSON report ({unreadable_json(exc)})") from None
    if not isinstance(document, dict) or document.get("schema") != SCHEMA or not isinstance(document.get("samples"),
                                                                                              list):
        raise ToolevalUsageError(f"{what}: {path} is not a pytest-tooleval report (schema {SCHEMA!r} with samples): "
                                 f"{hint}")
    return document


def check_report_path(path: str, option: str = "--tooleval-report", example: str = "report.json") -> None:
    """Raise a usage error now, before any sample is asked, when `path` cannot become the report."""
    from ..errors import ToolevalUsageError

    target = Path(path)
    if target.is_dir():
        raise ToolevalUsageError(f"{option}: {path} is a folder; name a file, e.g. {target / example}")
    folder = target.parent
    while not folder.exists() and folder != folder.parent:  # write_report creates the missing folders
        folder = folder.parent
    if not folder.is_dir():
        raise ToolevalUsageError(f"{option}: cannot write {path}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ToolevalUsageError(f"{option}: cannot write {path}: {folder} is not writable")
