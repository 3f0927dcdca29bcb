"""ACEBench: one test per sample (normal, special and agent families; en and/or zh)."""

import pytest


@pytest.mark.tooleval("acebench")
def test_acebench(tooleval_case):
    tooleval_case.check()
