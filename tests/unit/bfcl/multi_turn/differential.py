"""The API differential harness's shared half (docs/bfcl-multi-turn.md#the-differential-harness).

Standard library only: the recorder (record_upstream.py, run in a scratch venv against bfcl-eval's own classes)
and the test (test_differential.py, against ours) both import it, so that both run the same call sequences and
digest results and states the same way.

- `sequences(data_dir, class_name, per_sample)`: seeded call sequences for every sample of the four multi-turn
  categories that involves the class; arguments drawn from the sample's ground truth and initial_config, and
  wrong on purpose (types, missing and extra arguments, unknown ids, empty strings, negative numbers).
- `canonical(value)`: a public state (or any value) as JSON that keeps what `==` sees: dict key order, tuples
  apart from lists, sets sorted, floats by repr, objects (the file system's Directory and File) as nested objects.
- `run(sequence, execute, state)`: runs the calls and returns one digest line per call.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

CATEGORIES = ("base", "miss_func", "miss_param", "long_context")
DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
CALLS_PER_SEQUENCE = (8, 16)
ERROR_PREFIX = "Error during execution: "


@dataclass(frozen=True)
class Call:
    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    def text(self) -> str:
        parts = [repr(value) for value in self.args] + [f"{key}={value!r}" for key, value in self.kwargs.items()]
        return f"{self.method}({', '.join(parts)})"


@dataclass(frozen=True)
class Sequence:
    sample_id: str
    class_name: str
    number: int
    long_context: bool
    scenario: dict[str, Any]
    calls: tuple[Call, ...]

    @property
    def key(self) -> str:
        return f"{self.sample_id}/{self.class_name}/{self.number}"

    def digest(self) -> str:
        """What the sequence is (scenario and calls), so a changed generator shows as stale records."""
        text = json.dumps([self.long_context, canonical(self.scenario), [call.text() for call in self.calls]])
        return _short(text)


# ------------------------------------------------------------------------------------------ generation


def method_docs(data_dir: Path, class_name: str) -> dict[str, tuple[list[str], list[str]]]:
    """{method: (parameter names in doc order, required names)} from the class's function-doc file."""
    out: dict[str, tuple[list[str], list[str]]] = {}
    path = data_dir / "multi_turn_func_doc" / f"{DOC_FILES[class_name]}.json"
    for line in path.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        parameters = doc["parameters"]
        out[doc["name"]] = (list(parameters.get("properties", {})), list(parameters.get("required", [])))
    return out


def samples(data_dir: Path) -> Iterator[tuple[dict[str, Any], list[list[str]]]]:
    """Every multi-turn question entry with its ground truth, the four categories in order."""
    for category in CATEGORIES:
        questions = (data_dir / f"BFCL_v4_multi_turn_{category}.json").read_text(encoding="utf-8").splitlines()
        answers = (data_dir / "possible_answer" / f"BFCL_v4_multi_turn_{category}.json").read_text(encoding="utf-8")
        for question, answer in zip(questions, answers.splitlines(), strict=True):
            yield json.loads(question), json.loads(answer)["ground_truth"]


def sequences(data_dir: Path, class_name: str, per_sample: int = 2) -> list[Sequence]:
    docs = method_docs(data_dir, class_name)
    out: list[Sequence] = []
    for entry, ground_truth in samples(data_dir):
        if class_name not in entry["involved_classes"]:
            continue
        scenario = entry["initial_config"].get(class_name, {})
        pool = _value_pool(ground_truth, scenario, docs)
        for name, values in EXTRA_VALUES.get(class_name, {}).items():
            pool.by_name.setdefault(name, []).extend(values)
        for number in range(per_sample):
            rng = random.Random(f"{entry['id']}:{class_name}:{number}")  # str seeds do not depend on the hash seed
            count = rng.randint(*CALLS_PER_SEQUENCE)
            calls = tuple(_call(rng, docs, pool) for _ in range(count))
            out.append(
                Sequence(entry["id"], class_name, number, "long_context" in entry["id"], copy.deepcopy(scenario), calls)
            )
        for number, script in enumerate(SCRIPTS.get(class_name, ()), start=per_sample):
            calls = tuple(call for text in script if (call := _parse_call(text)) is not None)
            out.append(
                Sequence(entry["id"], class_name, number, "long_context" in entry["id"], copy.deepcopy(scenario), calls)
            )
    return out


@dataclass
class _Pool:
    by_name: dict[str, list[Any]]  # ground-truth values of each parameter name
    seen: list[Any]  # scalars of the initial config (ids, names, contents)
    gt_calls: list[Call]
    top: dict[str, Any] = field(default_factory=dict)  # the scenario's top-level strings, by key (for ALIASES)


_ODD: tuple[object, ...] = (None, True, 1.5, -1, 0, 99999, "", "1", [], ["x"], {"bogus": 1}, ("a",), "unknown_id_zz")


def _value_pool(ground_truth: list[list[str]], scenario: Any, docs: dict[str, Any]) -> _Pool:
    by_name: dict[str, list[Any]] = {}
    gt_calls: list[Call] = []
    for turn in ground_truth:
        for text in turn:
            call = _parse_call(text)
            if call is None or call.method not in docs:
                continue
            gt_calls.append(call)
            names = docs[call.method][0]
            for name, value in zip(names, call.args, strict=False):
                by_name.setdefault(name, []).append(value)
            for name, value in call.kwargs.items():
                by_name.setdefault(name, []).append(value)
    seen: list[Any] = []
    _scalars(scenario, seen)
    top = (
        {key: value for key, value in scenario.items() if isinstance(value, str)} if isinstance(scenario, dict) else {}
    )
    return _Pool(by_name, seen[:200], gt_calls, top)


def _scalars(value: Any, out: list[Any]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            out.append(int(key) if isinstance(key, str) and key.isdigit() else key)
            _scalars(item, out)
    elif isinstance(value, list):
        for item in value:
            _scalars(item, out)
    elif not isinstance(value, float):
        out.append(value)


def _parse_call(text: str) -> Call | None:
    node = ast.parse(text, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    args = tuple(ast.literal_eval(arg) for arg in node.args)
    kwargs = {keyword.arg: ast.literal_eval(keyword.value) for keyword in node.keywords if keyword.arg}
    return Call(node.func.id, args, kwargs)


def _call(rng: random.Random, docs: dict[str, tuple[list[str], list[str]]], pool: _Pool) -> Call:
    if pool.gt_calls and rng.random() < 0.3:  # a ground-truth call as it is
        return copy.deepcopy(rng.choice(pool.gt_calls))
    method = rng.choice(sorted(docs))
    names, required = docs[method]
    kwargs: dict[str, Any] = {}
    for name in names:
        if name not in required and rng.random() < 0.4:
            continue
        kwargs[name] = _value(rng, name, pool)
    shape = rng.random()
    if shape < 0.06 and kwargs:  # a missing argument
        del kwargs[rng.choice(sorted(kwargs))]
    elif shape < 0.12:  # an extra one
        kwargs["bogus_argument"] = 1
    if shape > 0.85 and kwargs:  # positional, in doc order
        return Call(method, tuple(kwargs.values()), {})
    return Call(method, (), kwargs)


def _value(rng: random.Random, name: str, pool: _Pool) -> Any:
    if name in SHAPES and rng.random() < 0.5:  # a parameter's own shapes (below); draws only for these names
        return rng.choice(SHAPES[name])
    if name in ALIASES and rng.random() < 0.8:
        known = [pool.top[ALIASES[name]]] if ALIASES[name] in pool.top else []
        known += pool.by_name.get(ALIASES[name], [])
        if known:
            return copy.deepcopy(rng.choice(known))
    roll = rng.random()
    if roll < 0.45 and pool.by_name.get(name):
        return copy.deepcopy(rng.choice(pool.by_name[name]))
    if roll < 0.7 and pool.seen:
        return copy.deepcopy(rng.choice(pool.seen))
    if roll < 0.8:
        return rng.randint(-2, 12)
    return copy.deepcopy(rng.choice(_ODD))


# ------------------------------------------------------------------------------------------ digests


def canonical(value: Any) -> Any:
    """A value as JSON that keeps everything `==` compares, and order where `==` sees order."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return {"int": repr(value)}
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, list):
        return [canonical(item) for item in value]
    if isinstance(value, tuple):
        return {"tuple": [canonical(item) for item in value]}
    if isinstance(value, (set, frozenset)):
        return {"set": sorted((canonical(item) for item in value), key=lambda item: json.dumps(item))}
    if isinstance(value, dict):
        return {"dict": [[canonical(key), canonical(item)] for key, item in value.items()]}
    # an object of the API (Directory, File): its class name and its public attributes
    attributes = {name: item for name, item in vars(value).items() if not name.startswith("_") and name != "parent"}
    return {"object": type(value).__name__, "attributes": canonical(attributes)}


def _short(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def call_digest(result: str, is_error: bool, state: dict[str, Any]) -> str:
    """One call's line: digest of the result string, the error flag, digest of the canonical public state."""
    state_text = json.dumps(canonical(state), ensure_ascii=False)
    return f"{_short(result)}:{int(is_error)}:{_short(state_text)}"


def run(
    sequence: Sequence,
    execute: Callable[[Call], tuple[str, bool]],
    state: Callable[[], dict[str, Any]],
    show: Callable[[int, Call, str, bool, dict[str, Any]], None] | None = None,
) -> list[str]:
    """The digest lines of a sequence: `execute(call)` gives (result string, is error) on a loaded instance,
    `state()` its public state after the call; `show` sees each call's plain values (the recorder's --show)."""
    lines = []
    for index, call in enumerate(sequence.calls):
        result, is_error = execute(call)
        now = state()
        if show is not None:
            show(index, call, result, is_error, now)
        lines.append(call_digest(result, is_error, now))
    return lines


def pack(sequence: Sequence, lines: list[str]) -> str:
    """One sequence's record as one string: its digest, then each call's line, a state unchanged from the call
    before written `=`."""
    out, before = [sequence.digest()], ""
    for line in lines:
        result, error, state = line.split(":")
        out.append(f"{result}:{error}:{'=' if state == before else state}")
        before = state
    return " ".join(out)


def unpack(record: str) -> tuple[str, list[str]]:
    """`pack` undone: (the sequence's digest, each call's full line)."""
    digest, *tokens = record.split(" ")
    lines, before = [], ""
    for token in tokens:
        result, error, state = token.split(":")
        before = before if state == "=" else state
        lines.append(f"{result}:{error}:{before}")
    return digest, lines


# ------------------------------------------------------------------------------------------ per-class extras
# Values a class's parameters get beside the ground truth's, for shapes the samples rarely hold.

_FS_NAMES = [".", "..", "/", "", "a/b", "../x", "/nope", "bad|name", "new_dir", ".hidden", "x.txt", ("t",)]
EXTRA_VALUES: dict[str, dict[str, list[Any]]] = {
    "GorillaFileSystem": {
        **{
            name: _FS_NAMES
            for name in ("folder", "dir_name", "file_name", "source", "destination", "file_name1", "file_name2")
        },
        "path": [".", "/", "..", "/nope", "a/b", "", None],
        "name": ["", ".", "txt", None],
        "mode": ["l", "w", "c", "x"],
        "lines": [0, -2, 3, 100, "5"],
        "content": ["one\ntwo\nthree", "", "two\none", 5],
        "pattern": ["o", "", "zz"],
        "human_readable": [True, False],
        "a": [True, False],
    },
}

# Scripted sequences, run on every sample's scenario after the random ones: call chains a random draw rarely makes,
# for quirks that need several calls in order to show.
SCRIPTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "GorillaFileSystem": (
        (  # copies share their entries; a moved directory keeps its children's parent links; pwd names the root
            "mkdir(dir_name='qd')",
            "cd(folder='qd')",
            "touch(file_name='f')",
            "echo(content='hi', file_name='f')",
            "mkdir(dir_name='sub')",
            "cd(folder='..')",
            "cp(source='qd', destination='qc')",
            "cd(folder='qc')",
            "echo(content='changed', file_name='f')",
            "cd(folder='..')",
            "cd(folder='qd')",
            "cat(file_name='f')",
            "cd(folder='..')",
            "mv(source='qd', destination='qm')",
            "cd(folder='qm')",
            "cd(folder='sub')",
            "pwd()",
            "cd(folder='..')",
            "pwd()",
            "cd(folder='/')",
            "pwd()",
            "find(path='/', name='q')",
            "du(human_readable=True)",
            "du()",
        ),
        (  # copying onto an existing name raises; echo into a directory raises; a "." entry (moving it would
            # make the tree cyclic); a tuple name, checked as its text in the destination
            "mkdir(dir_name='qe')",
            "touch(file_name='g')",
            "cp(source='g', destination='qe')",
            "cp(source='g', destination='qe')",
            "echo(content='x', file_name='qe')",
            "cd(folder='qe')",
            "mkdir(dir_name=\"('t',)\")",
            "cd(folder='..')",
            "cp(source='g', destination=('t',))",
            "ls()",
            "mv(source=('t',), destination='qe')",
            "mkdir(dir_name='.')",
            "cat(file_name='.')",
            "ls(a=True)",
            "rm(file_name='.')",
            "rmdir(dir_name='qe')",
            "rm(file_name='qe')",
            "ls(a=True)",
            "wc(file_name='g', mode='c')",
            "tail(file_name='g', lines=0)",
        ),
        (  # listings and searches of the sample's own tree; line-wise commands on files of known content
            "ls()",
            "find()",
            "cd(folder='/')",
            "find(path='.', name='.')",
            "pwd()",
            "cd(folder='..')",
            "diff(file_name1='a', file_name2='b')",
            "touch(file_name='a')",
            "touch(file_name='b')",
            "echo(content='1\\n2\\n3', file_name='a')",
            "echo(content='1\\nx\\n3\\n4', file_name='b')",
            "diff(file_name1='a', file_name2='b')",
            "tail(file_name='b', lines=-1)",
            "sort(file_name='b')",
            "grep(file_name='b', pattern='x')",
            "wc(file_name='b', mode='w')",
            "mv(source='a', destination='b')",
            "mv(source='a', destination='c')",
            "cp(source='c', destination='b')",
            "cat(file_name='c')",
        ),
    ),
}


# ------------------------------------------------------------------------------------------ TravelAPI
# verify_traveler_information computes an age from today's date: both sides pin "today" to this day, so that
# the drawn birth dates near the 18-year boundary give the same verdicts whenever the test runs.
TODAY = date(2026, 3, 23)

# birth dates around the 18th birthday on TODAY (one of them a 29 February), a young one and near-miss formats
SHAPES: dict[str, tuple[Any, ...]] = {
    "date_of_birth": (
        "2008-03-23",
        "2008-03-24",
        "2008-02-29",
        "2007-03-24",
        "2015-07-01",
        "2008-3-24",
        "23-03-2008",
        "2008-03-23T00:00:00",
    ),
    "passport_number": ("US1234567", "US", "us1234567", " US1234567", "GB1234567"),
}
# the traveller's names as the scenario or authenticate_travel set them, so that verification gets past the name check
ALIASES = {"first_name": "user_first_name", "last_name": "user_last_name"}

_DOORS = ["driver", "passenger", "rear_left", "rear_right"]
EXTRA_VALUES["VehicleControlAPI"] = {
    "ignitionMode": ["START", "STOP", "start", ""],
    "unlock": [True, False, 0, "yes"],
    "door": [_DOORS, _DOORS[:2], ["driver", "trunk", "rear_left"], "driver", [], [["driver"]]],
    "pedalPosition": [1, 1.0, 0.5, 0, -0.1, 1.5, True, "1"],
    "fuelAmount": [10, 45.5, 60, -1, 0, "5"],
    "speed": [65, 62.5, 0, 125, -5, "70", "fast"],
    "activate": [True, False],
    "distanceToNextVehicle": [100, 50.5, "30", "far"],
    "temperature": [72, 22.5, -5, "70"],
    "unit": ["celsius", "fahrenheit", "kelvin"],
    "fanSpeed": [0, 100, 101, -1, 50],
    "mode": ["on", "off", "auto", "engage", "release", "cool", "x"],
    "option": ["fuel", "battery", "doors", "climate", "headlights", "parkingBrake", "brakePedal", "engine", "tyres"],
    "cityA": ["83214", "74532", "94016", "08540", "00000", 83214],
    "cityB": ["74532", "83214", "94704", "62947", "00000"],
    "city": ["Rivermist", "San Francisco", "Crescent Hollow", "Nowhere", ""],
    "distance": [100, 1000.5, -1, "50"],
    "destination": ["1 Main St, Rivermist, CA", "", 5],
    "messages": [["a", "b"], [], "text"],
}
SCRIPTS["VehicleControlAPI"] = (
    (  # a door list with an unknown door in it changes the doors before it, then raises; STOP stops the engine
        # before the checks fail; the engine starts only with every door locked and the pedal fully pressed
        "lockDoors(unlock=True, door=['driver', 'passenger', 'rear_left', 'rear_right'])",
        "startEngine(ignitionMode='START')",
        "lockDoors(unlock=False, door=['driver', 'trunk', 'rear_left'])",
        "displayCarStatus(option='doors')",
        "lockDoors(unlock=False, door=['passenger', 'rear_left', 'rear_right', 'driver'])",
        "startEngine(ignitionMode='START')",
        "pressBrakePedal(pedalPosition=0.5)",
        "startEngine(ignitionMode='START')",
        "pressBrakePedal(pedalPosition=1.0)",
        "startEngine(ignitionMode='go')",
        "startEngine(ignitionMode='START')",
        "displayCarStatus(option='engine')",
        "lockDoors(unlock=True, door=['rear_right'])",
        "startEngine(ignitionMode='STOP')",
        "displayCarStatus(option='engine')",
        "lockDoors(unlock=False, door=['rear_right'])",
        "startEngine(ignitionMode='STOP')",
        "startEngine(ignitionMode='START')",
    ),
    (  # an invalid speed still stores the gap; a stopped engine refuses; deactivating stores it too
        "setCruiseControl(speed=65, activate=True, distanceToNextVehicle=100)",
        "lockDoors(unlock=False, door=['driver', 'passenger', 'rear_left', 'rear_right'])",
        "pressBrakePedal(pedalPosition=1)",
        "startEngine(ignitionMode='START')",
        "setCruiseControl(speed=62, activate=True, distanceToNextVehicle=75.5)",
        "setCruiseControl(speed=130, activate=True, distanceToNextVehicle=80)",
        "setCruiseControl(speed=65, activate=True, distanceToNextVehicle='40')",
        "setCruiseControl(speed=30, activate=False, distanceToNextVehicle=20)",
        "setCruiseControl(speed='x', activate=True, distanceToNextVehicle='y')",
        "get_current_speed()",
        "get_current_speed()",
        "get_outside_temperature_from_google()",
        "get_outside_temperature_from_google()",
        "activateParkingBrake(mode='engage')",
        "displayCarStatus(option='parkingBrake')",
        "activateParkingBrake(mode='release')",
        "releaseBrakePedal()",
        "displayCarStatus(option='brakePedal')",
    ),
    (  # fuel, climate, lights, trips and tyres
        "fillFuelTank(fuelAmount=10)",
        "fillFuelTank(fuelAmount=100)",
        "estimate_drive_feasibility_by_mileage(distance=150)",
        "estimate_drive_feasibility_by_mileage(distance=5000)",
        "adjustClimateControl(temperature=68, unit='fahrenheit', fanSpeed=30, mode='cool')",
        "displayCarStatus(option='climate')",
        "adjustClimateControl(temperature=20, fanSpeed=120)",
        "setHeadlights(mode='auto')",
        "setHeadlights(mode='on')",
        "displayCarStatus(option='headlights')",
        "get_zipcode_based_on_city(city='Rivermist')",
        "get_zipcode_based_on_city(city='Stonebrook')",
        "estimate_distance(cityA='74532', cityB='83214')",
        "estimate_distance(cityA='08540', cityB='94704')",
        "estimate_distance(cityA='83214', cityB='83214')",
        "set_navigation(destination=12)",
        "set_navigation(destination='2107 Channing Way, Berkeley, CA')",
        "check_tire_pressure()",
        "find_nearest_tire_shop()",
        "liter_to_gallon(liter=40)",
        "gallon_to_liter(gallon=10)",
        "display_log(messages=['a', 'b'])",
        "get_outside_temperature_from_weather_com()",
        "displayCarStatus(option='fuel')",
    ),
)

# MathAPI: numbers at the edges of float and of its checks (overflow, zero, bool, str), precisions mpmath and decimal
# refuse or read oddly, units on both sides of its tables; an int of 400 digits, and power's results beyond the
# 4,300-digit str limit (the result string's own failure is an error string)
_BIG = 10**400  # scripts write it as its digits: call text holds literals only
_MATH_NUMBERS = [0, -0.0, 2, 8, -8, 2.5, 1e308, -1e308, 2**70, _BIG, "8", None, True, [1], 0.1]
EXTRA_VALUES["MathAPI"] = {
    **{name: _MATH_NUMBERS for name in ("value", "a", "b", "number", "part", "whole")},
    "base": [2, 10, 1, 0, -2, 0.5, "e", 2**70, None],
    "exponent": [0.5, -1, 2, 1000, 5000, 1e5, "2"],
    "precision": [1, 5, 30, 0, -3, 1.5, "7", None, True],  # no huge one: mpmath would work at that many digits
    "decimal_places": [0, 2, -1, -400, None, 1.5, "2"],
    "numbers": [[], [1, 2, 3], [2.5, 1], [1e308, -1e308], [_BIG, 1], [1, "2"], "abc", [[1]], [True], 0, {"k": 1}],
    "unit_in": [
        "km",
        "m",
        "cm",
        "mm",
        "um",
        "nm",
        "celsius",
        "fahrenheit",
        "kg",
        "lb",
        "miles",
        "in",
        "ft",
        "x",
        ["m"],
    ],
    "unit_out": ["km", "m", "nm", "celsius", "fahrenheit", "lb", "kg", "cm", "yd", "", ("m",)],
}
SCRIPTS["MathAPI"] = (
    (  # precisions set one after another: each call's digits are its own (upstream's setting is process-global)
        "logarithm(value=8, base=2, precision=50)",
        "logarithm(value=10, base=3, precision=5)",
        "logarithm(value=10, base=3, precision='x')",
        "logarithm(value=10, base=3, precision=None)",
        "logarithm(value=10, base=3)",
        "logarithm(value=-8, base=2, precision=12)",
        "logarithm(value=8, base=1, precision=12)",
        "logarithm(value='x', base=2, precision=12)",
        "logarithm(value=0, base=2, precision=12)",
        "square_root(number=2, precision=40)",
        "square_root(number=2, precision=3)",
        "square_root(number=2, precision=0)",
        "square_root(number=2, precision='3')",
        f"square_root(number=2.25, precision={10**19})",
        "square_root(number=-0.0, precision=4)",
        f"square_root(number={_BIG}, precision=5)",
        "power(base=99999, exponent=99999)",
        "power(base=0, exponent=-1)",
        "power(base=2.0, exponent=5000)",
        "power(base=-8, exponent=0.5)",
    ),
    (  # conversions through both tables, the celsius and fahrenheit formulas, statistics at the edges
        "imperial_si_conversion(value=100, unit_in='celsius', unit_out='fahrenheit')",
        "imperial_si_conversion(value=212, unit_in='fahrenheit', unit_out='celsius')",
        f"imperial_si_conversion(value={_BIG}, unit_in='kg', unit_out='lb')",
        "imperial_si_conversion(value=[1], unit_in='m', unit_out='m')",
        "imperial_si_conversion(value=1, unit_in=['m'], unit_out=['m'])",
        "si_unit_conversion(value=3, unit_in='km', unit_out='nm')",
        f"si_unit_conversion(value={_BIG}, unit_in='m', unit_out='m')",
        "si_unit_conversion(value=1, unit_in=['m'], unit_out='m')",
        "standard_deviation(numbers=[1e308, -1e308])",
        f"standard_deviation(numbers=[{_BIG}, 1])",
        f"mean(numbers=[{_BIG}, 1])",
        "min_value(numbers='abc')",
        "max_value(numbers={'k': 1})",
        "sum_values(numbers='abc')",
        f"multiply(a={_BIG}, b=0.5)",
        f"divide(a={_BIG}, b=3)",
        "divide(a=1, b=-0.0)",
        "percentage(part=1, whole=[])",
        "round_number(number=2.675, decimal_places=2)",
        "absolute_value(number='x')",
    ),
)
