"""Fixtures shared by the plugin's own tests."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI

_NO_DATA = (
    "needs the upstream {suite} data: set TOOLEVAL_DATA_DIR to a folder holding {suite}/ (CI uses ../shared/data)"
)


TESTS = Path(__file__).parent


def _runs_our_tests(config: pytest.Config) -> bool:
    """Whether this run collects the project's own tests. pytest also loads this file in a benchmark run started
    in the clone with arguments that are no paths (`--pyargs pytest_tooleval.benchmarks`): it then reads the
    conftest of every `test*` folder where it starts. Such a run is a user's, and nothing here may change it."""
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if path == TESTS or TESTS in path.parents:
            return True
    return False


@pytest.hookimpl(tryfirst=True)  # before the plugin reads its settings from the environment
def pytest_configure(config: pytest.Config) -> None:
    if not _runs_our_tests(config):
        return
    config.stash[_OURS] = True
    # The README's test command gives the data folder as a relative path, and pytester runs change the working
    # directory: the path is made absolute once, before any test (inner pytest runs inherit it so). A clone
    # without that folder uses what the plugin has downloaded, and the tests that need more skip, named.
    root = _data_root(os.environ.get("TOOLEVAL_DATA_DIR"))
    global _DATA_ROOT
    _DATA_ROOT = root  # what the data fixtures read: a test may drop the variable before it first asks for one
    if root is None:
        os.environ.pop("TOOLEVAL_DATA_DIR", None)
    else:
        os.environ["TOOLEVAL_DATA_DIR"] = str(root)
    _import_the_http_stack()
    # The endpoint probe (one request per model role before a run) would add a request to every run the tests
    # count requests of; its own tests (tests/plugin/test_probe.py) turn it back on.
    os.environ["TOOLEVAL_NO_PROBE"] = "1"


_OURS = pytest.StashKey[bool]()
# the data root found at start (None: none), fixed for the session: the session fixtures below are made the first
# time a test asks, which may be after that test's monkeypatch removed TOOLEVAL_DATA_DIR for its inner runs, and a
# skip there would be cached for every later test of the worker
_DATA_ROOT: Path | None = None
# a folder in the layout of ../shared/data holds this of the default ACEBench revision
_DATA_MARKER = Path("acebench-56dd66c") / "MANIFEST.json"


def _data_root(given: str | None) -> Path | None:
    """The upstream data the tests read: TOOLEVAL_DATA_DIR when it holds the data, else a folder made of what the
    plugin has downloaded into its cache (TOOLEVAL_CACHE_DIR, else ~/.cache/pytest-tooleval), else None."""
    if given and (Path(given) / _DATA_MARKER).exists():
        return Path(given).resolve()
    cache = Path(os.environ.get("TOOLEVAL_CACHE_DIR") or "~/.cache/pytest-tooleval").expanduser()
    downloaded = _downloaded(cache)
    if "acebench-56dd66c" not in downloaded:
        return None
    root = Path(tempfile.mkdtemp(prefix="tooleval-tests-data-"))
    for name, folder in downloaded.items():
        (root / name).symlink_to(folder, target_is_directory=True)
    return root


def _downloaded(cache: Path) -> dict[str, Path]:
    """The data folders the plugin's download cache holds, by their names in ../shared/data's layout."""
    from pytest_tooleval.errors import ToolevalError
    from pytest_tooleval.suites.acebench import data as acebench
    from pytest_tooleval.suites.bfcl import upstream as bfcl
    from pytest_tooleval.suites.toolalpaca import data as toolalpaca

    finders: dict[str, Callable[[], Path]] = {
        "acebench-56dd66c": lambda: acebench.locate(None, cache, True, "56dd66c").root,
        "acebench": lambda: acebench.locate(None, cache, True, "e6db74b").root,
        "bfcl": lambda: bfcl.ensure_data(None, cache, True),
        "toolalpaca": lambda: toolalpaca.locate(None, cache, True),
    }
    found: dict[str, Path] = {}
    for name, find in finders.items():
        try:
            found[name] = find()
        except ToolevalError:  # not downloaded (or not whole): its tests skip
            continue
    return found


# In-process pytester runs drop every module first imported during the run. The HTTP stack imports its
# transport module lazily, on the first client, and its transport keeps a lazily built table of that module's
# exception classes: a run that imported it first leaves the table pointing at classes later runs no longer
# raise, and their connection errors and timeouts escape unclassified. Build the client here, before any run.
def _import_the_http_stack() -> None:
    import openai

    openai.AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1")


_slow_left_out: list[str] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The README's test command leaves the `slow` tests out (so that it, and CI, stay within their time); `-m slow`
    (or any -m naming slow) runs them. The end of the run names how many were left out and the command."""
    if not config.stash.get(_OURS, False) or "slow" in (config.getoption("markexpr") or ""):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]
        _slow_left_out.extend(item.nodeid for item in slow)
        if hasattr(config, "workeroutput"):  # an xdist worker: the controller, which collects nothing, says it
            config.workeroutput["slow_left_out"] = len(slow)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist's controller: each worker collected (and left out) the same slow tests; take one worker's count."""
    left_out = getattr(node, "workeroutput", {}).get("slow_left_out", 0)
    if left_out > len(_slow_left_out):
        _slow_left_out[:] = ["?"] * left_out


_skipped_for_data: list[str] = []
_skipped_for_wheel: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and "needs the upstream bfcl-eval" in str(report.longrepr):
        _skipped_for_wheel.append(report.nodeid)
    elif report.skipped and "needs the upstream" in str(report.longrepr):
        _skipped_for_data.append(report.nodeid)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, None, None]:
    """Say it last when the conformance tests could not run: a green run without them proves less."""
    try:
        yield
    finally:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if not session.config.stash.get(_OURS, False):
            reporter = None
        if _skipped_for_data and reporter is not None and not hasattr(session.config, "workerinput"):
            reporter.write_line(
                f"conformance: {len(_skipped_for_data)} tests skipped: they need the upstream data: "
                "TOOLEVAL_DATA_DIR=../shared/data as in the README's test command, or what the plugin "
                "downloads into its cache (the README says how)",
                yellow=True,
            )
        if _slow_left_out and reporter is not None and not hasattr(session.config, "workerinput"):
            reporter.write_line(
                f"{len(_slow_left_out)} slow test{'s' if len(_slow_left_out) != 1 else ''} left out: "
                "`python -m pytest tests -m slow -n 2` runs them "
                "(docs/development.md)",
                yellow=True,
            )
        if _skipped_for_wheel and reporter is not None and not hasattr(session.config, "workerinput"):
            reporter.write_line(
                f"conformance: {len(_skipped_for_wheel)} tests skipped: they need the bfcl-eval wheel "
                "(TOOLEVAL_BFCL_WHEEL, see docs/development.md)",
                yellow=True,
            )


def _suite_dir(suite: str, marker_file: str) -> Path:
    """The folder with `suite`'s upstream data, from TOOLEVAL_DATA_DIR (the root, or the suite folder itself)."""
    root = _DATA_ROOT
    if root:
        for candidate in (root / suite, root):
            if (candidate / marker_file).exists():
                return candidate
    pytest.skip(_NO_DATA.format(suite=suite))


#: the third-party plugins of the test environment that the runs inside the tests never use: hypothesis's,
#: pytest-asyncio's and anyio's load at every pytest start-up, 1.5 s of CPU a process (docs/development.md)
UNRELATED_PLUGINS = ("hypothesispytest", "asyncio", "anyio")


@pytest.fixture(autouse=True)
def _inner_runs_configured(request: pytest.FixtureRequest) -> None:
    """pytester runs get an ini of their own: it keeps UNRELATED_PLUGINS out of them and of their xdist workers,
    and ignores pytest-benchmark's warning (where a machine has it installed) at the start of every run under
    xdist (-n, or a run started from an xdist worker, whose environment says so): a line on stderr that is not the
    run's (as pyproject.toml ignores it). A test that writes its own ini goes without it."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester").makeini(
            "[pytest]\naddopts = " + " ".join(f"-p no:{name}" for name in UNRELATED_PLUGINS) + "\n"
            "filterwarnings =\n    ignore:Benchmarks are automatically disabled because xdist plugin is active\n"
        )


@pytest.fixture(scope="session")
def acebench_dir() -> Path:
    """ACEBench at e6db74b (the data root's acebench/)."""
    return _suite_dir("acebench", "MANIFEST.json")


@pytest.fixture(scope="session")
def acebench_56dd66c_dir() -> Path:
    """ACEBench at 56dd66c, the default revision (the data root's acebench-56dd66c/)."""
    return _suite_dir("acebench-56dd66c", "MANIFEST.json")


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The folder holding every suite's data (TOOLEVAL_DATA_DIR, as ../shared/data): ACEBench's revisions side by
    side, so a run picks the one its --tooleval-acebench-revision names."""
    root = _DATA_ROOT
    if not root or not (root / "acebench-56dd66c" / "MANIFEST.json").exists():
        pytest.skip(_NO_DATA.format(suite="acebench-56dd66c"))
    return root


@pytest.fixture(scope="session")
def toolalpaca_dir() -> Path:
    return _suite_dir("toolalpaca", "MANIFEST.json")


@pytest.fixture(scope="session")
def gpt4tools_dir() -> Path:
    return _suite_dir("gpt4tools", "official_metric_cases.jsonl")


@pytest.fixture(scope="session")
def bfcl_dir() -> Path:
    """BFCL v4 (the data root's bfcl/: the bfcl-eval 2026.3.23 wheel's data and the conformance verdicts)."""
    return _suite_dir("bfcl", "MANIFEST.json")


@pytest.fixture(scope="session")
def bfcl_wheel() -> Path:
    """The pinned bfcl-eval wheel TOOLEVAL_BFCL_WHEEL names (its request texts and multi-turn API tables); the test
    skips, named, without it."""
    found = os.environ.get("TOOLEVAL_BFCL_WHEEL")
    if not found:
        pytest.skip(
            "needs the upstream bfcl-eval 2026.3.23 wheel for its request texts and multi-turn API tables: set "
            "TOOLEVAL_BFCL_WHEEL (pip download --no-deps bfcl-eval==2026.3.23)"
        )
    return Path(found)


@pytest.fixture
def bfcl_args(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, bfcl_dir: Path, bfcl_wheel: Path
) -> list[str]:
    """A pytester project with the shipped BFCL test module, and the arguments of an offline run of it on the
    upstream data and the pinned wheel (no key, no category chosen from the environment)."""
    for name in ("OPENAI_API_KEY", "TOOLEVAL_BFCL_CATEGORIES"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_bfcl=benchmark_source("bfcl"))
    return [
        f"--tooleval-data-dir={bfcl_dir}",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        f"--tooleval-bfcl-wheel={bfcl_wheel}",
        "--tooleval-offline",
        "-p",
        "no:cacheprovider",
    ]


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fake chat-completions server on 127.0.0.1 (see tests/fake_openai.py); script it through its attributes.

    Point a client at `fake_openai.base_url`; read `fake_openai.stats` afterwards.
    """
    with FakeOpenAI() as server:
        yield server
