"""ToolAlpaca: one test per instruction (simulated and/or real APIs), each an agent episode judged by a model."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_tooleval.hooks.collect import CaseHandle


@pytest.mark.tooleval("toolalpaca")
def test_toolalpaca(tooleval_case: CaseHandle) -> None:
    tooleval_case.check()
