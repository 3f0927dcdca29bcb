"""Record bfcl-eval's own memory backends on memory_cases.py's call sequences: digests only
(docs/bfcl.md#memory).

Run in a scratch venv that has bfcl-eval 2026.3.23 with rank_bm25 0.2.2 and numpy 1.26.4 (perf/bfcl_side.py's
docstring builds one), never in CI and never with the project's package:

    /tmp/bfcl-gen/bin/python tests/unit/bfcl/record_memory.py --data-dir ../shared/data/bfcl

Each sequence starts from a new `MemoryAPI_kv` or `MemoryAPI_rec_sum` (no snapshot folder: the calls touch
memory only) and calls its methods directly. It writes memory_digests.json: per sequence, the digest of each
call's outcome line (memory_cases.outcome_line). `--show KEY` prints the lines of one sequence instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mypy reads this folder as the package it is under pytest
    from . import memory_cases
else:  # run as a script, outside any package: the module is beside it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import memory_cases

OUTPUT = Path(__file__).with_name("memory_digests.json")


def upstream_lines(backend: str, calls: list[tuple[str, list[Any]]]) -> list[str]:
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.memory_kv import MemoryAPI_kv
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.memory_rec_sum import MemoryAPI_rec_sum

    return memory_cases.run(MemoryAPI_kv() if backend == "kv" else MemoryAPI_rec_sum(), backend, calls)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--show")
    options = parser.parse_args()
    recorded: dict[str, list[str]] = {}
    for backend in ("kv", "rec_sum"):
        for key, calls in memory_cases.sequences(options.data_dir, backend):
            lines = upstream_lines(backend, calls)
            if options.show == key:
                print(
                    "\n".join(
                        f"{method}{tuple(args)!r}\n  {line}" for (method, args), line in zip(calls, lines, strict=True)
                    )
                )
                return 0
            recorded[key] = [memory_cases.digest(line) for line in lines]
    from importlib.metadata import version

    document = {
        "about": "bfcl-eval's own MemoryAPI_kv and MemoryAPI_rec_sum on memory_cases.py's sequences, recorded by "
        "record_memory.py in a scratch venv: a digest per call of its outcome and the state after it.",
        "bfcl_eval": "2026.3.23",
        "numpy": version("numpy"),
        "python": sys.version.split()[0],
        "calls": sum(len(lines) for lines in recorded.values()),
    }
    body = ",\n".join(f"  {json.dumps(key)}: {json.dumps(lines)}" for key, lines in recorded.items())
    head = json.dumps(document, indent=1)
    options.output.write_text(f'{head[:-2]},\n "sequences": {{\n{body}\n }}\n}}\n', encoding="utf-8")
    print(json.dumps({"sequences": len(recorded), "calls": document["calls"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
