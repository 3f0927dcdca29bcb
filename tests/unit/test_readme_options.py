"""Every option the plugin declares (the core ones and every suite's) is documented in the option table
(docs/options.md), and every option the table's page names exists: the table and the options cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path

from pytest_tooleval.suites import all_options

README = Path(__file__).parents[2] / "docs" / "options.md"


def test_the_readme_documents_exactly_the_declared_options() -> None:
    text = README.read_text(encoding="utf-8")
    declared = {option.name for option in all_options()}
    named = set(re.findall(r"--tooleval-([a-z0-9]+(?:-[a-z0-9]+)*)", text))
    assert sorted(declared - named) == [], "options missing from the README"
    assert sorted(named - declared) == [], "the README names options that do not exist"
