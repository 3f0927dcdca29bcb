"""pytest-tooleval: tool-use benchmarks as pytest tests, scored like the reference evaluators."""

__version__ = "0.1.0"
__all__ = ["__version__"]
