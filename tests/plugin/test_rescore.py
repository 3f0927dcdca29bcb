"""`python -m pytest_tooleval rescore`: a report's answers scored under another ACEBench revision, asking nothing
again but, with --ask, the samples whose prompt changed; the result is a baseline a run of that revision compares
with, and a shard the merge reads."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI, ToolCalls, last_user_message
from upstream_data import recorded

# the two en samples whose prompt changed at 56dd66c (../shared/docs/DATA.md)
CHANGED = {"en-normal_atom_list_38", "en-normal_single_turn_single_function_0"}
# answered with prose around the call list: e6db74b deletes the whitespace and cannot decode it, 56dd66c decodes
# the first outermost [...] (acebench-revisions §2)
WRAPPED = {
    "normal_single_turn_single_function_1",
    "normal_single_turn_single_function_2",
    "normal_single_turn_single_function_3",
}
KEY = "sk-rescore-secret-0123456789"


@pytest.fixture
def acebench(
    pytester: pytest.Pytester, data_root: Path, acebench_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    """The thin ACEBench module; every test here starts from a run of e6db74b (acebench_dir) on the data root."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TOOLEVAL_API_KEY", "TOOLEVAL_BASE_URL", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    return pytester


def run(pytester: pytest.Pytester, data_root: Path, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        f"--tooleval-data-dir={data_root}",
        "-p",
        "no:cacheprovider",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        *args,
    )


def rescore(
    pytester: pytest.Pytester, data_root: Path, report: str, revision: str, *args: str, cache: str = "cache"
) -> pytest.RunResult:
    return pytester.run(
        sys.executable,
        "-m",
        "pytest_tooleval",
        "rescore",
        report,
        "--acebench-revision",
        revision,
        f"--data-dir={data_root}",
        f"--cache-dir={pytester.path / cache}",
        *args,
    )


def read(pytester: pytest.Pytester, name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((pytester.path / name).read_text(encoding="utf-8"))
    return document


def rows(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["test_id"]: row for row in document["samples"]}


def official(folder: Path) -> dict[tuple[str, str], bool]:
    path = recorded(folder, "conformance/real/official_verdicts_deepseek-chat.jsonl")
    return {(row["lang"], row["id"]): row["valid"] for row in map(json.loads, path.read_text().splitlines())}


def test_deepseek_chats_e6db74b_report_rescored_to_56dd66c_gets_that_revisions_official_verdicts(
    acebench: pytest.Pytester, data_root: Path, acebench_dir: Path, acebench_56dd66c_dir: Path
) -> None:
    replay = f"--tooleval-model=replay:{recorded(acebench_dir, 'conformance/real/deepseek-chat')}"
    verdicts = official(acebench_56dd66c_dir)
    old = run(
        acebench,
        data_root,
        replay,
        "--tooleval-acebench-revision=e6db74b",
        "-m",
        "not agent",
        "-n",
        "2",
        "--tooleval-report=old.json",
    )
    assert old.ret == 1  # failed samples
    before = rows(read(acebench, "old.json"))
    assert sum(row["valid"] for row in before.values()) == 753  # e6db74b's official count (DATA.md)

    result = rescore(acebench, data_root, "old.json", "56dd66c", "-o", "new.json")
    assert result.ret == 0, result.stderr.str()
    document = read(acebench, "new.json")
    ours = {(row["language"], row["id"]): row["valid"] for row in document["samples"]}
    assert len(ours) == len(verdicts) == 973
    assert sorted(key for key in verdicts if ours.get(key) != verdicts[key]) == []
    assert sum(ours.values()) == 792
    assert {row["revision"] for row in document["samples"]} == {"56dd66c"}
    assert document["fingerprint"]["acebench"]["revision"] == "56dd66c"
    assert document["summary"]["acebench"]["en"]["categories"]["normal_atom_object_deep"]["accuracy"] == 0.92
    record = document["rescore"]
    assert record["revisions"] == {"acebench": {"title": "ACEBench", "from": "e6db74b", "to": "56dd66c"}}
    assert (record["requests"], record["asked"], record["not_rescored"]) == (0, False, [])
    assert record["flipped"] == {"fail_to_pass": 39, "pass_to_fail": 0}
    assert {entry["test_id"] for entry in record["prompt_changed"]} == CHANGED
    flips = {flip["test_id"]: flip["reasons"] for flip in record["flips"]}
    assert flips["en-normal_atom_enum_9"] == ["new ground truth"]
    assert flips["en-normal_atom_object_deep_0"] == ["new decoder"]
    assert sum(reasons == ["new decoder"] for reasons in flips.values()) == 36
    assert rows(document)["en-normal_atom_list_38"]["rescore"] == {
        "prompt_changed": True,
        "asked": False,
        "answered": "e6db74b",
    }
    result.stdout.fnmatch_lines(
        [
            "tooleval rescore: old.json: ACEBench e6db74b -> 56dd66c, 973 of 973 samples rescored, 0 requests",
            "ACEBench: the difference is the benchmark's alone: the same answers scored under each revision",
            "en.normal_atom_object_deep * 0.600 * 0.920 * +0.320",
            "en.overall * 0.704 * 0.738 * +0.034",
            "flipped: 39 samples: 39 fail -> pass, 0 pass -> fail",
            "  en-normal_atom_enum_9: failed -> passed (new ground truth)",
            "  en-normal_atom_object_deep_0: failed -> passed (new decoder)",
            "prompt changed: 2 samples, scored on their answers to e6db74b's prompts (--ask asks them again): "
            "en-normal_atom_list_38, en-normal_single_turn_single_function_0",
            "tooleval report: new.json",
        ]
    )

    # a run under 56dd66c compares with it: the same answers give the same verdicts, made alike
    current = run(
        acebench,
        data_root,
        replay,
        "-m",
        "not agent",
        "-n",
        "2",
        "--tooleval-report=current.json",
        "--tooleval-baseline=new.json",
        "--tooleval-markdown=compared.md",
        "--tooleval-html=compared.html",
    )
    assert current.ret == 1
    comparison = read(acebench, "current.json")["comparison"]
    assert comparison["fingerprint_differences"] == []
    assert comparison["flips"] == {"pass_to_fail": [], "fail_to_pass": []}
    assert read(acebench, "current.json")["summary"] == document["summary"]
    current.stdout.fnmatch_lines(
        [
            "Compared with *new.json (model replay:*), paired by sample",
            "The baseline was rescored from ACEBench e6db74b to 56dd66c on ????-??-?? (python -m "
            "pytest_tooleval rescore); 2 of its samples answer the older prompt",
        ]
    )
    markdown = (acebench.path / "compared.md").read_text(encoding="utf-8")
    assert "**Note:** the baseline was rescored from ACEBench e6db74b to 56dd66c on " in markdown
    page = (acebench.path / "compared.html").read_text(encoding="utf-8")
    assert '<p class="note">Note: the baseline was rescored from ACEBench e6db74b to 56dd66c on ' in page


def _oracle_outputs(pytester: pytest.Pytester, data_root: Path, categories: str) -> dict[str, str]:
    """What a model that knows e6db74b's ground truth answers, by sample id (the oracle's report)."""
    oracle = run(
        pytester,
        data_root,
        "--tooleval-model=oracle",
        "--tooleval-acebench-revision=e6db74b",
        f"--tooleval-categories={categories}",
        "--tooleval-report=oracle.json",
    )
    assert oracle.ret in (0, 1)
    return {row["id"]: row["output"] for row in read(pytester, "oracle.json")["samples"] if not row.get("variant")}


def _questions(data_root: Path, categories: str) -> dict[str, str]:
    """question -> sample id, under both revisions (a changed question names its sample too)."""
    found = {}
    for folder in ("acebench", "acebench-56dd66c"):
        for category in categories.split(","):
            path = data_root / folder / "data_all" / "data_en" / f"data_{category}.json"
            found.update({record["question"]: record["id"] for record in map(json.loads, path.open())})
    return found


def _sample(body: dict[str, Any], questions: dict[str, str]) -> str:
    """The sample a request asks: its question is in the last user message (text), or that message is the last
    turn of its question (function calling)."""
    message = last_user_message(body)
    matches = [question for question in questions if question in message or message.strip() in question]
    return questions[max(matches, key=len)]


def test_a_rescored_baseline_compares_with_a_run_of_the_new_revision_without_asking_again(
    acebench: pytest.Pytester, data_root: Path
) -> None:
    categories = "normal_atom_list,normal_single_turn_single_function"
    outputs, questions = _oracle_outputs(acebench, data_root, categories), _questions(data_root, categories)

    def answer(body: dict[str, Any]) -> str:
        sample = _sample(body, questions)
        return f"Sure, here it is: {outputs[sample]} Let me know." if sample in WRAPPED else outputs[sample]

    with FakeOpenAI() as server:
        server.responder = answer
        model = (
            "--tooleval-model=fake-model",
            f"--tooleval-base-url={server.base_url}",
            f"--tooleval-api-key={KEY}",
            f"--tooleval-categories={categories}",
        )
        assert (
            run(
                acebench,
                data_root,
                *model,
                "--tooleval-acebench-revision=e6db74b",
                "--tooleval-report=old.json",
                "-n",
                "2",
            ).ret
            == 1
        )
        asked = server.stats.requests
        assert asked == 150

        # another revision's baseline is refused before anything is asked (controller.py)
        refused = run(acebench, data_root, *model, "--tooleval-baseline=old.json")
        assert refused.ret == pytest.ExitCode.USAGE_ERROR
        refused.stderr.fnmatch_lines(
            [
                "*rescore it first: python -m pytest_tooleval rescore *old.json "
                "--acebench-revision 56dd66c -o rescored.json*"
            ]
        )

        result = rescore(
            acebench, data_root, "old.json", "56dd66c", "-o", "rescored.json", f"--base-url={server.base_url}"
        )
        assert result.ret == 0, result.stderr.str()
        assert server.stats.requests == asked  # nothing asked again
        result.stdout.fnmatch_lines(
            [
                "tooleval rescore: old.json: ACEBench e6db74b -> 56dd66c, 150 of 150 samples rescored, 0 requests",
                "  en-normal_atom_list_34: passed -> failed (new ground truth)",
                "  en-normal_single_turn_single_function_1: failed -> passed (new decoder)",
                "prompt changed: 2 samples, scored on their answers to e6db74b's prompts (--ask asks them again): "
                "en-normal_atom_list_38, en-normal_single_turn_single_function_0",
            ]
        )
        flips = {flip["test_id"]: flip["reasons"] for flip in read(acebench, "rescored.json")["rescore"]["flips"]}
        assert {sample for sample in WRAPPED if flips.get(f"en-{sample}") == ["new decoder"]} == WRAPPED

        # the run of the new revision asks every sample; compared with the rescored baseline, made alike
        current = run(
            acebench,
            data_root,
            *model,
            "--tooleval-baseline=rescored.json",
            "--tooleval-report=new.json",
            "--tooleval-markdown=compared.md",
            "--tooleval-no-cache",
        )
        assert current.ret == 1
        assert server.stats.requests == asked + 150
        comparison = read(acebench, "new.json")["comparison"]
        assert comparison["fingerprint_differences"] == []
        assert comparison["baseline"]["rescored"]["revisions"]["acebench"] == {
            "title": "ACEBench",
            "from": "e6db74b",
            "to": "56dd66c",
        }
        # the same answers: nothing flips, the two changed prompts included (the same answer to each)
        assert comparison["flips"] == {"pass_to_fail": [], "fail_to_pass": []}
        current.stdout.fnmatch_lines(
            ["The baseline was rescored from ACEBench e6db74b to 56dd66c on * 2 of its samples answer the older prompt"]
        )
        assert "**Note:** the baseline was rescored from ACEBench e6db74b to 56dd66c" in (
            acebench.path / "compared.md"
        ).read_text(encoding="utf-8")

        # --ask: only the samples whose prompt changed, through the report's model; then from the cache
        before_asking = server.stats.requests
        result = rescore(
            acebench,
            data_root,
            "old.json",
            "56dd66c",
            "-o",
            "asked.json",
            "--ask",
            f"--base-url={server.base_url}",
            f"--api-key={KEY}",
            cache="ask-cache",
        )
        assert result.ret == 0, result.stderr.str()
        assert server.stats.requests == before_asking + 2
        result.stdout.fnmatch_lines(
            ["tooleval rescore: * 2 requests", "prompt changed: 2 samples, asked again under 56dd66c's prompts: *"]
        )
        again = rescore(
            acebench,
            data_root,
            "old.json",
            "56dd66c",
            "-o",
            "asked-again.json",
            "--ask",
            f"--base-url={server.base_url}",
            f"--api-key={KEY}",
            cache="ask-cache",
        )
        assert again.ret == 0 and server.stats.requests == before_asking + 2
    document = read(acebench, "asked.json")
    for test_id in CHANGED:
        assert rows(document)[test_id]["rescore"] == {"prompt_changed": True, "asked": True, "answered": "56dd66c"}
        assert rows(document)[test_id]["outcome"] == "passed"
    assert document["rescore"]["asked"] is True and document["rescore"]["requests"] == 2
    for name in ("asked.json", "rescored.json"):
        assert KEY not in (acebench.path / name).read_text(encoding="utf-8")
    assert KEY not in result.stdout.str() + result.stderr.str()


def test_function_calling_and_cut_answers_come_from_the_response_cache_or_are_named(
    acebench: pytest.Pytester, data_root: Path
) -> None:
    category = "normal_atom_list"
    outputs, questions = _oracle_outputs(acebench, data_root, category), _questions(data_root, category)
    truth = {
        record["id"]: record["ground_truth"]
        for record in map(
            json.loads,
            (data_root / "acebench" / "data_all" / "data_en" / "possible_answer" / f"data_{category}.json").open(),
        )
    }

    def answer(body: dict[str, Any]) -> str | ToolCalls:
        sample = _sample(body, questions)
        if body.get("tools"):  # function calling: e6db74b's ground truth as tool calls
            alternative = truth[sample][0] if isinstance(truth[sample], list) else truth[sample]
            names = [tool["function"]["name"] for tool in body["tools"]]
            return ToolCalls.of(
                *(
                    (next(tool for tool in names if tool == re.sub(r"[^a-zA-Z0-9_-]", "_", name)), arguments)
                    for name, arguments in alternative.items()
                )
            )
        # normal_atom_list_0's answer is longer than a report keeps (transport.OUTPUT_LIMIT)
        return outputs[sample] + " " * 25_000 if sample == f"{category}_0" else outputs[sample]

    with FakeOpenAI() as server:
        server.responder = answer
        assert run(
            acebench,
            data_root,
            "--tooleval-model=fake-model",
            f"--tooleval-base-url={server.base_url}",
            f"--tooleval-categories={category}",
            "--tooleval-mode=both",
            "--tooleval-acebench-revision=e6db74b",
            "--tooleval-report=old.json",
        ).ret in (0, 1)
        asked = server.stats.requests
        old = rows(read(acebench, "old.json"))
        assert old[f"en-{category}_0"]["output"].endswith(" more characters]")
        assert old[f"en-{category}_34-fc"]["outcome"] == "passed"

        cached = rescore(
            acebench, data_root, "old.json", "56dd66c", "-o", "cached.json", f"--base-url={server.base_url}"
        )
        assert cached.ret == 0, cached.stdout.str()
        assert server.stats.requests == asked
        document = read(acebench, "cached.json")
        assert document["rescore"]["not_rescored"] == []
        assert {flip["test_id"]: flip["reasons"] for flip in document["rescore"]["flips"]} == {
            f"en-{category}_34": ["new ground truth"],
            f"en-{category}_34-fc": ["new ground truth"],
        }
        assert rows(document)[f"en-{category}_0"]["outcome"] == "passed"

        # without the cache the answers the report does not keep whole are named, and keep their verdicts
        uncached = rescore(
            acebench,
            data_root,
            "old.json",
            "56dd66c",
            "-o",
            "uncached.json",
            f"--base-url={server.base_url}",
            cache="empty-cache",
        )
        assert uncached.ret == 1
        uncached.stdout.fnmatch_lines(
            [
                f"not rescored: en-{category}_0: its output was cut at 20,000 characters in the report, "
                "and the response cache does not hold it (its verdict is the report's)",
                f"not rescored: en-{category}_1-fc: a function-calling answer is scored from its tool calls, which the "
                "report does not keep, and the response cache does not hold it (its verdict is the report's)",
            ]
        )
        carried = read(acebench, "uncached.json")
        assert len(carried["rescore"]["not_rescored"]) == 51
        kept = rows(carried)[f"en-{category}_34-fc"]
        assert (kept["outcome"], kept["revision"]) == ("passed", "e6db74b")  # its old verdict, and says so
        assert kept["rescore"]["not_rescored"].startswith("a function-calling answer")
        assert carried["summary"]["acebench"]["en"]["revision"] == "56dd66c, e6db74b"  # the table names both

        # the cache is keyed by the endpoint: another one finds nothing, and says which the report's was
        elsewhere = rescore(acebench, data_root, "old.json", "56dd66c", "-o", "elsewhere.json", cache="cache")
        assert elsewhere.ret == 1
        elsewhere.stdout.fnmatch_lines(
            [
                f"not rescored: en-{category}_1-fc: * the report's model was served at "
                "127.0.0.1*, not api.openai.com/v1: pass --base-url with that endpoint *"
            ]
        )
        assert server.stats.requests == asked

    # the rescored report is a shard the merge reads
    merged = acebench.run(sys.executable, "-m", "pytest_tooleval", "merge", "cached.json", "-o", "merged.json")
    assert merged.ret == 0, merged.stderr.str()
    assert read(acebench, "merged.json")["summary"] == document["summary"]


def test_what_cannot_be_rescored_is_one_line_and_exit_status_2(acebench: pytest.Pytester, data_root: Path) -> None:
    assert (
        run(
            acebench,
            data_root,
            "--tooleval-model=oracle",
            "--tooleval-acebench-revision=e6db74b",
            "--tooleval-categories=normal_atom_bool",
            "--tooleval-report=old.json",
        ).ret
        == 0
    )
    (acebench.path / "other.json").write_text('{"results": []}', encoding="utf-8")
    text = (acebench.path / "old.json").read_text(encoding="utf-8")
    (acebench.path / "cut.json").write_text(text[: len(text) // 2], encoding="utf-8")
    cases = [
        (
            ("other.json", "56dd66c"),
            "rescore: other.json is not a pytest-tooleval report (schema "
            "'pytest-tooleval/report/1' with a fingerprint and samples): name a file a run "
            "wrote with --tooleval-report",
        ),
        (("cut.json", "56dd66c"), "rescore: cut.json is not a JSON report (*)"),
        (
            ("missing.json", "56dd66c"),
            "rescore: no such file missing.json: name a file a run wrote with --tooleval-report",
        ),
        (
            ("old.json", "5a5a5a5"),
            "rescore: --acebench-revision: '5a5a5a5' is not a pinned ACEBench revision; "
            "pinned: e6db74b (ACEBench/ACEBench, 2025-08-24), 56dd66c (chenchen0103/ACEBench, "
            "2025-10-29)",
        ),
        (
            ("old.json", "e6db74b"),
            "rescore: old.json is already scored against ACEBench e6db74b: nothing to rescore "
            "(--acebench-revision names the revision to rescore it to)",
        ),
    ]
    for (report, revision), expected in cases:
        result = rescore(acebench, data_root, report, revision, "-o", "new.json")
        assert result.ret == 2, (report, revision, result.stdout.str())
        assert len([line for line in result.errlines if line.strip()]) == 1
        result.stderr.fnmatch_lines([f"error: {expected}"])
        assert result.stdout.str().strip() == ""
    overwrite = rescore(acebench, data_root, "old.json", "56dd66c", "-o", "old.json")
    assert overwrite.ret == 2
    assert overwrite.errlines == [
        "error: rescore: -o names the report being rescored (old.json): write the "
        "rescored report to another file, e.g. -o rescored.json"
    ]
    # the data of a revision that is not there (one revision's folder, offline): which, and where to look
    result = acebench.run(
        sys.executable,
        "-m",
        "pytest_tooleval",
        "rescore",
        "old.json",
        "--acebench-revision",
        "56dd66c",
        f"--data-dir={data_root / 'acebench'}",
        "--offline",
        f"--cache-dir={acebench.path / 'cache'}",
        "-o",
        "new.json",
    )
    assert result.ret == 2
    result.stderr.fnmatch_lines(
        [
            f"error: rescore: ACEBench 56dd66c's data: {data_root / 'acebench'} holds ACEBench "
            "e6db74b, not 56dd66c: point --data-dir at ACEBench 56dd66c's data (a rescore reads "
            "both revisions': a --data-dir holding acebench/ (e6db74b) and acebench-56dd66c/ "
            "(56dd66c) has them)"
        ]
    )
    assert not (acebench.path / "new.json").exists()


def test_agent_rollouts_are_played_again_from_their_transcripts_and_graded_anew(
    acebench: pytest.Pytester, data_root: Path, acebench_dir: Path, acebench_56dd66c_dir: Path
) -> None:
    for folder in (acebench_dir, acebench_56dd66c_dir):  # the oracle's rollouts play each revision's gold
        recorded(folder, "agent_gold_sequences.json")
    assert (
        run(
            acebench,
            data_root,
            "--tooleval-model=oracle",
            "--tooleval-acebench-revision=e6db74b",
            "--tooleval-categories=agent_multi_step",
            "--tooleval-mode=both",
            "--tooleval-report=old.json",
        ).ret
        == 0
    )
    result = rescore(acebench, data_root, "old.json", "56dd66c", "-o", "new.json")
    assert result.ret == 0, result.stdout.str()
    document = read(acebench, "new.json")
    changed = {f"en-agent_multi_step_{index}{variant}" for index in (14, 15, 16, 17) for variant in ("", "-fc")}
    # e6db74b's gold rollouts reach e6db74b's end state; 56dd66c's ground truth wants a full stop in a message
    assert {flip["test_id"]: flip["reasons"] for flip in document["rescore"]["flips"]} == {
        test_id: ["new ground truth"] for test_id in changed
    }
    assert document["rescore"]["not_rescored"] == []
    assert {row["test_id"] for row in document["samples"] if row["outcome"] == "failed"} == changed
    assert all(row["details"]["state_diff"] for row in document["samples"] if row["test_id"] in changed)
    result.stdout.fnmatch_lines(["  en-agent_multi_step_14: passed -> failed (new ground truth)"])

    # a transcript that does not play back as it was recorded is not graded from it
    old = read(acebench, "old.json")
    row = next(row for row in old["samples"] if row["test_id"] == "en-agent_multi_step_0")
    execution = next(entry for entry in row["transcript"] if entry["sender"] == "execution")
    execution["message"] = [{"status": True, "message": "an observation the environment never gave"}]
    (acebench.path / "edited.json").write_text(json.dumps(old), encoding="utf-8")
    edited = rescore(acebench, data_root, "edited.json", "56dd66c", "-o", "edited-new.json")
    assert edited.ret == 1
    edited.stdout.fnmatch_lines(
        [
            "not rescored: en-agent_multi_step_0: its transcript, played again through the "
            "environments, does not come out the same, and the rollout its source gives now "
            "differs from the report's (its verdict is the report's)"
        ]
    )
    assert rows(read(acebench, "edited-new.json"))["en-agent_multi_step_0"]["revision"] == "e6db74b"
