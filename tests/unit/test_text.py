"""Text as messages show it (pytest_tooleval/text.py): the closest name to a misspelt one, and counted nouns."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_tooleval.report.gate import figure_hint
from pytest_tooleval.text import counted, did_you_mean, tidy_path


@pytest.mark.parametrize(
    ("name", "known", "hint"),
    [
        ("overal", ["overall", "normal"], "did you mean 'overall'?"),
        ("spcial_irrelevant", ["special_irrelevant", "special_incomplete"], "did you mean 'special_irrelevant'?"),
        ("weather", ["overall", "normal"], ""),  # nothing close: no guess
        ("x", [], ""),
    ],
)
def test_did_you_mean_names_the_closest_known_name(name: str, known: list[str], hint: str) -> None:
    assert did_you_mean(name, known) == hint


FIGURES = [
    "acebench.en.normal_atom_bool",
    "acebench.en.normal",
    "acebench.en.special",
    "acebench.en.overall",
    "bfcl.live.ast",
    "bfcl.live_simple.accuracy",
]


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("acebench.overal", " (did you mean 'acebench.en.overall'?)"),  # the issue's: no such short form, the full one
        ("overal", " (did you mean 'overall'?)"),  # a short name is offered as short
        ("en.specal", " (did you mean 'en.special'?)"),
        ("live.asst", " (did you mean 'live.ast'?)"),
        ("throughput", ""),
    ],
)
def test_a_gate_name_is_offered_the_closest_figure_in_the_form_it_was_written(name: str, hint: str) -> None:
    assert figure_hint(name, FIGURES) == hint


@pytest.mark.parametrize(
    ("n", "noun", "plural", "text"),
    [
        (0, "sample", None, "0 samples"),
        (1, "sample", None, "1 sample"),
        (2, "sample", None, "2 samples"),
        (1, "category", "categories", "1 category"),
        (1024, "category", "categories", "1,024 categories"),
    ],
)
def test_counted(n: int, noun: str, plural: str | None, text: str) -> None:
    assert counted(n, noun, plural) == text


def test_a_misspelt_category_names_the_closest_one(tmp_path: Path) -> None:
    from pytest_tooleval.errors import DataError, ToolevalUsageError
    from pytest_tooleval.suites.acebench.data import select
    from pytest_tooleval.suites.bfcl.data import load_samples

    with pytest.raises(
        ToolevalUsageError,
        match=r"^--tooleval-categories: unknown category 'normal_atom_bol' "
        r"\(did you mean 'normal_atom_bool'\?\); known: ",
    ):
        select(tmp_path, ("en",), ("normal_atom_bol",))
    with pytest.raises(
        DataError,
        match=r"^--tooleval-bfcl-categories: unknown live_simpel \(did you mean "
        r"'live_simple'\?\); the single-turn categories are ",
    ):
        load_samples(tmp_path, ["live_simpel"])


def _one_of_everything() -> list[tuple[str, str]]:
    """(what a renderer wrote with a count of 1, the words it must hold): issue 41's "1 samples"."""
    from pytest_tooleval.report.document import Totals
    from pytest_tooleval.report.markdown import _costs
    from pytest_tooleval.report.merge import _incomplete_line
    from pytest_tooleval.report.summary import RunSummary, SuiteSummary
    from pytest_tooleval.report.table import render_summary
    from pytest_tooleval.report.terminal import batch_line, cost_line
    from pytest_tooleval.suites.acebench.aggregate import SampleScore, summarize

    one = SuiteSummary("acebench", [], {}, False, {"total": 2, "scored": 1, "passed": 1, "failed": 0, "errors": 1})
    costs = "; ".join(
        _costs(Totals.model_validate({"requests": 1, "retries": 1, "samples_from_cache": 1, "cut": {"model": 1}}))
    )
    acebench = summarize([SampleScore("normal_atom_bool", "normal_atom_bool_0", None)])
    return [
        (render_summary(RunSummary({"acebench": one})).splitlines()[-1], "1 error"),
        (batch_line(1), "1 sample was not run"),
        (cost_line(1.0, 1.5, 1), "1 sample was not run"),
        (
            str(_incomplete_line([], ["en-x"], 1, 1)),
            "1 sample a shard collected never ran: en-x; 1 sample was not "
            "run for the cost ceiling; 1 sample was not run: their batch",
        ),
        (costs, "1 request (1 retry); 1 answer cut at max_tokens (model 1); 1 sample answered from the cache"),
        ("; ".join(acebench.reasons), "1 sample or dialogue has no verdict"),
    ]


def test_a_count_of_one_takes_the_singular() -> None:
    for text, words in _one_of_everything():
        assert words in text, text
        assert not any(
            plural in text for plural in ("1 samples", "1 errors", "1 requests", "1 retries", "1 answers")
        ), text


@pytest.mark.parametrize(
    ("given", "tidy"),
    [
        ("proj/../gate/cur.json", "gate/cur.json"),  # relative stays relative
        ("./gate//cur.json", "gate/cur.json"),
        ("/work/proj/../gate/cur.json", "/work/gate/cur.json"),
        ("gate/cur.json", "gate/cur.json"),
    ],
)
def test_tidy_path(given: str, tidy: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "proj").mkdir()
    assert tidy_path(given) == tidy


def test_tidy_path_never_names_another_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`link/..` is the folder above the link's target: dropping the two steps would name another file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "far" / "away").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "far" / "away")
    assert tidy_path("link/../cur.json") == "link/../cur.json"
    assert tidy_path(str(tmp_path / "link" / ".." / "cur.json")) == str(tmp_path / "link" / ".." / "cur.json")
