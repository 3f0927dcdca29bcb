"""Record bfcl-eval's own multi-turn driving loop on the loop scripts: digests only
(docs/bfcl-multi-turn.md#the-driving-loop).

Run in a scratch venv that has bfcl-eval 2026.3.23, openai 3.63.0 and what the handlers import
(../shared/tools/bfcl-reference/README.md), never in CI and never with the project's package:

    /tmp/bfcl-ref-mt/bin/python tests/unit/bfcl/multi_turn/record_loop.py --data-dir ../shared/data/bfcl

It runs `OpenAICompletionsHandler.inference` (the FC loop with an `-FC` registry name, the prompting loop
without) against a loopback chat-completions fake that answers with each script's assistant messages in order,
captures every request body, and writes loop_digests.json: per script the sha256 of each canonical request
body less `model`, `temperature` and `store` (the keys our transport adds), and of the result entry's `id` and
`result`. `--dump DIR` also writes the plain bodies and entries there, to compare with ours by hand.

The handler executes call text: the scripts hold ground-truth calls only. Fresh-process semantics as
record_upstream.py: the executor's cached instances and the API modules' shared objects are reset before every
script, and TravelAPI's today is pinned to differential.TODAY.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mypy reads this folder as the package it is under pytest
    from . import loop_scripts, record_upstream
else:  # run as a script, outside any package: the modules are beside it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import loop_scripts
    import record_upstream

OUTPUT = Path(__file__).with_name("loop_digests.json")
TRANSPORT_KEYS = ("model", "temperature", "store")


class Fake:
    """The scripted server's state: the replies still to give and the bodies received."""

    def __init__(self) -> None:
        self.replies: list[dict[str, Any]] = []
        self.bodies: list[dict[str, Any]] = []
        self.overrun = False


def serve(fake: Fake) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            fake.bodies.append(body)
            if fake.replies:
                message = fake.replies.pop(0)
            else:  # the loop asked once more than the script says: ends the turn, flagged
                fake.overrun = True
                message = {"role": "assistant", "content": "Out of script."}
            answer = {
                "id": "chatcmpl-loop",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
            data = json.dumps(answer).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--stand-ins", type=Path, default=Path("../shared/tools/bfcl-reference"))
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--dump", type=Path)
    options = parser.parse_args()

    fake = Fake()
    server = serve(fake)
    os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
    os.environ["OPENAI_API_KEY"] = "loopback"
    sys.path.insert(0, str(options.stand_ins.resolve()))
    import openai
    import stand_ins  # type: ignore[import-not-found]  # noqa: F401 (answers the vendor SDKs' imports)
    from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler
    from bfcl_eval.utils import load_dataset_entry

    reset = record_upstream.fresh_process()

    entries: dict[str, dict[str, Any]] = {}
    records: dict[str, Any] = {}
    for script in loop_scripts.scripts(options.data_dir):
        if script.sample_id not in entries:
            entries.update((entry["id"], entry) for entry in load_dataset_entry(script.category, False, True))
        fc = script.protocol == "fc"
        handler = OpenAICompletionsHandler(
            model_name=loop_scripts.MODEL,
            temperature=0.001,
            registry_name=loop_scripts.MODEL + ("-FC" if fc else ""),
            is_fc_model=fc,
        )
        handler.client = handler.client.with_options(max_retries=0)
        fake.replies, fake.bodies, fake.overrun = copy.deepcopy(script.replies), [], False
        reset()
        try:
            result, _ = handler.inference(copy.deepcopy(entries[script.sample_id]), False, True)
        finally:
            reset()
        if fake.overrun or fake.replies:
            print(
                f"{script.key}: the loop asked {len(fake.bodies)} times, the script has {len(script.replies)}",
                file=sys.stderr,
            )
            return 1
        for body in fake.bodies:
            assert (body["model"], body["temperature"], body["store"]) == (loop_scripts.MODEL, 0.001, False), body
        bodies = [{key: value for key, value in body.items() if key not in TRANSPORT_KEYS} for body in fake.bodies]
        entry = {"id": script.sample_id, "result": result}
        records[script.key] = {
            "script": script.digest(),
            "requests": [loop_scripts.sha256(body) for body in bodies],
            "entry": loop_scripts.sha256(entry),
        }
        if options.dump:
            folder = options.dump / script.key.replace("/", "_")
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "requests.json").write_text(json.dumps(bodies, indent=1, ensure_ascii=False), encoding="utf-8")
            (folder / "entry.json").write_text(json.dumps(entry, indent=1, ensure_ascii=False), encoding="utf-8")
        print(f"{script.key}: {len(bodies)} requests")
    server.shutdown()
    stored = {
        "about": "sha256 of the canonical request bodies (less model, temperature, store) and of the result entry "
        "(id, result) of bfcl-eval's OpenAICompletionsHandler on each loop script "
        "(tests/unit/bfcl/multi_turn/loop_scripts.py), recorded by record_loop.py in a scratch venv. "
        "Only digests are kept, no upstream text.",
        "bfcl_eval": "2026.3.23",
        "openai": openai.__version__,
        "python": sys.version.split()[0],
        "scripts": records,
    }
    options.output.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
