"""The xdist controller collects the run's tests itself, before its workers start, so that the hub can ask
from the start instead of waiting for the first worker to import, load and collect (docs/architecture.md,
"One sample, with xdist"). Before that, the process that asks reads which suites the tests it will collect are
marked with, to send the endpoint probe while it collects (docs/concurrency.md#the-probe-during-collection).

It is pytest's own collection, with every plugin and conftest, `-k`, `-m`, shards and the subsample, as each
worker will run it; only the hooks that show or count what was collected are held back, so that nothing is
printed, counted or reported twice (the workers report their collection as they always do). The items are
dropped afterwards: the controller keeps only their test ids.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

SUITE_MARK = "tooleval"  # @pytest.mark.tooleval("<suite>") on a test function, its class or its module

# hooks that report a collection rather than make it: held back while the controller collects
REPORTING_HOOKS = frozenset({
    "pytest_collectstart", "pytest_collectreport", "pytest_itemcollected", "pytest_deselected",
    "pytest_collection_finish", "pytest_report_collectionfinish", "pytest_warning_recorded",
})
# and while it only looks at the modules: nothing is selected, deselected or finished then
LOOKING_HOOKS = REPORTING_HOOKS | {"pytest_collection_modifyitems"}


def _nothing(*args: object, **kwargs: object) -> list[object]:
    return []


class _Quiet:
    """A hook relay that calls every hook except the held-back ones."""

    def __init__(self, relay: object, held: frozenset[str]) -> None:
        self._relay = relay
        self._held = held

    def __getattr__(self, name: str) -> object:
        return _nothing if name in self._held else getattr(self._relay, name)


def _quiet(relay: object, held: frozenset[str]) -> Any:  # stands in for pytest's hook relay, whose type it is not
    return _Quiet(relay, held)


@contextlib.contextmanager
def _aside(session: pytest.Session, held: frozenset[str]) -> Iterator[None]:
    """A collection made beside the run's own: the same hooks minus `held`, its warnings not shown (the run's
    collection shows them), and pytest's counts and lists empty again afterwards."""
    config = session.config
    relay = config.hook
    proxy_for = session.gethookproxy
    config.hook = _quiet(relay, held)
    session.gethookproxy = lambda fspath: _quiet(proxy_for(fspath), held)  # type: ignore[method-assign]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        config.hook = relay
        del session.gethookproxy  # the class's method again
        # what the run's collection decides, not this one: pytest's counts and lists start empty
        session.items = []
        session.testscollected = 0


def marked_suites(session: pytest.Session) -> list[str] | None:
    """The suites named by the tooleval marks of the test modules this session will collect, in collection order,
    read from the modules' functions and classes without generating their tests (a suite's data is not loaded);
    None when this process could not tell. A guess: the collection itself decides (run/session.py
    `probe_early` checks it)."""
    try:
        with _aside(session, LOOKING_HOOKS):
            names: list[str] = []
            for module in _modules(session.perform_collect(genitems=False)):
                for name in _suite_marks(module.obj):
                    if name not in names:
                        names.append(name)
        return names
    except Exception:  # a usage error too: the collection proper says it
        return None


def _modules(nodes: Any) -> Iterator[pytest.Module]:
    """The Python test modules under these collectors: folders and packages are opened, modules are not."""
    for node in nodes:
        if isinstance(node, pytest.Module):
            yield node
        elif isinstance(node, pytest.Collector) and not isinstance(node, pytest.Class):
            yield from _modules(node.collect())


def _suite_marks(module: Any) -> Iterator[str]:
    """The suite names of the tooleval marks on a module, its test functions and classes and their methods."""
    def named(obj: object) -> Iterator[str]:
        marks = getattr(obj, "pytestmark", [])
        for mark in marks if isinstance(marks, list) else [marks]:
            mark = getattr(mark, "mark", mark)  # a MarkDecorator (a module's `pytestmark = pytest.mark...`)
            args = getattr(mark, "args", None)
            if getattr(mark, "name", None) == SUITE_MARK and isinstance(args, tuple) and args:
                yield str(args[0])

    yield from named(module)
    for value in vars(module).values():
        if isinstance(value, type):
            yield from named(value)
            for member in vars(value).values():
                if callable(member):
                    yield from named(member)
        elif callable(value):
            yield from named(value)


def collect_test_ids(session: pytest.Session) -> list[str] | None:
    """The node ids a worker of this run will collect, or None when this process could not tell (anything
    that went wrong here: the workers' own collection then decides, and reports it).

    A `pytest.UsageError` (a suite's data that cannot be loaded, a test path that is not there) is raised, as
    one pytest process raises it: before any worker starts."""
    try:
        with _aside(session, REPORTING_HOOKS):  # the workers' collection reports itself; this one must not
            items = session.perform_collect()
        return [item.nodeid for item in items]
    except pytest.UsageError:
        raise
    except Exception:
        return None
