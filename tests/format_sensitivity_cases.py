"""Synthetic answers to the format-sensitivity entries, for the decoder's and checker's conformance
(docs/bfcl.md#format-sensitivity).

Standard library only: the recorder (fs_record_verdicts.py, run in a scratch venv against bfcl-eval's own
evaluation) and the test (test_format_sensitivity.py, against ours) both build the same cases from a seed and the
data folder (the project keeps no copy of the data: a case names the entry it answers).

`entries(data_dir)` lists the 5,200 entries as bfcl orders them (index, configuration, question, category,
function docs, possible answers); `cases(data_dir)` gives (key, entry index, answer) tuples: first the gold
answer of every entry in its own configuration, then answers in the wrong format, with broken tags, in odd
shapes, with wrong values, and hostile texts, spread evenly over the 26 configurations.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SEED = 20261208
VARIANTS = 4_160  # 160 per configuration

RETURN_FORMATS = ("python", "json", "verbose_xml", "concise_xml")
CONFIGS = [
    f"ret_fmt={ret}&tool_call_tag={tag}&func_doc_fmt={doc}&prompt_fmt=plaintext&style=classic"
    for ret in RETURN_FORMATS
    for tag in ("True", "False")
    for doc in ("python", "xml", "json")
] + [
    "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=markdown&style=classic",
    "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=experimental",
]

Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class FsEntry:
    index: int
    config: str
    question: str
    category: str
    functions: list[dict[str, Any]]
    ground_truth: list[dict[str, Any]]

    @property
    def id(self) -> str:
        return f"format_sensitivity_{self.index}:{self.config}:{self.question}"

    @property
    def return_format(self) -> str:
        return self.config.split("&")[0].split("=")[1]

    @property
    def tag(self) -> bool:
        return "tool_call_tag=True" in self.config


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def entries(data_dir: Path) -> list[FsEntry]:
    listed = json.loads((data_dir / "BFCL_v4_format_sensitivity.json").read_text(encoding="utf-8"))
    found: list[FsEntry] = []
    for category, ids in listed.items():
        answers = {
            row["id"]: row["ground_truth"] for row in _rows(data_dir / "possible_answer" / f"BFCL_v4_{category}.json")
        }
        for row in _rows(data_dir / f"BFCL_v4_{category}.json"):
            if row["id"] in ids:
                for config in CONFIGS:
                    found.append(FsEntry(len(found), config, row["id"], category, row["function"], answers[row["id"]]))
    return found


# -- the gold answer: each parameter's first acceptable value ---------------------------------------------------


def _first_values(parameters: dict[str, Any], required: list[Any]) -> dict[str, Any]:
    chosen = {}
    for key, acceptable in parameters.items():
        options = acceptable if isinstance(acceptable, list) else [acceptable]
        if key in required:  # "" marks an optional parameter: a required one takes another value
            options = [option for option in options if option != ""] or options
        if options and options[0] != "":
            chosen[key] = _chosen(options[0])
    return chosen


def _chosen(value: Any) -> Any:
    if isinstance(value, dict):
        return _first_values(value, [])
    if isinstance(value, list):
        return [_chosen(item) for item in value]
    return value


def gold_calls(entry: FsEntry) -> list[Call]:
    calls = []
    for call in entry.ground_truth:
        ((name, parameters),) = call.items()
        function = next((doc for doc in entry.functions if doc["name"] == name), {})
        required = function.get("parameters", {}).get("required", []) or []
        calls.append((name, _first_values(parameters, required)))
    return calls


# -- writing calls in a return format ----------------------------------------------------------------------------

_ATTRIBUTE = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}
)
_TEXT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})


def xml_typed(value: Any, concise: bool) -> tuple[str, str]:
    if isinstance(value, bool):
        return "boolean", "true" if value else "false"
    if isinstance(value, int):
        return "integer", str(value)
    if isinstance(value, float):
        return "float", repr(value)
    if value is None:
        return "null", ""
    if isinstance(value, str) and not (concise and value != value.strip()):
        return "string", value
    return ("dict" if isinstance(value, dict) else "array"), repr(value)


Typer = Callable[[Any, bool], tuple[str, str]]


def render(calls: list[Call], return_format: str, typed: Typer = xml_typed) -> str:
    if return_format == "python":
        return (
            "[" + ", ".join(f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})" for name, args in calls) + "]"
        )
    if return_format == "json":
        return json.dumps([{"function": name, "parameters": args} for name, args in calls], ensure_ascii=False)
    verbose = return_format == "verbose_xml"
    functions = []
    for name, args in calls:
        params = []
        for key, value in args.items():
            kind, text = typed(value, not verbose)
            if verbose:
                params.append(
                    f'<param name="{key.translate(_ATTRIBUTE)}" value="{text.translate(_ATTRIBUTE)}" type="{kind}"/>'
                )
            else:
                params.append(
                    f'<param name="{key.translate(_ATTRIBUTE)}" type="{kind}">{text.translate(_TEXT)}</param>'
                )
        inner = f"<params>{''.join(params)}</params>" if verbose else "".join(params)
        functions.append(f'<function name="{name.translate(_ATTRIBUTE)}">{inner}</function>')
    return f"<functions>{''.join(functions)}</functions>"


def tagged(body: str, tag: bool) -> str:
    return f"<TOOLCALL>{body}</TOOLCALL>" if tag else body


def gold(entry: FsEntry) -> str:
    return tagged(render(gold_calls(entry), entry.return_format), entry.tag)


# -- variants ----------------------------------------------------------------------------------------------------


def _wrong_value(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice([value + 1, float(value), str(value), -value - 1])
    if isinstance(value, float):
        return rng.choice([value * 2 + 1, int(value), str(value)])
    if isinstance(value, str):
        return rng.choice([value + "x", value.upper(), "", value[::-1] + "?", " " + value + " ", 7])
    if isinstance(value, list):
        return rng.choice([value[:-1], [*value, value[0] if value else 1], {"a": value}, "list"])
    if isinstance(value, dict):
        return rng.choice([{}, list(value.values()), {**value, "extra": 1}])
    return "none"


def _value_variant(calls: list[Call], rng: random.Random) -> list[Call]:
    """The calls with one thing changed: a value, a parameter dropped or added, a name, a call doubled or lost."""
    calls = [(name, dict(args)) for name, args in calls]
    name, args = calls[rng.randrange(len(calls))]
    move = rng.choice(["value", "value", "value", "drop", "add", "name", "double", "lose", "swap_order"])
    if move == "value" and args:
        key = rng.choice(list(args))
        args[key] = _wrong_value(args[key], rng)
    elif move == "drop" and args:
        del args[rng.choice(list(args))]
    elif move == "add":
        args[rng.choice(["unit", "extra", "verbose", "k"])] = rng.choice([1, "x", True, None, [1], 2.5])
    elif move == "name":
        index = next(n for n, call in enumerate(calls) if call[0] == name)
        calls[index] = (rng.choice([name + "_v2", name.split(".")[-1], name.replace("_", "."), "unknown"]), args)
    elif move == "double":
        calls.append((name, dict(args)))
    elif move == "lose" and len(calls) > 0:
        calls.pop(rng.randrange(len(calls)))
    elif move == "swap_order":
        calls.reverse()
    return calls


def _odd_typer(rng: random.Random) -> Typer:
    """XML types that do not fit the value, or that bfcl does not know."""

    def typed(value: Any, concise: bool) -> tuple[str, str]:
        kind, text = xml_typed(value, concise)
        roll = rng.random()
        if roll < 0.25:
            return rng.choice(
                ["integer", "float", "boolean", "null", "array", "dict", "tuple", "object", "str", "int", "list", ""]
            ), text
        if roll < 0.35:
            return kind, rng.choice(
                [
                    text + " ",
                    " " + text,
                    text.upper(),
                    "1_000",
                    "0x1F",
                    "1e3",
                    "nan",
                    "(1, 2)",
                    "{'a': [1, 2]}",
                    "[1, 2",
                    "1+2j",
                    "__import__('os')",
                ]
            )
        return kind, text

    return typed


def _format_variant(entry: FsEntry, calls: list[Call], rng: random.Random) -> Any:
    fmt, tag = entry.return_format, entry.tag
    body = render(calls, fmt)
    move = rng.choice(
        [
            "other_format",
            "other_format",
            "tag_flip",
            "tag_broken",
            "prose",
            "fence",
            "fence",
            "odd_types",
            "odd_types",
            "shape",
            "shape",
            "shape",
            "whitespace",
            "quotes",
            "two_answers",
        ]
    )
    if move == "other_format":
        return tagged(render(calls, rng.choice([f for f in RETURN_FORMATS if f != fmt])), tag)
    if move == "tag_flip":
        return tagged(body, not tag)
    if move == "tag_broken":
        return rng.choice(
            [
                f"<TOOLCALL>{body}",
                f"{body}</TOOLCALL>",
                f"<toolcall>{body}</toolcall>",
                f"</TOOLCALL>{body}<TOOLCALL>",
                f"<TOOLCALL></TOOLCALL><TOOLCALL>{body}</TOOLCALL>",
                f"<TOOLCALL>{body}</TOOLCALL><TOOLCALL>[]</TOOLCALL>",
                f"<TOOLCALL> \n{body}\n </TOOLCALL>",
                f"<TOOLCALL>'{body}'</TOOLCALL>",
                f"<TOOLCALL><TOOLCALL>{body}</TOOLCALL></TOOLCALL>",
                f"< TOOLCALL >{body}</ TOOLCALL >",
            ]
        )
    if move == "prose":
        return (
            rng.choice(["Sure! ", "I will call the function.\n", "Thought: easy.\n\n"])
            + tagged(body, tag)
            + rng.choice(["", " Done.", "\nLet me know if you need more."])
        )
    if move == "fence":
        lang = rng.choice(["json", "python", "xml", ""])
        return tagged(f"```{lang}\n{body}\n```", tag) if rng.random() < 0.5 else f"```{lang}\n{tagged(body, tag)}\n```"
    if move == "odd_types":
        return tagged(
            render(
                calls, rng.choice(["verbose_xml", "concise_xml"]) if fmt in ("python", "json") else fmt, _odd_typer(rng)
            ),
            tag,
        )
    if move == "whitespace":
        return (
            rng.choice(["\n\n", "  ", "\t", "`", "```\n"])
            + tagged(body, tag)
            + rng.choice(["\n", "  ", "\t\n", "`", "\r\n"])
        )
    if move == "quotes":
        return tagged(f"'{body}'", tag) if rng.random() < 0.5 else f'"{tagged(body, tag)}"'
    if move == "two_answers":
        return tagged(body, tag) + "\n" + tagged(render(calls, rng.choice(RETURN_FORMATS)), tag)
    return tagged(_odd_shape(fmt, calls, rng), tag)


def _odd_shape(fmt: str, calls: list[Call], rng: random.Random) -> str:
    name, args = calls[0]
    first = next(iter(args), "a")
    json_args = json.dumps(args, ensure_ascii=False)
    if fmt == "json":
        return rng.choice(
            [
                json.dumps({"function": name, "parameters": args}),
                json.dumps([{"name": name, "arguments": args}]),
                json.dumps([{"function": name}]),
                json.dumps([{"function": name, "parameters": list(args.values())}]),
                json.dumps([{"function": 5, "parameters": args}]),
                json.dumps([{"function": [name], "parameters": args}]),
                json.dumps([{"function": None, "parameters": args}]),
                json.dumps([{"function": name, "parameters": args}, "also"]),
                json.dumps([[{"function": name, "parameters": args}]]),
                json.dumps({name: args}),
                f'[{{"function": "{name}", "parameters": {json_args},}}]',
                f'[{{"function": "{name}", "parameters": {json_args}}}, ]',
                f"[{{'function': '{name}', 'parameters': {args!r}}}]",
                f'[{{"function": "{name}", "parameters": {{"{first}": NaN}}}}]',
                f'[{{"function": "{name}", "parameters": {{"{first}": Infinity}}}}]',
                f'[{{"function": "{name}", "parameters": {{"{first}": 1, "{first}": 2}}}}]',
                f'text [1, 2] then [{{"function": "{name}", "parameters": {json_args}}}] and ]',
                f'[{{"function": "{name}", "parameters": {json_args}}}] [{{"function": "x", "parameters": {{}}}}]',
                "[]",
                "{}",
                "5",
                '"text"',
                "null",
                "[{}]",
                "[{}, {}]",
                f'[{{"function": "{name}", "parameters": {{}}}}]',
                f'[ {{"function": "{name}",\n "parameters": {json_args} }}\n,\n'
                f'{{"function": "{name}", "parameters": {json_args}}} ]',
            ]
        )
    if fmt == "python":
        positional = ", ".join(repr(value) for value in args.values())
        return rng.choice(
            [
                f"{name}({positional})",
                f"[{name}({positional})]",
                render(calls, "python")[1:-1],
                f"[{name}(**{args!r})]",
                f"[{name}({first}=1+2)]",
                f"[{name}({first}=2**3)]",
                f"[{name}({first}=-5)]",
                f"[{name}({first}=not 1)]",
                f"[{name}({first}=x.y)]",
                f"[{name}({first}=x[0])]",
                f"[{name}({first}=f(1))]",
                f"[{name}({first}=g(k=1))]",
                f"[{name}({first}=lambda: 1)]",
                f"[{name}({first}={{1, 2}})]",
                f"[{name}({first}=(1, 2))]",
                f"[{name}({first}=f'x')]",
                f"({name}(),)",
                f"{{{name}()}}",
                f"[{name}, 1]",
                f"[{name}()] + [x()]",
                f"[{name}({first}='a' 'b')]",
                f"[{name}({first}=b'raw')]",
                f"[{name}({first}=...)]",
                f"[{name}({first}=None)]",
                f"[a.b.c.{name}()]",
                "[(lambda: 1)()]",
                "[]",
                "[[]]",
                "name",
            ]
        )
    verbose = fmt == "verbose_xml"
    head, tail = f'<functions><function name="{name}">', "</function></functions>"
    param = (
        f'<param name="{first}" value="1" type="integer"/>'
        if verbose
        else f'<param name="{first}" type="integer">1</param>'
    )
    return rng.choice(
        [
            f"<functions><function>{param}</function></functions>",
            f'<functions><function name="{name}">{param}{param}</function></functions>',
            head + f'<params>{param}</params><param name="z" value="2" type="integer"/>' + tail,
            f'<functions><function name="{name}"><param value="1" type="integer"/></function></functions>',
            head + f'<param name="{first}" type="integer"/>' + tail,
            head + f'<param name="{first}" type="string">a<b>c</b>d</param>' + tail,
            head + f'<param name="{first}" type="string"><![CDATA[<x> & y]]></param>' + tail,
            head + f'<param name="{first}" type="string">&#x41;&amp;&lt;</param>' + tail,
            head + f'<param name="{first}" type="string">&nbsp;</param>' + tail,
            head + f'<!-- c --><param name="{first}" value="v" type="string"/>' + tail,
            f"<functions><function name='{name}'><param name='{first}' value='1' type='float'>2.5</param>" + tail,
            f'<functions><function name="{name}"></function><function name="{name}"></function></functions>',
            f'<functions><functions><function name="{name}"></function></functions></functions>',
            f'<functions><function name="{name}">{param}</functions>',
            f'<functions><call name="{name}">{param}</call></functions>',
            f'<functions xmlns="urn:x"><function name="{name}">{param}</function></functions>',
            f'<?xml version="1.0"?><functions><function name="{name}">{param}</function></functions>',
            f'<functions><function name="{name}" name2="x">{param}' + tail + " trailing <functions></functions>",
            "<functions></functions>",
            "<functions/>",
            "<functions>",
            "</functions><functions>",
            f'<FUNCTIONS><function name="{name}">{param}</function></FUNCTIONS>',
            head + f'<param name="{first}" value="[1, 2]" type="array">[3]</param>' + tail,
            head + f'<param name="{first}" type="dict">{{"a": [1, {{"b": None}}]}}</param>' + tail,
            head + f'<param name="{first}" value="True" type="boolean"/>' + tail,
            head + f'<param name="{first}" type="boolean"> TRUE </param>' + tail,
        ]
    )


def hostile_texts() -> list[Any]:
    """Texts that try a decoder's limits; every one is decided quickly by bfcl's own code too (none makes its
    `eval` of an operation compute for long, and its backtracking pattern meets a short run of objects only)."""
    return [
        None,
        "",
        " ",
        "\x00",
        "[" * 5_000,
        "]" * 5_000,
        "(" * 300 + ")" * 300,
        "[" * 100_000 + "]" * 100_000,
        "{" * 100_000,
        '[{"function": "f", "parameters": ' + "[" * 50_000 + "]" * 50_000 + "}]",
        "<functions>" + "<a>" * 50_000 + "</a>" * 50_000 + "</functions>",
        '<functions><function name="f"><param name="x" type="array">'
        + "[" * 20_000
        + "]" * 20_000
        + "</param></function></functions>",
        '<functions><function name="f"><param name="x" type="integer">'
        + "9" * 5_000
        + "</param></function></functions>",
        '[{"function": "f", "parameters": {"x": ' + "9" * 5_000 + "}}]",
        '<functions><function name="f"><param name="x" type="dict">__import__("os").system("true")</param>'
        "</function></functions>",
        "<TOOLCALL>" * 2_000 + "</TOOLCALL>",
        "[{}" + ", {}" * 12 + " x]",
        "[{" + "}, {" * 12 + "x",
        "<functions>" * 3_000 + "</functions>" * 3_000,
        "\ud800[f(a=1)]",
        '<functions><function name="\ud800"></function></functions>',
        '<!DOCTYPE functions [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
        '<functions><function name="&b;"></function></functions>',
        "[f(a='" + "x" * 200_000 + "')]",
        "[" + ", ".join(f"f{n}(a={n})" for n in range(3_000)) + "]",
        "\u202e[f(a=1)]\u2066",
        "<TOOLCALL>[exec('import os')]</TOOLCALL>",
        "[__import__('os').system('true')]",
        "[f(a=(lambda: 1)())]",
        "[f(a=2**100)]",
        "[f(a=1 << 10)]",
        "[f(a='x' * 3)]",
    ]


SPELLINGS: dict[str, list[Callable[[Any], str]]] = {  # other ways to write a value that bfcl's types may read
    "boolean": [lambda v: str(v).upper(), lambda v: f" {v} ", lambda v: str(v), lambda v: "yes" if v else "no"],
    "integer": [lambda v: f" {v} ", lambda v: f"+{v}", lambda v: f"{v}.0", lambda v: "_".join(str(v))],
    "float": [lambda v: f" {v} ", lambda v: f"{v:e}", lambda v: str(int(v)) if v == int(v) else f"{v}0"],
}


def _spelling_typer(rng: random.Random) -> Typer:
    chosen = {kind: rng.choice(ways) for kind, ways in SPELLINGS.items()}

    def typed(value: Any, concise: bool) -> tuple[str, str]:
        kind, text = xml_typed(value, concise)
        return kind, chosen[kind](value) if kind in chosen else text

    return typed


def _spellings(found: list[FsEntry], rng: random.Random) -> list[tuple[str, int, Any]]:
    """XML answers whose booleans and numbers are written in other spellings, on entries that have such values."""
    typed = [
        entry
        for entry in found
        if entry.return_format.endswith("xml")
        and any(isinstance(v, (bool, int, float)) for _, args in gold_calls(entry) for v in args.values())
    ]
    out = []
    for number in range(480):
        entry = rng.choice(typed)
        out.append(
            (
                f"spelling/{number}",
                entry.index,
                tagged(render(gold_calls(entry), entry.return_format, _spelling_typer(rng)), entry.tag),
            )
        )
    return out


def cases(data_dir: Path) -> list[tuple[str, int, Any]]:
    rng = random.Random(SEED)
    found = entries(data_dir)
    out: list[tuple[str, int, Any]] = [(f"gold/{entry.index}", entry.index, gold(entry)) for entry in found]
    by_config: dict[str, list[FsEntry]] = {config: [] for config in CONFIGS}
    for entry in found:
        by_config[entry.config].append(entry)
    for number in range(VARIANTS):
        entry = rng.choice(by_config[CONFIGS[number % len(CONFIGS)]])
        calls = gold_calls(entry)
        if rng.random() < 0.4:
            answer = tagged(render(_value_variant(calls, rng), entry.return_format), entry.tag)
        else:
            answer = _format_variant(entry, calls, rng)
        out.append((f"variant/{number}", entry.index, answer))
    texts = hostile_texts()
    for config in CONFIGS:
        for number, text in enumerate(texts):
            entry = rng.choice(by_config[config])
            out.append((f"hostile/{CONFIGS.index(config)}/{number}", entry.index, text))
    return out + _spellings(found, rng)


def outputs_digest(rows: list[tuple[str, int, Any]]) -> str:
    import hashlib

    canonical = json.dumps([[key, index, answer] for key, index, answer in rows], ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()[:16]


# -- score sets, for the figures ---------------------------------------------------------------------------------

FIGURE_SEED = 20261209


def score_sets() -> list[tuple[str, list[tuple[str, bool]]]]:
    """(name, [(configuration, correct) per entry in bfcl's order]) of runs: whole, partial, one or two
    configurations, all right, all wrong, and accuracies whose spreads round at the second decimal."""
    rng = random.Random(FIGURE_SEED)
    whole = [config for _ in range(200) for config in CONFIGS]
    sets: list[tuple[str, list[tuple[str, bool]]]] = [
        ("all_right", [(config, True) for config in whole]),
        ("all_wrong", [(config, False) for config in whole]),
        ("one_config", [(CONFIGS[3], rng.random() < 0.6) for _ in range(200)]),
        ("two_configs", [(CONFIGS[n % 2], n % 3 == 0) for n in range(400)]),
        ("one_wrong", [(config, n != 77) for n, config in enumerate(whole)]),
    ]
    for number in range(12):
        rates = {config: rng.choice([rng.random(), rng.randrange(0, 201) / 200, 0.5, 1.0, 0.0]) for config in CONFIGS}
        chosen = whole
        if number % 3 == 1:  # a partial run: some configurations lose entries, some are missing
            kept = set(rng.sample(CONFIGS, rng.randrange(2, 26)))
            chosen = [config for config in whole if config in kept and rng.random() < 0.7]
        sets.append((f"random_{number}", [(config, rng.random() < rates[config]) for config in chosen]))
    return sets
