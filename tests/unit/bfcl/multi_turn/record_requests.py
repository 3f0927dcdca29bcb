"""Record bfcl-eval's own handler on the scripted model of the plugin-level request test: digests only
(docs/bfcl-multi-turn.md#requests-through-the-plugin).

Run in a scratch venv that has bfcl-eval 2026.3.23, openai 3.63.0 and what the handlers import
(../shared/tools/bfcl-reference/README.md), never in CI and never with the project's package:

    /tmp/bfcl-ref-mt/bin/python tests/unit/bfcl/multi_turn/record_requests.py --data-dir ../shared/data/bfcl

It puts tests/scripted_multi_turn.py's model behind tests/fake_openai.py's server, the very pair the plugin test
runs, drives `OpenAICompletionsHandler.inference` (an `-FC` registry name for function calling) on each script,
and judges the result entry with bfcl's own multi-turn checker. It writes request_digests.json: per script the
sha256 of each canonical request body less the transport's keys (scripted_multi_turn.TRANSPORT_KEYS), of the
result entry's `id` and `result`, and bfcl's verdict (valid, error type). `--dump DIR` also writes the plain
bodies there, to compare with ours by hand.

The handler executes call text: the scripts hold ground-truth calls only. Fresh-process semantics as
record_loop.py: the executor's cached instances and the API modules' shared objects are reset around every run.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mypy reads this folder as the package it is under pytest
    from . import record_upstream
else:  # run as a script, outside any package: the module is beside it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import record_upstream

TESTS = Path(__file__).resolve().parents[3]
if str(TESTS) not in sys.path:  # run as a script: the fake and the model are at the top of tests/
    sys.path.insert(0, str(TESTS))

from fake_openai import FakeOpenAI  # noqa: E402
from scripted_multi_turn import MODEL, Model, Script, entries, request_digest, scripts, sha256  # noqa: E402

OUTPUT = Path(__file__).with_name("request_digests.json")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--stand-ins", type=Path, default=Path("../shared/tools/bfcl-reference"))
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--dump", type=Path)
    options = parser.parse_args()

    played = scripts(options.data_dir)
    with FakeOpenAI(responder=Model(played, options.data_dir), model=MODEL) as fake:
        return record(options, played, fake)


def record(options: argparse.Namespace, played: list[Script], fake: FakeOpenAI) -> int:
    loaded = entries(options.data_dir)
    os.environ["OPENAI_BASE_URL"] = fake.base_url
    os.environ["OPENAI_API_KEY"] = "loopback"
    sys.path.insert(0, str(options.stand_ins.resolve()))
    import openai
    import stand_ins  # type: ignore[import-not-found]  # noqa: F401 (answers the vendor SDKs' imports)
    from bfcl_eval.eval_checker import eval_runner
    from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler
    from bfcl_eval.utils import load_dataset_entry

    reset = record_upstream.fresh_process()  # TravelAPI's pinned calendar too, though no sample here uses it

    records: dict[str, Any] = {}
    for script in played:
        entry = next(e for e in load_dataset_entry(script.category, False, True) if e["id"] == script.sample_id)
        fc = script.protocol == "fc"
        handler = OpenAICompletionsHandler(
            model_name=MODEL, temperature=0.001, registry_name=MODEL + ("-FC" if fc else ""), is_fc_model=fc
        )
        handler.client = handler.client.with_options(max_retries=0)
        before = len(fake.stats.bodies)
        reset()
        try:
            result, _ = handler.inference(copy.deepcopy(entry), False, True)
            reset()
            verdict = eval_runner._evaluate_single_multi_turn_entry(
                handler,
                script.sample_id,
                copy.deepcopy(result),
                loaded[script.sample_id][1],
                copy.deepcopy(entry),
                handler.model_name_underline_replaced,
                script.category,
            )
        finally:
            reset()
        bodies = [body for body in fake.stats.bodies[before:] if body is not None]
        answered = sum(len(steps) for steps in result)
        if answered != len(script.replies) or len(bodies) != answered:
            print(f"{script.sample_id}/{script.protocol}: {len(bodies)} requests, {len(script.replies)} replies")
            return 1
        for body in bodies:
            sent = (body["model"], body["temperature"], body["store"], "tool_choice" in body)
            assert sent == (MODEL, 0.001, False, False), sent
        key = f"{script.sample_id}/{script.protocol}"
        records[key] = {
            "script": script.digest(),
            "requests": [request_digest(body) for body in bodies],
            "entry": sha256({"id": script.sample_id, "result": result}),
            "valid": verdict["valid"],
            "error_type": verdict.get("error", {}).get("error_type", ""),
        }
        if options.dump:
            folder = options.dump / key.replace("/", "_")
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "requests.json").write_text(json.dumps(bodies, indent=1, ensure_ascii=False), encoding="utf-8")
        print(f"{key}: {len(bodies)} requests, valid {verdict['valid']}")
    stored = {
        "about": "sha256 of the canonical request bodies (less the transport's keys) and of the result entry "
        "(id, result) of bfcl-eval's OpenAICompletionsHandler against the scripted model of "
        "tests/scripted_multi_turn.py behind tests/fake_openai.py, and bfcl's verdict on that entry, recorded by "
        "record_requests.py in a scratch venv. Only digests are kept, no upstream text.",
        "bfcl_eval": "2026.3.23",
        "openai": openai.__version__,
        "python": sys.version.split()[0],
        "scripts": records,
    }
    options.output.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
