"""pytest hooks of the YAML suite (registered under `pytest11` beside the plugin's own): each
`*.tooleval.yaml` file pytest meets becomes a test module with one test per case.

The module is made, not imported: its one function takes the plugin's `tooleval_case` fixture, and its
`pytest_generate_tests` parametrizes it with the file's cases, as the benchmarks' thin modules are
parametrized (shards, quarantine and marks included), so everything else (answers ahead of the tests, xdist,
the reports) is the plugin's own path.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from . import discovery

if TYPE_CHECKING:
    from ...hooks.collect import CaseHandle
    from ...run.session import ToolevalSession

TEST_NAME = "test_case"


def pytest_configure(config: pytest.Config) -> None:
    discovery.configure(config.invocation_params.dir, config.args, config.getini("norecursedirs"))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    # without the plugin itself (-p no:tooleval) there is nothing to run the cases with: the files are not tests
    if discovery.is_suite_file(file_path) and parent.config.pluginmanager.hasplugin("tooleval"):
        module: pytest.Collector = SuiteFileModule.from_parent(parent, path=file_path)
        return module
    return None


def is_case_test(nodeid: str) -> bool:
    """Whether a pytest node id is a case of a `*.tooleval.yaml` file (the file is its module)."""
    return discovery.is_suite_file(Path(nodeid.split("::", 1)[0]))


def _check(tooleval_case: CaseHandle) -> None:
    """The case's verdict: fails with what the model answered against what the file expects."""
    __tracebackhide__ = True
    tooleval_case.check()


class SuiteFileModule(pytest.Module):
    """A `*.tooleval.yaml` file as a test module."""

    def _getobj(self) -> types.ModuleType:
        module = types.ModuleType(self.path.name)
        setattr(module, TEST_NAME, _check)
        module.pytest_generate_tests = self._generate  # type: ignore[attr-defined]  # a module-level hook
        return module

    def istestfunction(self, obj: object, name: str) -> bool:
        return name == TEST_NAME  # whatever python_functions says: the module has this one function

    def _generate(self, metafunc: pytest.Metafunc) -> None:
        from ...errors import ToolevalUsageError
        from ...run.plan import DATA_ERROR
        from ...run.repeats import original
        from ...run.session import SESSION_KEY
        from .suite import YamlCase

        session: ToolevalSession = metafunc.config.stash[SESSION_KEY]
        try:
            cases = session.run.collected_cases("yaml")
        except ToolevalUsageError as exc:  # a file that is not valid: one line, exit status 4 (collect.py)
            if session.run.collection_error is None:
                session.run.collection_error = exc
            metafunc.parametrize("tooleval_case", [pytest.param(None, id=f"yaml-{DATA_ERROR}",
                                                                marks=pytest.mark.skip(reason=str(exc)))],
                                 indirect=True)
            return
        path = self.path.resolve()
        mine = [case for case in session.run.schedule(cases)  # repeats (--tooleval-repeats) wrap their case
                if isinstance(sample := original(case), YamlCase) and sample.file.path == path
                and session.run.in_shard(case)]
        for tag in sorted({mark for case in mine for mark in case.marks}):
            metafunc.config.addinivalue_line("markers", f"{tag}: a tag of your *.tooleval.yaml cases")
        params = [pytest.param(case, id=case.test_id, marks=[
            *(getattr(pytest.mark, mark) for mark in case.marks),
            *([pytest.mark.xfail(reason=f"quarantined: {why}", strict=False)]
              if (why := session.run.quarantined(case)) is not None else [])]) for case in mine]
        metafunc.parametrize("tooleval_case", params, indirect=True)
