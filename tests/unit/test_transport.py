"""The per-sample payload keeps a model's output within bounds (transport.py): every string of a structured output
is cut, as a text output is."""

from __future__ import annotations

from pytest_tooleval.text import TOO_DEEP
from pytest_tooleval.transport import OUTPUT_LIMIT, clipped_strings


def test_every_string_of_a_structured_output_is_cut_keys_included() -> None:
    long = "a" * (OUTPUT_LIMIT + 5)
    cut = "a" * OUTPUT_LIMIT + "... [5 more characters]"
    output = [[{long: long}, long], ("short", 3, None)]
    assert clipped_strings(output) == [[{cut: cut}, cut], ["short", 3, None]]
    assert clipped_strings(long) == cut


def test_an_output_too_deep_to_walk_is_a_note() -> None:
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    assert clipped_strings(deep) == TOO_DEEP
