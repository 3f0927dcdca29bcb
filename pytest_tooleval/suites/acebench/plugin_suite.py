"""ACEBench as the plugin sees it: the SuitePlugin (suites/base.py). Cheap to import; data loads in `load`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ...settings.options import ReasoningEffort, Settings, SuiteSettings, option_field, reasoning_effort_help
from ..base import Figures, Hints, Role, SuitePlugin, Tools, Upstream
from .revisions import DEFAULT, REVISIONS, parse_revision

if TYPE_CHECKING:
    from ...report.rescoring import RescoreContext, SuiteRescore
    from ...report.sections import ReportSection
    from ...report.summary import SuiteSummary
    from ..base import Unit
    from .data import AceCase
    from .suite import AceBenchSuite

class AceBenchSettings(SuiteSettings):
    """ACEBench's options, typed: `AceBenchSettings.of(settings).language`."""

    acebench_revision: str = option_field(
        "the ACEBench revision to score against: "
        + ", ".join(f"{known.name} ({known.upstream}, {known.date})" for known in REVISIONS)
        + f"; default {DEFAULT}, what upstream runs today", DEFAULT, parse_revision)
    data_unverified: bool = option_field("run on ACEBench data that matches no pinned revision (the summary and the "
                                         "fingerprint say so)", False)
    language: Literal["en", "zh", "all"] = option_field("ACEBench language: en, zh or all", "en")
    categories: tuple[str, ...] = option_field("comma list of categories to collect (default: all)", ())
    user_model: str | None = option_field("model playing the user in agent_multi_turn")
    user_base_url: str | None = option_field("endpoint of the user model (default: the agent's)")
    user_api_key: str | None = option_field("API key of the user model (default: the agent's)", secret=True)
    user_temperature: float = option_field("temperature of the user model (ACEBench uses 0.001)", 0.001)
    user_max_tokens: int = option_field("max_tokens of the user model (ACEBench uses 1000)", 1000)
    user_reasoning_effort: ReasoningEffort | None = option_field(reasoning_effort_help("user"))
    max_dialog_turns: int = option_field("turn limit of an agent rollout", 40)
    agent_step_prompts: Literal["upstream", "data"] = option_field(
        "agent_multi_step prompt language: upstream (zh prompts on every language, as ACEBench's API runner does) "
        "or data (the sample's language)", "upstream")


LANGUAGES = ("en", "zh")
FAMILIES = ("normal", "special", "agent")


def languages(settings: Settings) -> tuple[str, ...]:
    language = AceBenchSettings.of(settings).language
    return LANGUAGES if language == "all" else (language,)


class AceBenchFigures(Figures):
    """ACEBench's tables and figures (summary.py), shown as report.py does."""

    def summarize(self, rows: list[dict[str, Any]]) -> SuiteSummary:
        from .summary import summarize_acebench

        return summarize_acebench(rows)

    def units(self, rows: list[dict[str, Any]]) -> list[Unit]:
        from .summary import units

        return units(rows)

    def combine(self, proportions: Mapping[str, float]) -> dict[str, float]:
        from .summary import combine

        return combine(proportions)

    def report_sections(self, block: Any) -> list[ReportSection]:
        from .report import sections

        return sections(self.title, block)

    def figure_names(self, settings: Settings) -> list[str]:
        """Every figure a run of these languages and categories can give (summary.py names them)."""
        from .categories import ALL_CATEGORIES, GROUPS

        own = AceBenchSettings.of(settings)
        categories = own.categories or ALL_CATEGORIES
        protocols = {"prompt": ("",), "fc": ("fc.",), "both": ("", "fc.")}[settings.mode]
        names = [f"{language}.{protocol}{name}" for language in languages(settings) for protocol in protocols
                 for name in (*categories, *(group.lower() for group in GROUPS), "overall")]
        if settings.repeats > 1:  # report/repeated.py
            names += [f"{name}.{kind}" for name in list(names) for kind in ("mean", "pass_k")]
        return names


class AceBenchUpstream(Upstream):
    """ACEBench's pinned revisions, rescoring between them, and its result folders as recorded outputs."""

    def revision_of(self, block: Mapping[str, Any] | None, settings: Settings | None = None) -> str:
        """The revision a report's fingerprint block names, or this run's (block None). A report from before
        revisions were named was made against e6db74b, the only one pinned then."""
        if block is None:
            assert settings is not None
            return AceBenchSettings.of(settings).acebench_revision
        return str(block.get("revision") or REVISIONS[0].name)

    def rescore(self, rows: list[dict[str, Any]], block: Mapping[str, Any], target: str,
                context: RescoreContext) -> SuiteRescore:
        """A report's ACEBench rows scored again under revision `target` (python -m pytest_tooleval rescore)."""
        from .rescore import rescore_rows

        return rescore_rows(rows, dict(block), target, context)

    def replay_rows(self, path: Path, document: Any) -> list[dict[str, Any]] | None:
        """An upstream result folder, `result_all/result_<lang>/<model>/data_<category>_result.json` (the model
        folder, a result_<lang> folder holding one model, or result_all itself): rows take the folder's language."""
        from ...models.replay import read_recorded, unique_rows

        files = sorted(path.rglob("data_*_result.json")) if path.is_dir() else []
        recorded = []
        for file in files:
            language = next((part[len("result_"):] for part in file.parts if part in ("result_en", "result_zh")), None)
            recorded.extend(read_recorded(file, language))
        return unique_rows(recorded, f"--tooleval-model replay:{path}") or None


class AceBenchHints(Hints["AceCase"]):
    """Agent rollouts first and unbatched; shards by prompt length; tools under fc and both."""

    def priority(self, case: AceCase) -> int:
        return 0 if case.family == "agent" else 1  # rollouts take many requests: start them first

    def batched_role(self, case: AceCase) -> str | None:
        """--tooleval-batch: a normal or special sample is one request of the model (its dialogue history is in
        the prompt); an agent rollout is many, each depending on the last."""
        return None if case.family == "agent" else "model"

    def weight(self, case: AceCase) -> float:
        """A sample's expected cost beside the others of its category, for --tooleval-shard (shards.py): its
        prompt's length (the question and the functions), which its tokens follow."""
        return float(len(json.dumps(case.record.get("question"), ensure_ascii=False))
                     + len(json.dumps(case.record.get("function"), ensure_ascii=False)))

    def selection_hint(self, settings: Settings, markexpr: str) -> str | None:
        """`-m zh` on an en run selects nothing: say which option loads the other language."""
        missing = [language for language in LANGUAGES
                   if language not in languages(settings) and re.search(rf"\b{language}\b", markexpr)]
        if not missing:
            return None
        language = AceBenchSettings.of(settings).language
        return (f"-m {markexpr!r} names {', '.join(missing)}, but --tooleval-language {language} loaded "
                f"only {', '.join(languages(settings))} samples: add --tooleval-language all")

    def tools(self, settings: Settings) -> Tools:
        """--tooleval-mode fc or both: the model is offered the functions as `tools` (the probe checks it can);
        every request with tools starts with the sample's system prompt (fc.py, agent/fc_rollout.py)."""
        return Tools.NONE if settings.mode == "prompt" else Tools.WITH_SYSTEM


class AceBenchPlugin(SuitePlugin["AceCase"]):
    name = "acebench"
    markers: ClassVar[dict[str, str]] = {
        "acebench": "an ACEBench sample",
        "normal": "an ACEBench normal-family sample",
        "special": "an ACEBench special-family sample",
        "agent": "an ACEBench agent-family sample",
        "en": "an English sample",
        "zh": "a Chinese sample",
        "grammar_unsafe": "an fc sample with a function schema a grammar-based server may fail to compile (a regex "
                          "pattern with a backslash, a length bound over 1,000): llama-cpp-python's "
                          "chatml-function-calling crashes on it (docs/models.md)",
    }
    options_model = AceBenchSettings
    roles = (Role("user", "user"),)  # plays the user in agent_multi_turn
    mark_profiles = tuple(frozenset({"acebench", family, language, *unsafe}) for family in FAMILIES
                          for language in LANGUAGES for unsafe in ((), ("grammar_unsafe",)))
    id_prefixes = tuple(f"{language}-" for language in LANGUAGES)
    figures = AceBenchFigures("acebench", "ACEBench")
    upstream = AceBenchUpstream()
    hints = AceBenchHints()

    def load(self, settings: Settings) -> AceBenchSuite:
        from . import data
        from .suite import AceBenchSuite

        own = AceBenchSettings.of(settings)
        folder = data.locate(settings.data_dir, settings.cache_path, settings.offline, own.acebench_revision,
                             unverified=own.data_unverified)
        return AceBenchSuite(folder.root, languages(settings), own.categories, revision=folder.revision,
                             data_verified=folder.verified,
                             max_dialog_turns=own.max_dialog_turns, step_prompts=own.agent_step_prompts,
                             sampling=model_sampling(settings), mode=settings.mode)

    def fingerprint(self, settings: Settings) -> dict[str, Any]:
        """The ACEBench knobs behind a score: the revision first, whether the data was checked against its pin, and
        the sha256 of the data manifest in use (located, never downloaded)."""
        from ...data.download import manifest_sha256
        from ...errors import DataError, ToolevalUsageError
        from . import data

        own = AceBenchSettings.of(settings)
        try:
            root: Path | None = data.locate(settings.data_dir, settings.cache_path, True, own.acebench_revision,
                                            unverified=own.data_unverified).root
        except (ToolevalUsageError, DataError):
            root = None
        return {
            "revision": own.acebench_revision,
            "data_verified": not own.data_unverified,
            "language": own.language,
            "categories": list(own.categories),
            # fc is not the leaderboard's protocol: its figures are named <language>.fc.<figure>
            "mode": settings.mode,
            "max_dialog_turns": own.max_dialog_turns,
            "agent_step_prompts": own.agent_step_prompts,
            "model_sampling": model_sampling(settings),
            "user_model": own.user_model,
            "data_manifest_sha256": None if root is None else manifest_sha256(root),
        }


SUITE = AceBenchPlugin()


# ACEBench's own sampling for the model under test (acebench-scoring §2.3, acebench-agent §5.2)
UPSTREAM_SAMPLING = {
    "single": {"temperature": 0.7, "top_p": 1.0, "max_tokens": 1200},
    "agent": {"temperature": 0.001, "top_p": 1.0, "max_tokens": 1000},
}


def model_sampling(settings: Settings) -> dict[str, dict[str, Any]]:
    """--tooleval-sampling upstream: what ACEBench's runner sends, where no option was given explicitly."""
    if settings.sampling != "upstream":
        return {}
    return {kind: {name: value for name, value in values.items() if not settings.explicit(name.replace("_", "-"))}
            for kind, values in UPSTREAM_SAMPLING.items()}
