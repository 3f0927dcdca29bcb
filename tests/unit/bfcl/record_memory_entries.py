"""Record bfcl-eval's own loader on the three memory categories: digests only (docs/bfcl.md#memory).

Run in a scratch venv that has bfcl-eval 2026.3.23 with what it imports (perf/bfcl_side.py's docstring builds one),
never in CI and never with the project's package:

    /tmp/bfcl-gen/bin/python tests/unit/bfcl/record_memory_entries.py

For each of memory_kv, memory_vector and memory_rec_sum it loads the entries as bfcl's generation does
(`load_dataset_entry`, prerequisites included, without the Python hint of the docs, which the request adds) and
writes memory_entries.json: per category the ids in order and, per id, a digest of what the entry is
(`entry_digest`: dependencies, class, scenario, the question as bfcl sends it, the function docs).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).with_name("memory_entries.json")


def entry_digest(depends_on: list[str], classes: list[str], scenario: str, question: Any, functions: Any) -> str:
    canonical = json.dumps([depends_on, classes, scenario, question, functions], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def main() -> int:
    from bfcl_eval.utils import load_dataset_entry

    document: dict[str, Any] = {
        "about": "bfcl-eval's own load_dataset_entry on the memory categories, recorded by record_memory_entries.py "
        "in a scratch venv: the ids in bfcl's order and a digest per entry (record_memory_entries.entry_digest).",
        "bfcl_eval": "2026.3.23",
    }
    for category in ("memory_kv", "memory_vector", "memory_rec_sum"):
        entries = load_dataset_entry(category, include_prereq=True, include_language_specific_hint=False)
        document[category] = {
            entry["id"]: entry_digest(
                entry.get("depends_on", []),
                entry["involved_classes"],
                entry["scenario"],
                entry["question"],
                entry["function"],
            )
            for entry in entries
        }
    OUTPUT.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print({category: len(document[category]) for category in ("memory_kv", "memory_vector", "memory_rec_sum")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
