"""Your own cases as a suite: every `*.tooleval.yaml` file pytest collects (docs/yaml-suites.md).

The SuitePlugin of suites/base.py, like the benchmarks'. What is particular to it: its cases come from files
the user writes anywhere in the test tree (discovery.py finds them under the paths pytest collects, collect.py
turns each file into a test module), and its id prefixes, categories and figures are those of the files.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ...settings.options import Settings, SuiteSettings
from ..base import Figures, Hints, SuitePlugin, Tools, Unit
from . import discovery

if TYPE_CHECKING:
    from ...json_value import JSONObject
    from ...report.sections import FigureBlock, ReportSection
    from ...report.summary import SuiteSummary
    from .spec import SuiteFile
    from .suite import YamlCase, YamlSuite

MODES = ("prompt", "fc")


class YamlFigures(Figures):
    """Each file category's accuracy and `overall` (summary.py), shown as report.py does."""

    def summarize(self, rows: list[dict[str, Any]]) -> SuiteSummary:
        from .summary import summarize_yaml

        return summarize_yaml(rows)

    def units(self, rows: list[dict[str, Any]]) -> list[Unit]:
        from .summary import units

        return units(rows)

    def combine(self, proportions: Mapping[str, float]) -> dict[str, float]:
        from .summary import combine

        return combine(proportions)

    def report_sections(self, block: object) -> list[ReportSection]:
        from .report import sections

        return sections(block)

    def row_details_schema(self) -> JSONObject | None:
        from ...report.shard_check import TEXT  # checking a shard: jsonschema is loaded

        return {"type": ["object", "null"], "properties": {"failed": {"type": "array", "items": {**TEXT}}}}

    def figure_blocks(self, block: object) -> list[FigureBlock]:
        from .report import figure_blocks

        return figure_blocks(self.title, block)

    def figure_names(self, settings: Settings) -> list[str]:
        """`<category>.accuracy` of every file's categories and `overall`, whichever protocol one mode asks in;
        under --tooleval-mode both, the other protocol's too, prefixed with its name (YamlCase.variant)."""
        from .summary import category_key, prefix

        names: list[str] = []
        for file in suite_files():
            for number, mode in enumerate(modes(file.mode, settings)):
                variant = "" if number == 0 else mode
                names += [f"{prefix(variant)}{category_key(case.category)}.accuracy" for case in file.cases]
                names.append(f"{prefix(variant)}overall")
        names = list(dict.fromkeys(names))
        if settings.repeats > 1:  # report/repeated.py
            names += [f"{name}.{kind}" for name in list(names) for kind in ("mean", "pass_k")]
        return names


class YamlHints(Hints["YamlCase"]):
    """Conversations first; one-turn cases batched; tools as the files say."""

    def priority(self, case: YamlCase) -> int:
        return 0 if len(case.spec.turns) > 1 else 1  # conversations first: they take a request per turn

    def collected_without_mark(self) -> bool:
        return bool(suite_files())  # found from pytest's arguments at start-up (discovery.py)

    def weight(self, case: YamlCase) -> float:
        """For --tooleval-shard: the length of the case's messages, which its prompt tokens follow."""
        return float(sum(len(message.get("content") or "") for turn in case.spec.turns for message in turn.messages))

    def batched_role(self, case: YamlCase) -> str | None:
        """--tooleval-batch: a one-turn case is one request of the model."""
        return "model" if len(case.spec.turns) == 1 else None

    def tools(self, settings: Settings) -> Tools:
        """Tools when a file runs in fc mode; without a system message when such a file has no `system:` and
        some case starts without a system message of its own."""
        chosen = _mode(settings)
        if not (chosen != "prompt" if chosen else any(file.mode == "fc" for file in suite_files())):
            return Tools.NONE
        bare = any("fc" in modes(file.mode, settings) and file.tools and not file.system
                   and any(not case.turns[0].messages or case.turns[0].messages[0].get("role") != "system"
                           for case in file.cases)
                   for file in suite_files())
        return Tools.WITHOUT_SYSTEM if bare else Tools.WITH_SYSTEM


class YamlSuitePlugin(SuitePlugin["YamlCase"]):
    name = "yaml"
    # the files' tags are registered as the files are read (collect.py)
    markers: ClassVar[dict[str, str]] = {"yaml": "a case of your own *.tooleval.yaml files"}
    # no options of its own: --tooleval-mode (a core option) overrides a file's own protocol (see `modes`)
    options_model = SuiteSettings
    roles = ()
    mark_profiles = ()  # the tags are the files': any -m may select a case
    figures = YamlFigures("yaml")
    hints = YamlHints()

    @property
    def id_prefixes(self) -> tuple[str, ...]:
        """`<file stem>-` of every file (found on first use: only when no other suite claims a test id)."""
        from .spec import file_stem

        return tuple(f"{file_stem(path)}-" for path in discovery.suite_files())

    def unavailable(self, settings: Settings) -> str | None:
        return None  # without files there is no test to run

    def load(self, settings: Settings) -> YamlSuite:
        """Every file, validated (a problem is one line naming the file, line and key: DataError)."""
        from .suite import YamlSuite

        files = suite_files()
        return YamlSuite(files, {file.path: modes(file.mode, settings) for file in files})

    def fingerprint(self, settings: Settings) -> JSONObject | None:
        """The files (by content) and the protocols they ran in."""
        from ...data.files import YAML_FILE_LIMIT, read_bytes

        files: JSONObject = {}
        for path in discovery.suite_files():
            try:
                files[_shown(path)] = hashlib.sha256(read_bytes(path, YAML_FILE_LIMIT)).hexdigest()
            except OSError:
                files[_shown(path)] = None
        return {"files": files, "mode": _mode(settings) or "as each file says"}


def suite_files() -> list[SuiteFile]:
    """Every discovered file, validated; each read once while it is unchanged (the gate's names, the probe and
    the run's load all ask)."""
    stamps = []
    for path in discovery.suite_files():
        try:
            status = path.stat()
            stamps.append((path, status.st_mtime_ns, status.st_size))
        except OSError:
            stamps.append((path, 0, 0))  # gone: load_file says so, with the path
    return [_loaded(*stamp) for stamp in stamps]


@lru_cache(maxsize=256)
def _loaded(path: Path, mtime_ns: int, size: int) -> SuiteFile:
    from .spec import load_file

    return load_file(path)


def modes(own: str, settings: Settings) -> tuple[str, ...]:
    """The protocols a file's cases run in: its own, unless --tooleval-mode is given (both: its own first, the
    one whose figures have no prefix)."""
    chosen = _mode(settings)
    if chosen is None:
        return (own,)
    if chosen == "both":
        return (own, *(mode for mode in MODES if mode != own))
    return (chosen,)


def _mode(settings: Settings) -> str | None:
    """--tooleval-mode where it was given, else None (each file's own). The option is ACEBench's: the yaml suite
    declares none, and borrows this one (docs/yaml-suites.md)."""
    return settings.mode if settings.explicit("mode") else None


def _shown(path: Path) -> str:
    """A file as the fingerprint names it: relative to the folder the run started in, where it can be."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


SUITE = YamlSuitePlugin()
