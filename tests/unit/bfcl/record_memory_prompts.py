"""Record bfcl-eval's own memory system prompt (`add_memory_instruction_system_prompt`) on memory_cases.py's
prompt cases: digests only (docs/bfcl.md#memory).

Run in a scratch venv that has bfcl-eval 2026.3.23 with what its handlers import (perf/bfcl_side.py's docstring
builds one), never in CI and never with the project's package:

    /tmp/bfcl-gen/bin/python tests/unit/bfcl/record_memory_prompts.py

Each case writes memory_cases.PROMPT_WRITES into a fresh backend (or nothing), composes the first turn of a
question, with bfcl's agentic answer-format system message or without it (a prerequisite conversation), and
digests the messages bfcl sends. It writes memory_prompt_digests.json.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mypy reads this folder as the package it is under pytest
    from . import memory_cases
else:  # run as a script, outside any package: the module is beside it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import memory_cases

OUTPUT = Path(__file__).with_name("memory_prompt_digests.json")


def messages_digest(messages: Any) -> str:
    canonical = json.dumps(messages, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def main() -> int:
    from bfcl_eval.constants.default_prompts import ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.memory_kv import MemoryAPI_kv
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.memory_rec_sum import MemoryAPI_rec_sum
    from bfcl_eval.model_handler.utils import add_memory_instruction_system_prompt

    digests = {}
    for key, backend, scenario, written, system in memory_cases.prompt_cases():
        api: Any = MemoryAPI_kv() if backend == "kv" else MemoryAPI_rec_sum()
        if written:
            memory_cases.run(api, backend, memory_cases.PROMPT_WRITES[backend])
        prompts = [memory_cases.first_turn(ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT, system)]
        composed = add_memory_instruction_system_prompt(prompts, f"memory_{backend}", scenario, api)
        digests[key] = messages_digest(composed[0])
    document = {
        "about": "bfcl-eval's own add_memory_instruction_system_prompt on memory_cases.prompt_cases(), recorded by "
        "record_memory_prompts.py in a scratch venv: a digest of the first turn's messages per case.",
        "bfcl_eval": "2026.3.23",
        "digests": digests,
    }
    OUTPUT.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(len(digests), "cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
