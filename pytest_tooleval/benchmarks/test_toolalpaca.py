"""ToolAlpaca: one test per instruction (simulated and/or real APIs), each an agent episode judged by a model."""

import pytest


@pytest.mark.tooleval("toolalpaca")
def test_toolalpaca(tooleval_case):
    tooleval_case.check()
