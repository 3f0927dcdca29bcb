"""bfcl-eval's own generator against the fake OpenAI server: its throughput, for comparison with `run.py`.

    python perf/bfcl_side.py --latency 1.0 --threads 64

Runs `bfcl generate --model gpt-4o-2024-11-20 --test-category simple_python,multiple,parallel,parallel_multiple
--num-threads 64` (prompting mode, one request per sample) as a subprocess in a fresh BFCL_PROJECT_ROOT and
prints one JSON line: samples (results written), requests (what bfcl sent), wall_s (process start to exit),
ideal_s (samples x latency / threads), efficiency (ideal / wall), first_request_s (start-up before the first
request), after_last_answer_s (from the last answer to exit), peak_in_flight (bfcl's requests at once).
As a script it also reports the server's own count and peak (server_requests, server_peak_in_flight).

bfcl's OpenAI models use the Responses API (POST /v1/responses). A model served behind an OpenAI-compatible
endpoint (vLLM, Ollama, ...) goes through bfcl's chat-completions handler, `OpenAICompletionsHandler`, which is
what this measures: a two-line launcher gives the model's entry that handler (its prompting mode, as for the model
itself) and then runs bfcl's own command line, which posts to the fake's /v1/chat/completions directly.
cpu_s is the user plus system time of bfcl's process and every thread of it.

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
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MODEL = "gpt-4o-2024-11-20"
CATEGORIES = "simple_python,multiple,parallel,parallel_multiple"
# the install commands of the docstring, on one line
_COMMANDS = (__doc__ or "").split("outside the repository", 1)[-1].split("\n\n", 1)[-1].replace("\\\n", " ")
BUILD = " && ".join(" ".join(command.split()) for command in _COMMANDS.strip().splitlines())


class BfclMissing(RuntimeError):
    pass


# bfcl's command line with the model's entry given the chat-completions handler: argv[1] is the model, the rest
# are `bfcl`'s arguments
LAUNCH = """
import sys
from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING
from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler
MODEL_CONFIG_MAPPING[sys.argv[1]].model_handler = OpenAICompletionsHandler
from bfcl_eval.__main__ import cli
sys.argv = ["bfcl", *sys.argv[2:]]
sys.exit(cli())
"""


def run_bfcl_generate(
    server: Any,
    *,
    threads: int = 64,
    categories: str = CATEGORIES,
    venv: str = "/tmp/bfcl-gen",
    latency_s: float,
) -> dict[str, Any]:
    """Run `bfcl generate` against `server` (tests/fake_openai.py's FakeOpenAI); its measures as a dict."""
    python = Path(venv) / "bin" / "python"
    installed = sorted(Path(venv).glob("lib/python*/site-packages/bfcl_eval-*.dist-info"))
    if not python.exists() or not installed:
        raise BfclMissing(f"no bfcl-eval in {venv}; build it: {BUILD}")
    version = installed[-1].name.removeprefix("bfcl_eval-").removesuffix(".dist-info")
    before = len(server.stats.received)
    with tempfile.TemporaryDirectory(prefix="bfcl-gen-") as root:
        env = {
            **os.environ,
            "BFCL_PROJECT_ROOT": root,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-fake",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
        }
        command = [
            str(python),
            "-c",
            LAUNCH,
            MODEL,
            "generate",
            "--model",
            MODEL,
            "--test-category",
            categories,
            "--num-threads",
            str(threads),
        ]
        with open(Path(root) / "bfcl.log", "w+") as log:
            children = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.monotonic()
            code = subprocess.run(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
            wall = time.monotonic() - started
            ended = resource.getrusage(resource.RUSAGE_CHILDREN)
            log.seek(0)
            if code:
                raise RuntimeError(f"bfcl generate exited with {code}:\n{log.read()[-3000:]}")
        samples = sum(
            1
            for path in Path(root, "result").rglob("*_result.json")
            for line in path.read_text().splitlines()
            if line.strip()
        )
    arrivals = [request.at for request in server.stats.received[before:]]
    ideal = samples * latency_s / threads
    return {
        "tool": "bfcl generate",
        "handler": "OpenAICompletionsHandler",
        "version": version,
        "threads": threads,
        "samples": samples,
        "requests": len(arrivals),
        "wall_s": round(wall, 2),
        "cpu_s": round(ended.ru_utime - children.ru_utime + ended.ru_stime - children.ru_stime, 2),
        "ideal_s": round(ideal, 2),
        "efficiency": round(ideal / wall, 3),
        "first_request_s": round(min(arrivals) - started, 2) if arrivals else None,
        # the fake answers every request after its latency: the last answer left then
        "after_last_answer_s": round(started + wall - max(arrivals) - latency_s, 2) if arrivals else None,
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
                server,
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
