"""The ToolAlpaca summary from report rows (upstream's percentages over every instruction, toolalpaca-gpt4tools §4.5),
and the setup label that says whether a run is upstream-compatible."""

from __future__ import annotations

from typing import Any

from pytest_tooleval.report.summary import RunSummary
from pytest_tooleval.report.table import render_summary
from pytest_tooleval.settings.options import Settings, build_settings
from pytest_tooleval.suites import all_options
from pytest_tooleval.suites.toolalpaca.runner import RunSetup
from pytest_tooleval.suites.toolalpaca.summary import summarize_toolalpaca

SETUP = "judge gpt-4-0613 T=0.2, simulator gpt-3.5-turbo T=0.5, user gpt-3.5-turbo T=1, paths upstream"


def row(
    sample_id: str,
    outcome: str,
    *,
    size: int,
    process: str = "",
    response: str = "",
    judged: bool = True,
    deviations: list[str] | None = None,
) -> dict[str, Any]:
    subset = sample_id.split("-", 1)[0]
    base = {
        "suite": "toolalpaca",
        "id": sample_id,
        "category": subset,
        "language": "en",
        "index": 0,
        "category_size": size,
        "outcome": outcome,
    }
    if outcome == "error":  # a test error carries no verdict
        return base
    details = {"judged": judged, "process_correctness": process, "final_response_correctness": response, "setup": SETUP}
    if deviations:
        details["deviations"] = deviations
    return {**base, "details": details}


def test_errors_and_unjudged_episodes_count_in_the_denominator() -> None:
    rows = [
        row("simulated-A-0", "passed", size=4, process="Yes", response="Yes"),
        row("simulated-A-1", "failed", size=4, process="Yes", response="No"),
        row("simulated-A-2", "failed", size=4, judged=False),  # crashed or answered without a tool
        row("simulated-A-3", "error", size=4),  # the endpoint failed: upstream records an error instance too
    ]
    summary = summarize_toolalpaca(rows)
    assert summary.figures == {"simulated.procedure": 0.5, "simulated.response": 0.25, "simulated.overall": 0.25}
    assert summary.partial is False
    simulated = summary.data["subsets"]["simulated"]
    assert (simulated["num"], simulated["error_num"], simulated["infra_errors"], simulated["both"]) == (4, 2, 1, 1)
    assert summary.data["upstream_compatible"] is True and summary.data["setup"] == SETUP
    text = render_summary(RunSummary({"toolalpaca": summary}))
    assert text.splitlines()[0] == "ToolAlpaca (upstream-compatible setup)"
    assert text.splitlines()[3].split() == ["simulated", "4/4", "1", "1", "0", "50.0%", "25.0%", "25.0%"]


def test_undocumented_gold_gets_its_own_view_and_a_short_run_is_partial() -> None:
    rows = [row(f"real-AviationAPI-{index}", "passed", size=114, process="Yes", response="Yes") for index in (4, 5)]
    summary = summarize_toolalpaca(rows)
    assert summary.partial is True
    assert summary.data["subsets"]["real"]["num"] == 2
    assert summary.data["subsets"]["real-documented"]["num"] == 1  # AviationAPI #5 calls undocumented functions
    assert summary.data["subsets"]["real-documented"]["total"] == 108
    assert summary.figures["real-documented.overall"] == 1.0
    lines = render_summary(RunSummary({"toolalpaca": summary})).splitlines()
    assert lines[0].endswith(": partial run (not every instruction of a subset ran)")
    assert [line.split()[:2] for line in lines[3:5]] == [["real", "2/114"], ["real-documented", "1/108"]]


def test_unparsed_verdicts_and_deviations_are_labelled() -> None:
    rows = [
        row(
            "simulated-A-0",
            "failed",
            size=1,
            process="Mostly",
            response="Yes",
            deviations=["judge model gpt-4o (upstream gpt-4-0613)"],
        )
    ]
    summary = summarize_toolalpaca(rows)
    assert summary.data["subsets"]["simulated"]["process"]["unparsed"] == 1
    assert (summary.figures["simulated.response"], summary.figures["simulated.overall"]) == (1.0, 0.0)
    assert summary.data["upstream_compatible"] is False
    assert summary.tables[0].title == "ToolAlpaca (not upstream-compatible: judge model gpt-4o (upstream gpt-4-0613))"


def settings(**changed: Any) -> Settings:
    """Settings as resolve() builds them: every option at its default, `changed` given on the command line."""
    values = {option.name.replace("-", "_"): option.default for option in all_options()}
    sources = {option.name: "default" for option in all_options()}
    for name, value in changed.items():
        values[name] = value
        sources[name.replace("_", "-")] = "cli"
    return build_settings(values, sources, all_options())


def test_a_run_with_upstream_models_is_labelled_upstream_compatible() -> None:
    setup = RunSetup.from_settings(
        settings(model="my-model", simulator_model="gpt-3.5-turbo", toolalpaca_user_model="gpt-3.5-turbo")
    )
    assert setup.deviations == ()
    assert setup.agent_max_tokens == 1024  # the run's default max_tokens (1200) is ACEBench's
    assert setup.label == (
        "judge gpt-4-0613 T=0.2, simulator gpt-3.5-turbo T=0.5, user gpt-3.5-turbo T=1, paths upstream"
    )


def test_every_departure_from_upstream_is_named() -> None:
    setup = RunSetup.from_settings(
        settings(
            model="my-model",
            simulator_model="gpt-4o-mini",
            simulator_temperature=0.0,
            toolalpaca_user_model="gpt-3.5-turbo",
            judge_model="gpt-4o",
            max_tokens=512,
            temperature=0.7,
            scorer="fixed",
        )
    )
    assert setup.deviations == (
        "judge model gpt-4o (upstream gpt-4-0613)",
        "simulator model gpt-4o-mini (upstream gpt-3.5-turbo)",
        "simulator temperature 0 (upstream 0.5)",
        "agent temperature 0.7 (upstream greedy)",
        "agent max_tokens 512 (upstream 1024)",
        "relative API paths fixed (--tooleval-scorer fixed)",
    )
    assert setup.fix_paths and setup.agent_max_tokens == 512
    replayed = RunSetup.from_settings(settings(model="replay:episodes.jsonl", simulator_model="gpt-4o-mini"))
    assert replayed.deviations == () and replayed.label == "judge gpt-4-0613 T=0.2, paths upstream"
