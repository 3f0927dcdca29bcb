"""bfcl's four cost and latency columns of `data_overall.csv`, computed as bfcl-eval computes them
(docs/bfcl.md#cost-and-latency): Total Cost ($), Latency Mean (s), Latency Standard Deviation (s) and Latency 95th
Percentile (s), from the values its result rows carry.

Per result row bfcl counts `latency`, `input_token_count` and `output_token_count` (`record_cost_latency`): a list of
lists (a multi-turn row: per turn, per request) is flattened one level, a single value kept; only numbers that are not
0 are counted (`True` counts as 1, being an int), and a list that is not all lists is ignored (`counted`). From the
counted values of every row (`figures`): the cost from the token counts at the model's prices per million tokens, or,
for a model without prices (one bfcl hosts itself), from the summed latency at the GPUs' hourly price shared by the
concurrent requests; the latencies' mean, sample standard deviation and 95th percentile (numpy's linear one). Each
is rounded to two places: Python's `round` but for the percentile, a numpy float that numpy rounds its own way
(`round(x * 100) / 100`, so 90.385 gives 90.38, not Python's 90.39). A column with nothing to count is N/A. bfcl
stops, writing no leaderboard at all, where `statistics.stdev` has one latency or numpy's percentile only booleans:
every column is then N/A here, with the reason.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from .prices import Pricing

Number = int | float
#: the keys of a result row bfcl counts, in its order
KEYS = ("latency", "input_token_count", "output_token_count")
#: the leaderboard's columns, in its order
COLUMNS = ("Total Cost ($)", "Latency Mean (s)", "Latency Standard Deviation (s)", "Latency 95th Percentile (s)")
MISSING = "N/A"
_PER_MILLION = 1000000
_SECONDS_PER_HOUR = 3600


@dataclass(frozen=True)
class Figures:
    """bfcl's four figures of one model (None: N/A), and why any is N/A when bfcl says nothing of it itself."""

    cost: Number | None = None
    mean: Number | None = None
    std: Number | None = None
    p95: Number | None = None
    reason: str | None = None

    def values(self) -> tuple[Number | None, ...]:
        return self.cost, self.mean, self.std, self.p95

    def cells(self) -> list[str]:
        """The four cells as bfcl's CSV writer prints them: `str()` of the rounded number (`0.5`, `2`), or N/A."""
        return [MISSING if value is None else str(value) for value in self.values()]


def counted(value: object) -> list[Number]:
    """What bfcl counts of one key's value in one result row (`process_data` in `record_cost_latency`)."""
    if isinstance(value, list) and all(isinstance(item, list) for item in value):
        flat = [item for inner in value for item in inner]
        return [item for item in flat if isinstance(item, (int, float)) and item != 0]
    return [value] if isinstance(value, (int, float)) and value != 0 else []


def figures(pricing: Pricing, inputs: Sequence[Number], outputs: Sequence[Number],
            latencies: Sequence[Number]) -> Figures:
    """bfcl's `get_cost_latency_info` on the counted values of every row, in their order (a float sum depends on
    it); where bfcl stops with an exception, every figure is None and `reason` says what bfcl raises."""
    try:
        cost: Number | None = None
        if pricing.input_price is not None and pricing.output_price is not None:
            if inputs and outputs:
                cost = round(sum(inputs) * pricing.input_price / _PER_MILLION
                             + sum(outputs) * pricing.output_price / _PER_MILLION, 2)
        elif latencies:  # a model bfcl hosts: GPU hours shared by the requests in flight
            hours = sum(latencies) / _SECONDS_PER_HOUR
            cost = round(hours * pricing.gpu_price_per_hour / pricing.concurrent_requests, 2)
        if not latencies:
            return Figures(cost)
        mean = round(statistics.mean(latencies), 2)
        std = round(statistics.stdev(latencies), 2)
        return Figures(cost, mean, std, numpy_round(percentile_95(latencies)))
    except (statistics.StatisticsError, TypeError, ValueError, ArithmeticError, AttributeError) as exc:
        return Figures(reason=f"bfcl's leaderboard stops here and writes none of its files: {type(exc).__name__}: "
                       f"{exc}")


def percentile_95(values: Sequence[Number]) -> float:
    """`numpy.percentile(values, 95)`, its default linear method, step for step: the values as numpy's array holds
    them (floats when any is a float), the virtual index (n - 1) * 0.95 and numpy's two-sided interpolation.

    Raises:
        TypeError: only booleans, as numpy refuses to subtract them.
        ValueError: no value.
    """
    if not values:
        raise ValueError("no value")
    if all(isinstance(value, bool) for value in values):
        raise TypeError("numpy boolean subtract, the `-` operator, is not supported")
    floats = any(isinstance(value, float) for value in values)
    data = sorted(float(value) if floats else int(value) for value in values)
    if floats and any(math.isnan(value) for value in data):
        return math.nan  # numpy sorts NaN last and returns it
    last = len(data) - 1
    virtual = last * 0.95
    previous = float(math.floor(virtual))
    low = high = int(previous)
    if virtual >= last:  # numpy then takes the last value twice, and its weight from index -1
        low, high, previous = last, last, -1.0
    else:
        high = low + 1
    gamma = virtual - previous
    below, above = data[low], data[high]
    difference = above - below
    if gamma >= 0.5:
        return float(above - difference * (1 - gamma))
    return float(below + difference * gamma)


def numpy_round(value: float, places: int = 2) -> float:
    """`round()` of a numpy float: scaled, rounded half to even, scaled back (numpy's `around`), which is not
    Python's correctly rounded `round(value, 2)`; a zero keeps its sign, as numpy's `rint` does."""
    if not math.isfinite(value):
        return value
    scale = 10.0**places
    scaled = value * scale
    rounded = float(round(scaled))
    return (rounded if rounded else math.copysign(0.0, scaled)) / scale
