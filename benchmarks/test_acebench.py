"""ACEBench in this checkout: `pytest --tooleval-model NAME` (the same test the package ships)."""

from pytest_tooleval.benchmarks.test_acebench import test_acebench

__all__ = ["test_acebench"]
