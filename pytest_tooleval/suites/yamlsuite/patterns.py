"""The file's regular expressions, run over the model's text without ever hanging the run.

A pattern of a suite file (a `regex` matcher, `no_call`'s `regex`, a tool schema's `pattern` and
`patternProperties`) is written as a Python regular expression and searched for as `re.search` does. It is run by
RE2 (the `google-re2` binding), whose matching time is linear in the text, so no pattern backtracks without end:
`^(a+)+$` over forty a's and a b answers at once. The pattern is first turned into RE2's syntax with Python's
meaning:

- `\\d`, `\\w`, `\\s` and their negations are Unicode classes, as Python's are on text (RE2's are ASCII);
- `$` also matches before a newline that ends the text (Python's rule without MULTILINE); `\\Z` is RE2's `\\z`;
- `{,n}` is `{0,n}`; `[` inside a class is a literal (RE2 reads `[[:alpha:]]` as a POSIX class); `[\\b]` is a
  backspace; `\\uXXXX`, `\\UXXXXXXXX`, `\\N{name}` and an escaped space or non-ASCII character are code points;
  `(?#...)` comments are dropped; a leading `(?x)` (verbose) drops whitespace and `#` comments outside classes.

What RE2 cannot run in linear time (backreferences, lookaround, atomic groups, possessive repeats, conditionals)
and what it does not know (`(?x:...)` on a part of a pattern, `(?a)`, repeats past 1,000) is a problem of the
pattern, which the loader reports with the file's line. `\\b` and `\\B` stay RE2's ASCII word boundaries.

Where `google-re2` cannot be imported (a platform without its wheels), Python's `re` runs the pattern in a worker
process under a budget of `MATCH_BUDGET_MS` per search: a search that exceeds it kills the worker and raises
`MatchTimeout`, which the scorer turns into a failure of that case (`regex matcher timed out after 2000 ms`).
"""

from __future__ import annotations

import functools
import json
import queue
import re
import subprocess
import sys
import threading
import unicodedata
import warnings
from types import ModuleType
from typing import IO, Protocol

__all__ = ["MATCH_BUDGET_MS", "TIMED_OUT", "MatchTimeout", "PatternProblem", "engine", "problem", "search"]

#: The fallback's budget for one search (Python's re in a worker process, only without google-re2).
MATCH_BUDGET_MS = 2_000
#: What a search that outlived the budget says (MatchTimeout's message).
TIMED_OUT = f"regex matcher timed out after {MATCH_BUDGET_MS} ms"
_START_S = 60.0  # the fallback worker's start-up: a hang guard, not a budget

# Python's \s on text (str.isspace's characters, which `re` matches), as RE2 class items
_SPACES = (0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
           0x2028, 0x2029, 0x202F, 0x205F, 0x3000)
_WORD = r"\p{L}\p{N}_"  # Python's \w on text: letters, digits and numbers of every script, and _
_DIGIT = r"\p{Nd}"  # Python's \d on text: decimal digits of every script


def _runs(points: tuple[int, ...]) -> list[tuple[int, int]]:
    """Sorted code points as (first, last) runs."""
    runs: list[tuple[int, int]] = []
    for point in points:
        if runs and runs[-1][1] + 1 == point:
            runs[-1] = (runs[-1][0], point)
        else:
            runs.append((point, point))
    return runs


def _class_items(runs: list[tuple[int, int]]) -> str:
    return "".join(rf"\x{{{first:x}}}" if first == last else rf"\x{{{first:x}}}-\x{{{last:x}}}"
                   for first, last in runs)


def _complement(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The code points outside `runs`, surrogates left out (the text never holds one: see _utf8)."""
    gaps, start = [], 0
    for first, last in sorted([*runs, (0xD800, 0xDFFF), (0x110000, 0x110000)]):
        if first > start:
            gaps.append((start, first - 1))
        start = max(start, last + 1)
    return gaps


_SPACE = _class_items(_runs(_SPACES))
_NOT_SPACE = _class_items(_complement(_runs(_SPACES)))  # for \S inside a class
_CLASSES_OUTSIDE = {"d": _DIGIT, "D": r"\P{Nd}", "w": f"[{_WORD}]", "W": f"[^{_WORD}]",
                    "s": f"[{_SPACE}]", "S": f"[^{_SPACE}]"}
_CLASSES_INSIDE = {"d": _DIGIT, "D": r"\P{Nd}", "w": _WORD, "s": _SPACE, "S": _NOT_SPACE}
_OPEN_MINIMUM = re.compile(r"\{,(\d*)\}")
_GLOBAL_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")  # Python's flags for the whole pattern, at its start


class PatternProblem(ValueError):
    """A pattern that cannot be run: the message says why, in one line."""


class MatchTimeout(RuntimeError):
    """The fallback's search took longer than its budget (only without google-re2)."""


def engine() -> str:
    """"re2" when google-re2 can be imported, else "re" (Python's, in a worker process under a deadline)."""
    return "re" if _re2() is None else "re2"


@functools.cache
def _re2() -> ModuleType | None:
    """The `re2` module (google-re2), imported on first use; None when it cannot be."""
    try:
        import re2  # type: ignore[import-untyped]  # google-re2 has no type information
    except ImportError:
        return None
    module: ModuleType = re2
    return module


def problem(source: str) -> str | None:
    """Why `source` cannot be used as a pattern (None: it can); the loader's check."""
    try:
        _compiled(source)
    except PatternProblem as exc:
        return str(exc)
    return None


def search(source: str, text: str) -> bool:
    """Whether `source` is found in `text`, as `re.search(source, text)` answers. Raises PatternProblem for a
    pattern that cannot be used, MatchTimeout when the fallback's budget runs out."""
    compiled, ends_at_newline = _compiled(source)
    if compiled is None:
        return _fallback().search(source, text)
    if compiled.search(_utf8(text)) is not None:
        return True
    # Python's $ also matches before a final newline; RE2's only at the end: search once more without it
    return ends_at_newline and text.endswith("\n") and compiled.search(_utf8(text[:-1])) is not None


def _utf8(text: str) -> bytes:
    """The text as RE2 reads it. A lone surrogate (JSON can carry one) has no UTF-8 form: it becomes U+FFFD, one
    character as it was."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # as UTF-16 a lone surrogate is one invalid unit, which "replace" makes one U+FFFD
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode("utf-8")


class _Compiled(Protocol):
    """A compiled RE2 pattern."""

    def search(self, text: bytes) -> object | None: ...


@functools.lru_cache(maxsize=512)
def _compiled(source: str) -> tuple[_Compiled | None, bool]:
    """(the RE2 pattern, whether a second search without a final newline is needed), or (None, False) under the
    fallback; PatternProblem when the pattern is not a Python regular expression or RE2 cannot run it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # FutureWarning for "[[" and the like: the pattern means what re reads
            re.compile(source)
    except (re.error, OverflowError, RecursionError, ValueError) as exc:
        raise PatternProblem(str(exc)) from None
    re2 = _re2()
    if re2 is None:
        return None, False
    translated, dollar = _translate(source)
    options = re2.Options()
    options.log_errors = False  # RE2 would write each refused pattern to stderr
    try:
        return re2.compile(translated, options), dollar
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternProblem(f"RE2 cannot run it: {reason}; patterns run in linear time, without backreferences, "
                             "lookarounds, atomic groups or possessive repeats") from None


def _translate(source: str) -> tuple[str, bool]:
    """`source` (a valid Python pattern) in RE2's syntax with Python's meaning, and whether it has an end anchor
    `$` that Python lets match before a final newline (no second search when it also has \\Z: that end is exact)."""
    out: list[str] = []
    dollar = exact_end = in_class = verbose = False
    index, size = 0, len(source)
    while flags := _GLOBAL_FLAGS.match(source, index):  # (?x) is read here: RE2 has no verbose mode
        verbose = verbose or "x" in flags.group(1)
        kept = flags.group(1).replace("x", "")
        out.append(f"(?{kept})" if kept else "")
        index = flags.end()
    while index < size:
        char = source[index]
        if verbose and not in_class and (char.isspace() or char == "#"):
            newline = source.find("\n", index) if char == "#" else index  # a comment runs to the end of its line
            index = size if newline < 0 else newline + 1
            continue
        if char == "\\":
            escaped = source[index + 1]
            index += 2
            if escaped in _CLASSES_OUTSIDE:
                if in_class and escaped == "W":
                    raise PatternProblem(r"\W inside [...] cannot keep Python's Unicode meaning under RE2: "
                                         r"write (?:\W|[...]) instead")
                out.append((_CLASSES_INSIDE if in_class else _CLASSES_OUTSIDE)[escaped])
            elif escaped in "Zz" and not in_class:
                out.append(r"\z")
                exact_end = True
            elif escaped == "b" and in_class:
                out.append(r"\x08")
            elif escaped in "uU":
                digits = 4 if escaped == "u" else 8
                out.append(rf"\x{{{source[index:index + digits]}}}")
                index += digits
            elif escaped == "N":  # \N{NAME}
                end = source.index("}", index)
                out.append(rf"\x{{{ord(unicodedata.lookup(source[index + 1:end])):x}}}")
                index = end + 1
            elif not escaped.isascii() or escaped.isspace():  # Python's literal; RE2 knows no such escape
                out.append(rf"\x{{{ord(escaped):x}}}")
            else:
                out.append("\\" + escaped)
        elif in_class:
            if char == "]":
                in_class = False
                out.append("]")
            else:
                out.append(r"\[" if char == "[" else char)
            index += 1
        elif char == "[":
            in_class = True
            out.append("[")
            index += 1
            if source.startswith("^", index):
                out.append("^")
                index += 1
            if source.startswith("]", index):  # a ] first in a class is one of its characters
                out.append(r"\]")
                index += 1
        elif source.startswith("(?#", index):  # a comment, to the first )
            index = source.index(")", index) + 1
        elif char == "{" and (minimum := _OPEN_MINIMUM.match(source, index)):
            out.append(f"{{0,{minimum.group(1)}}}")
            index = minimum.end()
        else:
            dollar = dollar or char == "$"
            out.append(char)
            index += 1
    return "".join(out), dollar and not exact_end


# -- the fallback: Python's re in a worker process, under a deadline ---------------------------------------------

# The worker ends itself (SIGALRM's default action, where there is one) when a search outlives twice the budget:
# should the process that asked be gone (killed), no search goes on spinning on its own.
_WORKER = """\
import json, re, signal, sys
timer = getattr(signal, "setitimer", None)
sys.stdout.write("ready\\n")
sys.stdout.flush()
for line in sys.stdin:
    request = json.loads(line)
    if timer is not None:
        timer(signal.ITIMER_REAL, request["limit_s"])
    try:
        reply = {"found": re.search(request["pattern"], request["text"]) is not None}
    except Exception as exc:
        reply = {"error": type(exc).__name__ + ": " + str(exc)}
    if timer is not None:
        timer(signal.ITIMER_REAL, 0)
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""


class _Worker:
    """One worker process answering searches in turn; killed (and started again on the next search) when a search
    outlives its budget. A thread cannot be stopped in CPython; a process can."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._replies: queue.Queue[bytes] = queue.Queue()

    def search(self, source: str, text: str) -> bool:
        request = json.dumps({"pattern": source, "text": text, "limit_s": 2 * MATCH_BUDGET_MS / 1000}).encode(
            "ascii") + b"\n"  # ASCII: lone surrogates travel too
        with self._lock:
            process = self._started()
            assert process.stdin is not None
            try:
                process.stdin.write(request)
                process.stdin.flush()
                line = self._replies.get(timeout=MATCH_BUDGET_MS / 1000)
            except (OSError, queue.Empty):
                self._stop()
                raise MatchTimeout(TIMED_OUT) from None
        if not line:  # the worker died (out of memory, say): this search has no answer
            self._stop()
            raise MatchTimeout(TIMED_OUT)
        reply = json.loads(line)
        if "error" in reply:
            raise PatternProblem(reply["error"])
        return bool(reply["found"])

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._replies = replies = queue.Queue[bytes]()
        process = subprocess.Popen([sys.executable, "-I", "-c", _WORKER], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert process.stdout is not None
        threading.Thread(target=_read_lines, args=(process.stdout, replies), daemon=True,
                         name="tooleval-regex-worker").start()
        self._process = process
        try:
            if replies.get(timeout=_START_S) != b"ready\n":
                raise queue.Empty
        except queue.Empty:
            self._stop()
            raise MatchTimeout("the regex matcher's worker process did not start") from None
        return process

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()

    def close(self) -> None:
        with self._lock:
            self._stop()


def _read_lines(stream: IO[bytes], replies: queue.Queue[bytes]) -> None:
    try:
        for line in iter(stream.readline, b""):
            replies.put(line)
    except (OSError, ValueError):  # closed under it: the worker was stopped
        pass
    replies.put(b"")  # end of the worker's output


@functools.cache
def _fallback() -> _Worker:
    import atexit

    worker = _Worker()
    atexit.register(worker.close)
    return worker
