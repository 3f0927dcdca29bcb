"""Running decoded calls on the environment, and the two official executors (acebench-agent §2.2, §2.3, §4).

Upstream prefixes the method name found in each rebuilt call string with the name of every instance that
defines it and ``eval``s the result. We do the same string surgery, then parse the string and interpret it:
the only attribute that can be reached is an allow-listed API method of an involved instance, every other
name is undefined, and argument values are literals. Nothing the model writes is executed.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .... import python_ast, safe_eval
from .decode import LIMITS, AgentDecodeError, DecodeMode, decode_message, not_evaluated
from .envs import Environment
from .envs.base import Scenario

#: The multi_step executor's reply to an undecodable message (execution_role_step.py).
NUDGE = "Please do not ask me any questions, use the known conditions to solve the problem"

# ACEBench quirk: the multi_turn executor returns this template un-interpolated, and the caller iterates it
# into single characters (acebench-agent §2.2).
_TURN_ERROR_TEMPLATE = "Error during execution: {str(e)}"
# Upstream reads a result variable that no call assigned; this is Python 3.11's wording (acebench-agent §2.2).
_UNBOUND_RESULT = "cannot access local variable 'func_call_result' where it is not associated with a value"

_METHOD_NAME = re.compile(r"\b([a-zA-Z_]\w*)\s*(?=\()")  # upstream's pattern: the first identifier before "("
_TARGET = "__acebench_instance__"  # stands for upstream's global instance name in the rewritten string
_UNSET = object()


@dataclass(frozen=True)
class Execution:
    """What one executor turn produced.

    Attributes:
        message: the execution message as upstream stores it: the list of observations (after the
            serialisation of §2.3), the nudge string, or the multi_turn error character list.
        registered: whether upstream would record the instances for the end state after this turn.
    """

    message: list[object] | str
    registered: bool


# -- one call string ----------------------------------------------------------------------------------------------


def _bind(env: Environment, call_string: str) -> list[tuple[Scenario, str, int]]:
    """What upstream would eval for one call string: (instance, rewritten source, offset of the inserted
    instance name) for every instance defining the method; [] when the name is unknown."""
    match = _METHOD_NAME.search(call_string)
    if match is None or match.group(1) not in env.methods:
        return []  # private names, builtins, __class__ ...: not in the table, like an unknown function
    source = call_string[: match.start()] + f"{_TARGET}.{match.group(1)}" + call_string[match.end():]
    return [(instance, source, match.start()) for instance in env.methods[match.group(1)]]


def _position(source: str, offset: int) -> tuple[int, int]:
    """(lineno, col_offset) of a character offset, as ast reports it (columns count UTF-8 bytes)."""
    line_start = source.rfind("\n", 0, offset) + 1
    return source.count("\n", 0, offset) + 1, len(source[line_start:offset].encode("utf-8"))


def _run(source: str, instance: Scenario, offset: int) -> object:
    tree = python_ast.parse(source, filename="<string>", mode="eval")
    compile(tree, "<string>", "eval")  # the compiler's own SyntaxErrors, as eval would raise them; runs nothing
    inserted = _position(source, offset)

    def is_inserted(node: ast.AST) -> bool:
        # Only the name we inserted stands for the instance; the same word written by the model is undefined.
        return isinstance(node, ast.Name) and node.id == _TARGET and (node.lineno, node.col_offset) == inserted

    def calls_and_methods(node: ast.AST, evaluate: Callable[[ast.AST], object]) -> object:
        if isinstance(node, ast.Attribute):
            # Upstream's eval could also see its module globals and builtins; we resolve no other name.
            owner = instance if is_inserted(node.value) else evaluate(node.value)
            if not isinstance(owner, Scenario):
                raise safe_eval.UnsupportedExpression("attribute access on a value is not evaluated")
            if not owner.exposes(node.attr):
                raise AttributeError(f"'{type(owner).__name__}' object has no attribute '{node.attr}'")
            return getattr(owner, node.attr)  # an allow-listed API method
        if isinstance(node, ast.Call):
            function = evaluate(node.func)
            if any(isinstance(arg, ast.Starred) for arg in node.args) or any(k.arg is None for k in node.keywords):
                raise safe_eval.UnsupportedExpression("argument unpacking is not evaluated")
            args = [evaluate(arg) for arg in node.args]
            kwargs = {k.arg: evaluate(k.value) for k in node.keywords if k.arg is not None}
            if not (inspect.ismethod(function) and isinstance(function.__self__, Scenario)):
                raise TypeError(f"'{type(function).__name__}' object is not callable")
            return function(*args, **kwargs)
        return not_evaluated(node, evaluate)

    return safe_eval.evaluate(tree.body, LIMITS, names=safe_eval.undefined_name, fallback=calls_and_methods)


# -- a message's calls ----------------------------------------------------------------------------------------


def run_calls(env: Environment, call_strings: Sequence[str], stop_on_error: bool) -> Execution:
    """Run rebuilt call strings in order, as upstream's ``execute_agent_func_call`` does.

    Args:
        env: the rollout's environment (mutated).
        call_strings: from :func:`decode.decode_message`.
        stop_on_error: multi_turn behaviour: the first failing call ends the message with the error
            artefact and the instances are not registered. Otherwise (multi_step) the error text becomes
            that call's observation and later calls still run.
    """
    results: list[object] = []
    last: object = _UNSET  # upstream's func_call_result: it outlives failing and unknown calls in a message
    for call_string in call_strings:
        try:
            for instance, source, offset in _bind(env, call_string):
                last = _run(source, instance, offset)  # broadcast; the last instance's value is the observation
            if last is _UNSET:
                raise UnboundLocalError(_UNBOUND_RESULT)
            # ACEBench quirk: an unknown name repeats the previous result of this message (§2.2).
            results.append(last)
        except Exception as exc:
            if stop_on_error:
                return Execution(list(_TURN_ERROR_TEMPLATE), registered=False)
            results.append(f"Error during execution: {exc}")
    return Execution(serialise(results), registered=True)


def serialise(results: Sequence[object]) -> list[object]:
    """Observations as the agent receives them (acebench-agent §2.3): dicts through JSON, others through
    ``str``, then every string through ``json.loads`` where it parses."""
    rendered = []
    for value in results:
        if type(value) is str:
            text = value
        elif type(value) is dict:
            try:
                text = json.dumps(value)
            except Exception:  # not serialisable (a set inside, a cycle): upstream falls back to str()
                text = str(value)
        else:
            text = str(value)
        try:
            rendered.append(json.loads(text))
        except (json.JSONDecodeError, RecursionError):
            rendered.append(text)
    return rendered


# -- the executors ------------------------------------------------------------------------------------------------


def execute_step(env: Environment, message: str) -> Execution:
    """The multi_step executor: an undecodable message gets the nudge and runs nothing."""
    try:
        call_strings = decode_message(message, DecodeMode.STEP)
    except AgentDecodeError:
        return Execution(NUDGE, registered=False)
    return run_calls(env, call_strings, stop_on_error=False)


def execute_turn(env: Environment, message: str) -> Execution:
    """The multi_turn executor. Upstream has no guard around decoding here (routing filtered the message
    already), so an undecodable message raises :class:`AgentDecodeError`."""
    call_strings = decode_message(message, DecodeMode.TURN)
    return run_calls(env, call_strings, stop_on_error=True)
