"""The eight API classes by the names the data uses (`involved_classes`, `initial_config` keys)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Protocol

from .....json_value import JSONValue
from ..tables import Tables
from .file_system import GorillaFileSystem
from .math_api import MathAPI
from .message import MessageAPI
from .posting import TwitterAPI
from .ticket import TicketAPI
from .trading import TradingBot
from .travel import TravelAPI
from .vehicle import VehicleControlAPI


class Api(Protocol):
    """What the executor needs of an API class beyond its methods (apis/__init__.py)."""

    def load_scenario(self, scenario: Mapping[str, JSONValue], long_context: bool = False) -> None: ...


#: class name -> the class, called with the sample's tables (TravelAPI also takes `today`)
API_CLASSES: dict[str, Callable[[Tables], Api]] = {
    "GorillaFileSystem": GorillaFileSystem, "MathAPI": MathAPI, "MessageAPI": MessageAPI,
    "TwitterAPI": TwitterAPI, "TicketAPI": TicketAPI, "TradingBot": TradingBot, "TravelAPI": TravelAPI,
    "VehicleControlAPI": VehicleControlAPI}
#: the class whose scenario is never loaded (bfcl-multiturn §2.1: upstream's one stateless class)
STATELESS = frozenset({"MathAPI"})


def parameter_names(class_name: str, method: str) -> list[str]:
    """The parameters of one API method in signature order (what a positional argument binds to)."""
    function = getattr(API_CLASSES[class_name], method)  # a name from the ground truth, never from a model
    return [name for name in inspect.signature(function).parameters if name != "self"]


def class_of(method: str, involved_classes: list[str]) -> str | None:
    """The involved class that has a public method called `method` (no two classes share a method name)."""
    for class_name in involved_classes:
        member = vars(API_CLASSES[class_name]).get(method)
        if not method.startswith("_") and method != "load_scenario" and inspect.isfunction(member):
            return class_name
    return None
