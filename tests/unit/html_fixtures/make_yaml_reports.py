"""Writes the report fixtures of your own cases: real runs of examples/assistant.tooleval.yaml against
tests/fake_openai.py, answered from the phrase tables of tests/plugin/test_yaml_suite.py.

    /work/venv/bin/python tests/unit/html_fixtures/make_yaml_reports.py

- html_fixtures/yaml_comparison.json: a baseline run with every case right, then a run with two cases wrong
  (`weather_today`, `book_a_flight_is_out_of_scope`) and one erroring (the server says the prompt is too long),
  compared with it, gated (`yaml.overall=0.9` missed) and priced;
- markdown_expected/yaml_cases.json: the second run alone (no baseline, no gate: the page of your cases only);
- markdown_expected/yaml_both.json: `--tooleval-mode both`, right in both protocols but for `two_cities_at_once`
  in the text protocol.

The reports are written as the plugin wrote them; the example's path in them is the run's temporary folder.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(TESTS), str(TESTS / "plugin")]

from test_yaml_suite import EXAMPLE, RIGHT_CALLS, WRONG_TEXT, responder, right_in_either_protocol  # noqa: E402

from fake_openai import FakeOpenAI, Fault  # noqa: E402


def run(server: FakeOpenAI, folder: Path, *options: str) -> None:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "--tooleval-model=fake-model",
        f"--tooleval-base-url={server.base_url}",
        "--tooleval-api-key=sk-fixture",
        "--tooleval-no-cache",
        "--tooleval-no-probe",
        "--tooleval-max-retries=0",
        *options,
    ]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    print(done.stdout[-1500:])


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="yaml-fixtures-"))
    shutil.copy(EXAMPLE, folder / EXAMPLE.name)
    with FakeOpenAI() as server:
        server.responder = responder(RIGHT_CALLS)
        run(server, folder, "--tooleval-report=base.json")
        server.responder = responder(
            {
                **RIGHT_CALLS,
                "weather like in Paris": WRONG_TEXT["weather like in Paris"],
                "flight to Lisbon": WRONG_TEXT["flight to Lisbon"],
                "meeting with Dana": Fault.context_overflow(),
            }
        )
        run(server, folder, "--tooleval-report=cases.json")
        run(
            server,
            folder,
            "--tooleval-report=comparison.json",
            "--tooleval-baseline=base.json",
            "--tooleval-prices=fake-model=2.5/10",
            "--tooleval-fail-under=yaml.overall=0.9,yaml.weather.accuracy=0.5",
            "--tooleval-max-regression=yaml.overall=0.05",
        )

        def both(body: dict[str, Any]) -> Any:
            if not body.get("tools") and "Rome and in Oslo" in body["messages"][-1]["content"]:
                return WRONG_TEXT["Rome and in Oslo"]
            return right_in_either_protocol(body)

        server.responder = both
        run(server, folder, "--tooleval-report=both.json", "--tooleval-mode=both")
    unit = TESTS / "unit"
    shutil.copy(folder / "comparison.json", unit / "html_fixtures" / "yaml_comparison.json")
    shutil.copy(folder / "cases.json", unit / "markdown_expected" / "yaml_cases.json")
    shutil.copy(folder / "both.json", unit / "markdown_expected" / "yaml_both.json")


if __name__ == "__main__":
    main()
