"""The run: its settings, the registered suites it loads, and their cases by test id. Nothing about processes
(session.py holds what one process of the run has: the engine, the model access, the answer source)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from typing import Any

from ..errors import ToolevalUsageError
from ..models.access import role_option
from ..models.replay import ReplayReader
from ..settings.options import Settings, shard_parts
from ..suites import plugin, registered, suites_for_test_id
from ..suites.base import Case, CaseBase, Role, Suite, Tools
from .quarantine import read_quarantine
from .repeats import original, repeated
from .shards import ClusterKey, assign_shards, cluster_key, subsample

DATA_ERROR = "data-error"
PLACEHOLDERS = ("not-run", "not-selected", "no-model", DATA_ERROR)  # what a suite's one skipped test stands for

class Run:
    def __init__(self, settings: Settings, markexpr: str = "") -> None:
        if not settings.model and not settings.offline:  # nothing to evaluate: never download for collection
            settings = settings.replace(offline=True)
        self.settings = settings
        self.markexpr = markexpr
        if settings.repeats < 1:
            raise ToolevalUsageError(f"--tooleval-repeats: {settings.repeats} must be at least 1 (1: each sample once)")
        self._suites: dict[str, Suite[Any]] = {}
        self._collected: list[str] = []  # the suites a collection parametrized tests of (collected_cases)
        self._cases: dict[str, list[Case]] = {}  # by suite, in the order the suite lists them
        self._case_index: dict[str, dict[str, Case]] = {}  # by suite, then test id
        # (suite, language, category, variant) -> samples; see category_size
        self.category_sizes: dict[tuple[str, str, str, str], int] = {}
        self._shards: dict[ClusterKey, int] = {}  # --tooleval-shard: each cluster's shard (shards.py)
        self.collection_error: Exception | None = None  # a suite's data could not be loaded (raised once collected)
        # --tooleval-quarantine: test id -> why the sample is known to be broken (quarantine.py)
        self.quarantine: dict[str, str] = read_quarantine(settings.quarantine) if settings.quarantine else {}

    @property
    def active(self) -> bool:
        """Whether there is a model to evaluate (without one, the benchmark tests skip)."""
        return bool(self.settings.model)

    def suite(self, name: str) -> Suite[Any]:
        """The suite `name`, loaded for this run on first use (its data located, downloaded, validated)."""
        if name not in self._suites:
            self._suites[name] = plugin(name).load(self.settings)
        return self._suites[name]

    def unavailable(self, name: str) -> str | None:
        """Why suite `name` cannot run as configured (its tests skip, saying so), or None."""
        return plugin(name).unavailable(self.settings)

    def cases(self, name: str) -> list[Case]:
        if name not in self._cases:
            cases = list(self.suite(name).cases())
            odd = next((case for case in cases if not isinstance(case, CaseBase)), None)
            if odd is not None:  # the optional Case members are read without probing: their defaults are CaseBase's
                raise ToolevalUsageError(f"tooleval suite {name!r}: its case {type(odd).__name__} is not a CaseBase: "
                                         "subclass pytest_tooleval.suite.CaseBase (docs/writing-a-suite.md)")
            _check_cases(name, cases)
            # samples per category in the benchmark: the payloads carry it, so a summary knows a partial category
            self.category_sizes.update(Counter(_size_key(case) for case in cases))
            if self.settings.shard:  # over the whole benchmark, so that -k, -m and --tooleval-sample move nothing
                parts = shard_parts(self.settings.shard)[1]
                self._shards.update(assign_shards(cases, parts, plugin(name).hints.weight))
            cases = subsample(cases, self.settings.sample, self.settings.seed)  # --tooleval-sample (shards.py)
            cases = repeated(cases, self.settings.repeats)  # --tooleval-repeats: the same samples again
            self._cases[name] = cases
            self._case_index[name] = {case.test_id: case for case in cases}
        return self._cases[name]

    def collected_cases(self, name: str) -> list[Case]:
        """`cases(name)`, for a collection that parametrizes the suite's tests: the suite is then one this run
        collected, whose helper roles and tools shape the model access (a suite whose data was only loaded ahead,
        for the early probe's guess, does not)."""
        cases = self.cases(name)
        if name not in self._collected:
            self._collected.append(name)
        return cases

    def collected_suites(self) -> tuple[str, ...]:
        """The suites a collection parametrized tests of, in order; the loaded ones when none was (a process that
        did not collect them itself)."""
        return tuple(self._collected) or tuple(self._suites)

    def in_shard(self, case: Case) -> bool:
        """Whether `case` is in this run's --tooleval-shard (every case is, without one)."""
        if not self.settings.shard:
            return True
        return self._shards.get(cluster_key(original(case))) == shard_parts(self.settings.shard)[0]

    def quarantined(self, case: Case) -> str | None:
        """Why `case` is quarantined (every repeat of a quarantined sample is), or None."""
        return self.quarantine.get(original(case).test_id)

    def category_size(self, case: Case) -> int:
        """Samples of the case's category in the benchmark, in the case's variant (a suite that runs each
        sample twice, in two protocols, has two categories of that name)."""
        return self.category_sizes.get(_size_key(case), 0)

    def case_for_test_id(self, test_id: str) -> Case | None:
        """The case behind a parametrized test id (for the xdist hub, and for reports that carry no payload: a
        crashed worker's). Only the suite whose ids look like it is loaded."""
        for name in suites_for_test_id(test_id):  # the first whose ids look like it and that has the case
            if self.unavailable(name) is not None:
                continue
            try:
                self.cases(name)
            except Exception:  # a suite whose data is not here cannot own the test
                continue
            if (case := self._case_index[name].get(test_id)) is not None:
                return case
        return None

    def loaded_cases(self) -> list[Case]:
        """Every case of the suites loaded so far."""
        return [case for cases in self._cases.values() for case in cases]

    @staticmethod
    def schedule(cases: list[Case]) -> list[Case]:
        """Each suite's priority first (long rollouts before short samples, so they never form a tail), stable
        otherwise."""
        suites = registered()
        return sorted(cases, key=lambda case: suites[case.suite].hints.priority(case))

    def replay_readers(self) -> list[ReplayReader]:
        """The replay formats of the suites loaded in this run (Upstream.replay_rows: None from a suite without
        one, whose reader then never claims a file)."""
        return [plugin(name).upstream.replay_rows for name in self._suites]

    def asks_with_tools(self, names: Collection[str] | None = None) -> bool:
        """Whether a suite this run collected (or of `names`) offers the model native `tools` (the probe then
        offers one too)."""
        return any(plugin(name).hints.tools(self.settings) is not Tools.NONE for name in self._named(names))

    def tools_without_system(self, names: Collection[str] | None = None) -> bool:
        """Whether a suite this run collected (or of `names`) offers `tools` in a request without a system message
        (the probe's request with tools then has none either)."""
        return any(plugin(name).hints.tools(self.settings) is Tools.WITHOUT_SYSTEM for name in self._named(names))

    def helper_roles(self, names: Collection[str] | None = None) -> tuple[Role, ...]:
        """The helper models of the suites this run collected (or of `names`): no client for a role no collected
        test uses."""
        return tuple(role for name in self._named(names) for role in plugin(name).roles)

    def likely_suites(self, marked: Collection[str]) -> tuple[str, ...]:
        """The suites a collection will most likely load, before it has: those `marked` on the test modules it will
        collect (hooks/ahead.py `marked_suites`), or collected without a mark, that `-m` can select and that can
        run as configured. The early probe's guess (session.py `probe_early`), checked against what was collected."""
        from ..suites import selected_by_marks

        return tuple(name for name, suite in registered().items()
                     if (name in marked or suite.hints.collected_without_mark())
                     and selected_by_marks(name, self.markexpr) and self.unavailable(name) is None)

    def access_shape(self, names: Collection[str] | None = None) -> tuple[object, ...]:
        """What the model access is built from, for the suites this run collected (or `names`): the helper roles
        that have a model, and the probe's tools and system message."""
        roles = sorted((role for role in self.helper_roles(names) if role_option(role, self.settings, "model", str)),
                       key=lambda role: (role.name, role.option))
        return tuple(roles), self.asks_with_tools(names), self.tools_without_system(names)

    def _named(self, names: Collection[str] | None) -> Collection[str]:
        return self.collected_suites() if names is None else names

    def role_models(self) -> dict[str, str | None]:
        """Token-key prefix -> the model of that role ("" is the model under test), for pricing."""
        return {"": self.settings.model, **{f"{role.name}_": role_option(role, self.settings, "model", str)
                                            for role in self.helper_roles()}}


def _check_cases(name: str, cases: list[Case]) -> None:
    """A suite's cases as the core relies on them: each names the suite, its test id is its own and starts with
    one of the suite's id_prefixes (pytest would run two cases of one id as `id0` and `id1`, and the xdist
    controller and the reports find a test's suite by its prefix), and its marks are declared markers (pytest
    warns of unknown ones, and `-m` rules suites out by their declarations; a suite without mark profiles, the
    yaml suite, registers its files' tags as it reads them). One line, at load, before anything is asked."""
    declared = plugin(name)
    prefixes = tuple(declared.id_prefixes)
    markers = declared.markers if declared.mark_profiles else None
    seen: dict[str, Case] = {}
    for case in cases:
        if case.suite != name:
            raise ToolevalUsageError(f"tooleval suite {name!r}: its case {case.id!r} names the suite {case.suite!r}: "
                                     f"a case's suite is the SuitePlugin's name")
        if not case.test_id.startswith(prefixes):
            raise ToolevalUsageError(
                f"tooleval suite {name!r}: its case {case.id!r} has the test id {case.test_id!r}, which starts with "
                f"none of the suite's id_prefixes ({', '.join(map(repr, prefixes)) or 'none declared'})")
        if markers is not None and (undeclared := [mark for mark in case.marks if mark not in markers]):
            raise ToolevalUsageError(
                f"tooleval suite {name!r}: its case {case.id!r} is marked {', '.join(map(repr, undeclared))}, which "
                "the suite's markers do not declare")
        if (first := seen.setdefault(case.test_id, case)) is not case:
            raise ToolevalUsageError(
                f"tooleval suite {name!r}: its cases {first.id!r} and {case.id!r} have the same test id "
                f"{case.test_id!r}: give each case a test id of its own (a variant's must differ too)")


def _size_key(case: Case) -> tuple[str, str, str, str]:
    return case.suite, case.language, case.category, case.variant
