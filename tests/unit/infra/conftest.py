"""Until tests/conftest.py lists `pytest_plugins = ["fake_openai_plugin"]`, this makes the fixture visible here."""

from fake_openai_plugin import fake_openai  # noqa: F401
