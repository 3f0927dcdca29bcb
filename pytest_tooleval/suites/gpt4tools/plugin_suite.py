"""GPT4Tools as the plugin sees it: the SuitePlugin (suites/base.py). Cheap to import; data loads in `load`."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ...settings.options import Settings, SuiteSettings, option_field
from ..base import Figures, Hints, SuitePlugin, Upstream
from .constants import MAX_NEW_TOKENS, STOP

if TYPE_CHECKING:
    from ...json_value import JSONObject
    from ...report.sections import ReportSection
    from ...report.summary import SuiteSummary
    from .suite import GPT4ToolsCase, GPT4ToolsSuite

class GPT4ToolsSettings(SuiteSettings):
    """GPT4Tools' options, typed: `GPT4ToolsSettings.of(settings).gpt4tools_path`."""

    gpt4tools_path: str | None = option_field(
        "the GPT4Tools test-set file (gpt4tools_test_unseen.json; downloaded by hand, see the README)", path=True)
    gpt4tools_stop: bool = option_field("GPT4Tools: stop generation at the next 'Observation:' (a labelled variant; "
                                        "upstream uses no stop)", False)
    gpt4tools_prompt_in_output: Literal["auto", "yes", "no"] = option_field(
        "GPT4Tools replay: do recorded outputs start with the prompt? yes (cut len(instruction) characters, as "
        "upstream's evaluate), no (as evaluate_gpt) or auto (cut when the output begins with the instruction)",
        "auto")


WHERE_TO_GET = (
    "GPT4Tools: no test-set file; download gpt4tools_test_unseen.json by hand from the links in the GPT4Tools "
    "README (github.com/AILab-CVC/GPT4Tools; Google Drive id 1BHm0HEwYaVdMRYZiDdECy8ozyix607PH), then pass "
    "--tooleval-gpt4tools-path FILE or set TOOLEVAL_GPT4TOOLS_PATH"
)


def max_tokens(settings: Settings) -> int | None:
    """Upstream's 512 new tokens, unless --tooleval-max-tokens was set explicitly (the run's default of 1200 is
    ACEBench's; `none` sends no limit)."""
    if not settings.explicit("max-tokens"):
        return MAX_NEW_TOKENS
    return None if settings.max_tokens is None else int(settings.max_tokens)


class GPT4ToolsFigures(Figures):
    """GPT4Tools' five metrics (summary.py), shown as report.py does."""

    def summarize(self, rows: list[dict[str, Any]]) -> SuiteSummary:
        from .summary import summarize_gpt4tools

        return summarize_gpt4tools(rows)

    def report_sections(self, block: object) -> list[ReportSection]:
        from .report import sections

        return sections(self.title, block)

    def row_details_schema(self) -> dict[str, Any] | None:
        from ...report.shard_check import FRACTION_OR_NULL, TEXT  # checking a shard: jsonschema is loaded

        return {"type": ["object", "null"], "properties": {
            **{name: FRACTION_OR_NULL for name in ("thought", "action", "args", "sr", "iou")},
            "uses_tool": {"type": "boolean"}, "variant": TEXT}}

    def figure_names(self, settings: Settings) -> list[str]:
        """The five metrics over all items, and over the tool and no-tool items."""
        return [f"{prefix}{metric}" for prefix in ("", "tool.", "no_tool.")
                for metric in ("thought", "action", "args", "sr", "iou")]


class GPT4ToolsUpstream(Upstream):
    """Upstream's prediction files as recorded outputs."""

    def replay_rows(self, path: Path, document: object) -> list[dict[str, Any]] | None:
        """Upstream's prediction files and chunk folders (see suite.recorded_rows)."""
        from .suite import recorded_rows

        return recorded_rows(path, document)


class GPT4ToolsHints(Hints["GPT4ToolsCase"]):
    """Every item is one request; shards by instruction length."""

    def batched_role(self, case: GPT4ToolsCase) -> str | None:
        """--tooleval-batch: every item is one request of the model."""
        return "model"

    def weight(self, case: GPT4ToolsCase) -> float:
        """For --tooleval-shard (shards.py): the instruction's length, which its prompt tokens follow."""
        return float(len(case.item.instruction))


class GPT4ToolsPlugin(SuitePlugin["GPT4ToolsCase"]):
    name = "gpt4tools"
    markers: ClassVar[dict[str, str]] = {
        "gpt4tools": "a GPT4Tools test-set item",
        "gpt4tools_tool": "a GPT4Tools item whose gold answer uses a tool",
        "gpt4tools_no_tool": "a GPT4Tools item whose gold answer uses no tool",
        "en": "an English sample",
    }
    options_model = GPT4ToolsSettings
    roles = ()
    mark_profiles = tuple(frozenset({"gpt4tools", f"gpt4tools_{kind}", "en"}) for kind in ("tool", "no_tool"))
    id_prefixes = ("gpt4tools-",)
    figures = GPT4ToolsFigures("gpt4tools", "GPT4Tools")
    upstream = GPT4ToolsUpstream()
    hints = GPT4ToolsHints()

    def unavailable(self, settings: Settings) -> str | None:
        return None if GPT4ToolsSettings.of(settings).gpt4tools_path else WHERE_TO_GET

    def load(self, settings: Settings) -> GPT4ToolsSuite:
        from .suite import GPT4ToolsSuite, load_test_set

        own = GPT4ToolsSettings.of(settings)
        if not own.gpt4tools_path:  # unavailable() says so first: the suite is not loaded without the file
            from ...errors import DataError

            raise DataError(WHERE_TO_GET)
        return GPT4ToolsSuite(load_test_set(own.gpt4tools_path), max_tokens=max_tokens(settings),
                              stop=own.gpt4tools_stop, prompt_in_output=own.gpt4tools_prompt_in_output)

    def fingerprint(self, settings: Settings) -> JSONObject | None:
        """What changes a GPT4Tools score besides the model: the test-set file and the request parameters."""
        own = GPT4ToolsSettings.of(settings)
        if not own.gpt4tools_path:
            return None
        path = Path(own.gpt4tools_path).expanduser()
        from ...data.files import read_bytes

        try:
            sha256: str | None = hashlib.sha256(read_bytes(path)).hexdigest()
        except OSError:
            sha256 = None
        return {
            "test_file": str(path),
            "test_file_sha256": sha256,
            "prompt": "the raw instruction as one user message",
            "max_tokens": max_tokens(settings),
            "stop": list(STOP) if own.gpt4tools_stop else None,
            "prompt_in_output": own.gpt4tools_prompt_in_output,
        }


SUITE = GPT4ToolsPlugin()
