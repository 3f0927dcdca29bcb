"""ToolAlpaca in this checkout: `pytest --tooleval-model NAME -m toolalpaca` (the same test the package ships)."""

from pytest_tooleval.benchmarks.test_toolalpaca import test_toolalpaca

__all__ = ["test_toolalpaca"]
