"""The downloader against a real local HTTP server serving archives built here."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from file_server import FileServer
from pytest_tooleval.data.download import (
    Pin,
    canonical_sha256,
    ensure_downloaded,
    lift_member_constants,
    lift_string_constants,
)
from pytest_tooleval.errors import DataError


def build_archive(files: dict[str, bytes], top: str = "Upstream-abc123") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for relative, content in files.items():
            info = tarfile.TarInfo(f"{top}/{relative}")
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def python_constants(constants: dict[str, str]) -> bytes:
    """Upstream-like Python source: assignments plus code that must never run."""
    lines = ["import os", "os.system('touch SHOULD_NOT_EXIST')"]
    lines += [f"{name} = {text!r}" for name, text in constants.items()]
    return "\n".join(lines).encode()


@pytest.fixture
def archive_server() -> Iterator[FileServer]:
    with FileServer() as server:
        yield server


def small_pin(url: str, files: dict[str, bytes], constants: dict[str, dict[str, str]]) -> Pin:
    return Pin(
        "demo",
        url,
        {path: hashlib.sha256(content).hexdigest() for path, content in files.items()},
        {path: list(names) for path, names in constants.items()},
        canonical_sha256(constants),
    )


def test_download_verifies_lifts_prompts_and_caches(
    archive_server: FileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    data = {"data_all/data_en/data_x.json": b'{"id": "x_0"}\n'}
    constants = {"model_inference/prompt_en.py": {"GREETING_EN": "Hello {name}"}}
    module = python_constants(constants["model_inference/prompt_en.py"])
    archive = build_archive({**data, "model_inference/prompt_en.py": module, "README.md": b"not kept"})
    archive_server.routes["/a.tar.gz"] = archive
    pin = small_pin(archive_server.url("/a.tar.gz"), data, constants)

    folder = ensure_downloaded(pin, tmp_path / "cache")
    assert (folder / "data_all/data_en/data_x.json").read_bytes() == data["data_all/data_en/data_x.json"]
    assert json.loads((folder / "prompts.json").read_text()) == constants
    assert not (folder / "README.md").exists()
    assert not (tmp_path / "SHOULD_NOT_EXIST").exists()  # the upstream module was read, never run
    assert ensure_downloaded(pin, tmp_path / "cache") == folder
    assert archive_server.hits == 1  # the second call used the cache


def test_a_tampered_file_is_rejected_by_name(archive_server: FileServer, tmp_path: Path) -> None:
    data = {"data_all/data_en/data_x.json": b'{"id": "x_0"}\n'}
    constants = {"model_inference/prompt_en.py": {"GREETING_EN": "Hello"}}
    pin = small_pin(archive_server.url("/t.tar.gz"), data, constants)
    archive_server.routes["/t.tar.gz"] = build_archive(
        {
            "data_all/data_en/data_x.json": b'{"id": "x_1"}\n',
            "model_inference/prompt_en.py": python_constants(constants["model_inference/prompt_en.py"]),
        }
    )
    with pytest.raises(DataError, match=r"data_all/data_en/data_x.json has sha256 [0-9a-f]{64}, expected"):
        ensure_downloaded(pin, tmp_path / "cache")
    assert not any((tmp_path / "cache" / "demo").iterdir())  # nothing half-written is left behind


def test_changed_prompts_are_rejected(archive_server: FileServer, tmp_path: Path) -> None:
    constants = {"model_inference/prompt_en.py": {"GREETING_EN": "Hello"}}
    pin = small_pin(archive_server.url("/p.tar.gz"), {}, constants)
    archive_server.routes["/p.tar.gz"] = build_archive(
        {"model_inference/prompt_en.py": python_constants({"GREETING_EN": "Hello, changed"})}
    )
    with pytest.raises(DataError, match="lifted prompt constants do not match the pinned hash"):
        ensure_downloaded(pin, tmp_path / "cache")


def test_unreachable_url_says_what_to_do(tmp_path: Path) -> None:
    pin = Pin("demo", "http://127.0.0.1:9/nothing.tar.gz", {}, {})
    with pytest.raises(DataError, match=r"could not download .*Point --tooleval-data-dir"):
        ensure_downloaded(pin, tmp_path / "cache", timeout=2)


def test_not_an_archive(archive_server: FileServer, tmp_path: Path) -> None:
    archive_server.routes["/bad.tar.gz"] = b"<html>not found</html>"
    pin = Pin("demo", archive_server.url("/bad.tar.gz"), {}, {})
    with pytest.raises(DataError, match="not a readable archive"):
        ensure_downloaded(pin, tmp_path / "cache")


def test_lifting_ignores_non_string_and_reports_missing() -> None:
    source = "A = 'x'\nB = 3\nC = f'{A}'\nclass K:\n    D = 'inner'\n"
    assert lift_string_constants(source, ["A"], "m.py") == {"A": "x"}
    with pytest.raises(DataError, match=r"m\.py: prompt constants not found: B, D"):
        lift_string_constants(source, ["A", "B", "D"], "m.py")


@pytest.mark.parametrize(
    ("revision", "folder"),
    [("56dd66c", "acebench_56dd66c_dir"), ("e6db74b", "acebench_dir")],
    ids=["default-56dd66c", "e6db74b"],
)
def test_pinned_acebench_archive_end_to_end(
    archive_server: FileServer,
    revision: str,
    folder: str,
    tmp_path: Path,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    """The plugin downloads a revision's pinned ACEBench files (served locally), verifies them against that
    revision's pin and runs on them: the default revision without the option, e6db74b when it is named."""
    from pytest_tooleval.suites.acebench import data
    from pytest_tooleval.suites.acebench.revisions import DEFAULT

    source: Path = request.getfixturevalue(folder)
    pin = data.load_pin(revision)
    prompts = json.loads((source / "prompts.json").read_text())
    files = {relative: (source / relative).read_bytes() for relative in pin.files}
    files.update({path: python_constants(constants) for path, constants in prompts.items()})
    archive_server.routes["/acebench.tar.gz"] = build_archive(files, top=f"ACEBench-{revision}")
    monkeypatch.setenv("TOOLEVAL_ACEBENCH_URL", archive_server.url("/acebench.tar.gz"))
    monkeypatch.delenv("TOOLEVAL_DATA_DIR")
    pytester.makepyfile(
        test_acebench="""
import pytest

@pytest.mark.tooleval("acebench")
def test_acebench(tooleval_case):
    tooleval_case.check()
"""
    )
    cache = tmp_path / "cache"
    chosen = [] if revision == DEFAULT else ["--tooleval-acebench-revision", revision]
    common = [
        "--tooleval-model",
        "oracle",
        f"--tooleval-cache-dir={cache}",
        *chosen,
        "--tooleval-categories",
        "special_irrelevant",
        "-p",
        "no:cacheprovider",
    ]
    result = pytester.runpytest(*common, "--tooleval-report=report.json")
    result.assert_outcomes(passed=50)
    assert archive_server.hits == 1
    fingerprint = json.loads((pytester.path / "report.json").read_text())["fingerprint"]["acebench"]
    assert (fingerprint["revision"], fingerprint["data_verified"]) == (revision, True)
    rerun = pytester.runpytest(*common, "--tooleval-offline")
    rerun.assert_outcomes(passed=50)
    assert archive_server.hits == 1


def test_class_constants_are_lifted_from_class_bodies_and_constructors() -> None:
    source = (
        "import os\nos.system('touch SHOULD_NOT_EXIST')\n"
        "class Base:\n    description: str = ''\n"
        "class Ask(Base):\n    def __init__(self):\n        description = 'ask {{x}}'\n        super().__init__()\n"
        "class Keep:\n    label = 'kept'\n    def __init__(self):\n        self.note = 'noted'\n        other = 3\n"
    )
    selectors = {
        "Ask.__init__.description": "ask",
        "Keep.label": "label",
        "Keep.__init__.note": "note",
        "Base.description": "empty",
    }
    assert lift_member_constants(source, selectors, "tools.py") == {
        "ask": "ask {{x}}",
        "label": "kept",
        "note": "noted",
        "empty": "",
    }
    with pytest.raises(DataError, match=r"tools.py: class constants not found: Ask.description, Keep.__init__.other"):
        lift_member_constants(source, {"Ask.description": "a", "Keep.__init__.other": "b"}, "tools.py")


def test_a_pin_lifts_class_constants_into_prompts_json(
    archive_server: FileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    tools = (
        b"import subprocess\nsubprocess.run(['touch', 'SHOULD_NOT_EXIST'])\n"
        b"class AskTool:\n    def __init__(self):\n        description = 'Ask the user.'\n"
    )
    constants = {"agent/prompts.py": {"PREFIX": "Hi"}}
    archive_server.routes["/m.tar.gz"] = build_archive(
        {"agent/prompts.py": python_constants(constants["agent/prompts.py"]), "agent/tools.py": tools}
    )
    members = {"agent/tools.py": {"AskTool.__init__.description": "ask"}}
    pin = Pin(
        "demo",
        archive_server.url("/m.tar.gz"),
        {},
        {"agent/prompts.py": ["PREFIX"]},
        canonical_sha256(constants),
        member_constants=members,
        members_sha256=canonical_sha256({"agent/tools.py": {"ask": "Ask the user."}}),
    )
    folder = ensure_downloaded(pin, tmp_path / "cache")
    assert json.loads((folder / "prompts.json").read_text()) == {
        "agent/prompts.py": {"PREFIX": "Hi"},
        "agent/tools.py": {"ask": "Ask the user."},
    }
    assert not (tmp_path / "SHOULD_NOT_EXIST").exists()

    tampered = Pin(
        "demo2",
        pin.url,
        {},
        pin.prompt_constants,
        pin.prompts_sha256,
        member_constants=members,
        members_sha256=canonical_sha256({"agent/tools.py": {"ask": "something else"}}),
    )
    with pytest.raises(DataError, match="lifted class constants do not match the pinned hash"):
        ensure_downloaded(tampered, tmp_path / "cache")


def test_pinned_toolalpaca_archive_carries_the_helper_descriptions(
    archive_server: FileServer, tmp_path: Path, toolalpaca_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ToolAlpaca pin, served locally with the prepared files (upstream agent/tools.py among them): the
    download checks every file and the lifted helper descriptions against the pin, and the agent prompt renders."""
    from pytest_tooleval.suites.toolalpaca import data
    from pytest_tooleval.suites.toolalpaca.prompts import agent_tools

    pinned = json.loads(data.PIN_FILE.read_text())
    files = {relative: (toolalpaca_dir / relative).read_bytes() for relative in pinned["files"]}
    prompts = json.loads((toolalpaca_dir / "prompts.json").read_text())
    # the upstream files the prompt constants were lifted from (a download's prompts.json also holds the helper
    # descriptions lifted from agent/tools.py, which is among the pinned files already)
    files.update({path: python_constants(prompts[path]) for path in pinned["prompt_constants"]})
    archive_server.routes["/toolalpaca.tar.gz"] = build_archive(files, top="ToolAlpaca-1890699")
    monkeypatch.setenv("TOOLEVAL_TOOLALPACA_URL", archive_server.url("/toolalpaca.tar.gz"))
    folder = data.locate(None, tmp_path / "cache", offline=False)
    loaded = data.load_prompts(folder)
    assert loaded.helper_descriptions == data.load_prompts(toolalpaca_dir).helper_descriptions
    assert set(loaded.helper_descriptions) == {"getDetails", "retrievalDataFromFile"}
    case = next(case for case in data.load_subset(folder, "real") if case.api.uses_retrieval)
    assert [tool.name for tool in agent_tools(case.api, loaded)][:2] == ["getDetails", "retrievalDataFromFile"]
