"""BFCL v4 single-turn as the plugin sees it: the SuitePlugin (suites/base.py). Cheap to import; data loads in
`load` (bfcl §1)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ...settings.options import Settings, SuiteSettings, option_field
from ..base import Figures, Hints, SuitePlugin, Tools, Upstream
from .data import CATEGORIES, FORMAT_SENSITIVITY, MEMORY, WEB_SEARCH, chosen_categories
from .multi_turn.sample import CATEGORIES as MULTI_TURN

if TYPE_CHECKING:
    from ...models.replay import Recorded
    from ...report.sections import FigureBlock, ReportSection
    from ...report.suite_summary import SuiteSummary, Unit
    from .format_sensitivity.prompts import FormatPrompts
    from .memory.prompts import MemoryPrompts
    from .multi_turn.tables import Tables
    from .prices import PriceTable
    from .suite import AnyBfclCase, BfclSuite
    from .templates import Templates
    from .web_search.api import Backend
    from .web_search.data import WebSearchFiles

VERSION = "2026.3.23"  # the bfcl-eval release whose data and checker the suite reproduces

class BfclSettings(SuiteSettings):
    """BFCL's options, typed: `BfclSettings.of(settings).bfcl_categories`."""

    bfcl_categories: tuple[str, ...] = option_field(
        "BFCL: comma list of categories to collect, or bfcl's groups (all, single_turn, multi_turn, live, non_live, "
        "python, non_python, memory, web_search, agentic); default: the 13 single-turn ones (multi-turn, agentic and "
        "format_sensitivity run when named)", ())
    bfcl_search: str | None = option_field(
        "BFCL web search: the search backend of a live model: serpapi (SERPAPI_API_KEY), record:PATH (serpapi, and "
        "each result kept in the cassette PATH) or cassette:PATH (a recorded run, offline)", None)
    bfcl_wheel: str | None = option_field(
        f"BFCL: a local copy of bfcl_eval-{VERSION}-py3-none-any.whl (pip download --no-deps bfcl-eval=={VERSION}), "
        "checked against its pinned sha256: the data and the request texts come from it instead of a download",
        path=True)


class BfclFigures(Figures):
    """BFCL's tables and figures (summary.py), shown as report.py does."""

    def summarize(self, rows: list[dict[str, Any]]) -> SuiteSummary:
        from .summary import summarize_bfcl

        return summarize_bfcl(rows)

    def units(self, rows: list[dict[str, Any]]) -> list[Unit]:
        from .summary import units

        return units(rows)

    def combine(self, proportions: Mapping[str, float]) -> dict[str, float]:
        from .summary import combine

        return combine(proportions)

    def report_sections(self, block: Any) -> list[ReportSection]:
        from .report import sections

        return sections(self.title, block)

    def figure_blocks(self, block: Any) -> list[FigureBlock]:
        from .report import figure_blocks

        return figure_blocks(self.title, block)

    def figure_names(self, settings: Settings) -> list[str]:
        """Every figure a run of these categories can give (summary.py names them)."""
        from .summary import figure_names

        prefixes = {"prompt": ("",), "fc": ("fc.",), "both": ("", "fc.")}[settings.mode]
        categories = chosen_categories(BfclSettings.of(settings).bfcl_categories) or tuple(CATEGORIES)
        return [name for prefix in prefixes for name in figure_names(categories, prefix)]


class BfclUpstream(Upstream):
    """bfcl's own result layout as recorded outputs."""

    def replay_rows(self, path: Path, document: Any) -> list[dict[str, Any]] | None:
        """bfcl's own result layout: `DIR/<non_live|live|multi_turn>/BFCL_v4_<category>_result.json` and
        `DIR/agentic/memory/<backend>/BFCL_v4_memory_<backend>_result.json` (JSON Lines of `{"id", "result"}`; a
        memory folder's prerequisite conversations and snapshots are not read), or one such file."""
        files = sorted(file for file in path.rglob("BFCL_v4_*_result.json")
                       if not file.name.endswith("_prereq_result.json")) if path.is_dir() else []
        if not files and path.name.startswith("BFCL_v4_") and path.name.endswith("_result.json"):
            files = [path]
        # a model's folder holds <non_live|live|...>/BFCL_v4_*: bfcl's result/ folder holds one such folder per model
        models = sorted({folder for folder in map(_model_folder, files) if folder is not None})
        if len(models) > 1:
            from ...errors import DataError

            raise DataError(f"--tooleval-model replay:{path}: the results of several models "
                            f"({', '.join(model.name for model in models)}); give the folder of one")
        from ...models.replay import unique_rows

        recorded = [item for file in files for item in _result_rows(file)]
        return unique_rows(recorded, f"--tooleval-model replay:{path}") or None


class BfclHints(Hints["AnyBfclCase"]):
    """A single-turn sample is one request, a multi-turn sample a conversation; shards by prompt length; tools
    under fc and both."""

    def batched_role(self, case: AnyBfclCase) -> str | None:
        """--tooleval-batch: a single-turn sample (and a format-sensitivity entry) is one request of the model; a
        multi-turn one (and an agentic question) asks each step after the last one's results, so it is asked live."""
        from .suite import BfclCase, BfclFormatCase

        return "model" if isinstance(case, (BfclCase, BfclFormatCase)) else None

    def weight(self, case: AnyBfclCase) -> float:
        """For --tooleval-shard: the prompt's length (the question and the function docs), which its tokens
        follow; a multi-turn sample's once per turn, as each turn asks at least once."""
        from .suite import BfclCase, BfclFormatCase

        if isinstance(case, (BfclCase, BfclFormatCase)):
            entry = case.sample.entry if isinstance(case, BfclCase) else case.sample.sample.entry
            return float(len(json.dumps(entry.get("question"), ensure_ascii=False))
                         + len(json.dumps(entry.get("function"), ensure_ascii=False)))
        docs = len(json.dumps(case.sample.functions, ensure_ascii=False))  # multi-turn, agentic
        return float(len(case.sample.turns) * (docs + len(json.dumps(case.sample.turns, ensure_ascii=False))))

    def tools(self, settings: Settings) -> Tools:
        """--tooleval-mode fc or both: the model is offered the functions as `tools`, BFCL's questions with no
        system message."""
        return Tools.NONE if settings.mode == "prompt" else Tools.WITHOUT_SYSTEM


class BfclPlugin(SuitePlugin["AnyBfclCase"]):
    name = "bfcl"
    markers: ClassVar[dict[str, str]] = {
        "bfcl": "a BFCL v4 single-turn sample",
        "non_live": "a BFCL sample of the non-live (expert-written) categories",
        "live": "a BFCL sample of the live (user-contributed) categories",
        **{category: f"a BFCL {category} sample" for category in CATEGORIES},
        "multi_turn": "a BFCL multi-turn sample (played turn by turn against simulated APIs)",
        **{category: f"a BFCL {category} sample" for category in MULTI_TURN},
        "agentic": "a BFCL agentic sample (memory, web search), judged on the model's last answer",
        "memory": "a BFCL memory question (asked after its scenario's prerequisite conversations)",
        **{category: f"a BFCL {category} question" for category in MEMORY},
        "web_search": "a BFCL web search question (searched through the backend --tooleval-bfcl-search names)",
        **{category: f"a BFCL {category} question" for category in WEB_SEARCH},
        FORMAT_SENSITIVITY: "a BFCL format-sensitivity entry (a single-turn question under one of 26 system prompts)",
    }
    options_model = BfclSettings
    roles = ()
    mark_profiles = (tuple(frozenset({"bfcl", group, category}) for category, group in CATEGORIES.items())
                     + tuple(frozenset({"bfcl", "multi_turn", category}) for category in MULTI_TURN)
                     + tuple(frozenset({"bfcl", "agentic", "memory", category}) for category in MEMORY)
                     + tuple(frozenset({"bfcl", "agentic", "web_search", category}) for category in WEB_SEARCH)
                     + (frozenset({"bfcl", FORMAT_SENSITIVITY}),))
    # bfcl's own ids, each its category's name and a number: simple_python_0, live_simple_0-0-0, multi_turn_base_0,
    # memory_kv_3-customer-3, web_search_base_7, format_sensitivity_0:<configuration>:simple_python_1
    id_prefixes = tuple(f"{category}_" for category in (*CATEGORIES, *MULTI_TURN, *MEMORY, *WEB_SEARCH,
                                                         FORMAT_SENSITIVITY))
    figures = BfclFigures("bfcl", "BFCL v4 (single-turn)")
    upstream = BfclUpstream()
    hints = BfclHints()

    def load(self, settings: Settings) -> BfclSuite:
        from .suite import BfclSuite
        from .upstream import ensure_data, given_wheel

        own = BfclSettings.of(settings)
        if settings.mode == "both" and (settings.model or "").startswith("replay:"):
            from ...errors import ToolevalUsageError

            raise ToolevalUsageError("BFCL replay: a result folder holds one protocol; pass --tooleval-mode prompt "
                                     "(text results) or fc (lists of calls)")
        root = ensure_data(settings.data_dir, settings.cache_path, settings.offline,
                           wheel=given_wheel(own.bfcl_wheel))
        model = settings.model or ""
        asks = bool(model) and model != "oracle" and not model.startswith("replay:")
        categories = chosen_categories(own.bfcl_categories)
        multi_turn = any(category in MULTI_TURN for category in categories)
        agentic = any(category in MEMORY or category in WEB_SEARCH for category in categories)
        searched = any(category in WEB_SEARCH for category in categories)
        # only a live model needs bfcl's request texts (and agentic's) and a search backend, and only multi-turn its
        # API tables: read them now, so that a run that cannot get them stops before any request, with one line
        return BfclSuite(root, categories, mode=settings.mode, sampling=model_sampling(settings),
                         templates=_templates(settings) if asks else None,
                         tables=_tables(settings) if multi_turn else None,
                         memory_prompts=_memory_prompts(settings) if asks and agentic else None,
                         web_search_files=_web_search_files(settings) if searched else None,
                         search=_search(settings) if asks and searched else None,
                         format_prompts=_format_prompts(settings) if asks and FORMAT_SENSITIVITY in categories
                         else None,
                         prices=_prices(settings) if model and model != "oracle" else None)

    def fingerprint(self, settings: Settings) -> dict[str, Any] | None:
        """What changes a BFCL score besides the model: the release, the data in use (located, never downloaded),
        the protocol and the sampling."""
        from ...data.download import manifest_sha256
        from ...errors import DataError, ToolevalUsageError
        from .upstream import ensure_data

        try:
            root: Path | None = ensure_data(settings.data_dir, settings.cache_path, True)
        except (ToolevalUsageError, DataError):
            root = None
        return {
            "version": VERSION,
            "categories": list(BfclSettings.of(settings).bfcl_categories),  # as given: what the user asked for
            "mode": settings.mode,
            "model_sampling": model_sampling(settings),
            # which backend answered web search's searches (a cassette by its sha256): a figure says where it is from
            "search": _search_label(BfclSettings.of(settings).bfcl_search),
            "data_manifest_sha256": None if root is None else manifest_sha256(root),
        }


def model_sampling(settings: Settings) -> dict[str, Any]:
    """--tooleval-sampling upstream: bfcl's temperature (bfcl §2.3), unless --tooleval-temperature was given. Its
    `store: false` is left out (it changes no answer, and not every OpenAI-compatible server takes it); it sends no
    max_tokens, which --tooleval-max-tokens none reproduces."""
    if settings.sampling != "upstream" or settings.explicit("temperature"):
        return {}
    from .requests import UPSTREAM_TEMPERATURE

    return {"temperature": UPSTREAM_TEMPERATURE}


def _templates(settings: Settings) -> Templates:
    from .upstream import given_wheel, load_templates

    wheel = given_wheel(BfclSettings.of(settings).bfcl_wheel)
    return load_templates(settings.cache_path, settings.offline, wheel=wheel)


def _memory_prompts(settings: Settings) -> MemoryPrompts:
    from .upstream import given_wheel, load_memory_prompts

    wheel = given_wheel(BfclSettings.of(settings).bfcl_wheel)
    return load_memory_prompts(settings.cache_path, settings.offline, wheel=wheel)


def _prices(settings: Settings) -> PriceTable | str:
    """bfcl's price table for the cost column (docs/bfcl.md#cost-and-latency), or why it cannot be had: it is no
    reason to stop a run, only to show the column N/A."""
    from ...errors import DataError, ToolevalUsageError
    from .upstream import given_wheel, load_prices

    wheel = given_wheel(BfclSettings.of(settings).bfcl_wheel)
    try:
        return load_prices(settings.cache_path, settings.offline, wheel=wheel)
    except (DataError, ToolevalUsageError) as exc:
        return f"bfcl's price table could not be read ({exc})"


def _format_prompts(settings: Settings) -> FormatPrompts:
    from .upstream import given_wheel, load_format_prompts

    wheel = given_wheel(BfclSettings.of(settings).bfcl_wheel)
    return load_format_prompts(settings.cache_path, settings.offline, wheel=wheel)


def _web_search_files(settings: Settings) -> WebSearchFiles:
    from .upstream import given_wheel, load_web_search

    wheel = given_wheel(BfclSettings.of(settings).bfcl_wheel)
    return load_web_search(settings.cache_path, settings.offline, wheel=wheel)


def _search(settings: Settings) -> Backend:
    import os

    from .web_search.run import search_backend

    return search_backend(BfclSettings.of(settings).bfcl_search, os.environ)


def _search_label(choice: str | None) -> str | None:
    """The backend's label as a fingerprint holds it: `serpapi`, or `cassette:<sha256>` of a readable cassette."""
    if not choice:
        return None
    if not choice.startswith("cassette:"):
        return "serpapi" if choice == "serpapi" or choice.startswith("record:") else choice
    from .web_search.cassette import cassette_label

    try:
        return cassette_label(Path(choice.removeprefix("cassette:")).expanduser())
    except OSError:
        return choice


def _tables(settings: Settings) -> Tables:
    from .upstream import given_wheel, load_tables

    wheel = given_wheel(BfclSettings.of(settings).bfcl_wheel)
    return load_tables(settings.cache_path, settings.offline, wheel=wheel)


def _model_folder(file: Path) -> Path | None:
    """The model's folder a result file of bfcl's layout lies in, if it lies in one."""
    if file.parent.name in ("non_live", "live", "multi_turn", "agentic", FORMAT_SENSITIVITY):
        return file.parent.parent
    if file.parent.parent.name == "memory" and file.parent.parent.parent.name == "agentic":
        return file.parent.parent.parent.parent
    return None


def _result_rows(file: Path) -> list[Recorded]:
    """One bfcl result file's rows, `{"id", "result"}`, with their lines; a broken file stops the run naming it and
    the line."""
    from ...errors import DataError
    from ...models.replay import Recorded
    from .data import id_rows

    try:
        return [Recorded({"id": str(row["id"]), "result": row.get("result"), **_usage(row, file)}, file, "line", number)
                for number, row in id_rows(file)]
    except DataError as exc:
        raise DataError(f"--tooleval-model replay:{exc}") from None


def _usage(row: Mapping[str, Any], file: Path) -> dict[str, Any]:
    """What bfcl's cost and latency columns read of a result row (docs/bfcl.md#cost-and-latency), with the model
    whose folder holds it, its name unescaped as bfcl's runner does ("_" back to "/"); {} when it has none."""
    from .cost import KEYS
    from .usage import MODEL

    kept = {key: row[key] for key in KEYS if key in row}
    folder = _model_folder(file)
    if kept and folder is not None:
        kept[MODEL] = folder.name.replace("_", "/")
    return kept

SUITE = BfclPlugin()
