"""The benchmark test modules, shipped with the plugin: `pytest --pyargs pytest_tooleval.benchmarks`."""
