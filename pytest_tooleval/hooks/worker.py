"""The hooks of an xdist worker, registered only there (the controller's are controller.py and distributed.py).

A worker collects and runs its share of the tests and reads the answers the hub wrote; what it tells the
controller rides on xdist's workeroutput, read in distributed.py's `pytest_testnodedown`.
"""

from __future__ import annotations

import pytest

from ..run.session import ToolevalSession


class WorkerHooks:
    def __init__(self, session: ToolevalSession, config: pytest.Config) -> None:
        self.session = session
        self.config = config

    @pytest.hookimpl
    def pytest_sessionfinish(self) -> None:
        """What this worker's cache and board failed to keep (models/storage.py), what its endpoints refused and its
        request counts: xdist sends them to the controller after this hook."""
        output: dict[str, object] = self.config.workeroutput  # type: ignore[attr-defined]  # xdist's, on a worker
        output["tooleval_storage"] = self.session.flush_storage()
        output["tooleval_adaptations"] = self.session.tally.adaptations
        output["tooleval_requests"] = self.session.tally.request_counts
