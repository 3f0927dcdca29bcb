"""BFCL's format sensitivity through the plugin (docs/bfcl.md#format-sensitivity): a live run sends bfcl's request
for each configuration, in the prompt protocol only; a replayed result folder gets bfcl's verdict on every entry,
and the summary gives each configuration's accuracy, the max delta and the standard deviation."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from bfcl_results import format_rows
from fake_openai import FakeOpenAI
from pytest_tooleval.suites.bfcl.format_sensitivity.entries import load_entries
from pytest_tooleval.suites.bfcl.format_sensitivity.figures import sensitivity

UNIT = Path(__file__).parents[1] / "unit" / "bfcl"
REQUESTS = json.loads((UNIT / "fs_request_digests.json").read_text(encoding="utf-8"))
VERDICTS = json.loads((UNIT / "fs_verdicts.json").read_text(encoding="utf-8"))


def digest(value: object) -> str:
    """As fs_record_requests.py digests: sha256 of the sorted-keys JSON, first 16 hex digits."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


def test_a_live_run_sends_bfcls_request_in_every_configuration(
    pytester: pytest.Pytester, bfcl_args: list[str], fake_openai: FakeOpenAI, bfcl_dir: Path
) -> None:
    """The 26 configurations of one question, asked with --tooleval-mode both: prompt requests only."""
    chosen = load_entries(bfcl_dir)[26:52]
    assert len({entry.sample.id for entry in chosen}) == 1 and len({entry.config for entry in chosen}) == 26
    fake_openai.enqueue(*(["[]"] * 26))
    result = pytester.runpytest(
        *[f"test_bfcl.py::test_bfcl[{entry.id}]" for entry in chosen],
        "--tooleval-bfcl-categories",
        "format_sensitivity",
        "--tooleval-mode",
        "both",
        "--tooleval-model",
        "fake-model",
        "--tooleval-base-url",
        fake_openai.base_url,
        "--tooleval-api-key",
        "sk-test-0123456789abcdef",
        "--tooleval-sampling",
        "upstream",
        *bfcl_args,
        "-q",
    )
    result.assert_outcomes(failed=26)  # "[]" is no call
    sent = {digest(body["messages"]) for body in fake_openai.stats.json_bodies if "tools" not in body}
    assert sent == {REQUESTS["messages"][entry.index] for entry in chosen}
    assert all("tools" not in body for body in fake_openai.stats.json_bodies)


def test_a_replayed_folder_gets_bfcls_verdicts_and_figures(
    pytester: pytest.Pytester, bfcl_args: list[str], bfcl_dir: Path
) -> None:
    """One synthetic answer per entry (one of format_sensitivity_cases.py's answers to it, picked by the entry's
    id), written as bfcl writes a model's result file, replayed with two workers."""
    picked = {entry_id: (answer, label) for entry_id, answer, label in format_rows(bfcl_dir, VERDICTS)}
    entries = load_entries(bfcl_dir)
    folder = pytester.path / "result" / "gpt-4o-2024-11-20" / "format_sensitivity"
    folder.mkdir(parents=True)
    lines = (json.dumps({"id": entry_id, "result": answer}) for entry_id, (answer, _) in picked.items())
    (folder / "BFCL_v4_format_sensitivity_result.json").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = pytester.runpytest(
        "--tooleval-model",
        f"replay:{folder.parent}",
        "--tooleval-bfcl-categories",
        "format_sensitivity",
        "--tooleval-report",
        "report.json",
        *bfcl_args,
        "-n",
        "2",
        "-q",
    )
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    got = {row["id"]: (row["outcome"] == "passed", row.get("error_type") or "") for row in report["samples"]}
    assert got == {
        entry_id: (label == "valid", "" if label == "valid" else label) for entry_id, (_, label) in picked.items()
    }
    expected = sensitivity([(entry.config.name, picked[entry.id][1] == "valid") for entry in entries])
    assert 0 < expected.accuracy < 1 and expected.max_delta > 0
    block = report["summary"]["bfcl"]["prompt"]["format_sensitivity"]
    assert (block["max_delta"], block["std"]) == (expected.max_delta, expected.std)
    assert {name: entry["accuracy"] for name, entry in block["configs"].items()} == {
        name: score.accuracy for name, score in expected.configs.items()
    }
    result.stdout.fnmatch_lines([f"*Max delta (percentage points)*{expected.max_delta:.3f}*"])


def test_function_calling_collects_no_format_sensitivity_entry(pytester: pytest.Pytester, bfcl_args: list[str]) -> None:
    def collected(mode: str) -> int:
        result = pytester.runpytest(
            "--collect-only", "-q", "--tooleval-model", "oracle", "--tooleval-bfcl-categories", "format_sensitivity",
            "--tooleval-mode", mode, *bfcl_args,
        )  # fmt: skip
        return sum(1 for line in result.outlines if line.startswith("test_bfcl.py::test_bfcl[format_sensitivity_"))

    assert (collected("fc"), collected("both"), collected("prompt")) == (0, 5_200, 5_200)


def test_the_oracle_passes_but_where_bfcls_json_pattern_cannot_read_the_answer(
    pytester: pytest.Pytester, bfcl_args: list[str]
) -> None:
    """The oracle writes each gold answer in its configuration's format; bfcl's JSON pattern stops inside a list of
    objects, so simple_python_96 fails in the 6 JSON configurations, as it would for any model (docs/bfcl.md)."""
    result = pytester.runpytest(
        "--tooleval-model", "oracle", "--tooleval-bfcl-categories", "format_sensitivity", *bfcl_args, "-q",
    )  # fmt: skip
    result.assert_outcomes(passed=5200 - 6, failed=6)
    failed = [line for line in result.outlines if line.startswith("FAILED")]
    assert len(failed) == 6 and all(":simple_python_96]" in line and "ret_fmt=json" in line for line in failed)
