"""The HTML report (pytest_tooleval/report/html.py): the page checked with the standard library's HTML parser,
then rendered by a real headless Chromium (a screenshot and the DOM it built).

The fixtures (html_fixtures/, how they were made: html_fixtures/README.md) are real reports the plugin wrote,
with `samples` trimmed: comparison.json compares two recorded runs (a failed gate, flips both ways, a model
output of hostile HTML); run.json is an oracle run in both protocols with a passed gate and no baseline;
yaml_comparison.json is a run of your own cases (the example file) compared with a baseline, with costs.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import struct
import subprocess
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pytest_tooleval.report import html as html_report
from pytest_tooleval.report.html import OUTPUT_LIMIT, render_html, write_html

FIXTURES = Path(__file__).parent / "html_fixtures"
HOSTILE = "<script>alert(1)</script></svg></div>"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
#: every element the page may hold: anything else in it came from the document unescaped
ALLOWED = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "header",
    "h1",
    "h2",
    "h3",
    "span",
    "dl",
    "div",
    "dt",
    "dd",
    "section",
    "p",
    "strong",
    "ul",
    "li",
    "nav",
    "a",
    "main",
    "svg",
    "g",
    "text",
    "rect",
    "path",
    "line",
    "circle",
    "table",
    "caption",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "pre",
    "code",
    "details",
    "summary",
    "footer",
}


def load(name: str) -> dict[str, Any]:
    run = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    assert isinstance(run, dict)
    return run


class Page(HTMLParser):
    """The page's elements, text and nesting, with every unbalanced or misnested tag noted as a problem."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.stack: list[tuple[str, dict[str, str]]] = []
        self.problems: list[str] = []
        self.texts: list[str] = []
        self.style = ""
        self.titled: list[dict[str, str]] = []  # attributes of the elements that hold a <title>
        self.doctype = ""
        self.feed(text)
        self.close()
        self.problems += [f"unclosed <{tag}>" for tag, _ in self.stack]

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        self.elements.append((tag, values))
        if tag == "title" and self.stack:
            self.titled.append(self.stack[-1][1])
        if tag not in VOID:
            self.stack.append((tag, values))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {name: value or "" for name, value in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1][0] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1][0] if self.stack else 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1][0] == "style":
            self.style += data
        else:
            self.texts.append(data)

    def handle_comment(self, data: str) -> None:
        self.problems.append(f"a comment: {data[:40]!r}")

    @property
    def text(self) -> str:
        return "".join(self.texts)

    def find(self, tag: str, **wanted: str) -> list[dict[str, str]]:
        """Attributes of the elements named `tag` whose attributes include `wanted` (class: one of its words)."""

        def matches(attrs: dict[str, str]) -> bool:
            return all(
                value in attrs.get(name, "").split() if name == "class" else attrs.get(name) == value
                for name, value in wanted.items()
            )

        return [attrs for name, attrs in self.elements if name == tag and matches(attrs)]


def bars(page: Page, series: str) -> dict[str, dict[str, str]]:
    return {attrs["data-figure"]: attrs for attrs in page.find("rect", **{"class": series}) if "bar" in attrs["class"]}


def expected_rows(report: dict[str, Any]) -> dict[str, float | None]:
    """Each figure's full name and its current value, straight from the summary blocks."""
    out: dict[str, float | None] = {}
    for suite, data in report["summary"].items():
        for block, value in data.items():
            for name, entry in value["categories"].items():
                out[f"{suite}.{block}.{name}"] = entry["accuracy"]
            for name, entry in value["groups"].items():
                out[f"{suite}.{block}.{name.lower()}"] = entry["value"]
            out[f"{suite}.{block}.overall"] = value["overall"]
    return out


@pytest.fixture(scope="module")
def compared() -> dict[str, Any]:
    return load("comparison")


@pytest.fixture(scope="module")
def page_compared(compared: dict[str, Any]) -> tuple[str, Page]:
    text = render_html(compared)
    return text, Page(text)


# --- the page, checked with html.parser --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["comparison", "run", "yaml_comparison"])
def test_the_page_parses_balanced_with_known_elements_only(name: str) -> None:
    text = render_html(load(name))
    page = Page(text)
    assert page.doctype == "DOCTYPE html"
    assert page.problems == []
    assert {tag for tag, _ in page.elements} <= ALLOWED
    assert [tag for tag, _ in page.elements].count("html") == 1
    assert text.encode("utf-8")  # no lone surrogate: the page is UTF-8


#: attributes through which a browser fetches, navigates or runs something
FETCHING = {
    "href",
    "src",
    "srcset",
    "action",
    "formaction",
    "poster",
    "data",
    "background",
    "cite",
    "ping",
    "manifest",
    "xlink:href",
    "style",
    "content",
}


def assert_self_contained(text: str, page: Page) -> None:
    """No script, nothing that fetches, links only within the page; an address only as text (or a data value)."""
    assert not page.find("script") and "<script" not in text.lower()
    held = 0
    for tag, attrs in page.elements:
        assert tag not in {"img", "link", "iframe", "object", "embed", "form", "base", "script"}, tag
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            if name in FETCHING and not (tag == "meta" and name == "content"):
                assert not re.search(r"[a-z]+:", value), (tag, name, value)
            if name == "href":
                assert value.startswith("#"), value
            held += value.count("://")
    assert page.style and "url(" not in page.style and "@import" not in page.style
    assert text.count("://") == page.text.count("://") + held  # nowhere else (not in a tag, not in the CSS)
    policy = page.find("meta", **{"http-equiv": "Content-Security-Policy"})
    assert policy and "default-src 'none'" in policy[0]["content"] and "://" not in policy[0]["content"]


@pytest.mark.parametrize("name", ["comparison", "run", "yaml_comparison"])
def test_no_script_and_nothing_from_outside(name: str) -> None:
    text = render_html(load(name))
    page = Page(text)
    assert_self_contained(text, page)
    assert all("://" not in value for _, attrs in page.elements for value in attrs.values())
    if name == "comparison":
        assert "https://evil.example/x" in page.text  # a model's output: text


def test_every_figure_has_bars_with_its_numbers(compared: dict[str, Any], page_compared: tuple[str, Page]) -> None:
    _, page = page_compared
    current, baseline = bars(page, "current"), bars(page, "baseline")
    expected = expected_rows(compared)
    assert set(current) == {name for name, value in expected.items() if value is not None}
    for name, value in expected.items():
        if value is not None:
            assert current[name]["data-current"] == f"{value:.3f}", name
    figures = {entry["figure"]: entry for entry in compared["comparison"]["figures"]}
    assert set(baseline) == set(figures) & set(current)
    for name, attrs in baseline.items():
        assert attrs["data-baseline"] == current[name]["data-baseline"] == f"{figures[name]['baseline']:.3f}"
        assert attrs["data-current"] == current[name]["data-current"]
    # read off the run that wrote the fixture (its terminal table and gate lines)
    assert current["acebench.en.normal_single_turn_single_function"]["data-current"] == "0.680"
    assert current["acebench.en.normal_single_turn_single_function"]["data-baseline"] == "0.920"
    assert current["acebench.en.overall"]["data-current"] == "0.911"
    assert current["acebench.en.overall"]["data-baseline"] == "0.934"
    assert current["acebench.en.fc.overall"]["data-current"] == "0.963"
    assert current["acebench.en.fc.overall"]["data-baseline"] == "0.986"
    assert current["acebench.en.normal_atom_bool"]["data-interval"] == "0.786 0.957"


def test_every_bar_has_hover_text(page_compared: tuple[str, Page]) -> None:
    _, page = page_compared
    titled = [attrs for attrs in page.titled if "bar" in attrs.get("class", "").split()]
    all_bars = [attrs for attrs in page.find("rect") if "bar" in attrs["class"].split()]
    assert len(titled) == len(all_bars) > 0


def test_whiskers_and_the_difference_panel(compared: dict[str, Any], page_compared: tuple[str, Page]) -> None:
    _, page = page_compared
    rows = len(expected_rows(compared))
    assert len(page.find("path", **{"class": "whisker"})) == rows  # every figure of the fixture has its interval
    markers = {attrs["data-figure"]: attrs for attrs in page.find("circle", **{"class": "diff"})}
    overall = next(entry for entry in compared["comparison"]["figures"] if entry["figure"] == "acebench.en.overall")
    assert markers["acebench.en.overall"]["data-difference"] == f"{overall['difference']:.3f}" == "-0.023"
    assert "regression" in markers["acebench.en.overall"]["class"].split()  # the gate called it one
    assert "regression" not in markers["acebench.en.normal_atom_bool"]["class"].split()  # not significant
    assert page.find("line", **{"class": "margin"})


def test_without_a_comparison_there_are_no_baseline_bars() -> None:
    report = load("run")
    page = Page(render_html(report))
    assert bars(page, "current") and not bars(page, "baseline")
    assert not page.find("circle", **{"class": "diff"})
    assert all("data-baseline" not in attrs for attrs in page.find("rect"))
    assert bars(page, "current")["acebench.en.fc.overall"]["data-current"] == "0.999"
    assert "pass → fail" not in page.text


def test_a_figure_without_an_interval_has_no_whisker() -> None:
    report = load("run")
    for data in report["summary"]["acebench"].values():
        for entry in (*data["categories"].values(), *data["groups"].values()):
            entry.pop("interval", None)
        data.pop("overall_interval", None)
    page = Page(render_html(report))
    assert bars(page, "current") and not page.find("path", **{"class": "whisker"})
    assert all("data-interval" not in attrs for attrs in bars(page, "current").values())


def test_a_category_with_nothing_scored_has_no_bar() -> None:
    report = load("run")
    report["summary"]["acebench"]["en"]["categories"]["normal_atom_bool"]["accuracy"] = None
    current = bars(Page(render_html(report)), "current")
    assert "acebench.en.normal_atom_bool" not in current and "acebench.en.normal_atom_enum" in current


def test_the_gate_is_worded_as_the_terminal_words_it(page_compared: tuple[str, Page]) -> None:
    _, page = page_compared
    lines = [attrs for attrs in page.find("li", **{"class": "fail"})]
    assert len(lines) == 5  # four overall regressions and one threshold missed
    printed = [  # as the run that wrote the fixture printed them
        "tooleval gate: acebench.en.overall: 0.934 -> 0.911, -0.023 [-0.038, -0.008], p=0.004 (Holm 0.024): drop > "
        "margin 0.010, significant: REGRESSION",
        "tooleval gate: acebench.en.normal_atom_bool: 1.000 -> 0.900, -0.100 [-0.214, -0.009], p=0.0625 "
        "(Holm 0.0625): drop > margin 0.050, not significant at 0.05 ok",
        "tooleval gate: acebench.en.special: 1.000 -> 0.967, -0.033 [-0.060, -0.007], p=0.011 (Holm 0.05): within "
        "margin 0.200 ok",
        "tooleval gate: acebench.en.atom MISSED: 0.923 < 0.950 (short by 0.027)",
        "tooleval gate: acebench.zh.overall = 0.958 >= 0.900 ok",
        "tooleval gate: error rate 0.000 <= 0.020 ok",
    ]
    for line in printed:
        assert line in page.text
    assert "FAILED" in page.find("section", id="gate")[0]["class"].upper()
    assert "tooleval gate: FAILED" in page.text
    passed = Page(render_html(load("run")))
    assert "tooleval gate: PASSED" in passed.text and passed.find("section", id="gate", **{"class": "passed"})
    assert "tooleval gate: acebench.en.fc.overall = 0.999 >= 0.900 ok" in passed.text
    assert "NOT GATED" in Page(render_html({**load("run"), "gate": None})).text


def test_the_header_names_the_run(page_compared: tuple[str, Page]) -> None:
    _, page = page_compared
    for text in ("replay:cur.jsonl", "official", "0.1.0", "acebench: both", "replay:base.jsonl"):
        assert text in page.text
    assert {attrs["data-figure"] for attrs in page.find("div", **{"class": "card"})} == {
        "acebench.en.overall",
        "acebench.zh.overall",
        "acebench.en.fc.overall",
        "acebench.zh.fc.overall",
    }


def test_every_flip_is_listed_with_its_output(compared: dict[str, Any], page_compared: tuple[str, Page]) -> None:
    _, page = page_compared
    flips = compared["comparison"]["flips"]
    assert len(page.find("tbody", **{"class": "flip"})) == len(flips["pass_to_fail"]) + len(flips["fail_to_pass"])
    for direction in ("pass_to_fail", "fail_to_pass"):
        assert page.find("section", id=direction)
        for flip in flips[direction]:
            assert f"{flip['suite']}: {flip['unit']}" in page.text
    dialogue = next(flip for flip in flips["pass_to_fail"] if flip["unit"] == "en.normal_multi_turn_user_switch/2")
    assert dialogue["samples"] == ["normal_multi_turn_user_switch_2_0", "normal_multi_turn_user_switch_2_1"]
    assert page.find("th", scope="rowgroup", rowspan="2")  # a dialogue: one row per step
    assert "not among this report's samples" not in page.text  # every flipped sample was matched


def test_a_flipped_sample_is_named_by_its_test_id_where_its_row_has_one(compared: dict[str, Any]) -> None:
    """What -k selects (issue 41); rows from before test ids were written keep their sample ids (above)."""
    report = copy.deepcopy(compared)
    for row in report["samples"]:
        if row["id"].startswith("normal_multi_turn_user_switch_2_") and not row.get("variant"):
            row["test_id"] = f"en-{row['id']}"
    text = section(render_html(report), "flips")
    assert "<td>en-normal_multi_turn_user_switch_2_0</td>" in text
    assert "<td>en-normal_multi_turn_user_switch_2_1</td>" in text


def test_hostile_output_is_inert_text_and_clipped(page_compared: tuple[str, Page]) -> None:
    text, page = page_compared
    assert HOSTILE in page.text  # shown, as text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;/svg&gt;&lt;/div&gt;&quot;quoted&quot; &#x27;single&#x27;" in text
    assert text.count("</svg>") == len(page.find("svg"))
    assert text.count("</div>") == len([tag for tag, _ in page.elements if tag == "div"])
    long = next(chunk for chunk in page.texts if "中文" in chunk)  # the 3,100-character output
    assert long.endswith("clipped: 3100 characters in all") and len(long) < OUTPUT_LIMIT + 60


def test_any_text_anywhere_stays_text(compared: dict[str, Any]) -> None:
    report = copy.deepcopy(compared)
    evil = HOSTILE + "\"' & <!-- x --> \x00\x1b\ud800\ufffe\U0010ffff https://evil.example/"
    block = report["summary"]["acebench"]["en"]
    block["categories"][evil] = block["categories"].pop("normal_atom_bool")
    block["groups"][evil + "G"] = block["groups"].pop("ATOM")
    block["partial"], block["partial_reasons"] = True, [evil]
    report["summary"]["acebench"][evil] = block
    report["summary"]["other" + evil] = {"subsets": {evil: evil}}
    report["fingerprint"]["model"] = evil
    report["fingerprint"][evil] = {evil: [evil]}
    report["totals"][evil] = evil
    report["storage_faults"] = [{"error": evil}]
    report["gate"]["notes"] = [evil]
    report["gate"]["checks"][0]["figure"] = evil
    report["comparison"]["baseline"]["path"] = evil
    report["comparison"]["unscored"] = [evil]
    report["comparison"]["fingerprint_differences"] = [{"key": evil, "baseline": evil, "current": [evil]}]
    flip = report["comparison"]["flips"]["pass_to_fail"][0]
    flip["unit"], flip["samples"] = evil, [evil, *flip["samples"]]
    row = next(row for row in report["samples"] if row["id"] == flip["samples"][1])
    row["output"], row["error"] = {evil: evil}, [evil]
    report["samples"].append({**row, "id": evil, "output": evil * 100, "error": evil})
    report["samples"].append({**row, "id": evil + "q", "quarantined": evil, "test_id": evil})
    text = render_html(report)
    page = Page(text)
    assert page.problems == []
    assert {tag for tag, _ in page.elements} <= ALLOWED and "<script" not in text
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\U0010ffff]", text)
    assert text.encode("utf-8")
    assert "\\x00\\x1b\\ud800\\ufffe\\U0010ffff" in page.text  # shown as escapes
    assert_self_contained(text, page)
    assert all(
        "evil" not in value
        for _, attrs in page.elements
        for name, value in attrs.items()
        if name not in {"data-figure", "aria-label", "id", "href"}
    )


def test_quarantined_samples_are_listed_apart() -> None:
    report = load("run")
    assert 'id="quarantine"' not in render_html(report)
    row = report["samples"][0]
    row.update(quarantined="flaky upstream answer <b>", test_id=f"test_acebench[{row['language']}-{row['id']}]")
    page = Page(render_html(report))
    assert page.find("section", id="quarantine") and "flaky upstream answer <b>" in page.text
    assert f"test_acebench[{row['language']}-{row['id']}]" in page.text


def test_an_interrupted_run_cut_answers_and_a_lowered_limit_are_said() -> None:
    report = load("run")
    page = Page(render_html(report))
    assert "Interrupted" not in page.text and "in-flight limit" not in page.text
    report["run"] = {"collected": 10, "interrupted": True, "signal": "SIGTERM", "not_run": ["a", "b", "c"]}
    report["totals"].update(
        timeouts=2,
        cut={"model": 4},
        concurrency=[
            {
                "endpoint": "model 'm' at localhost:8080/v1",
                "ceiling": 8,
                "limit": 3,
                "peak": 5,
                "timeouts": 2,
                "cuts": [{"at_s": 6.1, "from": 5, "to": 2, "reason": "requests timed out"}],
            }
        ],
    )
    page = Page(render_html(report))
    assert (
        "Interrupted (SIGTERM): 3 collected samples were not run; the figures are of the samples that finished."
    ) in page.text
    totals = section(render_html(report), "totals")
    assert "timed out" in totals and "answers cut at max_tokens" in totals and "model 4" in totals
    assert "3 at the end (ceiling 8); cut 5 to 2 at 6.1 s: requests timed out" in totals


def section(text: str, anchor: str) -> str:
    """The HTML of the page's section `anchor` (sections of the page do not nest in the ones looked at)."""
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', text, re.DOTALL)
    assert match is not None, anchor
    return match.group(1)


def test_the_fingerprint_is_a_definition_list(compared: dict[str, Any], page_compared: tuple[str, Page]) -> None:
    _, page = page_compared
    assert len(page.find("dl", **{"class": "definitions"})) == 1
    for key in compared["fingerprint"]:
        assert key in page.text
    assert '"data_manifest_sha256": "d2aab9dd' in page.text  # a nested value, pretty-printed JSON
    assert '"mode": "both"' in page.text


def test_the_totals_are_a_table_not_json(compared: dict[str, Any], page_compared: tuple[str, Page]) -> None:
    text, _ = page_compared
    totals = section(text, "totals")
    assert "<pre>" not in totals and "{" not in totals
    for name, value in (
        ("samples", "4,080"),
        ("scored", "4,079"),
        ("errors", "1"),
        ("wall time", f"{compared['totals']['wall_s']:.2f} s"),
    ):
        assert f'<tr><th scope="row">{name}</th><td>{value}</td></tr>' in totals
    yaml = load("yaml_comparison")
    totals = section(render_html(yaml), "totals")
    assert "<pre>" not in totals and "{" not in totals
    assert '<tr><th scope="row">estimated cost</th><td>$0.00</td></tr>' in totals
    assert f"<summary>by category: {len(yaml['totals']['categories'])}</summary>" in totals
    calendar = next(entry for entry in yaml["totals"]["categories"] if entry["category"] == "calendar")
    assert (
        f'<tr><th scope="row">yaml custom: calendar</th><td>3</td><td>{calendar["prompt_tokens"]:,}</td>'
        f"<td>{calendar['completion_tokens']}</td>"
    ) in totals
    assert f"<td>${calendar['cost_usd']:,.4f}</td></tr>" in totals


def test_your_cases_have_their_own_figures_headline_and_failed_cases() -> None:
    report = load("yaml_comparison")
    text = render_html(report)
    page = Page(text)
    assert "No OVERALL figure" not in page.text and not page.find("section", **{"class": "suite-json"})
    cards = page.find("div", **{"class": "card"})
    assert [attrs["data-figure"] for attrs in cards] == ["yaml.overall"]
    assert re.search(
        r'data-figure="yaml.overall"><div class="card-title">your cases \(\*\.tooleval\.yaml\)</div>'
        r'<div class="big">0\.500</div>',
        text,
    )
    current, baseline = bars(page, "current"), bars(page, "baseline")
    block = report["summary"]["yaml"]["blocks"][0]
    assert set(current) == set(baseline) == {"yaml.calendar.accuracy", "yaml.weather.accuracy", "yaml.overall"}
    for name, entry in block["categories"].items():
        low, high = entry["interval"]
        assert current[f"yaml.{name}.accuracy"]["data-interval"] == f"{low:.3f} {high:.3f}"
        assert current[f"yaml.{name}.accuracy"]["data-current"] == f"{entry['accuracy']:.3f}" == "0.500"
    assert baseline["yaml.overall"]["data-baseline"] == "1.000"
    assert (
        '<tr class="category" data-figure="yaml.calendar.accuracy"><th scope="row">calendar</th><td>2/3</td>'
        "<td>1</td><td>0.500</td><td>[0.095, 0.905]</td>"
    ) in text
    assert "<caption>failed cases: 2</caption>" in text
    assert "<tr><td>assistant-weather_today</td><td>weather</td><td>city: exact, unit: absent, schema</td></tr>" in text
    assert "<tr><td>assistant-book_a_flight_is_out_of_scope</td><td>calendar</td><td>answer: contains</td></tr>" in text
    assert "not among this report's samples" not in text  # each flipped case found with its output
    assert "Sure, done!" in section(text, "flips")


def test_rendering_is_pure(compared: dict[str, Any]) -> None:
    before = copy.deepcopy(compared)
    assert render_html(compared) == render_html(compared)
    assert compared == before


def test_a_bare_document_still_renders() -> None:
    page = Page(render_html({}))
    assert page.problems == [] and "NOT GATED" in page.text and "No summary in this report." in page.text


def test_write_html_is_atomic(tmp_path: Path, compared: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "new" / "folders" / "report.html"
    assert write_html(compared, target) == target
    assert target.read_text(encoding="utf-8") == render_html(compared)
    write_html(load("run"), str(target))  # replaces the page
    assert "<strong>PASSED</strong>" in target.read_text(encoding="utf-8")

    def broken(source: Any, destination: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("pytest_tooleval.report.html.os.replace", broken)
    with pytest.raises(OSError, match="disk full"):
        write_html(compared, target)
    assert "<strong>PASSED</strong>" in target.read_text(encoding="utf-8")  # the old page, whole
    assert sorted(path.name for path in target.parent.iterdir()) == ["report.html"]  # no temporary file left


# --- a real browser ----------------------------------------------------------------------------------------

CHROMIUM_TIMEOUT_S = 60


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


def _browser() -> str:
    """Debian's chromium (or chromium-browser); skipped without one, except under CI, where that fails."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is not None:
        return found
    if _in_ci():
        pytest.fail(
            "CI is set, but there is no chromium or chromium-browser binary on PATH: the browser test "
            "must run in CI (.ci/run installs Debian's chromium package)"
        )
    pytest.skip(
        "no chromium or chromium-browser binary on PATH (apt-get install chromium); under CI=true this "
        "test fails instead"
    )


def _chromium(binary: str, profile: Path, url: str, *options: str) -> subprocess.CompletedProcess[bytes]:
    command = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        *options,
        url,
    ]
    done = subprocess.run(command, capture_output=True, timeout=CHROMIUM_TIMEOUT_S, check=False)
    tail = done.stderr.decode("utf-8", "replace")[-2000:]
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n{tail}"
    return done


def png_pixels(data: bytes) -> tuple[int, int, Counter[bytes]]:
    """(width, height, colour counts) of an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    chunks, position = {}, 8
    stream = b""
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        body = data[position + 8 : position + 8 + length]
        assert zlib.crc32(kind + body) == struct.unpack(">I", data[position + 8 + length : position + 12 + length])[0]
        stream += body if kind == b"IDAT" else b""
        chunks[kind] = body
        position += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(stream)
    assert len(raw) == height * (1 + width * channels)
    colours: Counter[bytes] = Counter()
    for line in _unfiltered(raw, width * channels, height, channels):
        colours.update(line[i : i + 3] for i in range(0, len(line), channels))
    return width, height, colours


def _unfiltered(raw: bytes, stride: int, height: int, bpp: int) -> Iterator[bytes]:
    """The scanlines of a PNG's decompressed image data, each filter undone (PNG specification, filter type 0)."""
    prior = bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prior, strict=True))
        elif kind == 3:
            for i in range(stride):
                line[i] = (line[i] + (((line[i - bpp] if i >= bpp else 0) + prior[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a, b, c = (line[i - bpp], prior[i], prior[i - bpp]) if i >= bpp else (0, prior[i], 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        yield bytes(line)
        prior = line


def _colour(name: str) -> bytes:
    """A colour of the page's stylesheet (`--name:#rrggbb`) as RGB bytes."""
    match = re.search(rf"--{name}:#([0-9a-f]{{6}})", html_report.STYLE)
    assert match is not None
    return bytes.fromhex(match.group(1))


# record_property warns that xunit2 (the default junit_family) has no schema for testcase properties, and this
# project makes warnings errors; pytest writes the property into the XML under every family all the same
@pytest.mark.filterwarnings("ignore:record_property is incompatible with junit_family:pytest.PytestWarning")
def test_chromium_renders_the_page(
    tmp_path: Path, request: pytest.FixtureRequest, record_property: Callable[[str, object], None]
) -> None:
    binary = _browser()
    page = write_html(load("comparison"), tmp_path / "report.html")
    url = page.resolve().as_uri()
    shot = tmp_path / "report.png"
    started = time.monotonic()
    _chromium(binary, tmp_path / "profile", url, f"--screenshot={shot}", "--window-size=1280,2000")
    dom = _chromium(binary, tmp_path / "profile", url, "--dump-dom").stdout.decode("utf-8")
    record_property("chromium_seconds", round(time.monotonic() - started, 2))

    artifacts = request.config.rootpath / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    kept = artifacts / "html-report.png"
    shutil.copyfile(shot, kept)
    record_property("screenshot", str(kept))

    data = shot.read_bytes()
    assert len(data) > 10_000
    width, height, colours = png_pixels(data)
    assert (width, height) == (1280, 2000)
    assert len(colours) > 50, "a (nearly) single-colour screenshot: the page did not render"
    assert colours.most_common(1)[0][1] < 0.95 * width * height
    assert colours[_colour("current")] > 5_000  # this run's bars, drawn
    assert colours[_colour("baseline")] > 2_000  # the baseline's
    assert colours[_colour("bad")] > 1_000  # FAILED, the regressions

    # the DOM the browser built from the page: the bars with their numbers, the hostile output still text
    for figure, current, baseline in (
        ("acebench.en.overall", "0.911", "0.934"),
        ("acebench.en.fc.overall", "0.963", "0.986"),
        ("acebench.zh.normal_atom_bool", "0.900", "1.000"),
    ):
        assert re.search(
            rf'<rect class="bar current"[^>]* data-figure="{re.escape(figure)}" data-series="current" '
            rf'data-current="{current}" data-baseline="{baseline}"',
            dom,
        ), figure
    assert dom.count('class="bar current"') == render_html(load("comparison")).count('class="bar current"')
    assert ">0.911<" in dom and "tooleval gate: <strong>FAILED</strong>" in dom
    assert "<script" not in dom and "&lt;script&gt;alert(1)&lt;/script&gt;" in dom


@pytest.mark.filterwarnings("ignore:record_property is incompatible with junit_family:pytest.PytestWarning")
def test_chromium_renders_a_page_of_your_cases(
    tmp_path: Path, request: pytest.FixtureRequest, record_property: Callable[[str, object], None]
) -> None:
    binary = _browser()
    url = write_html(load("yaml_comparison"), tmp_path / "report.html").resolve().as_uri()
    shot = tmp_path / "report.png"
    _chromium(binary, tmp_path / "profile", url, f"--screenshot={shot}", "--window-size=1200,2000")
    dom = _chromium(binary, tmp_path / "profile", url, "--dump-dom").stdout.decode("utf-8")
    artifacts = request.config.rootpath / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    shutil.copyfile(shot, artifacts / "html-report-yaml.png")
    record_property("screenshot", str(artifacts / "html-report-yaml.png"))

    width, height, colours = png_pixels(shot.read_bytes())
    assert (width, height) == (1200, 2000) and len(colours) > 50
    assert colours[_colour("current")] > 2_000 and colours[_colour("baseline")] > 500  # the bars, drawn
    assert re.search(
        r'<div class="card"[^>]* data-figure="yaml.overall"><div class="card-title">your cases '
        r'\(\*\.tooleval\.yaml\)</div><div class="big">0\.500</div>',
        dom,
    )
    assert dom.count('class="bar current"') == 3
    assert "<td>assistant-weather_today</td><td>weather</td><td>city: exact, unit: absent, schema</td>" in dom


def _measured(text: str, script: str) -> str:
    """The page with its policy taken out (it forbids scripts) and `script` run at its end: how a test reads the
    layout the browser made, written by the script into `data-measured` on <body>."""
    policy = f'<meta http-equiv="Content-Security-Policy" content="{html_report.esc(html_report.POLICY)}">'
    assert policy in text
    return text.replace(policy, "").replace("</body>", f"<script>{script}</script></body>")


# each word of a column header that the browser broke across lines: one client rect per line it stands on
BROKEN_WORDS = """
const broken = [];
for (const th of document.querySelectorAll('thead th')) {
  for (const node of th.childNodes) {
    if (node.nodeType !== 3) continue;
    let at = 0;
    for (const part of node.textContent.split(/(\\s+)/)) {
      if (part.trim()) {
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + part.length);
        if (range.getClientRects().length > 1) broken.push(th.textContent + ': ' + part);
      }
      at += part.length;
    }
  }
}
document.body.setAttribute('data-measured', JSON.stringify(broken));
"""


def _measure(binary: str, tmp_path: Path, text: str, script: str, width: int) -> Any:
    page = tmp_path / f"measured-{width}.html"
    page.write_text(_measured(text, script), encoding="utf-8")
    dom = _chromium(
        binary, tmp_path / "profile", page.resolve().as_uri(), f"--window-size={width},2000", "--dump-dom"
    ).stdout.decode("utf-8")
    found = re.search(r'data-measured="([^"]*)"', dom)
    assert found is not None, dom[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


@pytest.mark.parametrize("width", [800, 1280])
def test_chromium_breaks_no_column_header_inside_a_word(tmp_path: Path, width: int) -> None:
    """Issue 41: the flip table's header read `outcom` / `e now` (a fixed-layout column of 6%, where a cell may
    break anywhere). A header may wrap between its words, never inside one."""
    binary = _browser()
    assert _measure(binary, tmp_path, render_html(load("comparison")), BROKEN_WORDS, width) == []


def _all_zero(report: dict[str, Any]) -> dict[str, Any]:
    """The run's ACEBench en block with every figure 0 (a model that answered nothing right)."""
    zero = copy.deepcopy(report)
    block = zero["summary"]["acebench"]["en"]
    zero["summary"] = {"acebench": {"en": block}}
    for entry in block["categories"].values():
        entry.update(accuracy=0.0, correct=0, interval=[0.0, 0.0])
    for entry in block["groups"].values():
        entry.update(value=0.0, interval=[0.0, 0.0])
    block.update(overall=0.0, overall_interval=[0.0, 0.0])
    return zero


@pytest.mark.filterwarnings("ignore:record_property is incompatible with junit_family:pytest.PytestWarning")
def test_chromium_draws_a_bar_of_zero_as_an_empty_bar(
    tmp_path: Path, request: pytest.FixtureRequest, record_property: Callable[[str, object], None]
) -> None:
    """Issue 41: a figure of 0 drew a bar 0 pixels wide, so a chart of zeros was its labels and nothing else.
    Every bar now stands on its empty track, 0 to 1: a 0 is an empty bar beside its label and value."""
    binary = _browser()
    report = _all_zero(load("run"))
    text = render_html(report)
    rows = len(Page(text).find("rect", **{"class": "current"}))
    assert rows == len(Page(text).find("rect", **{"class": "track"})) > 20
    url = write_html(report, tmp_path / "zero.html").resolve().as_uri()
    shot = tmp_path / "zero.png"
    _chromium(binary, tmp_path / "profile", url, f"--screenshot={shot}", "--window-size=1280,2000")
    artifacts = request.config.rootpath / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    shutil.copyfile(shot, artifacts / "html-report-zero.png")
    record_property("screenshot", str(artifacts / "html-report-zero.png"))
    _, _, colours = png_pixels(shot.read_bytes())
    track = html_report.ACC_W * 12  # one bar's track, its border aside
    visible = [rect for rect in Page(text).find("rect", **{"class": "track"})]
    on_screen = min(len(visible), 2000 // html_report.ROW_H)  # the rows a 2,000-pixel window shows at most
    assert colours[_colour("track")] > 0.5 * track * min(on_screen, 20), "the empty bars are not drawn"
    assert colours[_colour("current")] < 1_000  # and no bar is filled: every figure is 0
    dom = _chromium(binary, tmp_path / "profile", url, "--dump-dom").stdout.decode("utf-8")
    assert re.search(r'<text class="label"[^>]*>OVERALL</text><rect class="track"', dom)
    assert ">0.000<" in dom
