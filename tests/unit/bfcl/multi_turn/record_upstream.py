"""Record bfcl-eval's own API classes on the differential sequences: digests only
(docs/bfcl-multi-turn.md#the-differential-harness).

Run in a scratch venv that has bfcl-eval 2026.3.23 (no dependencies) and mpmath, never in CI and never with the
project's package:

    /tmp/bfcl-ref-mt/bin/python tests/unit/bfcl/multi_turn/record_upstream.py --data-dir ../shared/data/bfcl \\
        MessageAPI TicketAPI TwitterAPI

It writes tests/unit/bfcl/multi_turn/upstream_digests.json, or the file `--output` names (a digest per call, per
sequence; classes not named are kept as they were): GorillaFileSystem, TradingBot, TravelAPI and
VehicleControlAPI keep theirs in upstream_digests_<class>.json (GorillaFileSystem's and
VehicleControlAPI's recorded with `--per-sample 4`). `--show SEQUENCE_KEY` instead prints upstream's plain
values for one sequence (the result string, the error flag and the canonical state after each call) to
compare with ours by hand.

The calls go through upstream's executor (`execute_multi_turn_func_call`), as the checker runs them. It evaluates
call text: only the generator's calls are fed to it. Fresh-process semantics: the executor's cached instances,
post_tweet's shared default lists, the long-context travel cards and bookings and the long-context weather
dict are reset before every sequence; TravelAPI's "today" is pinned to differential.TODAY.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mypy reads this folder as the package it is under pytest
    from . import differential
else:  # run as a script, outside any package: differential.py is beside it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import differential  # stdlib only

OUTPUT = Path(__file__).with_name("upstream_digests.json")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("classes", nargs="+")
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--per-sample", type=int, default=2)
    parser.add_argument("--show", metavar="SEQUENCE_KEY")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="the digests file to update (default: %(default)s)")
    options = parser.parse_args()

    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    reset = fresh_process()

    def record(sequence: differential.Sequence, show: Any) -> list[str]:
        reset()
        config = {sequence.class_name: sequence.scenario}
        instances: dict[str, Any] = {}

        def execute(call: differential.Call) -> tuple[str, bool]:
            results, involved = multi_turn_utils.execute_multi_turn_func_call(
                [call.text()],
                config,
                [sequence.class_name],
                "recorder",
                sequence.sample_id,
                long_context=sequence.long_context,
                is_evaL_run=True,
            )
            instances.update(involved)
            return results[0], results[0].startswith(differential.ERROR_PREFIX)

        def state() -> dict[str, Any]:
            instance = instances[sequence.class_name]
            return {name: value for name, value in vars(instance).items() if not name.startswith("_")}

        try:
            return differential.run(sequence, execute, state, show)
        finally:
            reset()

    if options.show:

        def show(index: int, call: differential.Call, result: str, is_error: bool, state: dict[str, Any]) -> None:
            print(f"--- call {index}: {call.text()}\nresult ({'error' if is_error else 'ok'}): {result}")
            print("state: " + json.dumps(differential.canonical(state), ensure_ascii=False))

        for class_name in options.classes:
            for sequence in differential.sequences(options.data_dir, class_name, options.per_sample):
                if sequence.key == options.show:
                    record(sequence, show)
                    return 0
        print(f"no sequence {options.show}", file=sys.stderr)
        return 1

    output = options.output
    stored = json.loads(output.read_text(encoding="utf-8")) if output.exists() else {}
    classes = stored.setdefault("classes", {})
    for class_name in options.classes:
        runs = {}
        for sequence in differential.sequences(options.data_dir, class_name, options.per_sample):
            runs[sequence.key] = differential.pack(sequence, record(sequence, None))
        classes[class_name] = {"per_sample": options.per_sample, "sequences": runs}
        calls = sum(len(differential.unpack(run)[1]) for run in runs.values())
        print(f"{class_name}: {len(runs)} sequences, {calls} calls")
    stored["about"] = (
        "sha256 digests (12 hex) of what bfcl-eval's own API classes return and hold after each call "
        "of the differential sequences (tests/unit/bfcl/multi_turn/differential.py), recorded by "
        "record_upstream.py in a scratch venv. Per sequence: its own digest, then per call "
        "result:is_error:state ('=' for a state unchanged). Only digests are kept, no upstream text."
    )
    stored["bfcl_eval"] = "2026.3.23"
    stored["python"] = sys.version.split()[0]
    output.write_text(json.dumps(dict(sorted(stored.items())), indent=1) + "\n", encoding="utf-8")
    return 0


def fresh_process() -> Any:
    """The reset to run before each recorded sequence or run, so each starts as in a fresh process: the executor's
    cached instances dropped, TwitterAPI's shared default lists and the weather extension restored, TravelAPI's
    calendar pinned (travel_fixtures)."""
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import long_context as extensions
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import posting_api

    weather = dict(extensions.LONG_WEATHER_EXTENSION)  # get_outside_temperature_from_google writes into it
    reset_travel = travel_fixtures()

    def reset() -> None:
        for name in [name for name in vars(multi_turn_utils) if name.endswith("_instance")]:
            delattr(multi_turn_utils, name)
        posting_api.TwitterAPI.post_tweet.__defaults__ = ([], [])
        extensions.LONG_WEATHER_EXTENSION.clear()
        extensions.LONG_WEATHER_EXTENSION.update(weather)
        reset_travel()

    return reset


def travel_fixtures() -> Any:
    """TravelAPI's fresh-process semantics and its pinned calendar; returns the reset to run before a sequence.

    The long-context extension cards and bookings are inserted by reference and debited in place: their module
    dicts are restored from a snapshot. `verify_traveler_information` reads `datetime.today()`: the module's
    `datetime` is replaced by a subclass whose today is differential.TODAY."""
    import copy
    import datetime as datetime_module

    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import long_context, travel_booking

    pinned = differential.TODAY

    class PinnedDatetime(datetime_module.datetime):
        @classmethod
        def today(cls) -> Any:
            return cls(pinned.year, pinned.month, pinned.day)

    travel_booking.datetime = PinnedDatetime
    snapshots = {
        name: copy.deepcopy(getattr(long_context, name))
        for name in ("CREDIT_CARD_EXTENSION", "BOOKING_RECORD_EXTENSION")
    }

    def reset() -> None:
        for name, snapshot in snapshots.items():
            table = getattr(long_context, name)
            table.clear()
            table.update(copy.deepcopy(snapshot))

    return reset


if __name__ == "__main__":
    sys.exit(main())
