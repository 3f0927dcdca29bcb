"""tooleval.yaml beside the ini file: every option as YAML, checked against a JSON Schema of the option table;
CLI > TOOLEVAL_* > tooleval.yaml > ini > default."""

from __future__ import annotations

import pytest

from benchmark_modules import benchmark_source
from mini_acebench import CATEGORIES, SAMPLES, write_mini_acebench


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("TOOLEVAL_DATA_DIR", raising=False)
    write_mini_acebench(pytester.path / "data")
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    pytester.makeini("[pytest]\ntooleval_scorer = fixed\ntooleval_max_error_rate = 0.5\n")
    return pytester


def test_the_file_sets_options_between_the_environment_and_the_ini_file(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project.path / "tooleval.yaml").write_text(
        f"model: oracle\ndata-dir: data\ndata-unverified: true\ncache_dir: cache\n"
        f"categories: [{', '.join(CATEGORIES.split(','))}]\n"
        "fail-under: {overall: 0.9}\n"
        "prices: {gpt-4o: [2.5, 10]}\nmax-error-rate: 0.1\ntemperature: 0.3\n"
    )
    monkeypatch.setenv("TOOLEVAL_TEMPERATURE", "0.2")
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "--tooleval-max-error-rate=0.05")
    result.assert_outcomes(passed=SAMPLES)
    header = next(line for line in result.stdout.lines if line.startswith("tooleval: model=oracle"))
    # a relative path in the file is the file's folder's; the gate's thresholds and prices are mappings in YAML
    for shown in (
        "model=oracle (file)",
        f"categories={CATEGORIES} (file)",
        "data-dir=*/data (file)",
        "fail-under=overall=0.9 (file)",
        "max-error-rate=0.05 (cli)",
        "temperature=0.2 (env)",
        "scorer=fixed (ini)",
    ):
        assert __import__("fnmatch").fnmatch(header, f"*{shown}*"), (shown, header)
    result.stdout.fnmatch_lines(["tooleval gate: acebench.en.overall = 1.000 >= 0.900 ok"])


def test_the_file_may_be_spelt_tooleval_yml(project: pytest.Pytester) -> None:
    (project.path / "tooleval.yml").write_text(
        f"model: oracle\ndata-dir: data\ndata-unverified: true\ncategories: [{CATEGORIES}]\ncache-dir: cache\n"
    )
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=SAMPLES)
    result.stdout.fnmatch_lines(["tooleval: model=oracle (file)*"])
    (project.path / "tooleval.yaml").write_text("model: oracle\n")  # which one is meant? neither is guessed
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.stderr.lines if line.strip()] == [
        f"ERROR: {project.path / 'tooleval.yaml'} and {project.path / 'tooleval.yml'} are both there: keep one (the "
        "options file is read from one place)"
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "model: oracle\nfail_undr: 3\n",
            "*tooleval.yaml: unknown key 'fail_undr' (did you mean 'fail_under'?): the "
            "keys are the options without --tooleval- (e.g. model, fail-under, categories)",
        ),
        (
            "model: oracle\nflavour: x\n",
            "*tooleval.yaml: unknown key 'flavour': the keys are the options without "
            "--tooleval- (e.g. model, fail-under, categories)",
        ),
        (
            "model: oracle\ncategories: {a: 1}\n",
            "*tooleval.yaml: categories: {'a': 1} is not of type 'array', 'string'",
        ),
        (
            "model: oracle\nmax-error-rate: lots\n",
            "ERROR: max-error-rate: lots in */tooleval.yaml: 'lots' is not a number*",
        ),
        ("model: [oracle\n", "*tooleval.yaml: not YAML (line 2)*"),
        (
            "model: oracle\nfail-under: {overall: 0.9}\nmodel: gpt-4o\n",
            "*tooleval.yaml (line 3): the key 'model' is given twice: keep one",
        ),
        (
            "model: oracle\nfail-under: {overall: 0.9, overall: 0.5}\n",
            "*tooleval.yaml (line 2): the key 'overall' is given twice: keep one",
        ),
        (
            "model: oracle\nfail-under: {overall: 0.9}\nfail_under: {overall: 0.5}\n",
            "*tooleval.yaml: fail-under is given twice (as 'fail-under' and 'fail_under'): keep one",
        ),
    ],
)
def test_a_bad_file_is_one_line_naming_it(project: pytest.Pytester, text: str, message: str) -> None:
    (project.path / "tooleval.yaml").write_text(text)
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    [line] = [line for line in result.stderr.lines if line.strip()]
    assert __import__("fnmatch").fnmatch(line, message), line


def test_the_published_schema_is_the_option_table_and_takes_the_readme_example() -> None:
    import json
    import re
    import subprocess
    import sys
    from pathlib import Path

    import jsonschema
    import yaml

    from pytest_tooleval.settings.file import PUBLISHED_SCHEMA, schema
    from pytest_tooleval.suites import all_options

    published = json.loads(PUBLISHED_SCHEMA.read_text(encoding="utf-8"))
    assert published == schema(all_options()), "regenerate: python -m pytest_tooleval schema > " + str(PUBLISHED_SCHEMA)
    printed = subprocess.run(
        [sys.executable, "-m", "pytest_tooleval", "schema"], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(printed) == published
    jsonschema.Draft7Validator.check_schema(published)
    readme = (Path(__file__).parents[2] / "docs" / "options.md").read_text(encoding="utf-8")
    example = re.search(r"```yaml\n(model: gpt-4o\n.*?)```", readme, re.DOTALL)
    assert example is not None
    jsonschema.validate(yaml.safe_load(example.group(1)), published)
    assert published["properties"]["fail-under"]["description"].startswith("--tooleval-fail-under: ")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"fail_undr": 1}, published)
