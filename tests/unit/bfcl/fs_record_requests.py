"""Record the request bodies bfcl-eval's own prompting handler sends for the 5,200 format-sensitivity entries:
digests only (docs/bfcl.md#format-sensitivity).

Run in a scratch venv that has bfcl-eval 2026.3.23 with what its handlers import (perf/bfcl_side.py's docstring
builds one), never in CI and never with the project's package:

    /tmp/bfcl-gen/bin/python tests/unit/bfcl/fs_record_requests.py

The entries come from bfcl's `load_dataset_entry("format_sensitivity")` and the possible answers from
`load_ground_truth_entry`; each entry goes through an `OpenAICompletionsHandler` in prompting mode whose
`generate_with_backoff` records its keyword arguments and stops. It writes fs_request_digests.json: the
configurations and question ids in bfcl's order, a digest of the whole id list, the question id of the possible
answer bfcl pairs with each question's entries, and per entry a digest of the messages.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).with_name("fs_request_digests.json")


def digest(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


class _Sent(Exception):
    pass


def main() -> int:
    os.environ.setdefault("OPENAI_API_KEY", "sk-unused")  # the handler makes a client it never uses here
    from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler
    from bfcl_eval.utils import get_all_format_sensitivity_configs, load_dataset_entry, load_ground_truth_entry

    entries = load_dataset_entry("format_sensitivity")
    answers = load_ground_truth_entry("format_sensitivity")
    configs = get_all_format_sensitivity_configs()
    assert len(entries) == len(answers) == 26 * 200
    handler = OpenAICompletionsHandler("gpt-4o-2024-11-20", 0.001, "gpt-4o-2024-11-20", False)
    sent: list[dict[str, Any]] = []

    def record(**kwargs: Any) -> Any:
        sent.append(kwargs)
        raise _Sent

    handler.generate_with_backoff = record
    messages, samplings = [], set()
    for entry in entries:
        with contextlib.suppress(_Sent):
            handler.inference(copy.deepcopy(entry), False, False)
        body = sent.pop()
        assert body.pop("model") == "gpt-4o-2024-11-20"
        messages.append(digest(body.pop("messages")))
        samplings.add(json.dumps(body, sort_keys=True))
    questions = [entry["id"].split(":")[2] for entry in entries[::26]]
    paired = [answers[26 * n + k]["id"] for n in range(200) for k in range(26)]
    assert all(paired[26 * n : 26 * n + 26] == [paired[26 * n]] * 26 for n in range(200))
    document = {
        "about": "bfcl-eval's own format-sensitivity entries (load_dataset_entry) and the bodies its "
        "OpenAICompletionsHandler sends for them in prompting mode, recorded by fs_record_requests.py in a scratch "
        "venv; digests are the first 16 hex digits of the sha256 of json.dumps(value, sort_keys=True, "
        "ensure_ascii=False).",
        "bfcl_eval": "2026.3.23",
        "configs": configs,
        "questions": questions,
        "ids_digest": digest([entry["id"] for entry in entries]),
        "answer_questions": [paired[26 * n] for n in range(200)],
        "sampling": sorted(json.loads(text) for text in samplings),
        "messages": messages,
    }
    OUTPUT.write_text(json.dumps(document, indent=0) + "\n", encoding="utf-8")
    print(len(messages), "entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
