"""The thin benchmark test modules the package ships, for pytester runs: tests run exactly what users run."""

from __future__ import annotations

from pathlib import Path

import pytest_tooleval.benchmarks


def benchmark_source(suite: str) -> str:
    return (Path(pytest_tooleval.benchmarks.__file__).parent / f"test_{suite}.py").read_text(encoding="utf-8")
