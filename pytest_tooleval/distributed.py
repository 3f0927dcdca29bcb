"""xdist glue, registered only when xdist is present: the controller tells its workers the run id and,
for a live model, answers their samples itself (the hub, see ToolevalSession.start_hub)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from .session import ToolevalSession


class XdistHooks:
    def __init__(self, session: ToolevalSession, config: pytest.Config) -> None:
        self.session = session
        self.config = config
        self.hub = session.works_ahead and not config.option.collectonly

    @pytest.hookimpl
    def pytest_xdist_setupnodes(self, config: pytest.Config, specs: Sequence[Any]) -> None:
        if self.hub:
            self.session.prepare_hub(len(specs))

    @pytest.hookimpl
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["tooleval_run_id"] = self.session.run_id
        node.workerinput["tooleval_hub"] = self.hub

    @pytest.hookimpl
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        self._raise_data_error(node, ids)
        self._check_replay_file()
        if self.session.collected_test_ids is None and self.session.active:  # every worker collects the same
            self.session.collected_test_ids = _test_ids(ids)  # placeholders too: the controller tells them apart
        if self.hub:  # a dead endpoint stops the workers as pytest's -x does, with one line
            dsession = self.config.pluginmanager.get_plugin("dsession")
            if dsession is not None:
                self.session.stop_when_dead(lambda reason: setattr(dsession, "shouldstop", reason))
        if self.hub:
            self.session.start_hub(_test_ids(ids))
            from .progress import start_progress

            start_progress(self.config, self.session)
            self.session.freeze_collected()  # as on the workers (plugin.py)

    @pytest.hookimpl
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """What the worker's cache and board failed to keep (storage.py), and what its models refused."""
        output = getattr(node, "workeroutput", {})
        self.session.storage.merge(output.get("tooleval_storage") or [])
        self.session.merge_adaptations(output.get("tooleval_adaptations") or {})
        self.session.merge_requests(output.get("tooleval_requests") or {})

    def _check_replay_file(self) -> None:
        """A damaged replay file: one line and exit status 4 from here, before the workers read it (each would
        fail its first test instead). The first call reads it; later ones find it read."""
        from .models.access import access_kind

        if self.session.active and access_kind(self.session.settings) == "replay":
            _ = self.session.access

    def _raise_data_error(self, node: Any, ids: Sequence[str]) -> None:
        """A suite whose data a worker could not load: load it here, which raises the same one-line error
        (a UsageError from this hook ends the run with exit status 4 before anything is asked)."""
        from .collect import suite_with_data_error
        from .errors import ToolevalUsageError

        name = suite_with_data_error(_test_ids(ids))
        if name is None:
            return
        self.session.run.cases(name)
        raise ToolevalUsageError(f"tooleval: worker {node.gateway.id} could not load the {name} data, though this "
                                 "process can; run with -p no:xdist to see why")


def _test_ids(node_ids: Sequence[str]) -> list[str]:
    """The parametrize ids of collected tests: what stands between the last brackets of each node id."""
    return [nodeid.rsplit("[", 1)[-1][:-1] for nodeid in node_ids if nodeid.endswith("]")]
