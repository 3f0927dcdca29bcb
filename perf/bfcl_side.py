"""bfcl-eval's own generator against the fake OpenAI server: its throughput, for comparison with `run.py`.

    python perf/bfcl_side.py --latency 1.0 --threads 64

Runs `bfcl generate --model gpt-4o-2024-11-20 --test-category simple_python,multiple,parallel,parallel_multiple
--num-threads 64` (prompting mode, one request per sample) as a subprocess in a fresh BFCL_PROJECT_ROOT and
prints one JSON line: samples (results written), requests (what bfcl sent), wall_s (process start to exit),
ideal_s (samples x latency / threads), efficiency (ideal / wall), first_request_s (start-up before the first
request), after_last_answer_s (from the last answer to exit), peak_in_flight (bfcl's requests at once).
As a script it also reports the server's own count and peak (server_requests, server_peak_in_flight).

bfcl's OpenAI models all use the Responses API (POST /v1/responses), which the fake does not serve; a bridge
here takes those requests, asks the fake's /v1/chat/completions once for each, and answers in the Responses
format. It adds one local hop per request (answer_mean_s shows the time a request spent in it).

bfcl-eval is never a dependency of the project. Build its venv outside the repository (its torch-based
memory-category dependencies, sentence-transformers and faiss-cpu, are left out; nothing here imports them):

    python3 -m venv /tmp/bfcl-gen
    /tmp/bfcl-gen/bin/pip install --no-deps bfcl-eval==2026.3.23
    /tmp/bfcl-gen/bin/pip install "tree_sitter==0.21.3" "tree-sitter-java==0.21.0" "tree-sitter-javascript==0.21.4" \
        "numpy==1.26.4" pandas tqdm "mpmath==1.3.0" overrides "filelock==3.20.0" python-dotenv pydantic tabulate \
        typer requests "networkx==3.3" tenacity openai "anthropic>=0.75.0" beautifulsoup4 boto3 "cohere==5.18.0" \
        "datamodel-code-generator==0.25.7" "google-genai>=1.52.0" google-search-results html2text huggingface_hub \
        "mistralai==1.7.0" qwen-agent "rank_bm25==0.2.2" "writer-sdk>=2.1.0" soundfile
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL = "gpt-4o-2024-11-20"
CATEGORIES = "simple_python,multiple,parallel,parallel_multiple"
# the install commands of the docstring, on one line
_COMMANDS = (__doc__ or "").split("outside the repository", 1)[-1].split("\n\n", 1)[-1].replace("\\\n", " ")
BUILD = " && ".join(" ".join(command.split()) for command in _COMMANDS.strip().splitlines())


class BfclMissing(RuntimeError):
    pass


def run_bfcl_generate(
    base_url: str, *, threads: int = 64, categories: str = CATEGORIES, venv: str = "/tmp/bfcl-gen", latency_s: float
) -> dict[str, Any]:
    """Run `bfcl generate` against the chat-completions server at `base_url` (…/v1); its measures as a dict."""
    bfcl = Path(venv) / "bin" / "bfcl"
    installed = sorted(Path(venv).glob("lib/python*/site-packages/bfcl_eval-*.dist-info"))
    if not bfcl.exists() or not installed:
        raise BfclMissing(f"no bfcl-eval in {venv}; build it: {BUILD}")
    version = installed[-1].name.removeprefix("bfcl_eval-").removesuffix(".dist-info")
    with _Bridge(base_url) as bridge, tempfile.TemporaryDirectory(prefix="bfcl-gen-") as root:
        env = {
            **os.environ,
            "BFCL_PROJECT_ROOT": root,
            "OPENAI_BASE_URL": bridge.base_url,
            "OPENAI_API_KEY": "sk-fake",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
        }
        command = [
            str(bfcl),
            "generate",
            "--model",
            MODEL,
            "--test-category",
            categories,
            "--num-threads",
            str(threads),
        ]
        with open(Path(root) / "bfcl.log", "w+") as log:
            started = time.monotonic()
            code = subprocess.run(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
            wall = time.monotonic() - started
            log.seek(0)
            if code:
                raise RuntimeError(f"bfcl generate exited with {code}:\n{log.read()[-3000:]}")
        samples = sum(
            1
            for path in Path(root, "result").rglob("*_result.json")
            for line in path.read_text().splitlines()
            if line.strip()
        )
    ideal = samples * latency_s / threads
    return {
        "tool": "bfcl generate",
        "version": version,
        "threads": threads,
        "samples": samples,
        "requests": len(bridge.arrivals),
        "wall_s": round(wall, 2),
        "ideal_s": round(ideal, 2),
        "efficiency": round(ideal / wall, 3),
        "first_request_s": round(min(bridge.arrivals) - started, 2) if bridge.arrivals else None,
        "after_last_answer_s": round(started + wall - max(bridge.answered), 2) if bridge.answered else None,
        "peak_in_flight": bridge.peak_in_flight,
        "answer_mean_s": round(statistics.fmean(bridge.durations), 4) if bridge.durations else None,
    }


class _Bridge(ThreadingHTTPServer):
    """POST /v1/responses answered by one POST to the upstream /v1/chat/completions; arrivals timed."""

    daemon_threads = True
    request_queue_size = 1024  # 64 connections open at once

    def __init__(self, upstream: str) -> None:
        super().__init__(("127.0.0.1", 0), _BridgeHandler)
        url = urllib.parse.urlsplit(upstream)
        self.upstream = (url.hostname or "127.0.0.1", url.port or 80, url.path.rstrip("/") + "/chat/completions")
        self.base_url = f"http://127.0.0.1:{self.server_address[1]}/v1"
        self.lock = threading.Lock()
        self.arrivals: list[float] = []
        self.answered: list[float] = []
        self.durations: list[float] = []
        self.in_flight = self.peak_in_flight = 0
        self._thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> _Bridge:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()
        self.server_close()


class _BridgeHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Bridge
    _upstream: http.client.HTTPConnection | None = None  # one keep-alive connection per client connection

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        arrived = time.monotonic()
        bridge = self.server
        with bridge.lock:
            bridge.arrivals.append(arrived)
            bridge.in_flight += 1
            bridge.peak_in_flight = max(bridge.peak_in_flight, bridge.in_flight)
        try:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            status, body = (
                self._ask(_chat_request(request))
                if self.path.rstrip("/") == "/v1/responses"
                else (404, {"error": {"message": f"Unknown path {self.path}", "type": "invalid_request_error"}})
            )
            data = json.dumps(_response(body) if status == 200 else body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        finally:
            with bridge.lock:
                bridge.in_flight -= 1
                bridge.answered.append(time.monotonic())
                bridge.durations.append(bridge.answered[-1] - arrived)

    def _ask(self, chat: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        host, port, path = self.server.upstream
        if self._upstream is None:
            self._upstream = http.client.HTTPConnection(host, port, timeout=600)
        self._upstream.request(
            "POST", path, json.dumps(chat), {"Content-Type": "application/json", "Authorization": "Bearer sk-fake"}
        )
        answer = self._upstream.getresponse()
        return answer.status, json.loads(answer.read())


def _chat_request(request: dict[str, Any]) -> dict[str, Any]:
    """A Responses API request (text input items only, as bfcl's prompting mode sends) as chat completions."""
    items = request.get("input") or []
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    messages = [
        {
            "role": "system" if item.get("role") == "developer" else item.get("role", "user"),
            "content": item["content"]
            if isinstance(item.get("content"), str)
            else "".join(part.get("text", "") for part in item.get("content") or []),
        }
        for item in items
        if isinstance(item, dict)
    ]
    chat = {"model": request.get("model"), "messages": messages}
    if "temperature" in request:
        chat["temperature"] = request["temperature"]
    return chat


def _response(completion: dict[str, Any]) -> dict[str, Any]:
    """A chat completion as a Responses API object (one output message)."""
    text = completion["choices"][0]["message"].get("content") or ""
    usage = completion.get("usage") or {}
    tokens_in, tokens_out = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    return {
        "id": "resp_" + completion.get("id", "fake"),
        "object": "response",
        "created_at": completion.get("created"),
        "model": completion.get("model"),
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "temperature": None,
        "top_p": None,
        "output": [
            {
                "type": "message",
                "id": "msg_fake",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "usage": {
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--latency", type=float, default=1.0, help="seconds before every answer. Default: 1")
    parser.add_argument("--threads", type=int, default=64, help="bfcl's --num-threads. Default: 64")
    parser.add_argument("--categories", default=CATEGORIES)
    parser.add_argument("--venv", default="/tmp/bfcl-gen")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from fake_openai import FakeOpenAI

    with FakeOpenAI(latency_s=args.latency, default="[turn_on_wifi()]") as server:
        try:
            result = run_bfcl_generate(
                server.base_url,
                threads=args.threads,
                categories=args.categories,
                venv=args.venv,
                latency_s=args.latency,
            )
        except BfclMissing as missing:
            sys.exit(str(missing))
        result.update(server_requests=server.stats.requests, server_peak_in_flight=server.stats.peak_in_flight)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
