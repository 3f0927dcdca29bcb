"""A fourth, toy benchmark written against the suite contract only (`pytest_tooleval.suite`, its one import), the
way a third-party package would: tests install it as a throwaway distribution (see `install_toy_suite`) and check that
it gets every capability of the built-in suites without a change to the plugin."""
