"""The README's example *.tooleval.yaml file is one the suite loads, and the worked example file too."""

from __future__ import annotations

import re
from pathlib import Path

from pytest_tooleval.suites.yamlsuite.spec import load_file

ROOT = Path(__file__).resolve().parents[3]


def test_the_readme_example_loads(tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Your own cases") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block is not None
    path = tmp_path / "assistant.tooleval.yaml"
    path.write_text(block.group(1), encoding="utf-8")
    loaded = load_file(path)
    assert [case.name for case in loaded.cases] == ["two_cities_at_once", "booking_a_flight_is_refused"]
    assert loaded.cases[0].turns[0].expect.ordered is False and loaded.cases[1].turns[0].expect.no_call


def test_the_worked_example_loads() -> None:
    loaded = load_file(ROOT / "examples" / "assistant.tooleval.yaml")
    assert len(loaded.cases) == 5 and {case.category for case in loaded.cases} == {"weather", "calendar"}
    assert [len(case.turns) for case in loaded.cases] == [1, 1, 1, 1, 2]
