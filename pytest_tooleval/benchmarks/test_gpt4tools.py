"""GPT4Tools: one test per test-set item (--tooleval-gpt4tools-path FILE); passes iff the item's SR is 1."""

import pytest


@pytest.mark.tooleval("gpt4tools")
def test_gpt4tools(tooleval_case):
    tooleval_case.check()
