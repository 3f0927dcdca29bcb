"""The pinned bfcl-eval wheel: download, verification and the lifted request texts, against a real local HTTP
server serving wheels built here (bfcl §1)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import socket
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from file_server import FileServer
from pytest_tooleval.errors import DataError, ToolevalUsageError
from pytest_tooleval.suites.bfcl.multi_turn.tables import SELECTORS, SOURCE_DIR, lift_tables
from pytest_tooleval.suites.bfcl.prices import CONSTANTS_FILE, MODELS_FILE, lift_prices
from pytest_tooleval.suites.bfcl.templates import (
    HINTS_FILE,
    PROMPTS_FILE,
    TOOLS_FILE,
    TYPES_FILE,
    lift_templates,
)
from pytest_tooleval.suites.bfcl.upstream import (
    WHEEL_ENV,
    WheelPin,
    data_folder,
    ensure_data,
    given_wheel,
    load_format_prompts,
    load_memory_prompts,
    load_pin,
    load_prices,
    load_tables,
    load_templates,
    load_web_search,
    tables_file,
    templates_file,
)

# Source files in the shape bfcl's are read in, with texts of our own, and a line that must never run.
SOURCES = {
    PROMPTS_FILE: """import os
os.system("touch SHOULD_NOT_EXIST")
OUTPUT_FORMAT_MAPPING = {"python": "[f(a=1)]", "json": "{}", "verbose_xml": "<f/>", "concise_xml": "<f>"}
PARAM_TYPE_MAPPING = {"python": "", "json": "", "verbose_xml": "Types.", "concise_xml": "Types."}
PROMPT_STYLE_TEMPLATES = {"classic": {
    "persona": "P.", "task": "T.", "tool_call_no_tag": "Use {output_format}.{param_types}",
    "tool_call_with_tag": "<{output_format}>", "multiturn_behavior": "M.",
    "available_tools": "Docs ({format}):\\n{functions}\\n"}, "experimental": {
    "persona": "Q.", "task": "T.", "tool_call_no_tag": "Use {output_format}.{param_types}",
    "tool_call_with_tag": "<{output_format}>", "multiturn_behavior": "M.",
    "available_tools": "Docs ({format}):\\n{functions}\\n"}}
_LAYOUT = "{persona} {task}|{tool_call_format}|{multiturn_behavior}|{available_tools}"
PROMPT_TEMPLATE_MAPPING = {"plaintext": _LAYOUT, "markdown": "# " + _LAYOUT}
DEFAULT_SYSTEM_PROMPT_FORMAT = "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=classic"
DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC = ("More tools.")
DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING = "{functions}\\n" + (
    DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC)
ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT = "Answer briefly."
MEMORY_BACKEND_INSTRUCTION_CORE_ARCHIVAL = "{scenario_setting} Core: {memory_content}"
MEMORY_BACKEND_INSTRUCTION_UNIFIED = "{scenario_setting} Buffer: {memory_content}"
MEMORY_AGENT_SETTINGS = {"student": "A tutor."}
""",
    TYPES_FILE: 'GORILLA_TO_OPENAPI = {"float": "number", "string": "string"}\n',
    HINTS_FILE: """def _get_language_specific_hint(category):
    if is_java(category):
        return " (java)"
    elif is_js(category):
        return " (js)"
    else:
        return " (py)"


def _func_doc_language_specific_pre_processing(function, category):
    for item in function:
        for value in item.values():
            if is_java(category):
                value["description"] += " any-java"
                value["description"] += f" java {value['type']}!"
                value["description"] += f" items {value['items']}!"
            elif is_js(category):
                value["description"] += " any-js"
                value["description"] += f" js {value['type']}!"
                value["description"] += f" items {value['items']}!"
                value["description"] += f" schema {value['p']}"
    return function
""",
    TOOLS_FILE: """def _cast_to_openai_type(properties, mapping):
    for value in properties.values():
        value["description"] += " (a float)"
    return properties
""",
    MODELS_FILE: """import os
os.system("touch SHOULD_NOT_EXIST")
from dataclasses import dataclass
from typing import Optional
@dataclass
class ModelConfig:
    model_name: str
    input_price: Optional[float] = None
    output_price: Optional[float] = None
api_map = {"paid": ModelConfig(model_name="p", input_price=1.5, output_price=6), "dup": ModelConfig(model_name="d")}
local_map = {"hosted": ModelConfig(model_name="h", input_price=None), "dup": ModelConfig(model_name="d", input_price=-1,
    output_price=2.0)}
MODEL_CONFIG_MAPPING = {**api_map, **local_map}
""",
    CONSTANTS_FILE: "H100_X8_PRICE_PER_HOUR = 12.5\nLOCAL_SERVER_MAX_CONCURRENT_REQUEST = 50\n",
}


def api_sources() -> dict[str, str]:
    """The multi-turn API source files in the shape the tables are read in: one literal per selector."""
    files: dict[str, list[str]] = {}
    for number, selector in enumerate(SELECTORS):
        module, *scope, name = selector.split(".")
        lines = files.setdefault(f"{SOURCE_DIR}{module}.py", ['import os\nos.system("touch SHOULD_NOT_EXIST")'])
        statement = f"return ({number}, ...)" if name == "return" else f"{name} = {{{number}: ({number},)}}"
        if name.startswith("if:"):  # a compare-and-assign chain
            target = "return " if name == "if:return" else f"{name[3:]} = "
            statement = (
                f"if x == {number}:\n            {target}{{{number}: 1}}\n        else:\n            {target}None"
            )
        lines.append(f"class {scope[0]}:\n    def {scope[1]}(self):\n        {statement}" if scope else statement)
    return {path: "\n".join(lines) + "\n" for path, lines in files.items()}


API_SOURCES = api_sources()

DATA = {
    "BFCL_v4_simple_python.json": b'{"id": "simple_python_0", "question": [[]], "function": []}\n',
    "possible_answer/BFCL_v4_simple_python.json": b'{"id": "simple_python_0", "ground_truth": []}\n',
    "multi_turn_func_doc/web_search.json": b"[]\n",
    "README.md": b"# data\n",
}
NOT_KEPT = {
    "BFCL_v4_web_search.json": b'{"id": "web_search_0"}\n',
    "possible_answer/BFCL_v4_web_search.json": b'{"id": "web_search_0", "ground_truth": ["x"]}\n',
    "unused_datasets/question/x.json": b"{}\n",
}
PREFIX = "bfcl_eval/data/"


def build_wheel(data: dict[str, bytes], sources: dict[str, str] = SOURCES) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        for path, text in {**sources, **API_SOURCES}.items():
            wheel.writestr(path, text)
        for path, content in {**data, **NOT_KEPT}.items():
            wheel.writestr(PREFIX + path, content)
        wheel.writestr("bfcl_eval-0.0.1.dist-info/METADATA", "Name: bfcl-eval\n")
    return buffer.getvalue()


def small_pin(url: str, wheel: bytes) -> WheelPin:
    return WheelPin(
        "demo",
        "0.0.1",
        "bfcl_eval-0.0.1-py3-none-any.whl",
        url,
        hashlib.sha256(wheel).hexdigest(),
        PREFIX,
        {path: hashlib.sha256(content).hexdigest() for path, content in DATA.items()},
        lift_templates(SOURCES).sha256(),
        lift_tables(API_SOURCES).sha256(),
    )


@pytest.fixture
def server() -> Iterator[FileServer]:
    with FileServer() as serving:
        yield serving


def leftovers(cache: Path) -> list[str]:
    """Everything in the cache but the file-hash memo."""
    if not cache.exists():
        return []
    return sorted(str(path.relative_to(cache)) for path in cache.rglob("*") if path.name != "file-hashes.json")


# ------------------------------------------------------------------------------------------ downloads


def test_a_good_wheel_gives_the_pinned_folder_and_the_texts_beside_it(
    server: FileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    wheel = build_wheel(DATA)
    server.routes["/w.whl"] = wheel
    pin = small_pin(server.url("/w.whl"), wheel)
    cache = tmp_path / "cache"

    folder = ensure_data(None, cache, False, pin=pin)
    assert folder == data_folder(pin, cache)
    kept = sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())
    assert kept == sorted([*DATA, "MANIFEST.json"])  # web_search's files and unused_datasets/ are left out
    assert all((folder / path).read_bytes() == content for path, content in DATA.items())
    manifest = json.loads((folder / "MANIFEST.json").read_text(encoding="utf-8"))
    assert manifest["wheel_sha256"] == pin.wheel_sha256 and manifest["files"] == dict(pin.files)
    stored = json.loads(templates_file(pin, cache).read_text(encoding="utf-8"))
    assert stored["wheel_sha256"] == pin.wheel_sha256 and templates_file(pin, cache).parent == cache
    assert not (tmp_path / "SHOULD_NOT_EXIST").exists()  # the wheel's Python was read, never run

    assert ensure_data(None, cache, True, pin=pin) == folder
    templates = load_templates(cache, True, pin=pin)
    assert server.hits == 1  # one download gave both
    assert templates.system_before == "P. T.|Use [f(a=1)].|M.|Docs (json):\n"
    assert templates.system_after == "\n"
    assert templates.java_notes["typed"] == (" java ", "!")
    assert templates.javascript_notes["schema"] == (" schema ", "")
    assert templates.language_hints == {"java": " (java)", "javascript": " (js)", "python": " (py)"}
    assert templates.float_note == " (a float)"
    tables = load_tables(cache, True, pin=pin)  # the same download kept the multi-turn tables beside the texts
    assert server.hits == 1 and tables_file(pin, cache).parent == cache
    assert tables.value(SELECTORS[0]) == {0: (0,)}
    # and the memory texts and web search's files, which the data folder leaves out
    assert load_memory_prompts(cache, True, pin=pin).answer_format == "Answer briefly."
    assert load_web_search(cache, True, pin=pin).answers == '{"id": "web_search_0", "ground_truth": ["x"]}\n'
    assert load_format_prompts(cache, True, pin=pin).call_formats["concise_xml"] == "<f>"
    prices = load_prices(cache, True, pin=pin)  # and bfcl's prices
    assert dict(prices.prices) == {"paid": (1.5, 6), "dup": (-1, 2.0), "hosted": (None, None)}
    assert server.hits == 1


def test_a_wheel_with_another_hash_is_refused(server: FileServer, tmp_path: Path) -> None:
    wheel = build_wheel(DATA)
    server.routes["/w.whl"] = wheel
    pin = small_pin(server.url("/w.whl"), build_wheel({**DATA, "README.md": b"other\n"}))
    with pytest.raises(DataError, match=r"the download has sha256 [0-9a-f]{12}, not the pinned") as caught:
        ensure_data(None, tmp_path / "cache", False, pin=pin)
    assert "\n" not in str(caught.value) and "--tooleval-bfcl-wheel" in str(caught.value)
    assert leftovers(tmp_path / "cache") == []


def test_a_tampered_data_file_is_named_and_nothing_is_kept(server: FileServer, tmp_path: Path) -> None:
    wheel = build_wheel({**DATA, "possible_answer/BFCL_v4_simple_python.json": b'{"id": "x"}\n'})
    server.routes["/w.whl"] = wheel
    pin = small_pin(server.url("/w.whl"), wheel)  # the wheel is the pinned one, one of its files is not
    with pytest.raises(DataError, match=r"possible_answer/BFCL_v4_simple_python.json has sha256 [0-9a-f]{12}"):
        ensure_data(None, tmp_path / "cache", False, pin=pin)
    assert leftovers(tmp_path / "cache") == []


def test_other_request_texts_are_refused(server: FileServer, tmp_path: Path) -> None:
    sources = {**SOURCES, TYPES_FILE: 'GORILLA_TO_OPENAPI = {"float": "string", "string": "string"}\n'}
    wheel = build_wheel(DATA, sources)
    server.routes["/w.whl"] = wheel
    pin = small_pin(server.url("/w.whl"), wheel)  # pinned to SOURCES' texts
    with pytest.raises(DataError, match="lifted request texts have sha256"):
        ensure_data(None, tmp_path / "cache", False, pin=pin)
    assert leftovers(tmp_path / "cache") == []


def test_an_interrupted_download_leaves_nothing_half_written(server: FileServer, tmp_path: Path) -> None:
    wheel = build_wheel(DATA)
    server.routes["/w.whl"] = wheel
    server.cut.add("/w.whl")
    pin = small_pin(server.url("/w.whl"), wheel)
    with pytest.raises(DataError, match="could not download") as caught:
        ensure_data(None, tmp_path / "cache", False, pin=pin, timeout=30)
    assert "\n" not in str(caught.value)
    assert leftovers(tmp_path / "cache") == []
    server.cut.clear()  # the next run, with the network back, completes
    assert (ensure_data(None, tmp_path / "cache", False, pin=pin) / "MANIFEST.json").exists()


def test_an_unreachable_registry_is_one_line_naming_the_fixes(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    wheel = build_wheel(DATA)
    pin = small_pin(f"http://127.0.0.1:{port}/w.whl", wheel)
    with pytest.raises(DataError, match="could not download") as caught:
        ensure_data(None, tmp_path / "cache", False, pin=pin, timeout=30)
    message = str(caught.value)
    assert "\n" not in message and "--tooleval-bfcl-wheel" in message and "retry" in message


def test_concurrent_runs_share_one_complete_folder(server: FileServer, tmp_path: Path) -> None:
    wheel = build_wheel(DATA)
    server.routes["/w.whl"] = wheel
    pin = small_pin(server.url("/w.whl"), wheel)
    results: list[Path | BaseException] = []

    def run() -> None:
        try:
            results.append(ensure_data(None, tmp_path / "cache", False, pin=pin, timeout=30))
        except BaseException as exc:  # reported by the assertion below
            results.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert results == [data_folder(pin, tmp_path / "cache")] * 4
    assert not [path for path in (tmp_path / "cache" / "bfcl").iterdir() if path.name.startswith(".partial")]


# ------------------------------------------------------------------------------------------ offline, a local wheel


def test_offline_without_the_cache_names_both_fixes(tmp_path: Path) -> None:
    pin = small_pin("http://127.0.0.1:9/never", build_wheel(DATA))
    with pytest.raises(ToolevalUsageError, match="--tooleval-offline forbids the download"):
        ensure_data(None, tmp_path / "cache", True, pin=pin)
    templates_file(pin, tmp_path / "cache").parent.mkdir(parents=True)
    templates_file(pin, tmp_path / "cache").write_text("{broken", encoding="utf-8")  # an unreadable memo is no memo
    with pytest.raises(ToolevalUsageError) as caught:
        load_templates(tmp_path / "cache", True, pin=pin)
    message = str(caught.value)
    assert "--tooleval-bfcl-wheel" in message and WHEEL_ENV in message and "without --tooleval-offline" in message


def test_a_local_wheel_serves_offline_and_a_wrong_one_is_refused(tmp_path: Path) -> None:
    wheel = build_wheel(DATA)
    pin = small_pin("http://127.0.0.1:9/never", wheel)
    local = tmp_path / pin.wheel
    local.write_bytes(wheel)
    folder = ensure_data(None, tmp_path / "cache", True, wheel=local, pin=pin)
    assert (folder / "README.md").read_bytes() == DATA["README.md"]
    assert load_templates(tmp_path / "other-cache", True, wheel=local, pin=pin).float_note == " (a float)"
    other = tmp_path / "other.whl"
    other.write_bytes(build_wheel({**DATA, "README.md": b"x\n"}))
    with pytest.raises(DataError, match=r"pip download --no-deps bfcl-eval==0\.0\.1"):
        load_templates(tmp_path / "third-cache", True, wheel=other, pin=pin)


def test_the_wheel_option_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WHEEL_ENV, "/from/env.whl")
    assert given_wheel("/from/option.whl") == Path("/from/option.whl")
    assert given_wheel(None) == Path("/from/env.whl")
    monkeypatch.delenv(WHEEL_ENV)
    assert given_wheel(None) is None


# ------------------------------------------------------------------------------------------ a given data folder


def test_a_given_folder_is_checked_against_the_pin(tmp_path: Path) -> None:
    pin = small_pin("http://127.0.0.1:9/never", build_wheel(DATA))
    root = tmp_path / "data"
    for path, content in DATA.items():
        (root / "bfcl" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "bfcl" / path).write_bytes(content)
    assert ensure_data(str(root), tmp_path / "cache", True, pin=pin) == root / "bfcl"
    assert ensure_data(str(root / "bfcl"), tmp_path / "cache", True, pin=pin) == root / "bfcl"
    tampered = tmp_path / "tampered"
    shutil.copytree(root, tampered)
    (tampered / "bfcl" / "README.md").write_bytes(b"changed\n")
    with pytest.raises(DataError, match=r"1 file differs, first README.md \(sha256 .*--tooleval-data-dir"):
        ensure_data(str(tampered), tmp_path / "cache", True, pin=pin)
    with pytest.raises(DataError, match="no BFCL data there"):
        ensure_data(str(tmp_path / "cache"), tmp_path / "cache", True, pin=pin)


# ------------------------------------------------------------------------------------------ the real pin


@pytest.fixture(scope="module")
def bfcl_dir() -> Path:
    root = os.environ.get("TOOLEVAL_DATA_DIR")
    if not root:
        pytest.skip("needs the upstream bfcl data: set TOOLEVAL_DATA_DIR to a folder holding bfcl/")
    return Path(root) / "bfcl"


def test_the_pin_is_the_shared_folder(bfcl_dir: Path, tmp_path: Path) -> None:
    pin = load_pin()
    assert pin.manifest_text().encode("utf-8") == (bfcl_dir / "MANIFEST.json").read_bytes()
    assert pin.url.startswith("https://files.pythonhosted.org/") and pin.url.endswith("/" + pin.wheel)
    assert ensure_data(str(bfcl_dir.parent), tmp_path / "cache", True) == bfcl_dir


def test_the_pinned_wheel_gives_the_shared_folder_byte_for_byte(bfcl_dir: Path, tmp_path: Path) -> None:
    wheel = os.environ.get(WHEEL_ENV)
    if not wheel:
        pytest.skip(
            f"needs the upstream bfcl-eval 2026.3.23 wheel: set {WHEEL_ENV} "
            "(pip download --no-deps bfcl-eval==2026.3.23)"
        )
    folder = ensure_data(None, tmp_path / "cache", True, wheel=Path(wheel))
    made = sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())
    shared = sorted(
        str(path.relative_to(bfcl_dir))
        for path in bfcl_dir.rglob("*")
        if path.is_file() and path.parts[len(bfcl_dir.parts)] != "conformance"
    )  # ours, not the wheel's
    assert made == shared
    assert all((folder / path).read_bytes() == (bfcl_dir / path).read_bytes() for path in made)
    assert load_templates(tmp_path / "cache", True).sha256() == load_pin().templates_sha256
    assert load_prices(tmp_path / "cache", True).sha256() == load_pin().prices_sha256


def test_sources_not_in_bfcls_shape_are_refused_by_name() -> None:
    with pytest.raises(DataError, match="lacks"):
        lift_templates({path: text for path, text in SOURCES.items() if path != TOOLS_FILE})
    with pytest.raises(DataError, match="not readable Python"):
        lift_templates({**SOURCES, HINTS_FILE: "def (:\n"})
    with pytest.raises(DataError, match="language hints"):
        lift_templates({**SOURCES, HINTS_FILE: SOURCES[HINTS_FILE].replace("is_js(", "is_go(")})
    with pytest.raises(DataError, match="not json"):
        xml_docs = SOURCES[PROMPTS_FILE].replace("func_doc_fmt=json", "func_doc_fmt=xml")
        lift_templates({**SOURCES, PROMPTS_FILE: xml_docs})


def test_prices_are_read_as_the_merged_maps_hold_them_and_odd_ones_refused() -> None:
    """Each model's prices as `MODEL_CONFIG_MAPPING` ends up holding them: a later map's entry wins, a price left out
    is the class default; only literals are read (the module's own code never runs)."""
    table = lift_prices(SOURCES)
    assert dict(table.prices) == {"paid": (1.5, 6), "dup": (-1, 2.0), "hosted": (None, None)}
    assert (table.gpu_price_per_hour, table.concurrent_requests) == (12.5, 50)
    pricing = table.pricing("hosted")
    assert pricing is not None and pricing.content() == {
        "model": "hosted",
        "input_price": None,
        "output_price": None,
        "gpu_price_per_hour": 12.5,
        "concurrent_requests": 50,
    }
    assert table.pricing("unknown") is None
    models = SOURCES[MODELS_FILE]
    for old, new, message in (
        ("input_price=1.5", "input_price=os.getenv('P')", "not a literal"),
        ("input_price=1.5", "input_price='1.5'", "not a number"),
        ('ModelConfig(model_name="p"', 'dict(model_name="p"', "not a ModelConfig"),
        ("{**api_map, **local_map}", "{**api_map, **other_map}", "not a merge"),
        ("MODEL_CONFIG_MAPPING =", "MAPPING =", "MODEL_CONFIG_MAPPING"),
        ("input_price: Optional[float] = None", "input_price: Optional[float]", "defaults"),
    ):
        with pytest.raises(DataError, match=message):
            lift_prices({**SOURCES, MODELS_FILE: models.replace(old, new)})
    with pytest.raises(DataError, match="LOCAL_SERVER_MAX_CONCURRENT_REQUEST not found"):
        lift_prices({**SOURCES, CONSTANTS_FILE: "H100_X8_PRICE_PER_HOUR = 12.5\n"})
    with pytest.raises(DataError, match="lacks"):
        lift_prices({MODELS_FILE: models})


def test_the_held_out_messages_are_lifted_as_format_fills_them() -> None:
    templates = lift_templates(SOURCES)
    assert templates.held_out_fc == "More tools."
    assert templates.held_out_prompting == ("", "\nMore tools.")
    braces = SOURCES[PROMPTS_FILE].replace('("More tools.")', '("{{More}} tools.")')
    assert lift_templates({**SOURCES, PROMPTS_FILE: braces}).held_out_prompting == ("", "\n{More} tools.")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('"{functions}\\n" + ', '"{docs}\\n" + ', "not understood"),
        ('"{functions}\\n" + ', '"{functions!r}\\n" + ', "not understood"),
        ('"{functions}\\n" + ', '"\\n" + ', "exactly once"),
        ("DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC = ", "OTHER = ", "are not there"),
    ],
)
def test_held_out_messages_not_in_bfcls_shape_are_refused(old: str, new: str, message: str) -> None:
    assert old in SOURCES[PROMPTS_FILE]
    with pytest.raises(DataError, match=message):
        lift_templates({**SOURCES, PROMPTS_FILE: SOURCES[PROMPTS_FILE].replace(old, new, 1)})
