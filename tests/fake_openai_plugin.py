"""The `fake_openai` fixture: a running FakeOpenAI per test. Registered from tests/conftest.py via `pytest_plugins`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_openai import FakeOpenAI


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fake chat-completions server on 127.0.0.1 (see tests/fake_openai.py); script it through its attributes.

    Point a client at `fake_openai.base_url`; read `fake_openai.stats` afterwards.
    """
    with FakeOpenAI() as server:
        yield server
