"""bfcl's price facts, lifted with `ast` from the pinned wheel (docs/bfcl.md#cost-and-latency): each model's input and
output price per million tokens (`MODEL_CONFIG_MAPPING` in constants/model_config.py) and the two constants of its
local-model cost (constants/eval_config.py).

Nothing of bfcl-eval is imported or executed: the `ModelConfig(...)` calls of the three model maps are read from
the parsed source and only their literal keyword values interpreted (`ast.literal_eval`). The lifted content is
pinned by its canonical sha256 (pin.json `prices_sha256`).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ... import python_ast
from ...data.download import canonical_sha256
from ...errors import DataError
from ...json_value import JSONObject, JSONValue

MODELS_FILE = "bfcl_eval/constants/model_config.py"
CONSTANTS_FILE = "bfcl_eval/constants/eval_config.py"
SOURCE_FILES = (MODELS_FILE, CONSTANTS_FILE)
MAPPING = "MODEL_CONFIG_MAPPING"
CONFIG_CLASS = "ModelConfig"
PRICE_FIELDS = ("input_price", "output_price")
GPU_PRICE = "H100_X8_PRICE_PER_HOUR"
CONCURRENCY = "LOCAL_SERVER_MAX_CONCURRENT_REQUEST"

Price = int | float | None  # USD per million tokens; None: bfcl has no price (a model it hosts itself)


@dataclass(frozen=True)
class Pricing:
    """What bfcl's cost of one model is computed with.

    Attributes:
        model: the model's name, as bfcl's `MODEL_CONFIG_MAPPING` keys it.
        input_price / output_price: USD per million input (output) tokens, or None.
        gpu_price_per_hour: `H100_X8_PRICE_PER_HOUR`, the hourly price of the GPUs a local model's cost assumes.
        concurrent_requests: `LOCAL_SERVER_MAX_CONCURRENT_REQUEST`, the requests that share those GPUs.
    """

    model: str
    input_price: Price
    output_price: Price
    gpu_price_per_hour: int | float
    concurrent_requests: int | float

    def content(self) -> JSONObject:
        return {"model": self.model, "input_price": self.input_price, "output_price": self.output_price,
                "gpu_price_per_hour": self.gpu_price_per_hour, "concurrent_requests": self.concurrent_requests}

    @classmethod
    def from_content(cls, content: object) -> Pricing | None:
        """Back from `content()` (a report row's); None when it is not of that shape."""
        if not isinstance(content, Mapping) or not isinstance(content.get("model"), str):
            return None
        prices = [content.get(name) for name in PRICE_FIELDS]
        constants = [content.get("gpu_price_per_hour"), content.get("concurrent_requests")]
        if not all(price is None or _number(price) for price in prices) or not all(map(_number, constants)):
            return None
        return cls(str(content["model"]), prices[0], prices[1], constants[0], constants[1])  # type: ignore[arg-type]


@dataclass(frozen=True)
class PriceTable:
    """Every model bfcl knows with its two prices, and the local-model constants."""

    prices: Mapping[str, tuple[Price, Price]]
    gpu_price_per_hour: int | float
    concurrent_requests: int | float

    def pricing(self, model: str) -> Pricing | None:
        """The model's pricing, or None when bfcl does not know the name (its leaderboard stops with KeyError)."""
        if model not in self.prices:
            return None
        input_price, output_price = self.prices[model]
        return Pricing(model, input_price, output_price, self.gpu_price_per_hour, self.concurrent_requests)

    def content(self) -> JSONObject:
        return {"models": {name: list(pair) for name, pair in self.prices.items()},
                "gpu_price_per_hour": self.gpu_price_per_hour, "concurrent_requests": self.concurrent_requests}

    def sha256(self) -> str:
        return canonical_sha256(self.content())

    def __hash__(self) -> int:  # the mapping is a read-only view, which does not hash: the content does
        return hash(self.sha256())

    @classmethod
    def from_content(cls, content: Mapping[str, JSONValue]) -> PriceTable:
        """Back from `content()` (a cache file); DataError when a field is missing or of the wrong shape."""
        try:
            models = content["models"]
            if not isinstance(models, dict):
                raise TypeError("models is not an object")
            prices: dict[str, tuple[Price, Price]] = {}
            for name, pair in models.items():
                if not (isinstance(pair, list) and len(pair) == 2 and all(p is None or _number(p) for p in pair)):
                    raise TypeError(f"{name}: not a pair of prices")
                prices[name] = (pair[0], pair[1])  # type: ignore[assignment]  # checked just above
            gpu, concurrency = content["gpu_price_per_hour"], content["concurrent_requests"]
            if not _number(gpu) or not _number(concurrency):
                raise TypeError("the local-model constants are not numbers")
            return cls(MappingProxyType(prices), gpu, concurrency)  # type: ignore[arg-type]
        except (KeyError, TypeError) as exc:
            raise DataError(f"bfcl prices: malformed content ({type(exc).__name__}: {exc})") from None


def lift_prices(sources: Mapping[str, str]) -> PriceTable:
    """The price table from the wheel's source files ({path in the wheel: text}, the paths of SOURCE_FILES).

    Raises:
        DataError: a file is missing, or does not hold the prices and constants as the pinned version does.
    """
    missing = [path for path in SOURCE_FILES if path not in sources]
    if missing:
        raise DataError(f"bfcl wheel lacks {', '.join(missing)}")
    module = _parse(sources[MODELS_FILE], MODELS_FILE)
    defaults = _defaults(module)
    maps: dict[str, ast.Dict] = {}  # the dicts assigned so far, by name
    table: dict[str, tuple[Price, Price]] | None = None
    for node in module.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Dict)):
            if node.targets[0].id == MAPPING:
                table = _merged(node.value, maps, defaults)
            maps[node.targets[0].id] = node.value
    if table is None:
        raise DataError(f"{MODELS_FILE}: {MAPPING} (a dict of the model maps) not found")
    constants = _constants(_parse(sources[CONSTANTS_FILE], CONSTANTS_FILE))
    return PriceTable(MappingProxyType(table), constants[GPU_PRICE], constants[CONCURRENCY])


def _defaults(module: ast.Module) -> dict[str, Price]:
    """`ModelConfig`'s defaults of the two prices (its dataclass fields)."""
    for node in module.body:
        if isinstance(node, ast.ClassDef) and node.name == CONFIG_CLASS:
            found = {item.target.id: _literal(item.value, f"{CONFIG_CLASS}.{item.target.id}")
                     for item in node.body if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                     and item.target.id in PRICE_FIELDS and item.value is not None}
            if set(found) == set(PRICE_FIELDS):
                return found
    raise DataError(f"{MODELS_FILE}: the class {CONFIG_CLASS} with defaults of {' and '.join(PRICE_FIELDS)} not found")


def _model_map(node: ast.Dict, name: str, defaults: Mapping[str, Price]) -> dict[str, tuple[Price, Price]]:
    """A map of model names to `ModelConfig(...)` calls, each call's keyword prices (or the defaults)."""
    found: dict[str, tuple[Price, Price]] = {}
    for key, value in zip(node.keys, node.values, strict=True):
        model = key.value if isinstance(key, ast.Constant) else None
        if not isinstance(model, str):
            raise DataError(f"{MODELS_FILE}: {name} has a key that is not a string")
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == CONFIG_CLASS
                and not value.args and all(keyword.arg is not None for keyword in value.keywords)):
            raise DataError(f"{MODELS_FILE}: {name}[{model!r}] is not a {CONFIG_CLASS}(...) call of keywords")
        keywords = {keyword.arg: keyword.value for keyword in value.keywords}
        prices = [_literal(keywords[field], f"{name}[{model!r}].{field}") if field in keywords else defaults[field]
                  for field in PRICE_FIELDS]
        found[model] = (prices[0], prices[1])  # a repeated key: the last one, as a dict literal keeps it
    return found


def _merged(node: ast.Dict, maps: Mapping[str, ast.Dict],
            defaults: Mapping[str, Price]) -> dict[str, tuple[Price, Price]]:
    """`{**a, **b, **c}` of model maps assigned before it, in that order (a later map's entry wins, as Python's
    does)."""
    table: dict[str, tuple[Price, Price]] = {}
    for key, value in zip(node.keys, node.values, strict=True):
        if key is not None or not isinstance(value, ast.Name) or value.id not in maps:
            raise DataError(f"{MODELS_FILE}: {MAPPING} is not a merge of the model maps above it")
        table.update(_model_map(maps[value.id], value.id, defaults))
    return table


def _constants(module: ast.Module) -> dict[str, int | float]:
    found: dict[str, int | float] = {}
    for node in module.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in (GPU_PRICE, CONCURRENCY)):
            value = _literal(node.value, node.targets[0].id, CONSTANTS_FILE)
            if value is None:
                raise DataError(f"{CONSTANTS_FILE}: {node.targets[0].id} is not a number")
            found[node.targets[0].id] = value
    missing = [name for name in (GPU_PRICE, CONCURRENCY) if name not in found]
    if missing:
        raise DataError(f"{CONSTANTS_FILE}: {' and '.join(missing)} not found")
    return found


def _parse(source: str, origin: str) -> ast.Module:
    try:
        return python_ast.parse(source, filename=origin)
    except (SyntaxError, ValueError) as exc:
        raise DataError(f"{origin}: not readable Python ({exc})") from None


def _literal(node: ast.expr, where: str, origin: str = MODELS_FILE) -> Price:
    """A number or None written as a literal; anything else is a DataError (nothing is evaluated)."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise DataError(f"{origin}: {where} is not a literal") from None
    if value is not None and not _number(value):
        raise DataError(f"{origin}: {where} is {value!r}, not a number")
    return value  # type: ignore[no-any-return]  # a number or None, checked just above


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
