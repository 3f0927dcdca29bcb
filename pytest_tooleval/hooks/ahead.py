"""The xdist controller collects the run's tests itself, before its workers start, so that the hub can ask
from the start instead of waiting for the first worker to import, load and collect (docs/architecture.md,
"One sample, with xdist").

It is pytest's own collection, with every plugin and conftest, `-k`, `-m`, shards and the subsample, as each
worker will run it; only the hooks that show or count what was collected are held back, so that nothing is
printed, counted or reported twice (the workers report their collection as they always do). The items are
dropped afterwards: the controller keeps only their test ids.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

# hooks that report a collection rather than make it: held back while the controller collects
REPORTING_HOOKS = frozenset({
    "pytest_collectstart", "pytest_collectreport", "pytest_itemcollected", "pytest_deselected",
    "pytest_collection_finish", "pytest_report_collectionfinish", "pytest_warning_recorded",
})


def _nothing(*args: object, **kwargs: object) -> list[object]:
    return []


class _Quiet:
    """A hook relay that calls every hook except the reporting ones."""

    def __init__(self, relay: object) -> None:
        self._relay = relay

    def __getattr__(self, name: str) -> object:
        return _nothing if name in REPORTING_HOOKS else getattr(self._relay, name)


def _quiet(relay: object) -> Any:  # stands in for pytest's hook relay, whose type it is not
    return _Quiet(relay)


def collect_test_ids(session: pytest.Session) -> list[str] | None:
    """The node ids a worker of this run will collect, or None when this process could not tell (anything
    that went wrong here: the workers' own collection then decides, and reports it).

    A `pytest.UsageError` (a suite's data that cannot be loaded, a test path that is not there) is raised, as
    one pytest process raises it: before any worker starts."""
    config = session.config
    relay = config.hook
    proxy_for = session.gethookproxy
    config.hook = _quiet(relay)  # the same hooks, minus the reporting ones
    session.gethookproxy = lambda fspath: _quiet(proxy_for(fspath))  # type: ignore[method-assign]
    try:
        with warnings.catch_warnings():  # the workers' collection shows its warnings; this one must not
            warnings.simplefilter("ignore")
            items = session.perform_collect()
        return [item.nodeid for item in items]
    except pytest.UsageError:
        raise
    except Exception:
        return None
    finally:
        config.hook = relay
        del session.gethookproxy  # the class's method again
        # what the workers' collection decides, not this one: pytest's counts and lists start empty
        session.items = []
        session.testscollected = 0
