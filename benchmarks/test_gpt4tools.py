"""GPT4Tools in this checkout: `pytest --tooleval-model NAME -m gpt4tools --tooleval-gpt4tools-path FILE`."""

from pytest_tooleval.benchmarks.test_gpt4tools import test_gpt4tools

__all__ = ["test_gpt4tools"]
