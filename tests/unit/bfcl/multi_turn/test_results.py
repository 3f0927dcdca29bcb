"""Result strings and the API classes' conventions (docs/bfcl-multi-turn.md#result-strings)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_tooleval.suites.bfcl.multi_turn.apis import api_methods, public_state
from pytest_tooleval.suites.bfcl.multi_turn.apis.posting import TwitterAPI
from pytest_tooleval.suites.bfcl.multi_turn.apis.ticket import TicketAPI
from pytest_tooleval.suites.bfcl.multi_turn.results import error_string, result_string
from pytest_tooleval.suites.bfcl.multi_turn.tables import Tables

ROOT = Path(__file__).resolve().parents[4]


class Sub(dict):  # type: ignore[type-arg]
    pass


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain", "plain"),
        ({"a": "é", "b": (1, 2.0), 3: None}, '{"a": "\\u00e9", "b": [1, 2.0], "3": null}'),
        ({"x": float("nan")}, '{"x": NaN}'),
        ({"s": {1, 2}}, "{'s': {1, 2}}"),  # not JSON: the repr
        (Sub(a=1), "{'a': 1}"),  # a dict subclass is not a dict here
        ([{"id": 1}], "[{'id': 1}]"),
        (None, "None"),
        (True, "True"),
        (1.0, "1.0"),
    ],
)
def test_result_string(value: object, expected: str) -> None:
    assert result_string(value) == expected


def test_error_string() -> None:
    assert error_string(KeyError("x")) == "Error during execution: 'x'"


def test_load_scenario_is_not_an_api_method_and_private_attributes_are_not_state() -> None:
    api = TicketAPI(
        Tables({"ticket_api.DEFAULT_STATE": {"ticket_queue": [], "ticket_counter": 1, "current_user": None}})
    )
    api.load_scenario({"current_user": "ann"})
    assert "load_scenario" not in api_methods(api)
    assert "create_ticket" in api_methods(api)
    assert public_state(api) == {"ticket_queue": [], "ticket_counter": 1, "current_user": "ann"}


def test_a_call_that_does_not_bind_reads_as_cpythons_for_upstreams_names() -> None:
    api = TwitterAPI(Tables({}))
    with pytest.raises(
        TypeError, match=re.escape("TwitterAPI.post_tweet() missing 1 required positional argument: 'content'")
    ):
        api_methods(api)["post_tweet"]()
    with pytest.raises(TypeError, match=re.escape("TwitterAPI.post_tweet() takes from 2 to 4 positional arguments")):
        api_methods(api)["post_tweet"]("a", [], [], 1)


def test_every_pointer_into_the_page_names_a_heading() -> None:
    page = (ROOT / "docs" / "bfcl-multi-turn.md").read_text(encoding="utf-8")
    headings = {
        re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in page.splitlines()
        if line.startswith("#")
    }
    pointers = [
        (path, anchor)
        for top in ("pytest_tooleval", "tests")
        for path in sorted((ROOT / top).rglob("*.py"))
        for anchor in re.findall(r"docs/bfcl-multi-turn\.md#([\w-]+)", path.read_text(encoding="utf-8"))
    ]
    assert pointers
    assert [f"{path}: #{anchor}" for path, anchor in pointers if anchor not in headings] == []
