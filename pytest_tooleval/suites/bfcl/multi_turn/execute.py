"""One sample's API instances on one side (model or ground truth), and the calls run on them
(docs/bfcl-multi-turn.md#executing-a-call).

Upstream pastes each call string into `eval` after a regex rewrite (bfcl-multiturn §4.2-§4.5). Here the same
string goes through the same rewrite and deny-list, is parsed (never compiled or evaluated), and a small interpreter
accepts only `<instance variable>.<api method>(<literal or nested call>, ...)` (§4.7): anything else is refused
with the error string a NameError (or the matching Python error) would give upstream.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import date

from .... import python_ast
from ....errors import DataError, ToolevalError
from .apis import api_methods, public_state
from .apis.math_api import MathAPI
from .apis.registry import API_CLASSES, STATELESS
from .apis.travel import TravelAPI
from .results import error_string, result_string
from .sample import MultiTurnSample
from .tables import Tables

DENIED = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})  # spec §4.3

_CALLEE = re.compile(r"\b([a-zA-Z_]\w*)\s*(?=\()")  # spec §4.2: also inside string literals

# Bounds on what one call may cost (upstream has none; these only refuse inputs no real model writes):
#: a call text longer than this is refused before parsing (difflib's `diff` is quadratic in a file's lines)
MAX_CALL_CHARS = 100_000
#: an int argument wider than this is refused (hex literals parse to any size; decimal ones stop at 4300 digits)
MAX_INT_BITS = 1 << 16
#: MathAPI's `precision` above this is refused (mpmath and decimal work at that many digits: 10,000 is ~0.3 s)
MAX_PRECISION = 10_000
#: `power` on two ints whose result would be wider than this returns upstream's text without computing it
MAX_POWER_BITS = 1 << 16


def _int_limit_error() -> ValueError:
    """CPython's own error for str() of an int past the digit limit: upstream's result string for a huge power."""
    try:
        str(1 << (MAX_POWER_BITS * 4))
    except ValueError as exc:
        return exc
    return ValueError("Exceeds the limit for integer string conversion")  # the limit is switched off


class Refused(Exception):
    """A call the interpreter does not run; its text is the result string's after the error prefix."""


def instance_variable(name: str, class_name: str) -> str:
    """The variable upstream binds an instance to: `<name>_<Class>_instance`, `-./:` replaced by `_` (spec §2.1)."""
    return re.sub(r"[-./:]", "_", f"{name}_{class_name}_instance")


def rewrite(text: str, mapping: dict[str, str]) -> str:
    """Upstream's instance rewrite (spec §4.2): each `word(` becomes `<variable>.word(` when `word` is a method
    in `mapping`, else `word(`; the whitespace between the word and `(` is deleted either way, and string
    literals are not spared."""
    def replace(match: re.Match[str]) -> str:
        word = match.group(1)
        return f"{mapping[word]}.{word}" if word in mapping else word
    return _CALLEE.sub(replace, text)


def denied(text: str) -> str | None:
    """The deny-listed name upstream's check finds in a rewritten call, if any (spec §4.3)."""
    head = text.split("(")[0]
    if "." in head:
        head = head.split(".")[1]
    return head if head in DENIED else None


class Side:
    """One sample's instances on one side, kept across turns; `execute` runs call strings on them."""

    def __init__(self, instances: dict[str, object], variables: dict[str, str], mapping: dict[str, str]) -> None:
        self.instances = instances  # class name -> instance, in the sample's order
        self._by_variable = {variables[class_name]: instance for class_name, instance in instances.items()}
        self._methods = {variable: api_methods(instance) for variable, instance in self._by_variable.items()}
        self._mapping = mapping  # method name -> variable of the class that answers it

    @classmethod
    def create(cls, sample: MultiTurnSample, tables: Tables, name: str, *, today: date | None = None) -> Side:
        """Fresh instances of the sample's classes, each loaded with its scenario (spec §2.1).

        Args:
            sample: the sample whose `involved_classes` and `initial_config` are used.
            tables: the literals the API classes need.
            name: the prefix of the instance variables (upstream: `<model>_eval_<sample id>`); it only shows
                through the rewrite, which pastes it into string literals (spec §4.2).
            today: TravelAPI's date (None: the real one, as upstream).
        """
        instances: dict[str, object] = {}
        for class_name in sample.involved_classes:
            instance = TravelAPI(tables, today=today) if class_name == "TravelAPI" else API_CLASSES[class_name](tables)
            if class_name not in STATELESS:
                scenario = sample.initial_config.get(class_name, {})
                if not isinstance(scenario, dict):
                    raise DataError(f"{sample.id}: initial_config[{class_name!r}] is not an object")
                instance.load_scenario(copy.deepcopy(scenario), long_context=sample.long_context)
            instances[class_name] = instance
        return cls.of(instances, name)

    @classmethod
    def of(cls, instances: dict[str, object], name: str) -> Side:
        """A side over instances made and loaded by the caller (class name -> instance, in the sample's order),
        their variables named after `name` as in `create`."""
        variables: dict[str, str] = {}
        mapping: dict[str, str] = {}
        for class_name, instance in instances.items():
            variables[class_name] = variable = instance_variable(name, class_name)
            # a method name two classes share goes to the later class, as upstream's map is built
            for method in api_methods(instance):
                mapping[method] = variable
        return cls(instances, variables, mapping)

    def execute(self, calls: Sequence[str]) -> list[str]:
        """The result string of each call, in order; state changes stay, also those of a call that fails."""
        return [self._execute(call) for call in calls]

    def state(self) -> dict[str, dict[str, object]]:
        """Class name -> the public attributes the state check compares (the live objects, not copies)."""
        return {class_name: public_state(instance) for class_name, instance in self.instances.items()}

    def _execute(self, call: str) -> str:
        text = rewrite(call, self._mapping)
        name = denied(text)
        if name is not None:
            return error_string(Exception(f"Function call {name} is not allowed."))
        try:
            if len(text) > MAX_CALL_CHARS:
                raise Refused(f"call text longer than {MAX_CALL_CHARS} characters")
            # eval() drops leading spaces and tabs of a string before parsing; "<string>" is eval's file name,
            # so a SyntaxError reads as upstream's does
            tree = python_ast.parse(text.lstrip(" \t"), filename="<string>", mode="eval")
            _check_keywords(tree)
            value = self._call(tree.body)
            return result_string(value)  # str() of a huge int raises inside, as upstream's try covers it
        except ToolevalError:  # the environment's own failure (a search service gone): no result, the sample's error
            raise
        except Exception as exc:  # a refusal, the method's own failure, the parser's, a RecursionError
            return error_string(exc)

    def _call(self, node: ast.expr) -> object:
        """The value of a call node: its arguments first (Python's order), then the bound method."""
        if not isinstance(node, ast.Call):
            raise _name_error(node)
        method = self._method(node.func)
        args = [self._value(arg) for arg in node.args]
        kwargs: dict[str, object] = {}
        for keyword in node.keywords:
            if keyword.arg is None:  # **mapping
                raise Refused("argument unpacking is not supported")
            kwargs[keyword.arg] = self._value(keyword.value)
        _check_cost(method, args, kwargs)
        return method(*args, **kwargs)

    def _method(self, func: ast.expr) -> Callable[..., object]:
        """The bound API method `func` names; any other callee is refused as upstream's eval would fail on it
        for an unknown name (builtins and module names are refused too: D8)."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            methods = self._methods.get(func.value.id)
            if methods is None:
                raise _name_error(func.value)
            method = methods.get(func.attr)
            if method is None:
                owner = type(self._by_variable[func.value.id]).__name__
                raise Refused(f"'{owner}' object has no attribute '{func.attr}'")
            return method
        raise _name_error(func)

    def _value(self, node: ast.expr) -> object:
        """An argument: a literal (built afresh, so no call shares an object with another), a nested call's
        return value, or a container of those; anything else is refused."""
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Name):
            raise _name_error(node)
        try:
            value: object = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError):
            return self._container(node)
        _check_size(value)
        return value

    def _container(self, node: ast.expr) -> object:
        """A list, tuple, set or dict holding calls, element by element in Python's order."""
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            if any(isinstance(element, ast.Starred) for element in node.elts):
                raise Refused("unpacking is not supported")
            items = [self._value(element) for element in node.elts]
            return list(items) if isinstance(node, ast.List) else tuple(items) if isinstance(node, ast.Tuple) \
                else set(items)  # an unhashable item raises TypeError, as Python's does
        if isinstance(node, ast.Dict):
            result: dict[object, object] = {}
            for key, item in zip(node.keys, node.values, strict=True):
                if key is None:
                    raise Refused("unpacking is not supported")
                result[self._value(key)] = self._value(item)
            return result
        raise _name_error(node)


def _name_error(node: ast.AST) -> Refused:
    """Upstream's NameError text for the first name in `node`, or a refusal when there is none."""
    for child in _walk(node):
        if isinstance(child, ast.Name):
            return Refused(f"name '{child.id}' is not defined")
    return Refused(f"{type(node).__name__} expressions are not supported")


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes under `node` in source order (ast.walk is breadth-first), without recursion."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(ast.iter_child_nodes(current))))


def _check_keywords(tree: ast.AST) -> None:
    """The one compile-time error the parser leaves to the compiler that a call can hit: a repeated keyword."""
    for node in _walk(tree):
        if isinstance(node, ast.Call):
            seen: set[str] = set()
            for keyword in node.keywords:
                if keyword.arg is not None and keyword.arg in seen:
                    raise SyntaxError(f"keyword argument repeated: {keyword.arg}", ("<string>", 1, 0, "", 1, 0))
                if keyword.arg is not None:
                    seen.add(keyword.arg)


def _check_size(value: object) -> None:
    """Refuse an int argument past MAX_INT_BITS, at any depth (iteratively: values may be deeply nested)."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, int) and current.bit_length() > MAX_INT_BITS:
            raise Refused(f"integer argument wider than {MAX_INT_BITS} bits")
        if isinstance(current, (list, tuple, set, frozenset)):
            stack.extend(current)
        elif isinstance(current, dict):
            stack.extend(current.keys())
            stack.extend(current.values())


def _check_cost(method: Callable[..., object], args: list[object], kwargs: dict[str, object]) -> None:
    """Refuse MathAPI calls whose work grows without bound in an argument (upstream would run for minutes)."""
    owner = getattr(method, "__self__", None)
    if not isinstance(owner, MathAPI):
        return

    def argument(position: int, name: str) -> object:
        return kwargs.get(name, args[position] if len(args) > position else None)

    name = getattr(method, "__name__", "")
    if name in ("logarithm", "square_root"):
        precision = argument(2 if name == "logarithm" else 1, "precision")
        if isinstance(precision, (int, float)) and precision > MAX_PRECISION:  # mpmath takes a float precision too
            raise Refused(f"precision above {MAX_PRECISION} digits")
    elif name == "round_number":
        # round() of an int to -n places computes 10**n
        places = argument(1, "decimal_places")
        if isinstance(argument(0, "number"), int) and isinstance(places, int) and places < -MAX_PRECISION:
            raise Refused(f"decimal_places below -{MAX_PRECISION}")
    elif name == "power":
        base, exponent = argument(0, "base"), argument(1, "exponent")
        if isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1 and exponent > 0 \
                and (abs(base).bit_length() - 1) * exponent > MAX_POWER_BITS:
            raise _int_limit_error()  # the int's str() would raise it upstream, after minutes of work
