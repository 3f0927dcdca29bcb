"""pytest hooks for pytest-tooleval: glue only, each hook a few lines that call into the modules.

Importing this module is cheap (no openai, no data): the plugin costs nothing until a test asks for it.
"""

from __future__ import annotations

import atexit
import gc
import json
from collections.abc import Callable, Generator

import pytest

from ..run.session import SESSION_KEY, ToolevalSession
from ..settings.options import add_options, paths_after_a_space, resolve
from ..suites import all_options, registered
from .collect import CaseHandle

RESULT_KEY = pytest.StashKey[CaseHandle]()
COLLECTED_KEY = pytest.StashKey[bool]()  # the collection ended whole: pytest_collection_modifyitems returned

TOOLEVAL_MARKER = "tooleval(suite): parametrize this test with one case per sample of the named benchmark suite"


def pytest_addoption(parser: pytest.Parser) -> None:
    registered.cache_clear()  # suites installed since the last run in this process (pytester, an embedding program)
    add_options(parser, all_options())


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    # before any plugin is configured, so that this is the cleanup pytest runs last (its stack is LIFO): after its
    # own final garbage collections (its unraisable-exception check makes five), which then skip the frozen run
    # (0.7 s at the end of a 973-sample run)
    config.add_cleanup(lambda: _thaw(config))


def _thaw(config: pytest.Config) -> None:
    session = config.stash.get(SESSION_KEY, None)
    if session is not None and not hasattr(config, "workerinput"):  # a worker's process ends with its session
        session.memory.thaw()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", TOOLEVAL_MARKER)
    markers = {name: text for suite in registered().values() for name, text in suite.markers.items()}
    for name, description in markers.items():
        config.addinivalue_line("markers", f"{name}: {description}")
    workerinput = getattr(config, "workerinput", None)
    settings = resolve(config, all_options())
    session = ToolevalSession(settings, workerinput.get("tooleval_run_id") if workerinput else None,
                              config.option.markexpr or "",
                              hub_client=bool(workerinput.get("tooleval_hub")) if workerinput else False,
                              told=json.loads(workerinput["tooleval_cache"]) if workerinput and
                              "tooleval_cache" in workerinput else None)
    config.stash[SESSION_KEY] = session
    if session.active:
        # at exit, leave the run's objects out of the interpreter's final garbage collections: on a worker
        # those took about a second, which xdist waits for before it reports
        atexit.register(gc.freeze)
    if workerinput is not None:  # an xdist worker
        from .worker import WorkerHooks

        config.pluginmanager.register(WorkerHooks(session, config), "tooleval-worker")
        return
    from .controller import Controller  # the process that aggregates: alone, or xdist's controller

    session.say = _terminal_line(config)
    config.pluginmanager.register(Controller(session), "tooleval-controller")
    if config.pluginmanager.hasplugin("xdist"):
        from .distributed import XdistHooks

        config.pluginmanager.register(XdistHooks(session, config), "tooleval-xdist")


def _terminal_line(config: pytest.Config) -> Callable[[str], None]:
    """A line to pytest's terminal (found when first used: it registers after this plugin)."""

    def say(line: str) -> None:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            print(line, flush=True)
        else:
            reporter.write_line(line)
            reporter.flush()

    return say


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config) -> Generator[None, None, None]:
    yield  # a usage error raised within (a suite's data, a broken case file, a bad -k) passes through
    config.stash[COLLECTED_KEY] = True


def pytest_collection_finish(session: pytest.Session) -> None:
    tooleval = session.config.stash[SESSION_KEY]
    # pytest calls this hook in a `finally`, after a usage error in pytest_collection_modifyitems too: a run that
    # ends with exit status 4 asks nothing
    if not session.config.stash.get(COLLECTED_KEY, False):
        return
    if tooleval.active and not session.config.option.collectonly:  # listing tests must not spend requests
        from .collect import collected_cases

        cases = collected_cases(session.items)
        tooleval.collected_test_ids = [case.test_id for case in cases]  # the report names those that never ran
        tooleval.stop_when_dead(lambda reason: setattr(session, "shouldstop", reason))  # -x-like, one line
        tooleval.start_answers(cases)
        tooleval.memory.freeze()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # samples still being answered belong to other workers' tests, unless the run was cut short
    session.config.stash[SESSION_KEY].drain_on_close = (
        exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) and not session.shouldstop
        and not session.shouldfail)


def pytest_unconfigure(config: pytest.Config) -> None:
    if SESSION_KEY in config.stash:
        from .progress import stop_progress

        stop_progress(config)
        config.stash[SESSION_KEY].close()


def pytest_report_header(config: pytest.Config) -> list[str]:
    session = config.stash[SESSION_KEY]
    lines = [session.settings.header()] if session.active else []
    for flag, value in paths_after_a_space(config.invocation_params.args, session.settings.options):
        lines.append(f"tooleval: warning: pytest took {value} for a test path when it chose its rootdir "
                     f"({config.rootpath}) and ini file (it does so before it knows plugin options): "
                     f"write {flag}={value}")
    exposed = session.settings.secrets_on_command_line()
    if exposed and config.option.debug:  # pytest's debug log records the whole command line
        lines.append(f"tooleval: warning: --debug writes the command line, {', '.join(exposed)} included, to its "
                     "log file: pass keys by environment variable (OPENAI_API_KEY, TOOLEVAL_API_KEY) instead")
    return lines


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("tooleval")
    if marker is None or "tooleval_case" not in metafunc.fixturenames:
        return
    from .collect import parametrize_cases

    parametrize_cases(metafunc, metafunc.config.stash[SESSION_KEY], marker)


@pytest.fixture
def tooleval_case(request: pytest.FixtureRequest) -> CaseHandle:
    """The sample this test evaluates, already answered and scored (an infrastructure failure errors here)."""
    from .collect import answer_case

    handle = answer_case(request.config.stash[SESSION_KEY], request.param)
    request.node.stash[RESULT_KEY] = handle
    return handle


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    callspec = getattr(item, "callspec", None)
    ours = callspec is not None and "tooleval_case" in callspec.params
    if ours and call.excinfo is not None:
        from .collect import trim_failure

        trim_failure(item, call.excinfo)  # the same text, without walking pytest's own frames
    report = yield
    if ours:
        from .collect import attach_payload

        attach_payload(item.config.stash[SESSION_KEY], item, call, report, item.stash.get(RESULT_KEY, None))
    return report
