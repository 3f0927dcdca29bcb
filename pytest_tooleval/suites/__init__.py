"""The registered benchmark suites: every `SuitePlugin` under the entry-point group `pytest_tooleval.suites`
(the built-in suites register the same way as a third-party package, see suites/base.py). An entry point must
name an instance of a SuitePlugin subclass: the base class gives the optional members their defaults, so the
plugin reads them without probing."""

from __future__ import annotations

import configparser
import os
import sys
from collections.abc import Callable, Iterator
from functools import lru_cache
from importlib.metadata import EntryPoint
from typing import TYPE_CHECKING, Any

from ..errors import ToolevalUsageError
from ..text import did_you_mean
from .base import ENTRY_POINT_GROUP, SuitePlugin

if TYPE_CHECKING:
    from ..report.sections import FigureBlock, ReportSection
    from ..settings.options import Option, Settings

#: what every plugin declares (suites/base.py); its other members have defaults
REQUIRED = ("name", "markers", "options_model", "roles", "mark_profiles", "id_prefixes")


@lru_cache(maxsize=1)
def registered() -> dict[str, SuitePlugin[Any]]:
    """Suite name -> plugin, in entry-point order (built-in suites first). Read once per process."""
    found: dict[str, SuitePlugin[Any]] = {}
    entries = sorted(_entry_points(ENTRY_POINT_GROUP), key=lambda e: (not e.value.startswith(__name__), e.name))
    for entry in entries:
        if entry.name in found:  # the same distribution seen twice on sys.path (an editable and a plain install)
            continue
        try:
            plugin = entry.load()
        except Exception as exc:  # a broken third-party suite must not look like our bug
            raise ToolevalUsageError(f"tooleval suite {entry.name!r} ({entry.value}) cannot be loaded: "
                                     f"{type(exc).__name__}: {exc}") from None
        if not isinstance(plugin, SuitePlugin):  # the optional members' defaults come from the base class
            raise ToolevalUsageError(f"tooleval suite {entry.name!r} ({entry.value}) is a {type(plugin).__name__}, "
                                     "not a SuitePlugin: subclass pytest_tooleval.suite.SuitePlugin "
                                     "(docs/writing-a-suite.md)")
        # looked up on the class, or set on the instance: a property (the yaml suite's id_prefixes) is not run here
        missing = [member for member in REQUIRED if not hasattr(type(plugin), member) and member not in vars(plugin)]
        if missing:
            raise ToolevalUsageError(f"tooleval suite {entry.name!r} ({entry.value}) does not declare "
                                     f"{', '.join(missing)} (see pytest_tooleval.suite.SuitePlugin)")
        if plugin.name != entry.name:
            raise ToolevalUsageError(f"tooleval suite entry point {entry.name!r} ({entry.value}) names a plugin "
                                     f"called {plugin.name!r}; the two must agree")
        found[entry.name] = plugin
    return found


def all_options() -> tuple[Option, ...]:
    """The core options, then each registered suite's own (suites/base.py): one table for every use."""
    from ..settings.options import CORE_OPTIONS

    options = list(CORE_OPTIONS)
    seen = {option.name: "the core" for option in options}
    for suite in registered().values():
        for option in suite.options_model.declared_options():
            if option.name in seen:
                raise ToolevalUsageError(f"tooleval suite {suite.name!r} declares --tooleval-{option.name}, "
                                         f"which {seen[option.name]} already declares")
            seen[option.name] = f"suite {suite.name!r}"
            options.append(option)
    return tuple(options)


def plugin(name: str) -> SuitePlugin[Any]:
    suites = registered()
    if name not in suites:
        hint = did_you_mean(name, suites)
        raise ToolevalUsageError(f"@pytest.mark.tooleval({name!r}): unknown suite{f' ({hint})' if hint else ''}; "
                                 f"known: {', '.join(suites)} "
                                 f"(a suite registers under the entry-point group {ENTRY_POINT_GROUP})")
    return suites[name]


def suites_for_test_id(test_id: str) -> Iterator[str]:
    """The suites whose test ids look like `test_id` (their declared id prefixes), in registry order. Lazily: a
    later suite's prefixes (the yaml suite finds its files for them) are read only when an earlier one is passed
    over. Two may match (BFCL's `simple_python_`, a yaml file `simple_python_extra.tooleval.yaml`)."""
    for name, suite in registered().items():
        if any(test_id.startswith(prefix) for prefix in suite.id_prefixes):
            yield name


def selected_by_marks(name: str, markexpr: str) -> bool:
    """Could `-m markexpr` select any case of the suite? (True when unsure.)"""
    profiles = plugin(name).mark_profiles
    if not markexpr or not profiles:
        return True
    try:
        from _pytest.mark.expression import (
            Expression,  # pytest's own parser of -m expressions
        )

        expression = Expression.compile(markexpr)
        return any(expression.evaluate(_has_mark(profile)) for profile in profiles)
    except Exception:  # a private API that may change: then load the suite rather than guess
        return True


def figure_names(settings: Settings) -> dict[str, list[str] | None]:
    """Each registered suite's figure names under these settings (None: the suite does not declare them)."""
    names: dict[str, list[str] | None] = {}
    for name, suite in registered().items():
        declared = suite.figures.figure_names(settings)
        names[name] = None if declared is None else list(declared)
    return names


def selection_hints(settings: Settings, markexpr: str) -> list[str]:
    """What the suites say about a `-m` that could not select some of their samples (e.g. a language not loaded)."""
    if not markexpr:
        return []
    return [text for suite in registered().values() if (text := suite.hints.selection_hint(settings, markexpr))]


def _installed(suite: str) -> SuitePlugin[Any] | None:
    """The installed suite of that name, or None (a report of a suite not installed here)."""
    try:
        return registered().get(suite)
    except ToolevalUsageError:  # a broken third-party suite: its blocks are shown as any other's
        return None


def title_of(suite: str) -> str:
    """The suite's title (`Figures.title`), or its name."""
    found = _installed(suite)
    return suite if found is None else found.figures.title


def sections_of(suite: str, block: object) -> list[ReportSection]:
    """The suite's summary block as the suite shows it (`Figures.report_sections`), or the generic view."""
    from ..report.sections import generic_sections

    found = _installed(suite)
    return generic_sections(suite, block) if found is None else found.figures.report_sections(block)


def figure_blocks_of(suite: str, block: object) -> list[FigureBlock]:
    """The suite's summary block as figure blocks (`Figures.figure_blocks`), or the generic view."""
    from ..report.sections import generic_figure_blocks

    found = _installed(suite)
    return generic_figure_blocks(suite, block) if found is None else found.figures.figure_blocks(block)


def _has_mark(profile: frozenset[str]) -> Callable[..., bool]:
    def matches(mark: str, /, **_: object) -> bool:
        return mark in profile

    return matches


def _entry_points(group: str) -> list[EntryPoint]:
    """The entry points of `group` in the installed distributions on sys.path (the first of a name wins, as
    in importlib.metadata). Read straight from each distribution's entry_points.txt: importlib.metadata's
    `entry_points()` parses every distribution's metadata first, 33 ms per process here (each xdist worker pays
    it too); this takes about 1 ms."""
    header = f"[{group}]"
    found: dict[str, EntryPoint] = {}
    for folder in sys.path:
        try:
            items = list(os.scandir(folder or "."))
        except OSError:
            continue
        for item in sorted(items, key=lambda entry: entry.name):
            if not item.name.endswith((".dist-info", ".egg-info")):
                continue
            try:
                with open(os.path.join(item.path, "entry_points.txt"), encoding="utf-8") as handle:
                    text = handle.read()
            except OSError:
                continue
            if header not in text:
                continue
            parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
            parser.optionxform = str  # type: ignore[assignment,method-assign]  # entry-point names keep their case
            parser.read_string(text)
            for name, value in parser.items(group):
                found.setdefault(name, EntryPoint(name, value, group))
    return list(found.values())
