"""One multi-turn sample as the loader completes it (docs/bfcl-multi-turn.md#samples-and-result-files), shared
by the executor, the checker and the driving loop."""

from __future__ import annotations

from dataclasses import dataclass, field

from ....json_value import JSONObject

#: the four multi-turn categories, in the leaderboard's column order
CATEGORIES = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")


@dataclass(frozen=True)
class MultiTurnSample:
    """A question entry joined with its ground truth and its function docs, as bfcl-eval's loader leaves it.

    Attributes:
        category: one of CATEGORIES.
        index: position in the category's file.
        id: `multi_turn_<category>_<n>`.
        turns: the user turns, each a list of messages (`{"role": "user", "content": ...}`); a held-out turn of
            `multi_turn_miss_func` is an empty list.
        involved_classes: the API classes the sample acts on, in the data's order (tool order, state-check order).
        initial_config: class name -> the scenario its instance loads.
        functions: the function docs offered from the first turn (held-out docs removed), without the Python hint.
        held_out: turn index -> the docs revealed at that turn (`missed_function`, names resolved to docs).
        ground_truth: per turn, the ground-truth call strings (an empty list: a turn the model cannot complete).
    """

    category: str
    index: int
    id: str
    turns: list[list[JSONObject]] = field(repr=False)
    involved_classes: list[str]
    initial_config: JSONObject = field(repr=False)
    functions: list[JSONObject] = field(repr=False)
    held_out: dict[int, list[JSONObject]] = field(repr=False)
    ground_truth: list[list[str]] = field(repr=False)

    @property
    def long_context(self) -> bool:
        """Whether the instances load with the long-context extras (upstream reads it off the category name)."""
        return "long_context" in self.category
