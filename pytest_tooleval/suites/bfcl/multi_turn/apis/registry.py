"""The eight API classes by the names the data uses (`involved_classes`, `initial_config` keys)."""

from __future__ import annotations

import inspect

from .file_system import GorillaFileSystem
from .math_api import MathAPI
from .message import MessageAPI
from .posting import TwitterAPI
from .ticket import TicketAPI
from .trading import TradingBot
from .travel import TravelAPI
from .vehicle import VehicleControlAPI

API_CLASSES: dict[str, type] = {cls.__name__: cls for cls in (
    GorillaFileSystem, MathAPI, MessageAPI, TwitterAPI, TicketAPI, TradingBot, TravelAPI, VehicleControlAPI)}
#: the class whose scenario is never loaded (bfcl-multiturn §2.1: upstream's one stateless class)
STATELESS = frozenset({"MathAPI"})


def parameter_names(class_name: str, method: str) -> list[str]:
    """The parameters of one API method in signature order (what a positional argument binds to)."""
    function = getattr(API_CLASSES[class_name], method)  # a name from the ground truth, never from a model
    return [name for name in inspect.signature(function).parameters if name != "self"]


def class_of(method: str, involved_classes: list[str]) -> str | None:
    """The involved class that has a public method called `method` (no two classes share a method name)."""
    for class_name in involved_classes:
        member = API_CLASSES[class_name].__dict__.get(method)
        if not method.startswith("_") and method != "load_scenario" and inspect.isfunction(member):
            return class_name
    return None
