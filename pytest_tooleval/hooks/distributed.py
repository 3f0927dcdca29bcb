"""xdist glue, registered only when xdist is present: the controller tells its workers the run id and,
for a live model, answers their samples itself (the hub, see ToolevalSession.start_hub)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from typing import Any

import pytest

from ..run.session import ToolevalSession
from ..text import counted

# CPU one xdist worker spends before its first test (imports, data, collection), measured on a 2-core runner: 0.6 s
WORKER_START_CPU_S = 0.6


class XdistHooks:
    def __init__(self, session: ToolevalSession, config: pytest.Config) -> None:
        self.session = session
        self.config = config
        self.hub = session.works_ahead and not config.option.collectonly
        self._pytest_session: pytest.Session | None = None
        self._dsession: Any = None  # xdist's controller (its shouldstop stops the workers)
        self._ahead: set[str] | None = None  # the test ids the hub began with
        self._checked = False
        self._workers_to_space = 0  # workers whose start waits `_spacing_s` after the previous one's
        self._spacing_s = 0.0

    @pytest.hookimpl
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._pytest_session = session  # before xdist's own (trylast), which starts the workers

    @pytest.hookimpl(tryfirst=True)  # before xdist's own, which shows the workers it is about to start
    def pytest_xdist_setupnodes(self, config: pytest.Config, specs: Sequence[Any]) -> None:
        """Before the workers start: the hub collects the run's tests as they will, and starts asking."""
        if not self.hub:
            return
        self.session.prepare_hub(len(specs))  # the requests in flight are those of every worker -n asked for
        self._start_fewer_workers(config, specs)
        self._dsession = dsession = self.config.pluginmanager.get_plugin("dsession")
        if dsession is not None:  # a dead endpoint stops the workers as pytest's -x does, with one line
            self.session.stop_when_dead(lambda reason: setattr(dsession, "shouldstop", reason))
        pytest_session = self._pytest_session
        if pytest_session is None:
            return
        from .ahead import collect_test_ids, marked_suites

        self.session.probe_early(lambda: marked_suites(pytest_session))  # its round trip while the tests are collected
        ids = collect_test_ids(pytest_session)  # a data error ends the run here, before any worker
        if ids is not None:
            self._ahead = set(_test_ids(ids))
            # the run's list from here on: a dead endpoint can stop the run before any worker reports its own
            # collection (xdist then drops that report), and the report must still name what was not run
            self.session.collected_test_ids = _test_ids(ids)
            self._start_hub(_test_ids(ids))
            hub = self.session.hub
            assert hub is not None  # prepared above
            hub.wait_until_asking(lambda: sum(backend.in_flight() for backend in self.session.backends() or []))
            if hub.backlog:
                self._workers_to_space = len(specs) - 1
                self._spacing_s = WORKER_START_CPU_S / _cores()

    def _start_fewer_workers(self, config: pytest.Config, specs: Sequence[Any]) -> None:
        """With the hub asking for every sample, a worker only scores answers: more workers than cores cost each
        their start-up and collection (about WORKER_START_CPU_S) and win nothing (docs/concurrency.md#workers).
        Only local workers made by -n are left out (not --tx ssh or socket specs, nor --dist each, where every
        worker runs every test)."""
        requested = len(specs)
        kept = workers_to_start(requested, self.session.settings.workers, _cores())
        tx = config.getoption("tx")
        if (kept == requested or not isinstance(specs, list) or config.getoption("dist") == "each"
                or tx != ["popen"] * requested):
            return
        del specs[kept:]  # xdist's own list: the nodes it sets up next
        config.option.tx = ["popen"] * kept  # what its scheduler counts the workers by
        self.session.say(f"tooleval: {kept} of -n {requested} workers started: the controller asks for every "
                         f"sample (up to {requested * self.session.settings.concurrency} requests in flight), the "
                         f"workers only score, and this machine has {counted(_cores(), 'core')} "
                         "(--tooleval-workers all starts them all)")

    @pytest.hookimpl
    def pytest_xdist_newgateway(self, gateway: Any) -> None:
        """While the hub has samples left to ask, the workers start one after another, about one per core at a time:
        each takes about WORKER_START_CPU_S of CPU to start, and eight starting at once on two cores starved the hub,
        whose next round then left late (docs/architecture.md, "One sample, with xdist")."""
        if self._workers_to_space > 0:
            self._workers_to_space -= 1
            time.sleep(self._spacing_s)

    @pytest.hookimpl
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["tooleval_run_id"] = self.session.run_id
        node.workerinput["tooleval_hub"] = self.hub
        # whose cached answers, what is served: as JSON text, which xdist's pipe takes whatever a server listed
        node.workerinput["tooleval_cache"] = json.dumps(self.session.told_workers())

    @pytest.hookimpl
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        self._raise_data_error(node, ids)
        self._check_replay_file()
        collected = _test_ids(ids)
        if self.session.collected_test_ids is None and self.session.active:  # every worker collects the same
            self.session.collected_test_ids = collected  # placeholders too: the controller tells them apart
        if not self.hub:
            return
        stopped = self.session.stopped_because
        if stopped and self._dsession is not None:  # tripped before xdist's loop began, which clears shouldstop
            self._dsession.shouldstop = stopped
        if self._ahead is None:  # the controller could not collect: the first worker's tests decide
            self._start_hub(collected)
            self._ahead = set(collected)
        elif not self._checked:
            self._checked = True
            self._check_ahead(node, collected)

    def _start_hub(self, test_ids: list[str]) -> None:
        from .progress import start_progress

        self.session.start_hub(test_ids)
        start_progress(self.config, self.session)
        self.session.memory.freeze()  # as on the workers (plugin.py)

    def _check_ahead(self, node: Any, collected: list[str]) -> None:
        """The hub's list against what a worker collected: a sample no worker has is dropped before it is
        asked (a conftest that collects otherwise in the controller; workers that differ from one another, xdist
        itself stops)."""
        assert self._ahead is not None
        if self._ahead == set(collected):
            return
        self.session.collected_test_ids = collected  # what runs is what the workers collected
        asked = self._restrict_hub(collected)
        self.session.say(f"tooleval: warning: worker {node.gateway.id} collected other tests than the controller "
                         f"({len(collected)} against {len(self._ahead)}): the hub asks for the worker's only"
                         + (f"; {counted(asked, 'sample')} it had already asked for "
                            f"{'is' if asked == 1 else 'are'} not in the run" if asked else ""))

    def _restrict_hub(self, test_ids: list[str]) -> int:
        """The hub asks only for the samples of these tests from now on; returns how many it had already asked for
        that are not among them."""
        from ..answers.codec import sample_key

        run, hub = self.session.run, self.session.hub
        assert hub is not None  # only a hub's list is checked
        cases = (run.case_for_test_id(test_id) for test_id in test_ids)
        keep = {sample_key(case) for case in cases if case is not None}
        return hub.restrict(keep, self.session.engine)

    @pytest.hookimpl
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """What the worker's cache and board failed to keep (storage.py), and what its models refused."""
        output = getattr(node, "workeroutput", {})
        self.session.storage.merge(output.get("tooleval_storage") or [])
        self.session.tally.merge_worker(output)

    def _check_replay_file(self) -> None:
        """A damaged replay file: one line and exit status 4 from here, before the workers read it (each would
        fail its first test instead). The first call reads it; later ones find it read."""
        from ..models.access import access_kind

        if self.session.active and access_kind(self.session.settings) == "replay":
            _ = self.session.access

    def _raise_data_error(self, node: Any, ids: Sequence[str]) -> None:
        """A suite whose data a worker could not load: load it here, which raises the same one-line error
        (a UsageError from this hook ends the run with exit status 4 before anything is asked)."""
        from ..errors import ToolevalUsageError
        from .collect import suite_with_data_error

        name = suite_with_data_error(_test_ids(ids))
        if name is None:
            return
        self.session.run.cases(name)
        raise ToolevalUsageError(f"tooleval: worker {node.gateway.id} could not load the {name} data, though this "
                                 "process can; run with -p no:xdist to see why")


def workers_to_start(requested: int, setting: str, cores: int) -> int:
    """How many of the -n workers a hub run starts: `auto`, at most one per core; `all`, every one."""
    return requested if setting == "all" else max(1, min(requested, cores))


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def _test_ids(node_ids: Sequence[str]) -> list[str]:
    """The parametrize ids of collected tests: what stands between the last brackets of each node id."""
    return [nodeid.rsplit("[", 1)[-1][:-1] for nodeid in node_ids if nodeid.endswith("]")]
