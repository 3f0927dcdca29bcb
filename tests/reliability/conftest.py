"""Reliability tests: shared fixtures."""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
from pathlib import Path

import pytest
from _reliability import KEY, THIN_TEST

from fake_openai import FakeOpenAI
from mini_acebench import CATEGORIES as MINI_CATEGORIES
from mini_acebench import RIGHT, UNVERIFIED, write_mini_acebench


@pytest.fixture(scope="session", autouse=True)
def _plugin_and_http_stack_loaded() -> None:
    """Import the plugin's modules and ask once through the real client, outside any in-process run.

    pytester restores sys.modules after each in-process run, so whatever the run imported is imported again by
    the next one: openai alone costs a second, and a lazily imported transport module would come back with new
    exception classes that modules kept from before no longer recognise. Loaded once here, they stay. (So do
    the data loaders' per-folder caches: a test that edits data between in-process runs uses a new folder.)
    """
    import pytest_tooleval

    for module in pkgutil.walk_packages(pytest_tooleval.__path__, "pytest_tooleval."):
        if not module.name.startswith(("pytest_tooleval.benchmarks", "pytest_tooleval.__main__")):
            importlib.import_module(module.name)
    from pytest_tooleval.models.base import ChatRequest
    from pytest_tooleval.models.openai_compat import OpenAIBackend

    async def ask(base_url: str) -> None:
        async with OpenAIBackend("warm-up", base_url=base_url, api_key="sk-warm-up") as backend:
            await backend.complete(ChatRequest(({"role": "user", "content": "hi"},)))

    with FakeOpenAI(default="ok") as server:
        asyncio.run(ask(server.base_url))


@pytest.fixture
def default_data(acebench_56dd66c_dir: Path) -> Path:
    """ACEBench at the default revision (56dd66c): the folder the scripted answers are read from and the runs
    read, one revision's folder as --tooleval-data-dir takes it."""
    return acebench_56dd66c_dir


@pytest.fixture
def mini(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A synthetic 7-sample ACEBench tree and the thin test module; the options every run needs."""
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    data = write_mini_acebench(pytester.path / "data")
    pytester.makepyfile(test_acebench=THIN_TEST)
    return [
        f"--tooleval-data-dir={data}",
        UNVERIFIED,
        f"--tooleval-categories={MINI_CATEGORIES}",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
    ]


@pytest.fixture
def live(mini: list[str], fake_openai: FakeOpenAI) -> list[str]:
    """`mini` asking the fake server, which knows every right answer."""
    fake_openai.replies.update(RIGHT)
    return [
        *mini,
        "--tooleval-model=fake-model",
        f"--tooleval-base-url={fake_openai.base_url}",
        f"--tooleval-api-key={KEY}",
    ]
