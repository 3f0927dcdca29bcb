"""BFCL v4 single-turn end to end: collection and selection, bfcl's result folders replayed and summed up as its
leaderboard sums them, the oracle's ceiling (docs/upstream/bfcl.md)."""

from __future__ import annotations

import hashlib
import json
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from benchmark_modules import benchmark_source
from bfcl_results import SINGLE_TURN_VERDICTS, pick_rows, write_result_folder
from fake_openai import FakeOpenAI, ToolCalls
from upstream_data import recorded

THIN_TEST = benchmark_source("bfcl")
EXPECTED = json.loads((Path(__file__).parents[1] / "unit" / "bfcl" / "leaderboard_expected.json").read_text())


@pytest.fixture
def base_args(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, bfcl_dir: Path) -> list[str]:
    for name in ("OPENAI_API_KEY", "TOOLEVAL_BFCL_CATEGORIES"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_bfcl=THIN_TEST)
    return [
        f"--tooleval-data-dir={bfcl_dir}",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "--tooleval-offline",
        "-p",
        "no:cacheprovider",
    ]


def test_every_sample_is_a_test_with_bfcls_own_id_and_marks(pytester: pytest.Pytester, base_args: list[str]) -> None:
    result = pytester.runpytest("--collect-only", "-q", "--tooleval-model", "oracle", *base_args)
    ids = [line for line in result.outlines if line.startswith("test_bfcl.py::")]
    assert len(ids) == 3641
    assert "test_bfcl.py::test_bfcl[simple_python_0]" in ids
    assert "test_bfcl.py::test_bfcl[live_simple_0-0-0]" in ids
    chosen = pytester.runpytest(
        "--collect-only", "-q", "--tooleval-model", "oracle", "-m", "live and not live_multiple", *base_args
    )
    picked = [line for line in chosen.outlines if line.startswith("test_bfcl.py::")]
    assert len(picked) == 258 + 16 + 24 + 884 + 16
    by_mark = pytester.runpytest("--collect-only", "-q", "--tooleval-model", "oracle", "-m", "simple_java", *base_args)
    assert len([line for line in by_mark.outlines if line.startswith("test_bfcl.py::")]) == 100
    by_name = pytester.runpytest("--collect-only", "-q", "--tooleval-model", "oracle", "-k", "simple_java", *base_args)
    assert len([line for line in by_name.outlines if line.startswith("test_bfcl.py::")]) == 100 + 50  # and javascript


def test_a_replayed_result_folder_sums_up_as_bfcls_leaderboard(
    pytester: pytest.Pytester, base_args: list[str], bfcl_dir: Path
) -> None:
    picked = pick_rows(recorded(bfcl_dir, SINGLE_TURN_VERDICTS))
    folder = write_result_folder(pytester.path / "result" / "gpt-4o-2024-11-20", picked)
    result = pytester.runpytest(
        "--tooleval-model",
        f"replay:{folder}",
        "--tooleval-report",
        "report.json",
        "-q",
        "--junitxml",
        "junit.xml",
        *base_args,
    )
    valid = sum(row["valid"] for rows in picked.values() for row in rows)
    result.assert_outcomes(passed=valid, failed=3641 - valid)
    report = json.loads((pytester.path / "report.json").read_text())
    summary = report["summary"]["bfcl"]["prompt"]
    # each category: the official verdicts' accuracy over the replayed rows, sample by sample
    assert {name: entry["accuracy"] for name, entry in summary["categories"].items()} == pytest.approx(
        EXPECTED["categories"], abs=1e-12
    )
    # the combined figures: what bfcl-eval's own leaderboard code computed from those accuracies
    groups = {name: entry["value"] for name, entry in summary["groups"].items()}
    expected = {name: value for name, value in EXPECTED["figures"].items() if not name.endswith(".overall")}
    assert groups == pytest.approx(expected, abs=1e-12)
    assert EXPECTED["figures"]["non_live.overall"] == EXPECTED["figures"]["non_live.ast"]
    assert EXPECTED["figures"]["live.overall"] == EXPECTED["figures"]["live.ast"]
    result.stdout.fnmatch_lines(["*BFCL v4 single-turn (prompt)*", "*live_simple*258/258*"])
    # the figures reach the JUnit XML too, as properties of the test suite, under their gate names
    suite_properties = {
        element.attrib["name"]: element.attrib["value"]
        for element in ElementTree.parse(pytester.path / "junit.xml").getroot().iter("property")
        if str(element.get("name")).startswith("tooleval.figure.")
    }
    assert float(suite_properties["tooleval.figure.bfcl.overall.single_turn"]) == pytest.approx(
        EXPECTED["figures"]["overall.single_turn"], abs=1e-6
    )
    assert float(suite_properties["tooleval.figure.bfcl.live_simple.accuracy"]) == pytest.approx(
        EXPECTED["categories"]["live_simple"], abs=1e-6
    )


#: the oracle's ceiling (docs/bfcl.md): samples whose first possible answer bfcl's own checker rejects however it
#: is written (Java arrays of strings, whose conversion keeps the quotes; maps it does not read back) or that the
#: data makes unsatisfiable (a required parameter the possible answers leave out, a parameter the function lacks)
ORACLE_FAILS = {"simple_java": 11, "live_simple": 2, "live_multiple": 3, "parallel_multiple": 1}


def test_the_oracle_scores_every_sample_up_to_its_stated_ceiling(
    pytester: pytest.Pytester, base_args: list[str]
) -> None:
    result = pytester.runpytest("--tooleval-model", "oracle", "--tooleval-report", "report.json", "-q", *base_args)
    result.assert_outcomes(passed=3641 - sum(ORACLE_FAILS.values()), failed=sum(ORACLE_FAILS.values()))
    report = json.loads((pytester.path / "report.json").read_text())
    failed: dict[str, int] = defaultdict(int)
    for sample in report["samples"]:
        if sample["outcome"] != "passed":
            failed[sample["category"]] += 1
    assert dict(failed) == ORACLE_FAILS
    result.stdout.fnmatch_lines(["bfcl: 3641/3641 scored, 3624 passed, 17 failed, 0 errors"])


def test_the_oracle_answers_java_and_javascript_as_function_calls_too(
    pytester: pytest.Pytester, base_args: list[str]
) -> None:
    """In function calling bfcl declares every Java and JavaScript parameter a string: the oracle sends texts,
    and its ceiling there is 9 simple_java samples (arrays and lists of strings, one map); 11 in prompt mode."""
    result = pytester.runpytest(
        "--tooleval-model",
        "oracle",
        "--tooleval-mode",
        "both",
        "-q",
        "-m",
        "simple_java or simple_javascript",
        *base_args,
    )
    result.assert_outcomes(passed=139 + 141, failed=11 + 9)  # prompt, then function calling
    result.stdout.fnmatch_lines(
        [
            "BFCL v4 single-turn (function calling)*",
            "simple_java *100/100 * 0 * 0.910 *",
            "simple_javascript *50/50 * 0 * 1.000 *",
        ]
    )
    # both protocols: a table of each figure in the two, and function calling's difference
    result.stdout.fnmatch_lines(
        [
            "BFCL v4 single-turn: prompt vs function calling",
            "figure * prompt * fc * fc - prompt",
            "*",
            "simple_java.accuracy * 0.890 * 0.910 * 0.020",
        ]
    )


# ------------------------------------------------------------------------------------------ bfcl's request bodies

DIGESTS = json.loads((Path(__file__).parents[1] / "unit" / "bfcl" / "request_digests.json").read_text())


def digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def test_a_live_run_sends_the_bodies_bfcls_own_handler_builds(
    pytester: pytest.Pytester, base_args: list[str], fake_openai: FakeOpenAI, bfcl_wheel: Path
) -> None:
    """Both protocols, bfcl's sampling, every sample bfcl's handler was run on offline (the digests of its
    bodies, tests/unit/bfcl/request_digests.json): what reaches the server is what bfcl would have sent."""
    wanted = {row["id"] for row in DIGESTS["samples"]}
    node_ids = [
        f"test_bfcl.py::test_bfcl[{sample_id}{suffix}]" for sample_id in sorted(wanted) for suffix in ("", "-fc")
    ]
    result = pytester.runpytest(
        *node_ids,
        "--tooleval-model",
        "fake-model",
        "--tooleval-base-url",
        fake_openai.base_url,
        "--tooleval-api-key",
        "sk-test-0123456789abcdef",
        "--tooleval-mode",
        "both",
        "--tooleval-sampling",
        "upstream",
        "--tooleval-max-tokens",
        "none",
        f"--tooleval-bfcl-wheel={bfcl_wheel}",
        "-q",
        *base_args,
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("error", 0) == 0 and outcomes.get("passed", 0) + outcomes.get("failed", 0) == 2 * len(wanted)
    bodies = [body for body in fake_openai.stats.bodies if body is not None]
    assert len(bodies) == 2 * len(wanted)
    by_digest = {(digest(body["messages"]), digest(body.get("tools"))): body for body in bodies}
    mismatched = []
    for row in DIGESTS["samples"]:
        body = by_digest.pop((row["messages"], row["tools"]), None)
        if body is None:
            mismatched.append(
                f"{row['id']} ({row['mode']}): no request had the messages and tools bfcl's handler builds for it"
            )
    shown = "\n".join(mismatched[:10])
    unmatched = [json.dumps(body, ensure_ascii=False)[:1500] for body in by_digest.values()][:3]
    assert not mismatched, f"{shown}\nrequests that matched none of bfcl's:\n" + "\n".join(unmatched)
    # bfcl's sampling: temperature 0.001 and no max_tokens; its `store: false` is left out (docs/bfcl.md)
    assert {(body["temperature"], "max_tokens" in body, "store" in body) for body in bodies} == {(0.001, False, False)}


def test_a_baseline_pairs_bfcl_samples_and_gates_a_combined_figure(
    pytester: pytest.Pytester, base_args: list[str], bfcl_dir: Path
) -> None:
    """The oracle's live_simple run as the baseline; 20 answers taken away: live.ast drops by 20/258, each flip
    is named by its sample, and the drop is a significant regression of the combined figure."""
    only = ["-m", "live_simple", "-q", *base_args]
    baseline = pytester.runpytest("--tooleval-model", "oracle", "--tooleval-report", "baseline.json", *only)
    assert baseline.parseoutcomes()["passed"] == 256
    oracle = {row["id"]: row for row in json.loads((pytester.path / "baseline.json").read_text())["samples"]}
    passing = sorted(sample_id for sample_id, row in oracle.items() if row["outcome"] == "passed")
    broken = set(passing[:20])
    folder = pytester.path / "result" / "live"
    folder.mkdir(parents=True)
    (folder / "BFCL_v4_live_simple_result.json").write_text(
        "".join(
            json.dumps(
                {"id": sample_id, "result": "I cannot help with that." if sample_id in broken else row["output"]}
            )
            + "\n"
            for sample_id, row in oracle.items()
        ),
        encoding="utf-8",
    )
    result = pytester.runpytest(
        "--tooleval-model",
        f"replay:{folder.parent}",
        "--tooleval-baseline=baseline.json",
        "--tooleval-max-regression=live.ast=0.02",
        "--tooleval-report",
        "current.json",
        *only,
    )
    assert result.ret == 1
    comparison = json.loads((pytester.path / "current.json").read_text())["comparison"]
    flipped = {flip["unit"] for flip in comparison["flips"]["pass_to_fail"]}
    assert flipped == {f"live_simple.accuracy/{sample_id}" for sample_id in broken}
    # each printed as its test id (bfcl's own sample id), what -k selects (issue 41)
    assert {tuple(flip["test_ids"]) for flip in comparison["flips"]["pass_to_fail"]} == {
        (sample_id,) for sample_id in broken
    }
    first = min(broken, key=lambda sample_id: [int(part) for part in sample_id.split("_")[-1].split("-")])
    result.stdout.fnmatch_lines([f"flipped pass -> fail: 20: {first}, *"])
    result.stdout.fnmatch_lines(["tooleval gate: bfcl.live.ast: 0.992 -> 0.915, *significant: REGRESSION"])


OWNERS_CONFTEST = """
import json
from pytest_tooleval.run.session import SESSION_KEY

def pytest_collection_finish(session):
    run = session.config.stash[SESSION_KEY].run
    owners = {}
    for test_id in ("simple_python_extra-weather_today", "simple_python_0", "simple_python_0-fc"):
        case = run.case_for_test_id(test_id)
        owners[test_id] = None if case is None else [case.suite, case.id]
    with open("owners.json", "w") as handle:
        json.dump(owners, handle)
"""


def test_a_yaml_file_named_like_a_bfcl_category_keeps_its_cases(
    pytester: pytest.Pytester, base_args: list[str]
) -> None:
    """Under xdist the controller finds a test id's case by the suites' id prefixes: a yaml file whose name starts
    like a BFCL category's ids (`simple_python_`) is matched by both, and each is asked in turn."""
    example = Path(__file__).resolve().parents[2] / "examples" / "assistant.tooleval.yaml"
    text = example.read_text(encoding="utf-8")
    (pytester.path / "simple_python_extra.tooleval.yaml").write_text(text, encoding="utf-8")
    pytester.makeconftest(OWNERS_CONFTEST)
    result = pytester.runpytest("--collect-only", "-q", "--tooleval-model", "oracle", *base_args)
    assert "simple_python_extra.tooleval.yaml::test_case[simple_python_extra-weather_today]" in result.outlines
    owners = json.loads((pytester.path / "owners.json").read_text())
    assert owners == {
        "simple_python_extra-weather_today": ["yaml", "simple_python_extra-weather_today"],
        "simple_python_0": ["bfcl", "simple_python_0"],
        "simple_python_0-fc": None,
    }  # prompt mode: no fc copy


def test_live_answers_in_both_protocols_get_bfcls_verdicts(
    pytester: pytest.Pytester, base_args: list[str], fake_openai: FakeOpenAI, bfcl_dir: Path, bfcl_wheel: Path
) -> None:
    """The fake server answers each question with a conformance output: text in prompt mode, native tool calls
    (as the API sends them) in function calling. Each test's outcome is the verdict bfcl-eval gave that output."""
    wanted = {row["id"] for row in DIGESTS["samples"]}
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    with recorded(bfcl_dir, "conformance/official_verdicts.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["id"] in wanted and row["variant"] == 2 - (zlib.crc32(row["id"].encode()) % 2):
                rows.setdefault((row["id"], row["mode"]), row)
    questions: dict[str, str] = {}
    for category in {row["category"] for row in DIGESTS["samples"]}:
        for line in (bfcl_dir / f"BFCL_v4_{category}.json").read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry["id"] in wanted:
                questions[entry["question"][0][-1]["content"]] = entry["id"]

    def answer(body: dict[str, Any]) -> Any:
        sample_id = questions[body["messages"][-1]["content"]]
        if not body.get("tools"):
            return rows[(sample_id, "prompt")]["output"]
        recorded = rows.get((sample_id, "fc"))
        if recorded is None or not isinstance(recorded["output"], list):
            return "No function fits." if recorded is None else str(recorded["output"])
        return ToolCalls.of(*((name, arguments) for call in recorded["output"] for name, arguments in call.items()))

    fake_openai.responder = answer
    node_ids = [
        f"test_bfcl.py::test_bfcl[{sample_id}{suffix}]" for sample_id in sorted(wanted) for suffix in ("", "-fc")
    ]
    result = pytester.runpytest(
        *node_ids,
        "--tooleval-model",
        "fake-model",
        "--tooleval-base-url",
        fake_openai.base_url,
        "--tooleval-api-key",
        "sk-test-0123456789abcdef",
        "--tooleval-mode",
        "both",
        f"--tooleval-bfcl-wheel={bfcl_wheel}",
        "--tooleval-report",
        "report.json",
        "-q",
        *base_args,
    )
    samples = json.loads((pytester.path / "report.json").read_text())["samples"]
    got = {(sample["id"], "fc" if sample.get("variant") else "prompt"): sample["outcome"] for sample in samples}
    expected = {key: "passed" if row["valid"] else "failed" for key, row in rows.items()}
    assert len(got) == 2 * len(wanted) and result.ret == 1  # some outputs are officially wrong
    # every sample in both protocols has a conformance output, but Java and JavaScript in fc (the set has none)
    java_js = {row["id"] for row in DIGESTS["samples"] if row["category"] in ("simple_java", "simple_javascript")}
    assert set(expected) == {
        (sample_id, mode)
        for sample_id in wanted
        for mode in ("prompt", "fc")
        if mode == "prompt" or sample_id not in java_js
    }
    assert {key: got.get(key) for key in expected} == expected


def test_a_live_run_without_the_request_texts_stops_before_asking(
    pytester: pytest.Pytester, base_args: list[str], fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Offline, with the data but neither the wheel nor its texts in the cache: one line naming both fixes."""
    monkeypatch.delenv("TOOLEVAL_BFCL_WHEEL", raising=False)
    result = pytester.runpytest(
        "--tooleval-model",
        "fake-model",
        "--tooleval-base-url",
        fake_openai.base_url,
        "--tooleval-api-key",
        "sk-test-0123456789abcdef",
        "-m",
        "live_relevance",
        *base_args,
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    error = [line for line in result.stderr.lines if line.strip()]
    assert len(error) == 1 and "--tooleval-bfcl-wheel" in error[0] and "--tooleval-offline" in error[0], error
    assert fake_openai.stats.requests == 0


def test_bfcls_result_folder_of_several_models_is_refused(
    pytester: pytest.Pytester, base_args: list[str], bfcl_dir: Path
) -> None:
    picked = {"live_relevance": pick_rows(recorded(bfcl_dir, SINGLE_TURN_VERDICTS))["live_relevance"]}
    for model in ("model-a", "model-b"):
        write_result_folder(pytester.path / "result" / model, picked)
    result = pytester.runpytest(
        "--tooleval-model", f"replay:{pytester.path / 'result'}", "-m", "live_relevance", *base_args
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.stderr.lines if line.strip()] == [
        f"ERROR: --tooleval-model replay:{pytester.path / 'result'}: the results of several models (model-a, "
        "model-b); give the folder of one"
    ]
