"""The reports CI users read: the Markdown summary (--tooleval-markdown, $GITHUB_STEP_SUMMARY) of a real run."""

from __future__ import annotations

import json

import pytest

from benchmark_modules import benchmark_source
from mini_acebench import CATEGORIES, SAMPLES, UNVERIFIED, write_mini_acebench
from pytest_tooleval.report.markdown import render_markdown


@pytest.fixture
def oracle_args(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.delenv("TOOLEVAL_DATA_DIR", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    data = write_mini_acebench(pytester.path / "data")
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    return [
        "--tooleval-model=oracle",
        f"--tooleval-data-dir={data}",
        UNVERIFIED,
        f"--tooleval-categories={CATEGORIES}",
        "-p",
        "no:cacheprovider",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
    ]


def test_the_markdown_summary_is_written_and_appended_to_the_step_summary(
    pytester: pytest.Pytester, oracle_args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    step_summary = pytester.path / "step_summary.md"
    step_summary.write_text("# an earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    result = pytester.runpytest_subprocess(
        *oracle_args,
        "--tooleval-markdown=out/summary.md",
        "--tooleval-report=report.json",
        "--tooleval-fail-under=overall=0.9",
    )
    result.assert_outcomes(passed=SAMPLES)
    result.stdout.fnmatch_lines(["tooleval report: */out/summary.md"])
    written = (pytester.path / "out" / "summary.md").read_text()
    # the Markdown is the render of the run's own report document
    assert written == render_markdown(json.loads((pytester.path / "report.json").read_text()))
    assert written.startswith("## pytest-tooleval: oracle\n") and "**Gate: PASSED**" in written
    assert step_summary.read_text().startswith("# an earlier step\n") and written in step_summary.read_text()


def test_the_step_summary_alone_needs_no_option(
    pytester: pytest.Pytester, oracle_args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    step_summary = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    pytester.runpytest_subprocess(*oracle_args).assert_outcomes(passed=SAMPLES)
    assert "### ACEBench en" in step_summary.read_text()


def test_an_unwritable_markdown_path_is_one_line_before_any_sample(
    pytester: pytest.Pytester, oracle_args: list[str]
) -> None:
    (pytester.path / "taken").mkdir()
    result = pytester.runpytest_subprocess(*oracle_args, "--tooleval-markdown=taken")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert next(line for line in result.stderr.lines if line.strip()).startswith("ERROR: --tooleval-markdown: ")


def test_quarantined_samples_run_apart_out_of_every_figure(pytester: pytest.Pytester, oracle_args: list[str]) -> None:
    (pytester.path / "quarantine.yaml").write_text(
        "# known to be broken\nen-normal_atom_bool_0: its ground truth is wrong\n"
        "en-special_irrelevant_0: 'asks the impossible'\nen-nothing_like_this_9: not in this run\n"
        "en-normal_atom_bool_01: a typo\n"
    )
    args = [
        *oracle_args,
        "--tooleval-quarantine=quarantine.yaml",
        "--tooleval-report=report.json",
        "--tooleval-fail-under=en.normal_atom_bool=1.0",
        "-rxX",
    ]
    result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(passed=SAMPLES - 2, xpassed=2)  # the oracle passes them: XPASS, never a failure
    result.stdout.fnmatch_lines(
        [
            "tooleval quarantine: 2 samples ran apart, in no figure and not gated: "
            "en-normal_atom_bool_0 passed, en-special_irrelevant_0 passed",
            "tooleval quarantine: 2 ids matched no sample of this run: en-nothing_like_this_9, "
            "en-normal_atom_bool_01 (did you mean 'en-normal_atom_bool_1'?)",
        ]
    )
    report = json.loads((pytester.path / "report.json").read_text())
    quarantined = {row["id"]: row["quarantined"] for row in report["samples"] if row.get("quarantined")}
    assert quarantined == {
        "normal_atom_bool_0": "its ground truth is wrong",
        "special_irrelevant_0": "asks the impossible",
    }
    atom_bool = report["summary"]["acebench"]["en"]["categories"]["normal_atom_bool"]
    assert (atom_bool["n"], atom_bool["scored"]) == (1, 1)  # one of the two samples, the other quarantined
    assert "special_irrelevant" not in report["summary"]["acebench"]["en"]["categories"]


def test_a_bad_quarantine_file_is_one_line(pytester: pytest.Pytester, oracle_args: list[str]) -> None:
    (pytester.path / "quarantine.yaml").write_text("- en-normal_atom_bool_0\n")
    result = pytester.runpytest_subprocess(*oracle_args, "--tooleval-quarantine=quarantine.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    [line] = [line for line in result.stderr.lines if line.strip()]
    assert line.startswith("ERROR: --tooleval-quarantine: ") and line.endswith(
        "quarantine.yaml: expected test id: reason lines (a mapping), got a list"
    )


def test_the_html_page_is_written_from_the_run(pytester: pytest.Pytester, oracle_args: list[str]) -> None:
    from pytest_tooleval.report.html import render_html

    result = pytester.runpytest_subprocess(*oracle_args, "--tooleval-html=pages/run.html", "--tooleval-report=r.json")
    result.assert_outcomes(passed=SAMPLES)
    page = (pytester.path / "pages" / "run.html").read_text()
    assert page == render_html(json.loads((pytester.path / "r.json").read_text()))
    assert 'data-figure="acebench.en.overall"' in page and "<script" not in page


def test_totals_count_requests_latency_and_cost(pytester: pytest.Pytester, oracle_args: list[str]) -> None:
    from fake_openai import FakeOpenAI, Fault
    from mini_acebench import RIGHT

    with FakeOpenAI(replies=RIGHT, latency_s=0.05) as server:
        server.fail_first(1, Fault.http(503))
        args = [arg for arg in oracle_args if arg != "--tooleval-model=oracle"]
        result = pytester.runpytest_subprocess(
            *args,
            "--tooleval-model=fake-model",
            f"--tooleval-base-url={server.base_url}",
            "--tooleval-api-key=k",
            "--tooleval-prices=fake-model=1000000/2000000",
            "--tooleval-report=report.json",
            "--tooleval-concurrency=1",
        )
    result.assert_outcomes(passed=SAMPLES)
    totals = json.loads((pytester.path / "report.json").read_text())["totals"]
    assert (totals["requests"], totals["retries"]) == (SAMPLES + 1, 1)  # the 503, retried once
    # $1 per prompt token and $2 per completion token: the cost is the token counts themselves
    assert totals["cost_usd"] == pytest.approx(totals["prompt_tokens"] + 2 * totals["completion_tokens"])
    assert 0.05 <= totals["latency_p50_s"] <= totals["latency_p95_s"]
    by_category = {entry["category"]: entry for entry in totals["categories"]}
    assert by_category["normal_atom_bool"]["samples"] == 2
    assert sum(entry["cost_usd"] for entry in totals["categories"]) == pytest.approx(totals["cost_usd"])
    result.stdout.fnmatch_lines(
        [
            f"tooleval cost: {SAMPLES + 1} requests (1 retry); sample latency p50 * s, "
            "p95 * s; $* asked, estimated at --tooleval-prices"
        ]
    )


def test_a_model_without_a_price_gives_no_cost_and_says_so(pytester: pytest.Pytester, oracle_args: list[str]) -> None:
    from fake_openai import FakeOpenAI
    from mini_acebench import RIGHT

    args = [arg for arg in oracle_args if arg != "--tooleval-model=oracle"]
    with FakeOpenAI(replies=RIGHT) as server:
        result = pytester.runpytest_subprocess(
            *args,
            "--tooleval-model=fake-model",
            "--tooleval-api-key=k",
            f"--tooleval-base-url={server.base_url}",
            "--tooleval-prices=gpt-4o=2.5/10",
            "--tooleval-report=report.json",
        )
    result.assert_outcomes(passed=SAMPLES)
    totals = json.loads((pytester.path / "report.json").read_text())["totals"]
    assert totals["cost_usd"] is None and totals["unpriced_models"] == ["fake-model"]
    result.stdout.fnmatch_lines(["tooleval cost: * no cost: no --tooleval-prices entry for fake-model"])


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_the_cost_ceiling_stops_starting_samples_and_fails_the_gate(
    pytester: pytest.Pytester, oracle_args: list[str], workers: list[str]
) -> None:
    from fake_openai import FakeOpenAI
    from mini_acebench import RIGHT

    args = [arg for arg in oracle_args if arg != "--tooleval-model=oracle"]
    with FakeOpenAI(replies=RIGHT) as server:
        # a dollar a prompt token: the first sample alone spends more than the ceiling
        result = pytester.runpytest_subprocess(
            *args,
            "--tooleval-model=fake-model",
            f"--tooleval-base-url={server.base_url}",
            "--tooleval-api-key=k",
            "--tooleval-prices=fake-model=1000000/0",
            "--tooleval-max-cost=1",
            "--tooleval-concurrency=1",
            "--tooleval-fail-under=overall=0.0",
            "--tooleval-report=report.json",
            *workers,
        )
        asked = server.stats.requests
    # one sample at a time per process that asks (with -n 2 the controller asks for both workers: two at once)
    started = 1 if not workers else 2
    assert asked <= started
    result.assert_outcomes(passed=asked, skipped=SAMPLES - asked)
    result.stdout.fnmatch_lines(
        [
            "tooleval: the cost ceiling --tooleval-max-cost 1 was reached (estimated $*): "
            f"{SAMPLES - asked} samples were not run: the run is incomplete",
            "tooleval gate: INCOMPLETE: *",
            "tooleval gate: FAILED (partial run: *)",
        ]
    )
    assert result.ret == 1  # a threshold of 0 met, but an incomplete run passes no gate
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["totals"]["cost_ceiling"] == {"usd": 1.0, "not_run": SAMPLES - asked}
    assert report["gate"]["passed"] is False and report["gate"]["incomplete"]
    from pytest_tooleval.report.html import render_html

    assert "INCOMPLETE" in render_markdown(report) and "INCOMPLETE" in render_html(report)


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_answers_from_the_cache_cost_nothing_in_the_ceiling_or_the_cost_line(
    pytester: pytest.Pytester, oracle_args: list[str], workers: list[str]
) -> None:
    from fake_openai import FakeOpenAI
    from mini_acebench import RIGHT

    args = [arg for arg in oracle_args if arg != "--tooleval-model=oracle"]
    with FakeOpenAI(replies=RIGHT) as server:
        live = [
            *args,
            "--tooleval-model=fake-model",
            f"--tooleval-base-url={server.base_url}",
            "--tooleval-api-key=k",
            "--tooleval-prices=fake-model=1000000/0",
            "--tooleval-report=report.json",
            *workers,
        ]
        pytester.runpytest_subprocess(*live).assert_outcomes(passed=SAMPLES)
        first = json.loads((pytester.path / "report.json").read_text())["totals"]
        assert first["cost_usd"] == pytest.approx(first["prompt_tokens"]) and first["samples_from_cache"] == 0
        # the same run again, under a ceiling the first run's cost is far beyond: all of it comes from the cache
        result = pytester.runpytest_subprocess(
            *live,
            f"--tooleval-max-cost={first['cost_usd'] / 10}",
            "--tooleval-fail-under=overall=0.9",
            "--tooleval-cache=reuse",
        )
        asked = server.stats.requests
    assert asked == SAMPLES  # the first run's only
    result.assert_outcomes(passed=SAMPLES)
    assert result.ret == 0
    totals = json.loads((pytester.path / "report.json").read_text())["totals"]
    assert totals["cost_usd"] == 0 and totals["cost_ceiling"]["not_run"] == 0
    assert totals["samples_from_cache"] == SAMPLES
    assert totals["cached_cost_usd"] == pytest.approx(first["cost_usd"])
    assert totals["prompt_tokens"] == first["prompt_tokens"]  # the tokens the samples took are still reported
    # their latencies were the first run's: this run's latency figures leave them out
    assert first["latency_p50_s"] is not None and totals["latency_p50_s"] is None
    result.stdout.fnmatch_lines(
        [
            f"tooleval cost: * $0.00 asked, estimated at --tooleval-prices; {SAMPLES} samples "
            f"answered from the cache, ${first['cost_usd']:,.2f} at those prices, not counted"
        ]
    )
    markdown = render_markdown(json.loads((pytester.path / "report.json").read_text()))
    assert (
        f"estimated cost $0.00 of what was asked; {SAMPLES} samples answered from the cache "
        f"(${first['cost_usd']:,.2f} at those prices), not counted"
    ) in markdown


def test_a_cost_ceiling_needs_prices(pytester: pytest.Pytester, oracle_args: list[str]) -> None:
    result = pytester.runpytest_subprocess(*oracle_args, "--tooleval-max-cost=5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.stderr.lines if line.strip()] == [
        "ERROR: --tooleval-max-cost needs prices to estimate with: pass --tooleval-prices MODEL=INPUT/OUTPUT (USD "
        "per million tokens)"
    ]


def test_the_paths_a_run_and_the_merge_print_are_tidy(pytester: pytest.Pytester, oracle_args: list[str]) -> None:
    """Issue 41: `proj/../gate/cur.json` was printed as given, after the folder pytest started in."""
    import sys

    (pytester.path / "proj").mkdir()
    (pytester.path / "gate").mkdir()
    pytester.runpytest_subprocess(*oracle_args, "--tooleval-report=proj/../gate/base.json")
    result = pytester.runpytest_subprocess(
        *oracle_args,
        "--tooleval-report=proj/../gate/cur.json",
        "--tooleval-baseline=./proj/../gate/base.json",
        "--tooleval-html=proj//../gate/./cur.html",
    )
    result.stdout.fnmatch_lines(
        [f"Compared with {pytester.path / 'gate' / 'base.json'} (model oracle), paired by sample"]
    )
    written = [line for line in result.stdout.lines if line.startswith("tooleval report: ")]
    assert written == [f"tooleval report: {pytester.path / 'gate' / name}" for name in ("cur.json", "cur.html")]
    merged = pytester.run(
        sys.executable,
        "-m",
        "pytest_tooleval",
        "merge",
        "proj/../gate/cur.json",
        "--baseline",
        "proj/../gate/base.json",
        "-o",
        "proj/../gate/./full.json",
    )
    assert merged.ret == 0, merged.stderr.str()
    # a path given relative is said back relative, as given but tidy; the baseline as a run names it
    merged.stdout.fnmatch_lines(
        [f"Compared with {pytester.path / 'gate' / 'base.json'} (model oracle), paired by sample"]
    )
    assert merged.stdout.lines[-1] == "tooleval report: gate/full.json"
