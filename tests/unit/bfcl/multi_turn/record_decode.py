"""Record bfcl-eval's own step decoders on a corpus of harmless steps (docs/bfcl-multi-turn.md#decoding-a-step).

Run in a scratch venv that has bfcl-eval 2026.3.23 (no dependencies), never in CI and never with the project's
package; test_decode.py replays the file against ours:

    /tmp/bfcl-ref-mt/bin/python tests/unit/bfcl/multi_turn/record_decode.py --data-dir ../shared/data/bfcl

It writes tests/unit/bfcl/multi_turn/decode_corpus.json. `rows`: our own steps (hand-written, and seeded random
arithmetic), each with the mode (`fc`: `convert_to_function_call`, `prompt`: `default_decode_execute_prompting`),
the raw step and upstream's call strings, or null where it raises. `ground_truth`: the steps decode_cases.py builds
from the data's ground-truth turns, kept as digests only (the project commits no copy of the data).

Upstream's prompting decoder evaluates the text of every arithmetic argument: `harmless` refuses any step whose
arithmetic is not on small literals before upstream sees it. Hostile steps are tested against ours only.
"""

from __future__ import annotations

import argparse
import ast
import copy
import importlib.metadata
import json
import platform
import random
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mypy reads this folder as the package it is under pytest
    from . import decode_cases
else:  # run as a script, outside any package: decode_cases.py is beside it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import decode_cases  # stdlib only

OUTPUT = Path(__file__).with_name("decode_corpus.json")
ABOUT = (
    "bfcl-eval's own step decoders (mode fc: convert_to_function_call, prompt: default_decode_execute_prompting), "
    "recorded by record_decode.py in a scratch venv. rows: our own steps, each with upstream's calls or null where "
    "it raises. ground_truth: the steps decode_cases.py builds from the data's ground-truth turns, as a sha256 per "
    "step (decode_cases.case_digest) and one over all (decode_cases.total_digest); no data text is kept."
)

# the step shapes of docs/bfcl-multi-turn.md#decoding-a-step, its quirks D1-D7, D9, D11, and the shapes around them
PROMPT_STEPS: list[Any] = [
    # trimming and the list around the calls
    "[f(x=1)]",
    "f(x=1)",
    "  f(x=1)  ",
    "\n[f(x=1)]\n",
    "```[f(x=1)]```",
    "```\n[f(x=1)]\n```",
    "```python\n[f(x=1)]\n```",
    "\t[f(x=1)]\t",
    "\r\n[f(x=1)]\r\n",
    "'[f(x=1)]'",
    "'f(x=1)'",
    "[f(x=1)",
    "f(x=1)]",
    "",
    " ",
    "\n",
    "``",
    "[]",
    "[ ]",
    "]",
    "[",
    "f(x=1), g(y=2)",
    "[f(x=1), g(y=2)]",
    "(f(x=1), g(y=2))",
    "[f(x=1)][0]",
    "{f(x=1)}",
    "[f(x=1) for i in y]",
    "f(x=1); g(y=2)",
    "f(x=1)\ng(y=2)",
    "[f(x=1),\n g(y=2)]",
    "[f(x=1),]",
    "<think>ok</think>[f(x=1)]",
    "<think>\n</think>\n\n[f(x=1)]",
    "[f(x=1)]<think>",
    "Sure! [f(x=1)]",
    "I cannot help with that.",
    "None",
    "null",
    "1",
    "[1, 2]",
    "[f]",
    "[f(), g()]",
    "[f(1, 2)]",
    "\u00a0[f(x=1)]\u00a0",
    "[f(x=1)]\u3000",
    "\x00",
    "[f(x='a\x00b')]",
    "[*f(x=1)]",
    "[[f(x=1)]]",
    "[f(x=1)], [g(y=2)]",
    # the function name
    "[os.path.join(a=1)]",
    "[a.b.c(x=1)]",
    "[a[0].g(x=1)]",
    "[f()(x=1)]",
    "[f(x=1)(y=2)]",
    "[(lambda: 1)(x=1)]",
    "['s'.upper(x=1)]",
    "[a.b[0](x=1)]",
    "[_f(x=1)]",
    "[f2(x=1)]",
    "[é(x=1)]",
    "[Class.method(x=1)]",
    # arguments: positional dropped, keywords in order, repeated, **
    "[sort('x')]",
    "[f(1, x=2)]",
    "[f(*a, x=1)]",
    "[f(**k)]",
    "[f(**k, **j)]",
    "[f(x=1, x=2)]",
    "[f(x=1, y=2, x=3)]",
    "[f(x=1, **k)]",
    "[f(y=1, x=2)]",
    "[f(x=1, y=2, z=3)]",
    # constants
    "[f(x=1)]",
    "[f(x=-1)]",
    "[f(x=1.0)]",
    "[f(x=20.0)]",
    "[f(x=1e400)]",
    "[f(x=-1e400)]",
    "[f(x=1e-400)]",
    "[f(x=0.1)]",
    "[f(x=1_000)]",
    "[f(x=0x10)]",
    "[f(x=0o7)]",
    "[f(x=0b1)]",
    "[f(x=1j)]",
    "[f(x='str')]",
    '[f(x="dq")]',
    "[f(x='''triple''')]",
    "[f(x=b'bytes')]",
    "[f(x=True)]",
    "[f(x=False)]",
    "[f(x=None)]",
    "[f(x=...)]",
    "[f(x='a\\nb')]",
    "[f(x='é')]",
    "[f(x='\\u2603')]",
    "[f(x='\\\\')]",
    '[f(x="it\'s")]',
    "[f(x=r'raw\\d')]",
    "[f(x=f'x')]",
    "[f(x='a' 'b')]",
    "[f(x=100000000000000000000)]",
    "[f(x='')]",
    "[f(x='caf\u00e9 \U0001f600')]",
    "[f(x='\\ud800')]",
    "[f(x='tab\\there')]",
    # unary operators: the operand's value negated, whatever the operator (D2)
    "[f(x=-3)]",
    "[f(x=+3)]",
    "[f(x=not True)]",
    "[f(x=not False)]",
    "[f(x=~5)]",
    "[f(x=-1.5)]",
    "[f(x=+1.5)]",
    "[f(x=-0.0)]",
    "[f(x=+0.0)]",
    "[f(x=-True)]",
    "[f(x=-None)]",
    "[f(x=-'a')]",
    "[f(x=-...)]",
    "[f(x=-b'x')]",
    "[f(x=-1j)]",
    "[f(x=--3)]",
    "[f(x=-(3))]",
    "[f(x=-(-3))]",
    "[f(x=-x)]",
    "[f(x=-f())]",
    "[f(x=-[1])]",
    "[f(x=not x)]",
    "[f(x=not 'a')]",
    "[f(x=not 0)]",
    "[f(x=~True)]",
    "[tail(lines=+20)]",
    "[f(x=-a[0])]",
    # arithmetic on literals (D3), with Python's own semantics inside
    "[f(x=2*3)]",
    "[f(x=2+3)]",
    "[f(x=7/2)]",
    "[f(x=7//2)]",
    "[f(x=7%3)]",
    "[f(x=2**10)]",
    "[f(x=2**-1)]",
    "[f(x=0.1+0.2)]",
    "[f(x='a'+'b')]",
    "[f(x='ab'*3)]",
    "[f(x=3*'ab')]",
    "[f(x=[1]+[2])]",
    "[f(x=[1]*3)]",
    "[f(x=(1,)+(2,))]",
    "[f(x=(1,)*2)]",
    "[f(x=1-2)]",
    "[f(x=1+-1)]",
    "[f(x=-1+2)]",
    "[f(x=+3+0)]",
    "[f(x=(not True)+1)]",
    "[f(x=~5+0)]",
    "[f(x=~True+0)]",
    "[f(x=1/0)]",
    "[f(x=1//0)]",
    "[f(x=1%0)]",
    "[f(x=2**0.5)]",
    "[f(x=(-8)**(1/3))]",
    "[f(x=1+2j)]",
    "[f(x=1e308*10)]",
    "[f(x=2.0**2000)]",
    "[f(x=10**400/1)]",
    "[f(x='a'+1)]",
    "[f(x=[1]+(2,))]",
    "[f(x=b'a'+b'b')]",
    "[f(x=b'a'*2)]",
    "[f(x=1<<3)]",
    "[f(x=8>>1)]",
    "[f(x=5&3)]",
    "[f(x=5|3)]",
    "[f(x=5^3)]",
    "[f(x={1}|{2})]",
    "[f(x={1, 2}-{1})]",
    "[f(x={'a': 1}|{'b': 2})]",
    "[f(x=[1]@[2])]",
    "[f(x=True+True)]",
    "[f(x='x'*True)]",
    "[f(x='x'*-1)]",
    "[f(x=[[1]]*2)]",
    "[f(x=[(1, 2)]*2)]",
    "[f(x=[{'a': 1}]*2)]",
    "[f(x=[1, [2]]+[3])]",
    "[f(x=('a',)*0)]",
    "[f(x=1e400-1e400)]",
    "[f(x=None+1)]",
    "[f(x=...+1)]",
    "[f(x=1+2+3+4)]",
    "[f(x=(1+2)*(3+4))]",
    "[f(x=(2**3)**2)]",
    "[f(x=-2**2)]",
    "[f(x=[1, 2]*2+[3])]",
    "[f(x={'k': {'j': 1}}|{'m': {}})]",
    "[f(x=[1]*2, y='a'+'b')]",
    "[f(x=10**20)]",
    "[f(x=0.1*3)]",
    "[f(x=1/3)]",
    "[f(x=2**64)]",
    "[f(x=-7//2)]",
    "[f(x=-7%3)]",
    "[f(x=7.5//2)]",
    "[f(x=1j*1j)]",
    "[f(x=[1]*True)]",
    "[f(x=(1,2)+())]",
    "[f(x=1+True)]",
    "[f(x={1: 2}|{1: 3})]",
    "[f(x=0**0)]",
    "[f(x=0**-1)]",
    "[f(x=2<<-1)]",
    "[f(x=1.5%0.4)]",
    # a bare name is its text (D4)
    "[cd(folder=document)]",
    "[f(x=nan)]",
    "[f(x=inf)]",
    "[f(x=true)]",
    "[f(x=null)]",
    "[f(x=__name__)]",
    # calls as values
    "[f(x=pwd())]",
    "[f(x=g(1))]",
    "[f(x=g(a, 'b'))]",
    "[f(x=g(y=1))]",
    "[f(x=g(1, y=2))]",
    "[f(x=a.b(y=1))]",
    "[f(x=g(y=h(z=1)))]",
    "[f(x=g(y=h()))]",
    "[f(x=[g(y=1)])]",
    "[f(x=(g(y=1),))]",
    "[f(x=g()(y=1))]",
    "[f(x=g(**k))]",
    "[f(x=g(y=1, y=2))]",
    '[f(x=g("q"))]',
    "[f(x=g(y=-1))]",
    # tuples stay tuples (D5), lists, dicts
    "[f(x=(1,))]",
    "[f(x=(1, 2))]",
    "[f(x=())]",
    "[f(x=((1,),))]",
    "[f(tags=('#a',))]",
    "[f(x=[])]",
    "[f(x=[1, 'a'])]",
    "[f(x=[[1]])]",
    "[f(x=[1, [2, [3]]])]",
    "[f(x=[f(x=1)])]",
    "[f(x=[y])]",
    "[f(x=[-1, +1])]",
    "[f(x={})]",
    "[f(x={'a': 1})]",
    "[f(x={1: 'x'})]",
    "[f(x={'a': {'b': 1}})]",
    "[f(x={'a': {'b': 1}, 'c': {'d': 2}})]",
    "[f(x={'a': {}, 'b': {}})]",
    "[f(x={'a': {'b': {'c': 1}}})]",
    "[f(x={'a': {'b': {'c': {}}}})]",
    '[f(x={"it\'s": 1})]',
    "[f(x={'a\"b': 1})]",
    "[f(x={1: 'x', True: 'y'})]",
    "[f(x={1.5: 2})]",
    "[f(x={None: 1})]",
    "[f(x={(1, 2): 3})]",
    "[f(x={[1]: 2})]",
    "[f(x={**a})]",
    "[f(x={'a': 1, 'a': 2})]",
    "[f(x={'a': [1, {'b': {}}]})]",
    "[f(x={'k': {}})]",
    "[f(x={'k': {}, 'j': 1})]",
    "[f(x={'a': {'b': 1}, 'c': 2})]",
    "[f(x={a: 1})]",
    "[f(x={'a': b})]",
    "[f(x={'a': g(y=1)})]",
    "[f(x={'a': g()})]",
    "[f(x={'a': (1,)})]",
    "[f(x={b'k': 1})]",
    "[f(x={-1: 1})]",
    "[f(x={'a': {'b': 1}, 1: {'c': 2}})]",
    "[f(x={'e\u00e9': '\u00e9'})]",
    # subscripts are their text
    "[f(x=a[0])]",
    "[f(x=a[1:2])]",
    "[f(x=a[1, 2])]",
    "[f(x=a['k'])]",
    "[f(x=(x)[0])]",
    "[f(x=f()[0])]",
    "[f(x=a[0][1])]",
    "[f(x=[1, 2][0])]",
    "[f(x=a[::2])]",
    "[f(x=a[b:c, d])]",
    # everything else is undecodable
    "[f(x=a.b)]",
    "[f(x=f'{y}')]",
    "[f(x=1 < 2)]",
    "[f(x=a and b)]",
    "[f(x=lambda: 1)]",
    "[f(x={1, 2})]",
    "[f(x=[i for i in y])]",
    "[f(x=a if b else c)]",
    "[f(x=(y := 1))]",
    "[f(x=[*a])]",
    "[f(x={i: i for i in y})]",
    "[f(x=(i for i in y))]",
    "[f(x='a'.upper)]",
    # function-calling keywords in text (D11) and ground-truth look-alikes
    "[f(from=1)]",
    "[ls(a=True), pwd()]",
    "[mv(source='a.txt', destination='b')]",
    "[mkdir(dir_name='x (y)')]",
]

FC_STEPS: list[Any] = [
    None,
    "",
    "abc",
    [],
    {},
    [{}],
    1,
    True,
    1.5,
    [None],
    [1],
    ["f"],
    [[]],
    [{}, {}],
    {"f": "{}"},
    [{"f": "{}"}],
    [{"f": '{"a": 1}'}],
    {"f": {"a": 1}},
    [{"f": {"a": [1, 2]}}],
    [{"f": {}}],
    [{"f": "[1]"}],
    [{"f": "null"}],
    [{"f": "1"}],
    [{"f": '"s"'}],
    [{"f": ""}],
    [{"f": "{bad"}],
    [{"f": None}],
    [{"f": 1}],
    [{"f": []}],
    [{"f": True}],
    [{"f": '{"a": NaN}'}],
    [{"f": '{"a": Infinity}'}],
    [{"f": '{"a": -Infinity}'}],
    [{"f": '{"a": 1e400}'}],
    [{"f": '{"a": 1.0}'}],
    [{"f": '{"lines": 20.0}'}],
    [{"f": '{"a": 1E5}'}],
    [{"f": '{"a": -0.0}'}],
    [{"f": '{"a": true, "b": false, "c": null}'}],
    [{"f": '{"a": {"b": {"c": [1, {"d": 2}]}}}'}],
    [{"f": '{"a": [1, "x", [2.5]]}'}],
    [{"f": '{"a": 1, "b": 2, "a": 3}'}],
    {"f": "{}", "g": '{"x": 1}'},
    [{"f": "{}"}, {"g": '{"x": 1}'}],
    [{"f": "{}"}, 1],
    [{"f": "{}"}, {"g": "nope"}],
    [{"f": '{"a": "caf\\u00e9"}'}],
    [{"f": '{"a": "\\ud83d\\ude00"}'}],
    [{"f": '{"a": "\\ud800"}'}],
    [{"f": '{"a": "a\\nb"}'}],
    [{"f": '{"a\'b": 1}'}],
    [{"f": '{"a\\"b": 1}'}],
    [{"f": '{"from": "x"}'}],
    [{"f": '{"a b": 1}'}],
    [{"f": '{"": 1}'}],
    [{"": '{"a": 1}'}],
    [{"a.b": "{}"}],
    [{"open(file='x').close": "{}"}],
    [{"ls": "{\"a=True) if open('x') else ls(a\": 1}"}],
    [{"__import__": '{"name": "os"}'}],
    [{"f": '{"a": 1' + "0" * 5000 + "}"}],
    [{"f": "[" * 2000 + "]" * 2000}],
    [{"f": '{"a": ' + "[" * 500 + "]" * 500 + "}"}],
    [{"f": ' {"a": 1} '}],
    [{"f": '{"a": 1} x'}],
    [{"f": '{"a": "x\ty"}'}],
    [{"f": '{"a": "it\'s"}'}],
    [{"f": '{"a": "\\u00e9"}'}],
    [{"f": '{"a": 12345678901234567890}'}],
    [{"f": '{"a": 0.1}'}],
    [{"f": '{"a": 1e-7}'}],
    [{"f": '{"a": 1e16}'}],
    [{"f": '{"a": -5}'}],
    [{"f": '{"a": ["x", "y"], "b": {"c": null}}'}],
    [{"cd": '{"folder": "document"}'}, {"mkdir": '{"dir_name": "temp"}'}],
    [{"f": {"a": "1"}}],
    [{"f": {"a": None, "b": [None]}}],
    [{"f": {"a": {"b": {}}}}],
    [{"f": '{"a": {}}'}],
]

FC_STEPS.append([{"f": '{"a": "' + "x" * 10_000 + '"}'}])
PROMPT_STEPS.append("[f(x='" + "y" * 10_000 + "')]")
PROMPT_STEPS += [None, [], {}, 1, True, ["[f(x=1)]"], {"f": "{}"}]  # not text: what a text decoder makes of them


def harmless(step: str) -> bool:
    """Whether upstream's prompting decoder evaluates nothing but small arithmetic on literals for this step."""
    text = step.strip("`\n ")
    text = ("" if text.startswith("[") else "[") + text + ("" if text.endswith("]") else "]")
    try:
        tree = ast.parse(text.strip().strip("'"), mode="eval")
    except Exception:
        return True  # upstream fails to parse it too, before any eval
    literal = (
        ast.BinOp,
        ast.UnaryOp,
        ast.Constant,
        ast.List,
        ast.Tuple,
        ast.Set,
        ast.Dict,
        ast.operator,
        ast.unaryop,
        ast.expr_context,
    )
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            for inner in ast.walk(node):
                if not isinstance(inner, literal):
                    return False
                if isinstance(inner, ast.Constant) and isinstance(inner.value, int) and abs(inner.value) > 10**6:
                    return False
                if isinstance(inner, ast.Constant) and isinstance(inner.value, (str, bytes)) and len(inner.value) > 100:
                    return False
                if isinstance(inner, ast.BinOp) and isinstance(inner.op, (ast.Pow, ast.LShift)):
                    for exponent in ast.walk(inner.right):  # small exponents only: no huge value to build
                        if isinstance(exponent, ast.operator) and not isinstance(exponent, (ast.Add, ast.Sub, ast.Div)):
                            return False
                        if (
                            isinstance(exponent, ast.Constant)
                            and isinstance(exponent.value, (int, float))
                            and abs(exponent.value) > 2000
                        ):
                            return False
    return True


def arithmetic_steps(count: int) -> list[str]:
    """Seeded random arithmetic on small literals, each a harmless step (upstream evaluates its text)."""
    rng = random.Random(43)
    numbers = ["0", "1", "2", "3", "-1", "+2", "7", "0.5", "1.5", "-2.5", "1e3", "2j", "True", "False", "(-3)"]
    others = ["None", "'a'", "'bc'", "''", "b'x'", "[1]", "[]", "(1,)", "()", "[1, 'a']", "{1}", "{'k': 1}", "..."]
    operators = ["+", "-", "*", "/", "//", "%", "**", "<<", ">>", "|", "&", "^", "@"]

    def expression(depth: int, top: bool = False) -> str:
        if depth == 0 or (not top and rng.random() < 0.3):
            return rng.choice(numbers if rng.random() < 0.95 else others)
        if not top and rng.random() < 0.15:
            return f"({rng.choice(['-', '+', '~', 'not '])}({expression(depth - 1)}))"
        operator = rng.choice(operators[:7] if rng.random() < 0.8 else operators)
        return f"({expression(depth - 1)} {operator} {expression(depth - 1)})"

    steps: list[str] = []
    while len(steps) < count:
        step = f"[f(x={expression(3, top=True)})]"
        if harmless(step) and step not in steps:
            steps.append(step)
    return steps


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--output", type=Path, default=OUTPUT, help="the corpus file (default: %(default)s)")
    options = parser.parse_args()

    from bfcl_eval.model_handler.utils import convert_to_function_call, default_decode_execute_prompting

    decoders = {"prompt": default_decode_execute_prompting, "fc": convert_to_function_call}

    def upstream(mode: str, step: Any) -> list[str] | None:
        if mode == "prompt" and isinstance(step, str) and not harmless(step):
            sys.exit(f"refusing a step upstream would evaluate: {step!r}")
        try:
            calls = decoders[mode](copy.deepcopy(step))
        except Exception:  # upstream's caller drops the step on any exception
            return None
        assert isinstance(calls, list) and all(isinstance(call, str) for call in calls), (step, calls)
        return calls

    rows = [
        {"mode": mode, "raw": step, "calls": upstream(mode, step)}
        for mode, steps in (("prompt", PROMPT_STEPS + arithmetic_steps(300)), ("fc", FC_STEPS))
        for step in steps
    ]
    digests = {
        case.key: decode_cases.case_digest(case.mode, case.raw, upstream(case.mode, case.raw))
        for case in decode_cases.ground_truth_cases(options.data_dir)
    }
    record = {
        "about": ABOUT,
        "bfcl_eval": importlib.metadata.version("bfcl-eval"),
        "python": platform.python_version(),
        "rows": rows,
        "ground_truth": {"count": len(digests), "digest": decode_cases.total_digest(digests), "rows": digests},
    }
    options.output.write_text(json.dumps(record, indent=0) + "\n", encoding="utf-8")
    print(f"{len(rows)} rows and {len(digests)} ground-truth digests -> {options.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
