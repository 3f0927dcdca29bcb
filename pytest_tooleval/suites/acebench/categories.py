"""ACEBench's 17 categories and their groups, defined once (acebench-scoring §1, §8).

The same categories are used in two orders, each on purpose:

* upstream's order (`NORMAL_CATEGORIES`, `AGENT_CATEGORIES`, `ALL_CATEGORIES`, `GROUPS`): upstream's
  leaderboard lists and sums the categories in this order, so aggregation follows it (float sums then round
  identically), and so do the summary tables and the JSON report;
* collection order (`COLLECTION_ORDER` and its two families): the order tests are collected, listed and
  numbered in. It differs from upstream's only within two pairs (user_adjust before user_switch, multi_step
  before multi_turn), and is kept as it has always been so that test ids keep their order.
"""

from __future__ import annotations

__all__ = [
    "AGENT_CATEGORIES",
    "AGENT_COLLECTION_ORDER",
    "ALL_CATEGORIES",
    "ATOM_CATEGORIES",
    "COLLECTION_ORDER",
    "GROUPS",
    "MULTI_TURN_CATEGORIES",
    "NORMAL_CATEGORIES",
    "NORMAL_COLLECTION_ORDER",
    "SINGLE_TURN_CATEGORIES",
    "SPECIAL_CATEGORIES",
]

# --- upstream's order -------------------------------------------------------------------------------

ATOM_CATEGORIES = (
    "normal_atom_bool",
    "normal_atom_enum",
    "normal_atom_number",
    "normal_atom_list",
    "normal_atom_object_deep",
    "normal_atom_object_short",
)
SINGLE_TURN_CATEGORIES = ("normal_single_turn_single_function", "normal_single_turn_parallel_function")
MULTI_TURN_CATEGORIES = ("normal_multi_turn_user_switch", "normal_multi_turn_user_adjust")
_OTHER_NORMAL_CATEGORIES = ("normal_similar_api", "normal_preference")
# The member order is upstream's summation order, kept so that float sums round identically.
NORMAL_CATEGORIES = (*SINGLE_TURN_CATEGORIES, *MULTI_TURN_CATEGORIES, *_OTHER_NORMAL_CATEGORIES, *ATOM_CATEGORIES)
SPECIAL_CATEGORIES = ("special_incomplete", "special_error_param", "special_irrelevant")
AGENT_CATEGORIES = ("agent_multi_turn", "agent_multi_step")
ALL_CATEGORIES = NORMAL_CATEGORIES + SPECIAL_CATEGORIES + AGENT_CATEGORIES

GROUPS: dict[str, tuple[str, ...]] = {
    "ATOM": ATOM_CATEGORIES,
    "SINGLE_TURN": SINGLE_TURN_CATEGORIES,
    "MULTI_TURN": MULTI_TURN_CATEGORIES,
    "NORMAL": NORMAL_CATEGORIES,
    "SPECIAL": SPECIAL_CATEGORIES,
    "AGENT": AGENT_CATEGORIES,
}

# --- collection order -------------------------------------------------------------------------------
# Upstream's order with the multi-turn pair and the agent pair reversed (see the module docstring).

NORMAL_COLLECTION_ORDER = (
    *SINGLE_TURN_CATEGORIES,
    *MULTI_TURN_CATEGORIES[::-1],  # user_adjust, user_switch
    *_OTHER_NORMAL_CATEGORIES,
    *ATOM_CATEGORIES,
)
AGENT_COLLECTION_ORDER = AGENT_CATEGORIES[::-1]  # multi_step, multi_turn
COLLECTION_ORDER = NORMAL_COLLECTION_ORDER + SPECIAL_CATEGORIES + AGENT_COLLECTION_ORDER
