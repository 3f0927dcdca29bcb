"""Probe a llama-cpp-python server for the behaviours that matter to pytest-tooleval, and print what was seen.

    python real_server/quirks.py BASE_URL MODEL [LABEL]

BASE_URL ends in /v1. Standard library only; a few small requests, each bounded by a 180 s timeout. Each check
prints one Markdown line with the numbers it saw, so the conclusion can be checked against them. The last
check sends a tool whose parameter has a regex `pattern`; it runs last because it may take the server down.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request
from typing import Any

TIMEOUT = 180.0

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather forecast for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "enum": ["Paris", "Rome"]}},
            "required": ["city"],
        },
    },
}
DATED = {
    "type": "function",
    "function": {  # a pattern as ACEBench writes them (en special_error_param_0)
        "name": "get_report",
        "description": "A report for one day.",
        "parameters": {
            "type": "object",
            "properties": {"date": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"}},
            "required": ["date"],
        },
    },
}
SYSTEM = {
    "role": "system",
    "content": "You are a friendly assistant. Only call a function when the user asks about "
    "the weather; otherwise reply with a message.",
}
ASK = [SYSTEM, {"role": "user", "content": "What is the weather in Paris?"}]


def post(base_url: str, path: str, body: dict[str, Any]) -> tuple[int, Any, float]:
    """(HTTP status, parsed body or text, seconds); status 0 when nothing answered."""
    request = urllib.request.Request(
        base_url.rstrip("/") + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    except (OSError, TimeoutError) as exc:
        return 0, f"{type(exc).__name__}: {exc}", time.monotonic() - started
    try:
        return status, json.loads(raw), time.monotonic() - started
    except ValueError:
        return status, raw.decode(errors="replace")[:300], time.monotonic() - started


def usage(body: Any, key: str) -> int | None:
    return body.get("usage", {}).get(key) if isinstance(body, dict) else None


def message(body: Any) -> dict[str, Any]:
    try:
        return dict(body["choices"][0]["message"])
    except (KeyError, IndexError, TypeError):
        return {}


def finish(body: Any) -> Any:
    try:
        return body["choices"][0]["finish_reason"]
    except (KeyError, IndexError, TypeError):
        return None


def count_tokens(base_url: str, model: str, text: str) -> int | None:
    root = base_url.rstrip("/").removesuffix("/v1")
    status, body, _ = post(root, "/extras/tokenize/count", {"model": model, "input": text})
    return body.get("count") if status == 200 and isinstance(body, dict) else None


def chat(base_url: str, model: str, **fields: Any) -> tuple[int, Any, float]:
    return post(base_url, "/chat/completions", {"model": model, "temperature": 0, **fields})


def check_tool_choice(base_url: str, model: str) -> str:
    _, plain, _ = chat(base_url, model, messages=ASK, max_tokens=16)
    _, without, _ = chat(base_url, model, messages=ASK, tools=[WEATHER], max_tokens=16)
    status, auto, _ = chat(base_url, model, messages=ASK, tools=[WEATHER], tool_choice="auto", max_tokens=16)
    p0, p1, p2 = usage(plain, "prompt_tokens"), usage(without, "prompt_tokens"), usage(auto, "prompt_tokens")
    dropped = p0 is not None and p0 == p1
    calls = message(auto).get("tool_calls")
    return (
        f"tools without tool_choice: prompt_tokens {p1} (no tools: {p0}) -> "
        f"{'the tools are left out of the prompt' if dropped else 'the tools reach the prompt'}; "
        f"with tool_choice auto: HTTP {status}, prompt_tokens {p2}, finish_reason {finish(auto)!r}, "
        f"{'a tool call' if calls else 'no tool call'}"
    )


def check_system_message(base_url: str, model: str) -> str:
    bare = [{"role": "user", "content": "What is the weather in Paris?"}]
    _, plain, _ = chat(base_url, model, messages=bare, max_tokens=16)
    _, without, _ = chat(base_url, model, messages=bare, tools=[WEATHER], tool_choice="auto", max_tokens=16)
    _, with_system, _ = chat(base_url, model, messages=ASK, tools=[WEATHER], tool_choice="auto", max_tokens=16)
    _, system_only, _ = chat(base_url, model, messages=ASK, max_tokens=16)
    p0, p1 = usage(plain, "prompt_tokens"), usage(without, "prompt_tokens")
    p2, p3 = usage(system_only, "prompt_tokens"), usage(with_system, "prompt_tokens")
    if None in (p0, p1, p2, p3):
        return f"could not measure (prompt_tokens {p0}, {p1}, {p2}, {p3})"
    alone, beside = p1 - p0, p3 - p2  # type: ignore[operator]
    verdict = (
        "the tool list never reaches the prompt"
        if alone <= 0 and beside <= 0
        else "the tool list is rendered only into a system message"
        if alone * 5 < beside
        else "the tool list reaches the prompt either way"
    )
    return (
        f"tool_choice auto: the tool adds {alone} prompt tokens without a system message ({p0} -> {p1}), "
        f"{beside} with one ({p2} -> {p3}) -> {verdict}"
    )


def check_words(base_url: str, model: str) -> str:
    seen = []
    for text in ("Say hello to me.", "Thank you, goodbye.", "What is 2+2?"):
        asked = [SYSTEM, {"role": "user", "content": text}]
        status, body, _ = chat(base_url, model, messages=asked, tools=[WEATHER], tool_choice="auto", max_tokens=64)
        answer = message(body)
        if status == 200 and not answer.get("tool_calls"):
            return (
                f"{text!r} with a tool offered (tool_choice auto): finish_reason {finish(body)!r}, content "
                f"{json.dumps(answer.get('content'))}, completion_tokens {usage(body, 'completion_tokens')}"
            )
        seen.append(f"{text!r}: HTTP {status}, {'a tool call' if answer.get('tool_calls') else 'no answer'}")
    return "no answer in words came (" + "; ".join(seen) + ")"


def check_null_content(base_url: str, model: str) -> str:
    call = {"id": "call_0", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    results = []
    for content in (None, ""):
        messages = [
            *ASK,
            {"role": "assistant", "content": content, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_0", "content": "sunny, 21 C"},
        ]
        status, body, _ = chat(base_url, model, messages=messages, max_tokens=16)
        detail = "" if status == 200 else f" ({json.dumps(body)[:120]})"
        results.append(f"content {json.dumps(content)}: HTTP {status}{detail}")
    return "assistant tool-call message, " + "; ".join(results)


def check_escaping(base_url: str, model: str) -> str:
    quotes, entities = "'" * 60, "&#39;" * 60
    _, empty, _ = chat(base_url, model, messages=[{"role": "user", "content": "x"}], max_tokens=1)
    _, quoted, _ = chat(base_url, model, messages=[{"role": "user", "content": "x" + quotes}], max_tokens=1)
    base, seen = usage(empty, "prompt_tokens"), usage(quoted, "prompt_tokens")
    as_written = count_tokens(base_url, model, "x" + quotes)
    as_escaped = count_tokens(base_url, model, "x" + entities)
    one = count_tokens(base_url, model, "x")
    if None in (base, seen, as_written, as_escaped, one):
        return f"could not measure (prompt_tokens {base}, {seen}; token counts {as_written}, {as_escaped}, {one})"
    grew = seen - base  # type: ignore[operator]
    written, escaped = as_written - one, as_escaped - one  # type: ignore[operator]
    verdict = (
        "the prompt is HTML-escaped (' sent as &#39;)"
        if abs(grew - escaped) < abs(grew - written)
        else "the prompt is rendered as written"
    )
    return (
        f"60 apostrophes in a user message add {grew} prompt tokens; as written they are {written} tokens, "
        f"as &#39; entities {escaped} -> {verdict}"
    )


def check_max_completion_tokens(base_url: str, model: str) -> str:
    count = [{"role": "user", "content": "Count from 1 to 40, the numbers separated by commas."}]
    status, body, _ = chat(base_url, model, messages=count, max_completion_tokens=8)
    got = usage(body, "completion_tokens")
    return (
        f"max_completion_tokens 8: HTTP {status}, completion_tokens {got}, finish_reason {finish(body)!r} -> "
        f"{'ignored' if isinstance(got, int) and got > 8 else 'honoured'}"
    )


def check_max_tokens_with_tools(base_url: str, model: str) -> str:
    status, body, _ = chat(base_url, model, messages=ASK, tools=[WEATHER], tool_choice="auto", max_tokens=2)
    got = usage(body, "completion_tokens")
    calls = message(body).get("tool_calls") or []
    arguments = calls[0]["function"]["arguments"] if calls else message(body).get("content")
    return (
        f"tools with tool_choice auto and max_tokens 2: HTTP {status}, completion_tokens {got}, "
        f"finish_reason {finish(body)!r}, answer {json.dumps(arguments)[:80]} -> "
        f"{'max_tokens not applied' if isinstance(got, int) and got > 2 else 'max_tokens applied'}"
    )


def check_context(base_url: str, model: str, n_ctx: int) -> str:
    filler = "apple " * 10
    per = count_tokens(base_url, model, filler) or 20
    near = filler * max(1, (n_ctx - 100) // per)  # a plain completion of it goes on with more apples
    status, body, _ = post(
        base_url, "/completions", {"model": model, "prompt": near, "max_tokens": 1200, "temperature": 0}
    )
    prompt, got = usage(body, "prompt_tokens"), usage(body, "completion_tokens")
    shortened = (
        isinstance(prompt, int)
        and isinstance(got, int)
        and got < 1200
        and prompt + got >= n_ctx - 1
        and finish(body) == "length"
    )
    first = (
        f"/v1/completions, a prompt of {prompt} tokens with max_tokens 1200 in n_ctx {n_ctx}: HTTP {status}, "
        f"completion_tokens {got}, finish_reason {finish(body)!r}"
        f"{' -> max_tokens was shortened to the room left in the context' if shortened else ''}"
    )
    over = filler * (n_ctx * 13 // 10 // per)
    status, body, _ = chat(base_url, model, messages=[{"role": "user", "content": over}], max_tokens=16)
    error = body.get("error", body) if isinstance(body, dict) else body
    return f"{first}; a chat prompt over n_ctx: HTTP {status} {json.dumps(error)[:200]}"


def check_pattern(base_url: str, model: str) -> str:
    results = []
    for choice in ("auto", {"type": "function", "function": {"name": "get_report"}}):
        asked = [SYSTEM, {"role": "user", "content": "Get the report for 2024-05-01."}]
        status, body, seconds = chat(base_url, model, messages=asked, tools=[DATED], tool_choice=choice, max_tokens=32)
        calls = message(body).get("tool_calls") or []
        answer = calls[0]["function"]["arguments"] if calls else body if status != 200 else message(body).get("content")
        results.append(
            f"tool_choice {json.dumps(choice) if isinstance(choice, str) else 'named'}: HTTP {status} "
            f"in {seconds:.1f} s, {json.dumps(answer)[:120]}"
        )
    alive, _, _ = post(base_url, "/chat/completions", {"model": model, "messages": ASK, "max_tokens": 1})
    return (
        "a parameter with pattern ^\\d{4}-\\d{2}-\\d{2}$: "
        + "; ".join(results)
        + f"; the server afterwards: {'answers' if alive == 200 else f'does not answer (status {alive})'}"
    )


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    base_url, model = argv[0], argv[1]
    label = argv[2] if len(argv) > 2 else base_url
    n_ctx = int(argv[3]) if len(argv) > 3 else 4096
    checks = [
        ("tool_choice", lambda: check_tool_choice(base_url, model)),
        ("system message", lambda: check_system_message(base_url, model)),
        ("words with tools", lambda: check_words(base_url, model)),
        ("null content", lambda: check_null_content(base_url, model)),
        ("escaping", lambda: check_escaping(base_url, model)),
        ("max_completion_tokens", lambda: check_max_completion_tokens(base_url, model)),
        ("max_tokens with tools", lambda: check_max_tokens_with_tools(base_url, model)),
        ("context", lambda: check_context(base_url, model, n_ctx)),
        ("pattern", lambda: check_pattern(base_url, model)),
    ]
    print(f"Server checks ({label}):")
    for name, check in checks:
        try:
            print(f"- {name}: {check()}")
        except Exception as exc:  # a check that breaks says so and the others still run
            print(f"- {name}: the check failed: {type(exc).__name__}: {exc}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
