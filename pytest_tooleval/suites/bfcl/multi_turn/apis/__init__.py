"""The simulated API classes the multi-turn samples act on, re-implemented in our own code
(docs/bfcl-multi-turn.md#conventions-of-the-api-classes).

Every class follows the same conventions, so that the executor and the state check can treat them alike:

- **Names and signatures are upstream's.** The class name, each public method's name, its parameter names,
  their order and their defaults are bfcl-eval's: the executor looks methods up by the name a model wrote, and a
  call that does not bind must fail with the `TypeError` text CPython gives for the same qualified name
  (`TicketAPI.get_ticket() missing 1 required positional argument: 'ticket_id'`). Parameters carry no coercion:
  a value of the wrong type goes through and fails (or not) exactly where upstream's body would.
- **Public attributes are the state.** Every attribute whose name does not start with `_` is what the state
  check compares, and nothing else is public; helpers and private state start with `_`.
- **`load_scenario(scenario, long_context)`** puts a sample's `initial_config` entry for the class (already
  deep-copied by the caller) into a freshly made instance; it is the only public method that is not an API
  method (`api_methods` leaves it out).
- **Results are returned as upstream's methods return them** (dicts, lists, strings, None, the stored objects
  themselves where upstream returns them): turning them into the result string is `results.result_string`.
- **Exceptions are raised where upstream raises**, with its text (`results.error_string` renders them).
- **Fresh-process semantics** (docs/bfcl-multi-turn.md#fresh-process-semantics): no state is shared between
  instances; where upstream shares a mutable default between calls, one instance keeps its own copy of it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

LOAD = "load_scenario"


def api_methods(instance: object) -> dict[str, Callable[..., object]]:
    """The methods a model may call on `instance`, by name: its public methods, `load_scenario` left out."""
    return {name: getattr(instance, name) for name in _method_names(type(instance))}


_METHOD_NAMES: dict[type, tuple[str, ...]] = {}


def _method_names(api_class: type) -> tuple[str, ...]:
    """The public method names of an API class in name order, as inspect.getmembers(instance, ismethod) gives
    them (a static method is no method there); read once per class, since its instances keep no methods of their
    own."""
    if api_class not in _METHOD_NAMES:
        _METHOD_NAMES[api_class] = tuple(
            name for name, member in inspect.getmembers(api_class)
            if not name.startswith("_") and name != LOAD and (inspect.isfunction(member) or inspect.ismethod(member))
            and not isinstance(inspect.getattr_static(api_class, name), staticmethod))
    return _METHOD_NAMES[api_class]


def public_state(instance: object) -> dict[str, object]:
    """What the state check compares: the instance's attributes whose names do not start with `_`, in order."""
    return {name: value for name, value in vars(instance).items() if not name.startswith("_")}
