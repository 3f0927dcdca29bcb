"""ACEBench: one test per sample (normal, special and agent families; en and/or zh)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_tooleval.hooks.collect import CaseHandle


@pytest.mark.tooleval("acebench")
def test_acebench(tooleval_case: CaseHandle) -> None:
    tooleval_case.check()
