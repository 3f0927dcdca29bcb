"""ToolAlpaca as the plugin sees it: the SuitePlugin (suites/base.py). Cheap to import; data loads in `load`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ...models.access import access_kind
from ...settings.options import Settings
from ..base import Figures, Hints, Role, SuitePlugin, Upstream
from .constants import NO_ORACLE, NOT_CONFIGURED, SUBSET_FILES, SUBSETS, ToolAlpacaSettings

if TYPE_CHECKING:
    from ...json_value import JSONObject
    from ...report.sections import ReportSection
    from ...report.summary import SuiteSummary
    from .data import ToolAlpacaCase
    from .runner import ToolAlpacaRunner

class ToolAlpacaFigures(Figures):
    """ToolAlpaca's three rates (summary.py), shown as report.py does."""

    def summarize(self, rows: list[dict[str, Any]]) -> SuiteSummary:
        from .summary import summarize_toolalpaca

        return summarize_toolalpaca(rows)

    def report_sections(self, block: object) -> list[ReportSection]:
        from .report import sections

        return sections(self.title, block)

    def row_details_schema(self) -> dict[str, Any] | None:
        from ...report.shard_check import TEXT, TEXT_OR_NULL  # checking a shard: jsonschema is loaded

        return {"type": ["object", "null"], "properties": {
            "judged": {"type": "boolean"}, "process_correctness": TEXT_OR_NULL,
            "final_response_correctness": TEXT_OR_NULL, "setup": TEXT, "deviations": {"type": "array", "items": TEXT}}}

    def figure_names(self, settings: Settings) -> list[str]:
        """Upstream's three rates for each subset of the run, and for its `-documented` view where one exists."""
        from .data import UNDOCUMENTED_GOLD
        from .scoring import DOCUMENTED_SUFFIX

        chosen = subsets(settings)
        flagged = {key[0] for key in UNDOCUMENTED_GOLD}  # subsets with a view without undocumented gold calls
        views = [*chosen, *(subset + DOCUMENTED_SUFFIX for subset in chosen if subset in flagged)]
        return [f"{view}.{rate}" for view in views for rate in ("procedure", "response", "overall")]


class ToolAlpacaUpstream(Upstream):
    """Upstream's generation output as recorded episodes."""

    def replay_rows(self, path: Path, document: object) -> list[dict[str, Any]] | None:
        """Upstream's generation output: the eval file written back with `Instances` aligned to `Instructions`
        (toolalpaca-gpt4tools §3.1), one row per instance, id `<API Name>/<index>`, the instance (an episode
        record, §2.10) under "episode"."""
        if not (isinstance(document, list) and document and all(
                isinstance(item, dict) and isinstance(item.get("Name"), str) and isinstance(item.get("Instances"), list)
                for item in document)):
            return None
        from ...models.replay import Recorded, unique_rows

        # an API named twice gives its ids twice: refused when their episodes differ (models/replay.py)
        return unique_rows([Recorded({"id": f"{item['Name']}/{index}", "episode": instance}, path, "item", number)
                            for number, item in enumerate(document)
                            for index, instance in enumerate(item["Instances"])], f"--tooleval-model replay:{path}")


class ToolAlpacaHints(Hints["ToolAlpacaCase"]):
    """Episodes start early; the judge's one request may be batched."""

    def priority(self, case: ToolAlpacaCase) -> int:
        return 0  # an episode is a chain of agent, simulator and judge calls: start it early

    def batched_role(self, case: ToolAlpacaCase) -> str | None:
        """--tooleval-batch: the judge is asked once, after the episode, which the agent and the simulator play
        out as usual (their answers cached, so the test replays the same episode and finds the judgement)."""
        return "judge"


class ToolAlpacaPlugin(SuitePlugin["ToolAlpacaCase"]):
    name = "toolalpaca"
    markers: ClassVar[dict[str, str]] = {
        "toolalpaca": "a ToolAlpaca instruction (an agent episode judged by a model)",
        "simulated": "a ToolAlpaca instruction on a simulated API",
        "real": "a ToolAlpaca instruction on a real API (needs --tooleval-toolalpaca-real)",
    }
    options_model = ToolAlpacaSettings
    # the simulator plays the simulated APIs; the user answers getDetails and retrievalDataFromFile; the judge
    # ToolAlpaca quirk: its helper calls send top_p=1 and n=1 explicitly, which matters on endpoints whose
    # defaults differ (vLLM uses the model's generation config) (toolalpaca-gpt4tools §2.6)
    roles = tuple(Role(name, option, {"top_p": 1.0, "n": 1}) for name, option in
                  (("simulator", "simulator"), ("toolalpaca_user", "toolalpaca-user"), ("judge", "judge")))
    mark_profiles = (frozenset({"toolalpaca", "simulated"}), frozenset({"toolalpaca", "real"}))
    id_prefixes = tuple(f"{subset}-" for subset in SUBSETS)
    figures = ToolAlpacaFigures("toolalpaca", "ToolAlpaca")
    upstream = ToolAlpacaUpstream()
    hints = ToolAlpacaHints()

    def unavailable(self, settings: Settings) -> str | None:
        """A run meant for another suite (no ToolAlpaca models), the oracle (there is no gold episode to play),
        or no ToolAlpaca data at hand (a data folder without it, or offline with an empty cache)."""
        kind = access_kind(settings)
        if kind == "oracle":
            return NO_ORACLE
        own = ToolAlpacaSettings.of(settings)
        if kind != "replay" and not own.simulator_model and not own.toolalpaca_user_model:
            return NOT_CONFIGURED
        return _missing_data(settings)

    def load(self, settings: Settings) -> ToolAlpacaRunner:
        from . import data
        from .runner import RunSetup, ToolAlpacaRunner

        root = data.locate(settings.data_dir, settings.cache_path, settings.offline)
        return ToolAlpacaRunner(root, subsets(settings), RunSetup.from_settings(settings))

    def fingerprint(self, settings: Settings) -> JSONObject:
        """The helper models, sampling and variants behind a ToolAlpaca score, and how they differ from upstream."""
        from .runner import RunSetup

        setup = RunSetup.from_settings(settings)
        subset = ToolAlpacaSettings.of(settings).toolalpaca_subset
        return {"subset": subset, "setup": setup.label, "deviations": list(setup.deviations),
                "real_apis": setup.real_enabled}


def subsets(settings: Settings) -> tuple[str, ...]:
    """The subsets --tooleval-toolalpaca-subset runs."""
    subset = ToolAlpacaSettings.of(settings).toolalpaca_subset
    return SUBSETS if subset == "all" else (subset,)


def _missing_data(settings: Settings) -> str | None:
    from ...data.download import cache_path
    from . import data

    if settings.data_dir:
        given = Path(settings.data_dir).expanduser()
        if not any((folder / SUBSET_FILES["simulated"]).is_file() for folder in (given / "toolalpaca", given)):
            return (f"no ToolAlpaca data in {given} (expected {given}/toolalpaca/{SUBSET_FILES['simulated']}): "
                    "point --tooleval-data-dir at a folder holding toolalpaca/, or drop it to download the data")
        return None
    if settings.offline and not (cache_path(data.load_pin(), settings.cache_path) / "MANIFEST.json").exists():
        return "ToolAlpaca data is not in the cache and --tooleval-offline forbids the download"
    return None


SUITE = ToolAlpacaPlugin()
