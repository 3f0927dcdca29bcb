"""xdist glue, registered only when xdist is present: the controller tells its workers the run id."""

from __future__ import annotations

from typing import Any

import pytest


class XdistHooks:
    def __init__(self, run_id: str) -> None:
        self.run_id = run_id

    @pytest.hookimpl
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["tooleval_run_id"] = self.run_id
