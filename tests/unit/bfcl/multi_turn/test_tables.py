"""The multi-turn tables: lifted from the pinned wheel's source, pinned, cached
(docs/bfcl-multi-turn.md#tables-from-the-wheel)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from json_narrow import as_list
from pytest_tooleval.errors import DataError, ToolevalUsageError
from pytest_tooleval.suites.bfcl.multi_turn.tables import (
    SELECTORS,
    Tables,
    decode,
    encode,
    lift_branches,
    lift_literal,
)
from pytest_tooleval.suites.bfcl.upstream import WHEEL_ENV, load_pin, load_tables, tables_file


def test_the_wheel_gives_the_pinned_tables_and_the_cache_keeps_them(wheel: Path, tmp_path: Path) -> None:
    tables = load_tables(tmp_path, True, wheel=wheel)
    assert tables.sha256() == load_pin().tables_sha256
    assert set(tables.values) == set(SELECTORS)
    stored = json.loads(tables_file(load_pin(), tmp_path).read_text(encoding="utf-8"))
    assert stored["tables_sha256"] == tables.sha256()
    again = load_tables(tmp_path, True)  # offline, no wheel: the cache file
    assert dict(again.values) == dict(tables.values)


def test_the_tables_hold_what_json_cannot(wheel: Path, tmp_path: Path) -> None:
    tables = load_tables(tmp_path, True, wheel=wheel)
    costs = tables.value("travel_booking.TravelAPI.get_flight_cost.base_costs")
    assert isinstance(costs, dict)
    assert all(isinstance(key, tuple) and len(key) == 2 for key in costs)
    assert as_list(tables.value("long_context.WATCH_LIST_EXTENSION"))[-1] is Ellipsis
    assert isinstance(tables.value("travel_booking.TravelAPI.book_flight.valid_classes"), set)
    state = tables.default_state("TicketAPI")
    as_list(state["ticket_queue"]).append({"id": 1})
    assert tables.default_state("TicketAPI")["ticket_queue"] == []  # copies, never the table itself


def test_offline_without_the_cache_file_or_a_wheel_names_both_fixes(tmp_path: Path) -> None:
    with pytest.raises(ToolevalUsageError, match=f"{WHEEL_ENV}.*run once without"):
        load_tables(tmp_path, True)


def test_a_cache_file_with_other_tables_is_not_used(tmp_path: Path) -> None:
    pin = load_pin()
    record = {"wheel_sha256": pin.wheel_sha256, "tables": {selector: 1 for selector in SELECTORS}}
    tables_file(pin, tmp_path).write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ToolevalUsageError):  # not the pinned hash: made again, which offline cannot
        load_tables(tmp_path, True)


@pytest.mark.parametrize(
    ("source", "scope", "name", "expected"),
    [
        ("A = {'x': (1, 2)}\n", [], "A", {"x": (1, 2)}),
        (
            "class C:\n    def m(self):\n        t = {('a', 'b'): 1}\n        return t\n",
            ["C", "m"],
            "t",
            {("a", "b"): 1},
        ),
        ("class C:\n    def m(self):\n        return ['x', ...]\n", ["C", "m"], "return", ["x", ...]),
        # numeric-literal arithmetic folded as Python computes it (MathAPI's 5 / 9)
        ("A = {'f': 5 / 9, 'g': -2 * 3 + 1 - 0.5, 'h': -(1 / 4)}\n", [], "A", {"f": 5 / 9, "g": -5.5, "h": -0.25}),
    ],
)
def test_lift_literal(source: str, scope: list[str], name: str, expected: object) -> None:
    assert lift_literal(ast.parse(source), scope, name, "m.py") == expected


@pytest.mark.parametrize(
    ("source", "scope", "problem"),
    [
        ("A = 1\nA = 2\n", [], "assigned 2 times"),
        ("B = 1\n", [], "assigned 0 times"),
        ("A = f()\n", [], "not a literal"),
        ("A = 1 / 0\n", [], "not a literal"),
        ("A = 2 ** 3\n", [], "not a literal"),  # only + - * / are folded
        ("A = 'a' * 3\n", [], "not a literal"),  # and only over numbers
        ("A = x / 9\n", [], "not a literal"),
        ("class C:\n    pass\n", ["C", "m"], "C.m not found"),
    ],
)
def test_lift_literal_refuses_what_the_pinned_wheel_does_not_hold(source: str, scope: list[str], problem: str) -> None:
    with pytest.raises(DataError, match=problem):
        lift_literal(ast.parse(source), scope, "A", "m.py")


CHAIN = (
    "class C:\n"
    "    def m(self, a, b):\n"
    "        if (a == '1' and b == '2') or (a == '2' and b == '1'):\n"
    "            d = {'v': 1.5}\n"
    "        elif a == 3:\n"
    "            d = {'v': 2}\n"
    "        else:\n"
    "            d = {'error': 'none'}\n"
    "        return d\n"
)


def test_lift_branches_reads_a_compare_and_assign_chain() -> None:
    assert lift_branches(ast.parse(CHAIN), ["C", "m"], "d", "m.py") == [
        [[{"a": "1", "b": "2"}, {"a": "2", "b": "1"}], {"v": 1.5}],
        [[{"a": 3}], {"v": 2}],
        [None, {"error": "none"}],
    ]
    returning = CHAIN.replace("d = ", "return ").replace("        return d\n", "")
    assert lift_branches(ast.parse(returning), ["C", "m"], "return", "m.py")[1] == [[{"a": 3}], {"v": 2}]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (("a == 3", "a > 3"), "not a compare-and-assign chain"),
        (("a == 3", "a == f()"), "not a compare-and-assign chain"),
        (("d = {'v': 2}", "d = g()"), "not a compare-and-assign chain"),
        (("d = {'v': 1.5}", "e = 1"), "0 matching if chains"),
    ],
)
def test_lift_branches_refuses_other_shapes(change: tuple[str, str], problem: str) -> None:
    with pytest.raises(DataError, match=problem):
        lift_branches(ast.parse(CHAIN.replace(*change)), ["C", "m"], "d", "m.py")


@pytest.mark.parametrize(
    "value",
    [
        {"a": [1, 2.5, None, True]},
        {1: "x", (2, 3): ["y"]},
        {"$tuple": 1},
        ("a", ...),
        {"b", "a"},
        [{}, [], ""],
    ],
)
def test_tagged_json_round_trips(value: object) -> None:
    text = json.dumps(encode(value))
    assert decode(json.loads(text)) == value


def test_tables_from_malformed_content_is_a_data_error() -> None:
    with pytest.raises(DataError, match="missing"):
        Tables.from_content({})
