"""A live multi-turn run through the plugin sends the requests bfcl's own handler sends
(docs/bfcl-multi-turn.md#requests-through-the-plugin): one sample of each category, both protocols, the same
scripted model behind the same fake (tests/scripted_multi_turn.py), against the digests record_requests.py took
of bfcl-eval's `OpenAICompletionsHandler` (tests/unit/bfcl/multi_turn/request_digests.json)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from fake_openai import FakeOpenAI
from scripted_multi_turn import MODEL, SAMPLES, Model, differing_requests, result_entries, scripts, transport_added

RECORDED = json.loads(
    (Path(__file__).parents[1] / "unit" / "bfcl" / "multi_turn" / "request_digests.json").read_text(encoding="utf-8")
)["scripts"]


def test_a_live_run_sends_bfcls_requests_in_both_protocols(
    pytester: pytest.Pytester, bfcl_args: list[str], fake_openai: FakeOpenAI, bfcl_dir: Path
) -> None:
    played = scripts(bfcl_dir)
    assert {f"{s.sample_id}/{s.protocol}": s.digest() for s in played} == {
        key: row["script"] for key, row in RECORDED.items()
    }, "the scripts changed since they were recorded: run record_requests.py"
    model = Model(played, bfcl_dir)
    fake_openai.responder = model
    result = pytester.runpytest(
        *[f"test_bfcl.py::test_bfcl[{sample_id}{suffix}]" for sample_id in SAMPLES for suffix in ("", "-fc")],
        "--tooleval-bfcl-categories",
        ",".join(sample_id.rsplit("_", 1)[0] for sample_id in SAMPLES),
        "--tooleval-mode",
        "both",
        "--tooleval-model",
        MODEL,
        "--tooleval-base-url",
        fake_openai.base_url,
        "--tooleval-api-key",
        "sk-test-0123456789abcdef",
        # bfcl's temperature and no max_tokens
        "--tooleval-sampling",
        "upstream",
        "--tooleval-max-tokens",
        "none",
        "--tooleval-report",
        "report.json",
        *bfcl_args,
        "-n",
        "2",
        "-q",
    )

    sent: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for body in fake_openai.stats.json_bodies:
        script = model.script_of(body)
        assert script is not None, "a request of no scripted sample"
        sent[f"{script.sample_id}/{script.protocol}"].append(body)  # a sample's requests are sequential
    differ = differing_requests(sent, RECORDED)
    assert not differ, f"{differ} (record_requests.py --dump DIR writes bfcl's bodies to compare)"
    # what the transport adds: bfcl's temperature, no max_tokens, no `store`, tool_choice "auto" beside tools
    for key, added in transport_added(sent).items():
        assert added == {(MODEL, 0.001, False, False, "auto" if key.endswith("/fc") else None)}, key

    # the result entries and bfcl's verdicts on them
    rows = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))["samples"]
    got = result_entries(rows)
    assert got == {key: (row["entry"], row["valid"], row["error_type"]) for key, row in RECORDED.items()}
    result.assert_outcomes(passed=6, failed=2)
