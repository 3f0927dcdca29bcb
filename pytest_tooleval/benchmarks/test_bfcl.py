"""BFCL v4 single-turn: one test per sample (13 categories, non-live and live), scored as bfcl-eval scores it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_tooleval.hooks.collect import CaseHandle


@pytest.mark.tooleval("bfcl")
def test_bfcl(tooleval_case: CaseHandle) -> None:
    tooleval_case.check()
