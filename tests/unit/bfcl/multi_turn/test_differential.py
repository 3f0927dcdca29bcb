"""Our simulated API classes against bfcl-eval's own, call by call, by digest
(docs/bfcl-multi-turn.md#the-differential-harness).

The sequences come from differential.py; upstream's digests were recorded by record_upstream.py in a scratch
venv and committed (upstream_digests.json, and upstream_digests_<class>.json for the classes kept apart). A
mismatch names the sequence, the call and the part that differs; `record_upstream.py --show <sequence>` then
prints upstream's values for it.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_tooleval.suites.bfcl.multi_turn.apis import api_methods, public_state
from pytest_tooleval.suites.bfcl.multi_turn.apis.file_system import GorillaFileSystem
from pytest_tooleval.suites.bfcl.multi_turn.apis.math_api import MathAPI
from pytest_tooleval.suites.bfcl.multi_turn.apis.message import MessageAPI
from pytest_tooleval.suites.bfcl.multi_turn.apis.posting import TwitterAPI
from pytest_tooleval.suites.bfcl.multi_turn.apis.ticket import TicketAPI
from pytest_tooleval.suites.bfcl.multi_turn.apis.trading import TradingBot
from pytest_tooleval.suites.bfcl.multi_turn.apis.travel import TravelAPI
from pytest_tooleval.suites.bfcl.multi_turn.apis.vehicle import VehicleControlAPI
from pytest_tooleval.suites.bfcl.multi_turn.results import error_string, result_string
from pytest_tooleval.suites.bfcl.multi_turn.tables import Tables

from . import differential

DIGESTS = sorted(Path(__file__).parent.glob("upstream_digests*.json"))  # one file, or one per class
CLASSES: dict[str, Any] = {"MessageAPI": MessageAPI, "TicketAPI": TicketAPI, "TwitterAPI": TwitterAPI}
CLASSES["GorillaFileSystem"] = GorillaFileSystem
CLASSES["TradingBot"] = TradingBot
CLASSES["TravelAPI"] = functools.partial(TravelAPI, today=differential.TODAY)  # the recorder pins it too
CLASSES["VehicleControlAPI"] = VehicleControlAPI
CLASSES["MathAPI"] = MathAPI
PARTS = ("result string", "is-error flag", "public state")


def execute(methods: dict[str, Any], call: differential.Call) -> tuple[str, bool]:
    """One call as the executor will make it: by name, on fresh copies of the arguments."""
    method = methods.get(call.method)
    if method is None:
        return error_string(NameError(f"name '{call.method}' is not defined")), True
    try:  # the result string too: an int past str's digit limit fails there, an error string upstream
        return result_string(method(*copy.deepcopy(call.args), **copy.deepcopy(call.kwargs))), False
    except Exception as exc:
        return error_string(exc), True


def replay(sequence: differential.Sequence, tables: Tables) -> list[str]:
    instance = CLASSES[sequence.class_name](tables)
    instance.load_scenario(copy.deepcopy(sequence.scenario), long_context=sequence.long_context)
    methods = api_methods(instance)
    return differential.run(sequence, lambda call: execute(methods, call), lambda: public_state(instance))


def recorded_classes() -> dict[str, Any]:
    """{class: its record} over every digests file (a class recorded in two files is an error)."""
    classes: dict[str, Any] = {}
    for path in DIGESTS:
        for class_name, record in json.loads(path.read_text(encoding="utf-8"))["classes"].items():
            assert class_name not in classes, f"{class_name} is recorded twice ({path.name})"
            classes[class_name] = record
    return classes


@pytest.mark.parametrize("class_name", sorted(CLASSES))
def test_same_digests_as_upstream(class_name: str, bfcl_dir: Path, tables: Tables) -> None:
    recorded = recorded_classes()[class_name]
    sequences = differential.sequences(bfcl_dir, class_name, recorded["per_sample"])
    assert len(sequences) >= 200
    assert sorted(sequence.key for sequence in sequences) == sorted(recorded["sequences"]), (
        "the sequences differ from the recorded ones: rerun record_upstream.py"
    )
    problems = []
    for sequence in sequences:
        digest, upstream = differential.unpack(recorded["sequences"][sequence.key])
        if digest != sequence.digest():
            problems.append(f"{sequence.key}: not the recorded sequence (rerun record_upstream.py)")
            continue
        ours = replay(sequence, tables)
        for index, (mine, theirs) in enumerate(zip(ours, upstream, strict=True)):
            if mine != theirs:
                parts = [part for part, a, b in zip(PARTS, mine.split(":"), theirs.split(":"), strict=True) if a != b]
                problems.append(
                    f"{sequence.key} call {index} {sequence.calls[index].text()}: {' and '.join(parts)} differ"
                )
                break
    assert not problems, (
        f"{len(problems)} of {len(sequences)} sequences differ:\n"
        + "\n".join(problems[:20])
        + f"\nupstream's values: record_upstream.py --data-dir <bfcl> --show <sequence> {class_name} (scratch venv)"
    )
