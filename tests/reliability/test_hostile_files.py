"""Hostile files: a suite file (`*.tooleval.yaml`), `tooleval.yaml` or a quarantine file that loops, reaches out,
explodes or nests without end is refused at load, with one line naming the file (and the line) and exit status 4,
at once; it never hangs the run, exhausts its memory or stack, or makes the plugin talk to the network.

Each run has a hang guard (`refused_runs.GUARD_S`) and the test asserts its outcome, not how long it took: a
refusal "at once" is one that comes before any request is made, well inside the guard (a billion laughs took
35-48 s before, then died of MemoryError).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI, ToolCalls
from mini_acebench import CATEGORIES, SAMPLES, write_mini_acebench
from refused_runs import refused_line, run_guarded

KEY = "sk-hostile-files-4Rk8TnB5yC1dF7Hq2ZpX"
WORKERS = pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])


# -- suite files ---------------------------------------------------------------------------------------------

NOTE_CASE = """\
cases:
  - name: take_a_note
    user: Take a note saying hi.
    expect: {calls: [{name: note, arguments: {text: hi}}]}
"""


def note_tool(text_schema: str, extra: str = "") -> str:
    """A file whose one tool, note, has the parameter `text` with the schema written `text_schema`."""
    return (
        "tools:\n  - name: note\n    parameters:\n      type: object\n"
        f"      properties:\n        text: {text_schema}\n{extra}" + NOTE_CASE
    )


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAI) -> list[str]:
    """Options of a run of the suite files in pytester's folder against the fake server, which calls note(hi)."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TOOLEVAL_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    fake_openai.responder = lambda body: (
        ToolCalls.of(("note", {"text": "hi"})) if body.get("tools") else "[note(text='hi')]"
    )
    return [
        "--tooleval-model=fake-model",
        f"--tooleval-base-url={fake_openai.base_url}",
        f"--tooleval-api-key={KEY}",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
    ]


def write(pytester: pytest.Pytester, text: str, name: str = "hostile.tooleval.yaml") -> Path:
    path = pytester.path / name
    path.write_text(text, encoding="utf-8")
    return path


def line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_sound_schema_with_references_is_scored(pytester: pytest.Pytester, suite: list[str]) -> None:
    """The control: a local $ref, and a tree that refers to itself through a property, load and pass."""
    text = note_tool(
        "{$ref: '#/$defs/words'}",
        "      $defs:\n        words: {type: string}\n"
        "        tree: {type: object, properties: {kids: {type: array, items: {$ref: '#/$defs/tree'}}}}\n",
    )
    write(pytester, text)
    result = run_guarded(pytester, *suite)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    result.assert_outcomes(passed=1)


# 4. A $ref loop is the schema's fault, not the model's: a load error, not a wrong_argument on every call.

LOOPS = {
    "two-definitions": (
        "{$ref: '#/$defs/a'}",
        "      $defs:\n        a: {$ref: '#/$defs/b'}\n        b: {$ref: '#/$defs/a'}\n",
        "a: {$ref",
        "tools[0].parameters['$defs'].a['$ref']: the references loop "
        "(#/$defs/a -> #/$defs/b) without going into the arguments",
    ),
    "the-whole-schema": (
        "{type: string}",
        "      allOf: [{$ref: '#'}]\n",
        "allOf",
        "tools[0].parameters.allOf[0]['$ref']: the references loop (#) without going into the arguments",
    ),
}


@WORKERS
@pytest.mark.parametrize("loop", LOOPS.values(), ids=LOOPS.keys())
def test_a_ref_loop_is_a_load_error_naming_its_line(
    pytester: pytest.Pytester,
    suite: list[str],
    fake_openai: FakeOpenAI,
    loop: tuple[str, str, str, str],
    workers: list[str],
) -> None:
    text_schema, extra, needle, message = loop
    text = note_tool(text_schema, extra)
    path = write(pytester, text)
    line = refused_line(run_guarded(pytester, *suite, *workers))
    assert line.startswith(f"ERROR: {path}:{line_of(text, needle)}: {message}"), line
    assert fake_openai.stats.requests == 0


# 6. A remote $ref is never fetched: the run stops at load, and the server it names sees no connection.


class CountingServer:
    """A TCP server on 127.0.0.1 that counts the connections it accepts; `answer` serves a JSON schema over HTTP,
    otherwise it holds each connection open and never answers."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            if not self.answer:
                self._held.append(connection)
                continue
            with connection:
                connection.settimeout(30)
                try:
                    connection.recv(65536)
                    body = b'{"type": "integer"}'
                    connection.sendall(
                        b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                        + str(len(body)).encode()
                        + b"\r\n\r\n"
                        + body
                    )
                except OSError:
                    pass

    def close(self) -> None:
        self._listener.close()
        for connection in self._held:
            connection.close()
        self._thread.join(timeout=30)


@pytest.fixture(params=[True, False], ids=["answering", "silent"])
def schema_server(request: pytest.FixtureRequest) -> Iterator[CountingServer]:
    server = CountingServer(answer=request.param)
    yield server
    server.close()


@WORKERS
def test_a_remote_ref_is_a_load_error_and_never_fetched(
    pytester: pytest.Pytester,
    suite: list[str],
    fake_openai: FakeOpenAI,
    schema_server: CountingServer,
    workers: list[str],
) -> None:
    url = f"http://127.0.0.1:{schema_server.port}/text.json"
    text = note_tool(f"{{$ref: '{url}'}}")
    path = write(pytester, text)
    line = refused_line(run_guarded(pytester, *suite, *workers))
    assert line == (
        f"ERROR: {path}:{line_of(text, '$ref')}: tools[0].parameters.properties.text['$ref']: $ref "
        f"'{url}' is not in the tool's schema: references are resolved within the file and never "
        "fetched (copy the schema under $defs and refer to it as #/$defs/NAME)"
    )
    assert schema_server.connections == 0
    assert fake_openai.stats.requests == 0  # stopped at load: nothing was asked


def test_a_ref_relative_to_a_remote_id_is_not_fetched_either(
    pytester: pytest.Pytester, suite: list[str], schema_server: CountingServer
) -> None:
    text = (
        "tools:\n  - name: note\n    parameters:\n"
        f"      $id: 'http://127.0.0.1:{schema_server.port}/tools/note.json'\n      type: object\n"
        "      properties:\n        text: {$ref: 'text.json'}\n" + NOTE_CASE
    )
    path = write(pytester, text)
    line = refused_line(run_guarded(pytester, *suite))
    assert line.startswith(
        f"ERROR: {path}:{line_of(text, 'text.json')}: tools[0].parameters.properties.text['$ref']: "
        "$ref 'text.json' is not in the tool's schema"
    )
    assert schema_server.connections == 0


# 7. Alias bombs: a billion laughs of a kilobyte is refused at once, in a suite file and in tooleval.yaml.


def laughs(indent: str) -> str:
    """Nine levels of ten aliases each of the level below: 10**9 values from under a kilobyte, as a flow list."""
    levels = ["&l0 [" + ", ".join(["lol"] * 10) + "]"]
    levels += [f"&l{level} [" + ", ".join([f"*l{level - 1}"] * 10) + "]" for level in range(1, 10)]
    return "[\n" + ",\n".join(f"{indent}  {level}" for level in levels) + f"\n{indent}]"


def test_a_billion_laughs_suite_file_is_refused_at_once(
    pytester: pytest.Pytester, suite: list[str], fake_openai: FakeOpenAI
) -> None:
    text = (
        "tools:\n  - name: note\n    parameters: {type: object, properties: {text: {}}}\ncases:\n"
        "  - name: laughs\n    user: Laugh.\n    expect:\n      calls:\n        - name: note\n"
        f"          arguments:\n            text:\n              exact: {laughs('              ')}\n"
    )
    assert len(text.encode()) < 1_200
    path = write(pytester, text)
    line = refused_line(run_guarded(pytester, *suite))
    assert line == (
        f"ERROR: {path}:{line_of(text, '&l4')}: its aliases bring in more than 100,000 values (an alias "
        "bomb?): write the values out, or use fewer aliases"
    )
    assert fake_openai.stats.requests == 0


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """The mini ACEBench tree and its test module, answered by the oracle: a run that passes unless a file stops it."""
    monkeypatch.delenv("TOOLEVAL_DATA_DIR", raising=False)
    write_mini_acebench(pytester.path / "data")
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    return pytester


def write_config(project: pytest.Pytester, extra: str) -> str:
    """tooleval.yaml: the oracle on the mini tree (our own files: unverified), then `extra` (which may give the
    categories itself)."""
    categories = "" if "categories:" in extra else f"categories: [{CATEGORIES}]\n"
    text = f"model: oracle\ndata-dir: data\ndata-unverified: true\ncache-dir: cache\n{categories}{extra}"
    (project.path / "tooleval.yaml").write_text(text, encoding="utf-8")
    return text


def test_the_project_runs_with_its_config_file(project: pytest.Pytester) -> None:
    """The control of the tooleval.yaml tests below: the file as they write it, without their hostile part."""
    write_config(project, "fail-under: {overall: 0.9}\n")
    result = run_guarded(project, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=SAMPLES)
    result.stdout.fnmatch_lines(["tooleval gate: acebench.en.overall = 1.000 >= 0.900 ok"])


def test_a_billion_laughs_in_the_config_file_is_refused_at_start_up(project: pytest.Pytester) -> None:
    text = write_config(project, f"categories: {laughs('')}\n")
    line = refused_line(run_guarded(project, "-p", "no:cacheprovider"))
    assert line == (
        f"ERROR: {project.path / 'tooleval.yaml'} (line {line_of(text, '&l4')}): its aliases bring in more "
        "than 100,000 values (an alias bomb?): write the values out, or use fewer aliases"
    )


def test_a_billion_laughs_quarantine_file_is_refused(project: pytest.Pytester) -> None:
    write_config(project, "")
    text = f"en-normal_atom_bool_0: {laughs('')}\n"
    (project.path / "quarantine.yaml").write_text(text, encoding="utf-8")
    line = refused_line(run_guarded(project, "-p", "no:cacheprovider", "--tooleval-quarantine=quarantine.yaml"))
    assert line == (
        f"ERROR: --tooleval-quarantine: {project.path / 'quarantine.yaml'} (line {line_of(text, '&l4')}): "
        "its aliases bring in more than 100,000 values (an alias bomb?): write the values out, or use "
        "fewer aliases"
    )


def test_an_alias_inside_itself_in_the_config_file_is_one_line(project: pytest.Pytester) -> None:
    text = write_config(project, "fail-under: &gate {overall: *gate}\n")
    line = refused_line(run_guarded(project, "-p", "no:cacheprovider"))
    assert line == (
        f"ERROR: {project.path / 'tooleval.yaml'} (line {line_of(text, '*gate')}): the alias *gate is "
        "inside its own anchor: the value would contain itself"
    )


# 13. Deep nesting: 5,000 levels are one line, not a RecursionError or an INTERNALERROR.

DEEP = 5_000


def test_a_deeply_nested_suite_file_is_one_line(pytester: pytest.Pytester, suite: list[str]) -> None:
    nested = "[" * DEEP + "]" * DEEP
    text = note_tool("{}").replace("arguments: {text: hi}", f"arguments: {{text: {{exact: {nested}}}}}")
    path = write(pytester, text)
    line = refused_line(run_guarded(pytester, *suite))
    assert line == f"ERROR: {path}:{line_of(text, nested)}: lists and mappings are nested more than 100 levels deep"


def test_a_suite_file_nested_in_blocks_is_one_line(pytester: pytest.Pytester, suite: list[str]) -> None:
    nested = "- " * DEEP + "1"  # block lists, one inside the other on one line
    text = note_tool("{}").replace(
        "    expect: {calls: [{name: note, arguments: {text: hi}}]}\n",
        f"""\
    expect:
      calls:
        - name: note
          arguments:
            text:
              exact:
                {nested}
""",
    )
    path = write(pytester, text)
    line = refused_line(run_guarded(pytester, *suite))
    assert line == f"ERROR: {path}:{line_of(text, nested)}: lists and mappings are nested more than 100 levels deep"


def test_a_deeply_nested_config_file_is_one_line(project: pytest.Pytester) -> None:
    text = write_config(project, f"categories: {'[' * DEEP}{']' * DEEP}\n")
    line = refused_line(run_guarded(project, "-p", "no:cacheprovider"))
    assert line == (
        f"ERROR: {project.path / 'tooleval.yaml'} (line {line_of(text, 'categories')}): lists and "
        "mappings are nested more than 100 levels deep"
    )


# Smaller: a key or value of tooleval.yaml that would be read again as several entries is refused.

INJECTIONS = {
    "threshold-key": (
        "fail-under: {'overall=0.1,special': 0.5}\n",
        "fail-under: the key 'overall=0.1,special' holds '=' or ',', which the option's text form puts "
        "between its entries (KEY=VALUE,KEY=VALUE): rename it",
    ),
    "threshold-value": (
        "fail-under: {overall: '0.9,special=0'}\n",
        "fail-under.overall: '0.9,special=0' holds '=' or ',', which the option's text form puts between its entries",
    ),
    "price-item": (
        "prices: {gpt-4o: ['2.5,x=1', 10]}\n",
        "prices.gpt-4o: '2.5,x=1' holds '=' or ',' or '/', which the option's text form puts between its entries",
    ),
    "list-item": (
        "categories: ['normal_atom_bool,special_irrelevant']\n",
        "categories[0]: 'normal_atom_bool,special_irrelevant' holds ',', which the option's text form puts "
        "between its items: write each item apart",
    ),
}


@pytest.mark.parametrize(("extra", "message"), INJECTIONS.values(), ids=INJECTIONS.keys())
def test_a_separator_inside_a_config_key_or_value_is_refused(
    project: pytest.Pytester, extra: str, message: str
) -> None:
    write_config(project, extra)
    line = refused_line(run_guarded(project, "-p", "no:cacheprovider"))
    assert line == f"ERROR: {project.path / 'tooleval.yaml'}: {message}"


def test_the_config_file_keeps_refusing_a_repeated_key(project: pytest.Pytester) -> None:
    text = write_config(project, "fail-under: {overall: 0.9}\nmodel: gpt-4o\n")
    line = refused_line(run_guarded(project, "-p", "no:cacheprovider"))
    assert line == (
        f"ERROR: {project.path / 'tooleval.yaml'} (line {line_of(text, 'gpt-4o')}): the key 'model' is "
        "given twice: keep one"
    )
