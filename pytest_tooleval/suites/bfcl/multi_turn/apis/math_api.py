"""`MathAPI`: arithmetic and statistics on the values a model passes, with no state (docs/bfcl-multi-turn.md#mathapi).

Upstream never loads a scenario into it (it is bfcl's one stateless class), so `load_scenario` ignores its entry.
The arithmetic is Python's own operators on the values as given: a string, a list or a bool goes through to them,
and their `TypeError`s become the error results, or the error strings where upstream does not catch them.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from .....errors import DataError
from .....json_value import JSONValue
from ..tables import Tables

if TYPE_CHECKING:
    from mpmath.ctx_mp import MPContext

Outcome = dict[str, object]  # {"result": the value} or {"error": the text}
_SQRT_FAILED = "Input must be a number or computation resulted in an invalid operation"


class MathAPI:
    """No public attributes: the state check always finds two MathAPI instances equal."""

    def __init__(self, tables: Tables) -> None:
        self._to_meters = _factors(tables, "math_api.MathAPI.si_unit_conversion.to_meters")
        self._imperial = _factors(tables, "math_api.MathAPI.imperial_si_conversion.conversion")
        self._mp: MPContext | None = None

    def load_scenario(self, scenario: Mapping[str, JSONValue], long_context: bool = False) -> None:
        pass  # stateless upstream: its initial_config entry is never given to it

    def logarithm(self, value: float, base: float, precision: int) -> Outcome:
        # Upstream sets mpmath's process-global precision before each use; each call here sets this instance's
        # own context the same way, so the result (and its repr, which reads the context) has the same digits and
        # nothing leaks into other samples (docs/bfcl-multi-turn.md#mathapi)
        mp = self._context()
        try:
            mp.dps = precision
            return {"result": mp.log(value) / mp.log(base)}
        except Exception as exc:  # any failure, mpmath's own text
            return {"error": str(exc)}

    def mean(self, numbers: list[float]) -> Outcome:
        return _over_list(numbers, "calculate mean of", lambda: sum(numbers) / len(numbers))

    def standard_deviation(self, numbers: list[float]) -> Outcome:
        def deviation() -> float:
            average = sum(numbers) / len(numbers)
            return math.sqrt(sum((number - average) ** 2 for number in numbers) / len(numbers))
        return _over_list(numbers, "calculate standard deviation of", deviation)

    def si_unit_conversion(self, value: float, unit_in: str, unit_out: str) -> Outcome:
        from_meters = {unit: 1 / factor for unit, factor in self._to_meters.items()}
        if not isinstance(value, (int, float)):
            return {"error": "Value must be a number"}
        if unit_in not in self._to_meters or unit_out not in from_meters:  # an unhashable unit raises
            return _unsupported(unit_in, unit_out)
        try:
            return {"result": value * self._to_meters[unit_in] * from_meters[unit_out]}
        except OverflowError:
            return {"error": "Conversion resulted in a value too large to represent"}

    def imperial_si_conversion(self, value: float, unit_in: str, unit_out: str) -> Outcome:
        if not isinstance(value, (int, float)):
            return {"error": "Value must be a number"}
        if unit_in == unit_out:
            return {"result": value}
        factor = self._imperial.get(f"{unit_in}_to_{unit_out}")
        if factor is None:
            return _unsupported(unit_in, unit_out)
        try:
            if unit_in == "celsius" and unit_out == "fahrenheit":
                return {"result": value * factor + 32}
            if unit_in == "fahrenheit" and unit_out == "celsius":
                return {"result": (value - 32) * factor}
            return {"result": value * factor}
        except OverflowError:
            return {"error": "Conversion resulted in a value too large to represent"}

    def add(self, a: float, b: float) -> Outcome:
        return _numbers(lambda: a + b, "Both inputs must be numbers")

    def subtract(self, a: float, b: float) -> Outcome:
        return _numbers(lambda: a - b, "Both inputs must be numbers")

    def multiply(self, a: float, b: float) -> Outcome:
        if not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
            return {"error": "Both inputs must be numbers"}
        return {"result": a * b}  # an int too large for a float raises OverflowError, uncaught as upstream's

    def divide(self, a: float, b: float) -> Outcome:
        def quotient() -> Outcome:
            return {"error": "Cannot divide by zero"} if b == 0 else {"result": a / b}
        return _numbers(quotient, "Both inputs must be numbers", wrapped=False)

    def power(self, base: float, exponent: float) -> Outcome:
        return _numbers(lambda: base ** exponent, "Both inputs must be numbers")

    def square_root(self, number: float, precision: int) -> Outcome:
        try:
            if number < 0:
                return {"error": "Cannot calculate square root of a negative number"}
            # upstream sets the thread's decimal context; a context of our own, set by the same setter (a bad
            # precision fails with the same exception), computes the same digits and leaks nothing
            context = decimal.Context()
            context.prec = precision
            return {"result": decimal.Decimal(number).sqrt(context=context)}
        except (TypeError, decimal.InvalidOperation):
            return {"error": _SQRT_FAILED}

    def absolute_value(self, number: float) -> Outcome:
        return _numbers(lambda: abs(number), "Input must be a number")

    def round_number(self, number: float, decimal_places: int = 0) -> Outcome:
        return _numbers(lambda: round(number, decimal_places),
                        "First input must be a number, second input must be an integer")

    def percentage(self, part: float, whole: float) -> Outcome:
        def share() -> Outcome:
            return {"error": "Whole value cannot be zero"} if whole == 0 else {"result": part / whole * 100}
        return _numbers(share, "Both inputs must be numbers", wrapped=False)

    def min_value(self, numbers: list[float]) -> Outcome:
        return _over_list(numbers, "find minimum of", lambda: min(numbers))

    def max_value(self, numbers: list[float]) -> Outcome:
        return _over_list(numbers, "find maximum of", lambda: max(numbers))

    def sum_values(self, numbers: list[float]) -> Outcome:
        return _over_list(numbers, "calculate sum of", lambda: sum(numbers))

    def _context(self) -> MPContext:
        if self._mp is None:
            # imported here, not at the top: loading the plugin (and every other suite) does not pay for mpmath
            from mpmath.ctx_mp import MPContext
            self._mp = MPContext()
        return self._mp


def _numbers(compute: Callable[[], object], message: str, *, wrapped: bool = True) -> Outcome:
    """`compute()`'s value as the result (or its outcome as it is, `wrapped=False`); a TypeError as `message`."""
    try:
        value = compute()
    except TypeError:
        return {"error": message}
    if wrapped:
        return {"result": value}
    assert isinstance(value, dict)
    return value


def _over_list(numbers: object, what: str, compute: Callable[[], object]) -> Outcome:
    """A statistic of a list: an empty (or falsy) one is refused, a TypeError is the list's fault."""
    if not numbers:
        return {"error": f"Cannot {what} an empty list"}
    return _numbers(compute, "All elements in the list must be numbers")


def _unsupported(unit_in: object, unit_out: object) -> Outcome:
    return {"error": f"Conversion from '{unit_in}' to '{unit_out}' is not supported"}


def _factors(tables: Tables, selector: str) -> dict[str, float]:
    table = tables.value(selector)
    if not (isinstance(table, dict) and all(isinstance(key, str) and isinstance(value, (int, float))
                                            for key, value in table.items())):
        raise DataError(f"bfcl tables: {selector} is not a table of factors")
    return table
