"""GPT4Tools: one test per test-set item (--tooleval-gpt4tools-path FILE); passes iff the item's SR is 1."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_tooleval.hooks.collect import CaseHandle


@pytest.mark.tooleval("gpt4tools")
def test_gpt4tools(tooleval_case: CaseHandle) -> None:
    tooleval_case.check()
