"""The data the simulated APIs need that bfcl-eval keeps as literals in its source
(docs/bfcl-multi-turn.md#tables-from-the-wheel).

Default states, the long-context extensions, the route costs, the exchange rates, the airport, symbol and sector
maps: each is a literal assigned at module level or inside a named method of one of the wheel's API source files.
They are read from the syntax tree with `ast.literal_eval`, numeric-literal arithmetic such as `5 / 9` folded
first as Python folds it (nothing of bfcl-eval is imported or run), hashed, and the hash is pinned (pin.json
`tables_sha256`), as the request texts are (templates.py). They are kept in the cache beside the data folder, in a
tagged JSON that keeps what JSON cannot hold: tuples, non-string keys, `...`.
"""

from __future__ import annotations

import ast
import copy
import operator
import pickle
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any, ClassVar

from .... import python_ast
from ....data.download import canonical_sha256
from ....errors import DataError

SOURCE_DIR = "bfcl_eval/eval_checker/multi_turn_eval/func_source_code/"

# what is lifted, as "<module>.<NAME>" (module level) or "<module>.<Class>.<method>.<NAME>" (inside that method;
# NAME "return" is the method's one literal return value; NAME "if:<target>" is the method's if/elif chain that
# compares parameters with literals and assigns a literal to <target>, or returns one for "if:return")
SELECTORS = (
    *(f"long_context.{name}" for name in (
        "WATCH_LIST_EXTENSION", "TRANSACTION_HISTORY_EXTENSION", "MA_5_EXTENSION", "MA_20_EXTENSION",
        "TECHNOLOGY_EXTENSION", "AUTOMOBILE_EXTENSION", "ORDER_DETAIL_EXTENSION", "FILE_CONTENT_EXTENSION",
        "POPULATE_FILE_EXTENSION", "CAR_STATUS_METADATA_EXTENSION", "LONG_WEATHER_EXTENSION",
        "PARKING_BRAKE_INSTRUCTION", "INTERMEDIARY_CITIES", "CREDIT_CARD_EXTENSION", "BOOKING_RECORD_EXTENSION",
        "FILES_TAIL_USED")),
    *(f"{module}.DEFAULT_STATE" for module in (
        "message_api", "posting_api", "ticket_api", "trading_bot", "travel_booking", "vehicle_control")),
    "math_api.MathAPI.si_unit_conversion.to_meters",
    "math_api.MathAPI.imperial_si_conversion.conversion",  # holds 5 / 9: numeric arithmetic, folded (_fold)
    "trading_bot.TradingBot.get_symbol_by_name.symbol_map",
    "trading_bot.TradingBot.get_available_stocks.sector_map",
    "travel_booking.TravelAPI.get_flight_cost.base_costs",
    "travel_booking.TravelAPI.book_flight.valid_classes",
    "travel_booking.TravelAPI.list_all_airports.return",
    "travel_booking.TravelAPI.compute_exchange_rate.exchange_rates",
    "travel_booking.TravelAPI.get_nearest_airport_by_city.airport_map",
    "vehicle_control.MAX_FUEL_LEVEL",
    "vehicle_control.MIN_FUEL_LEVEL",
    "vehicle_control.MILE_PER_GALLON",
    "vehicle_control.MAX_BATTERY_VOLTAGE",
    "vehicle_control.MIN_BATTERY_VOLTAGE",
    "vehicle_control.VehicleControlAPI.estimate_distance.if:distance",
    "vehicle_control.VehicleControlAPI.get_zipcode_based_on_city.if:return",
)

# the module each class's DEFAULT_STATE is in
STATE_MODULES = {"MessageAPI": "message_api", "TwitterAPI": "posting_api", "TicketAPI": "ticket_api",
                 "TradingBot": "trading_bot", "TravelAPI": "travel_booking", "VehicleControlAPI": "vehicle_control"}


def source_files() -> tuple[str, ...]:
    """The wheel's files the selectors read, by their path in the wheel."""
    return tuple(sorted({f"{SOURCE_DIR}{selector.split('.')[0]}.py" for selector in SELECTORS}))


@dataclass(frozen=True)
class Tables:
    """The lifted literals, by selector; read-only: `value` and `default_state` hand out deep copies.

    Attributes:
        values: {selector: the literal's Python value}.
    """

    values: Mapping[str, object]

    def value(self, selector: str) -> object:
        """A deep copy of one table (KeyError for a selector that was not lifted); its reader narrows it."""
        frozen = self._frozen.get(selector)
        if frozen is None:
            frozen = self._frozen[selector] = pickle.dumps(self.values[selector], protocol=pickle.HIGHEST_PROTOCOL)
        # a deep copy made from our own bytes: 4-7 times cheaper than copy.deepcopy on the long-context tables,
        # which every long_context sample's instances copy (docs/throughput.md)
        return pickle.loads(frozen)

    @cached_property
    def _frozen(self) -> dict[str, bytes]:
        return {}

    def default_state(self, class_name: str) -> dict[str, object]:
        """A deep copy of the class's DEFAULT_STATE: {attribute: its value when the scenario does not give one}."""
        state = self.value(f"{STATE_MODULES[class_name]}.DEFAULT_STATE")
        if not isinstance(state, dict):
            raise DataError(f"bfcl tables: {class_name}'s DEFAULT_STATE is not a dict")
        return state

    def content(self) -> dict[str, object]:
        """The tables as tagged JSON (what the pinned hash covers and the cache file holds)."""
        return {selector: encode(value) for selector, value in self.values.items()}

    @cached_property
    def _sha256(self) -> str:
        return canonical_sha256(self.content())

    def sha256(self) -> str:
        return self._sha256

    def __hash__(self) -> int:
        return hash(self.sha256())

    @classmethod
    def from_content(cls, content: Mapping[str, object]) -> Tables:
        """Back from `content()`; DataError when a selector is missing or a value malformed."""
        missing = [selector for selector in SELECTORS if selector not in content]
        if missing:
            raise DataError(f"bfcl tables: {missing[0]} missing")
        try:
            return cls(MappingProxyType({selector: decode(content[selector]) for selector in SELECTORS}))
        except (TypeError, ValueError, KeyError) as exc:
            raise DataError(f"bfcl tables: malformed content ({type(exc).__name__}: {exc})") from None


# ------------------------------------------------------------------------------------------ lifting


def lift_tables(sources: Mapping[str, str]) -> Tables:
    """The tables from the wheel's source files ({path in the wheel: text}, the paths of `source_files()`).

    Raises:
        DataError: a file is missing or unreadable, or a selected literal is not where the pinned wheel has it.
    """
    trees: dict[str, ast.Module] = {}
    values: dict[str, object] = {}
    for selector in SELECTORS:
        module, *scope, name = selector.split(".")
        path = f"{SOURCE_DIR}{module}.py"
        if path not in sources:
            raise DataError(f"bfcl wheel lacks {path}")
        if path not in trees:
            try:
                trees[path] = python_ast.parse(sources[path], filename=path)
            except (SyntaxError, ValueError) as exc:
                raise DataError(f"{path}: not readable Python ({exc})") from None
        if name.startswith(BRANCHES):
            values[selector] = lift_branches(trees[path], scope, name[len(BRANCHES):], path)
        else:
            values[selector] = lift_literal(trees[path], scope, name, path)
    return Tables(MappingProxyType(values))


def lift_literal(tree: ast.Module, scope: list[str], name: str, origin: str) -> object:
    """The literal assigned to `name` at module level (`scope` empty) or in method `scope = [class, method]`.

    Exactly one assignment must match: none, or a second one, means the file is not the one pinned."""
    if scope:
        body = _method(tree, scope, origin).body
        nodes: list[ast.AST] = [node for statement in body for node in ast.walk(statement)]
    else:
        nodes = list(tree.body)
    where = ".".join([*scope, name])
    found = [value for node in nodes for value in _assigned(node, name)]
    if len(found) != 1:
        raise DataError(f"{origin}: {where} is assigned {len(found)} times, expected one literal")
    try:
        return ast.literal_eval(_fold(found[0]))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError, ZeroDivisionError, OverflowError):
        raise DataError(f"{origin}: {where} is not a literal") from None


BRANCHES = "if:"


def lift_branches(tree: ast.Module, scope: list[str], target: str, origin: str) -> list[list[object]]:
    """The method's one if/elif chain whose branches each assign a literal to `target` (or return one, `target`
    "return"), read as data, never run: `[[alternatives, value], ...]`, in the chain's order.

    A branch's condition is `or` of alternatives, each an `and` of `parameter == literal` comparisons, given as
    {parameter: literal}; the final `else` branch has alternatives None (and is absent when the chain has none).
    """
    where = ".".join([*scope, BRANCHES + target])
    chains = [statement for statement in _method(tree, scope, origin).body
              if isinstance(statement, ast.If) and _branch_value(statement.body, target) is not None]
    if len(chains) != 1:
        raise DataError(f"{origin}: {where}: {len(chains)} matching if chains, expected one")
    out: list[list[object]] = []
    node: ast.If | None = chains[0]
    try:
        while node is not None:
            value = _branch_value(node.body, target)
            if value is None:
                raise ValueError("a branch that is not one literal assignment")
            out.append([_alternatives(node.test), ast.literal_eval(value)])
            rest = node.orelse
            if len(rest) == 1 and isinstance(rest[0], ast.If):
                node = rest[0]
                continue
            if rest:
                other = _branch_value(rest, target)
                if other is None:
                    raise ValueError("an else that is not one literal assignment")
                out.append([None, ast.literal_eval(other)])
            node = None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise DataError(f"{origin}: {where} is not a compare-and-assign chain ({exc})") from None
    return out


def _branch_value(body: list[ast.stmt], target: str) -> ast.expr | None:
    if len(body) != 1:
        return None
    found = _assigned(body[0], target)
    return found[0] if found else None


def _alternatives(test: ast.expr) -> list[dict[str, object]]:
    options = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    out = []
    for option in options:
        terms = option.values if isinstance(option, ast.BoolOp) and isinstance(option.op, ast.And) else [option]
        compared: dict[str, object] = {}
        for term in terms:
            if not (isinstance(term, ast.Compare) and isinstance(term.left, ast.Name) and len(term.ops) == 1
                    and isinstance(term.ops[0], ast.Eq) and term.left.id not in compared):
                raise ValueError("a condition that is not parameter == literal")
            compared[term.left.id] = ast.literal_eval(term.comparators[0])
        out.append(compared)
    return out


class _Folder(ast.NodeTransformer):
    """Numeric-literal arithmetic (`5 / 9`, `-1 * 2`) made one constant, computed as Python computes it: no name,
    call or other operator is folded, so what is left for `ast.literal_eval` is still only literals."""

    _OPERATORS: ClassVar[dict[type[ast.operator], Callable[[Any, Any], Any]]] = {
        ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        compute = self._OPERATORS.get(type(node.op))
        left, right = _number(node.left), _number(node.right)
        if compute is None or left is None or right is None:
            return node
        return ast.copy_location(ast.Constant(compute(left, right)), node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        operand = _number(node.operand)
        if not isinstance(node.op, (ast.USub, ast.UAdd)) or operand is None:
            return node
        return ast.copy_location(ast.Constant(-operand if isinstance(node.op, ast.USub) else +operand), node)


def _number(node: ast.expr) -> int | float | None:
    value = node.value if isinstance(node, ast.Constant) else None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _fold(node: ast.expr) -> ast.expr:
    """`node` with its numeric-literal arithmetic folded (a copy; ZeroDivisionError for a division by zero)."""
    folded = _Folder().visit(copy.deepcopy(node))
    assert isinstance(folded, ast.expr)
    return folded


def _method(tree: ast.Module, scope: list[str], origin: str) -> ast.FunctionDef:
    if len(scope) != 2:
        raise DataError(f"{origin}: a scope is a class and a method, not {'.'.join(scope)}")
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == scope[0]:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == scope[1]:
                    return item
    raise DataError(f"{origin}: {'.'.join(scope)} not found")


def _assigned(node: ast.AST, name: str) -> list[ast.expr]:
    if name == "return":
        return [node.value] if isinstance(node, ast.Return) and node.value is not None else []
    if isinstance(node, ast.Assign) and any(isinstance(target, ast.Name) and target.id == name
                                            for target in node.targets):
        return [node.value]
    if (isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name)
            and node.target.id == name):
        return [node.value]
    return []


# ------------------------------------------------------------------------------------------ tagged JSON
# JSON values stand for themselves; a one-key object whose key starts with "$" is a tag.


def encode(value: object) -> object:
    """A literal as JSON: tuples, sets, `...` and dicts with non-string keys (or a "$" key) tagged."""
    if value is Ellipsis:
        return {"$ellipsis": None}
    if isinstance(value, tuple):
        return {"$tuple": [encode(item) for item in value]}
    if isinstance(value, (set, frozenset)):  # sorted, so that the hash does not depend on PYTHONHASHSEED
        return {"$set": [encode(item) for item in sorted(value, key=repr)]}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        if all(isinstance(key, str) and not key.startswith("$") for key in value):
            return {key: encode(item) for key, item in value.items()}
        return {"$items": [[encode(key), encode(item)] for key, item in value.items()]}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"{type(value).__name__} is not a literal the tables hold")


def decode(value: object) -> object:
    """`encode` undone."""
    if isinstance(value, list):
        return [decode(item) for item in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        (key, inner), = value.items()
        if key == "$ellipsis":
            return Ellipsis
        if key == "$tuple" and isinstance(inner, list):
            return tuple(decode(item) for item in inner)
        if key == "$set" and isinstance(inner, list):
            return {_hashable(decode(item)) for item in inner}
        if key == "$items" and isinstance(inner, list):
            return {_hashable(decode(pair[0])): decode(pair[1]) for pair in inner}
    return {key: decode(item) for key, item in value.items()}


def _hashable(key: object) -> Hashable:  # a dict key or set member read back
    if not isinstance(key, Hashable):
        raise TypeError(f"{type(key).__name__} cannot be a key")
    return key

