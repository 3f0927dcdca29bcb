"""How long BFCL's Java and JavaScript decoders take on long answers that never close what they open: JSON lines.

    python perf/bfcl_long_answers.py                        # 192 KB and 1,000,000 characters
    python perf/bfcl_long_answers.py --chars 196608 --shape comment-openers --cap 900

Each measurement is one fresh process decoding one answer with `decode_prompting`, the decoder the checker calls,
stopped after --cap seconds (then `seconds` is null). The package is imported from the checkout this script sits
in, so a copy of it in an older checkout measures that checkout's decoders. Shapes:
- `comment-openers`: ``/* `` over and over, no ``*/`` anywhere;
- `comment-unclosed`: a call, then one ``/*`` and text that never closes it;
- `string-unclosed`: a call whose first argument opens a ``"`` string that never closes (one line);
- `template-unclosed` (JavaScript only): a call whose first argument opens a template that never closes.
No data is needed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CALLS = {"java": "Cache.put(key=k1, size=5L)", "javascript": "fetchData(url='a.com', retries=3)"}
SHAPES = ("comment-openers", "comment-unclosed", "string-unclosed", "template-unclosed")

PROBE = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pytest_tooleval.suites.bfcl.decode import DecodeError, decode_prompting
language, text = sys.argv[2], sys.stdin.read()
started = time.perf_counter()
try:
    decode_prompting(text, language)
    error = ""
except DecodeError as exc:
    error = str(exc)
print(json.dumps({"seconds": time.perf_counter() - started, "error": error[:120]}))
"""


def answer(language: str, shape: str, chars: int) -> str:
    call = CALLS[language]
    opened = call[: call.index("=") + 1]
    head, unit = {
        "comment-openers": ("", "/* "),
        "comment-unclosed": (call + "; /* ", "lorem ipsum "),
        "string-unclosed": (opened + '"', "lorem ipsum "),
        "template-unclosed": (opened + "`", "lorem ipsum\n"),
    }[shape]
    return head + unit * ((chars - len(head)) // len(unit))


def measure(language: str, shape: str, chars: int, cap: float) -> dict[str, object]:
    text = answer(language, shape, chars)
    row: dict[str, object] = {"language": language, "shape": shape, "chars": len(text)}
    try:
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(ROOT), language],
            input=text,
            capture_output=True,
            text=True,
            check=True,
            timeout=cap,
        )
    except subprocess.TimeoutExpired:
        return {**row, "seconds": None, "error": f"stopped after {cap:g} s"}
    return {**row, **json.loads(done.stdout)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--chars", default="196608,1000000", help="answer lengths, comma-separated")
    parser.add_argument("--shape", choices=SHAPES, action="append", help="repeatable; default: every shape")
    parser.add_argument("--language", choices=sorted(CALLS), action="append", help="repeatable; default: both")
    parser.add_argument("--cap", type=float, default=600.0, help="seconds before a measurement is stopped")
    args = parser.parse_args()
    for chars in (int(part) for part in args.chars.split(",")):
        for shape in args.shape or SHAPES:
            for language in args.language or sorted(CALLS):
                if shape == "template-unclosed" and language == "java":
                    continue
                print(json.dumps(measure(language, shape, chars, args.cap)), flush=True)


if __name__ == "__main__":
    main()
