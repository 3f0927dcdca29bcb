"""ToolAlpaca data: find the upstream tree, validate the two evaluation files, turn each instruction into a case.

Layout (toolalpaca-gpt4tools §1): data/eval_simulated.json and data/eval_real.json are JSON lists of API
records; each record carries its OpenAPI spec (as a string), the tool list, the instructions and, aligned by
index, the gold call sequences. Prompts are read from prompts/*.txt and prompts.json (agent prompt constants
lifted with `ast`).
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from ...data.download import Pin, lift_member_constants, locate_data
from ...data.files import read_json, read_text
from ...errors import DataError, ToolevalUsageError
from ...json_value import JSONObject, JSONValue
from ...settings.credentials import keep_out_of_storage
from ...text import counted, did_you_mean
from .. import json_ops
from ..base import CaseBase
from .constants import SUBSET_FILES, SUBSETS
from .texts import AgentPromptParts, Prompts

__all__ = [
    "CREDENTIAL_ENV_VARS",
    "SUBSETS",
    "UNDOCUMENTED_GOLD",
    "Api",
    "GoldStep",
    "ToolAlpacaCase",
    "credential_env_var",
    "credentials_for",
    "helper_selectors",
    "helper_tool_source",
    "lift_helper_descriptions",
    "load_pin",
    "load_prompts",
    "load_subset",
    "locate",
    "make_test_id",
    "missing_credentials",
    "select",
]

PIN_FILE = Path(__file__).with_name("pin.json")

# Real-API keys are never in the data (the files hold "***"): each comes from an environment variable.
# Keyed by (API name, authentication parameter); an API not listed here falls back to
# TOOLEVAL_TOOLALPACA_<API>_<PARAM> (see `credential_env_var`).
CREDENTIAL_ENV_VARS: Mapping[tuple[str, str], str] = {
    ("apilayer weatherstack", "access_key"): "TOOLEVAL_WEATHERSTACK_ACCESS_KEY",
    ("WolframAlpha", "appid"): "TOOLEVAL_WOLFRAMALPHA_APPID",
    ("CurrencyBeacon", "api_key"): "TOOLEVAL_CURRENCYBEACON_API_KEY",
}

# ToolAlpaca data issue: AviationAPI gold answers 5-10 (0-based) call functions the spec does not expose, so
# reports give the real subset with and without them (toolalpaca-gpt4tools §1.3, §6.3).
UNDOCUMENTED_GOLD: frozenset[tuple[str, str, int]] = frozenset(("real", "AviationAPI", index) for index in range(5, 11))


class GoldStep(BaseModel):
    """One gold call. ``Action_Input`` is text for the judge to read; it is not always JSON (§1.3)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    Action: StrictStr
    Action_Input: StrictStr


class ApiRecord(BaseModel):
    """The fields of one API record that evaluation uses (§1.2); others are kept but not checked."""

    model_config = ConfigDict(extra="allow", frozen=True)
    Name: StrictStr
    Documentation: StrictStr
    NLDocumentation: StrictStr
    Function_Description: dict[StrictStr, StrictStr]
    Function_Projection: dict[StrictStr, tuple[StrictStr, StrictStr]]
    Instructions: list[StrictStr]
    Golden_Answers: list[list[GoldStep]]
    Authentication: dict[StrictStr, StrictStr] = Field(default_factory=dict)
    external_tools: list[StrictStr] = Field(default_factory=list)


@dataclass(frozen=True, eq=False)
class Api:
    """One API record with its parsed spec.

    Attributes:
        subset: "simulated" or "real".
        index: position of the record in its file.
        record: the validated record.
        spec: the OpenAPI spec with local ``$ref``s resolved (what the tool executor reads, §2.5).
    """

    subset: str
    index: int
    record: ApiRecord = field(repr=False)
    spec: JSONObject = field(repr=False)

    @property
    def name(self) -> str:
        return self.record.Name

    @property
    def server_url(self) -> str:
        """``servers[0].url`` of the spec: the real base URL (and what the simulator shows in its curl line)."""
        return str(json_ops.item(json_ops.subscript(self.spec["servers"], 0), "url"))  # the loader checked it is there

    @property
    def functions(self) -> dict[str, tuple[str, str]]:
        """Function name -> (path, method), in file order: the API's own tools (§1.2)."""
        return dict(self.record.Function_Projection)

    @property
    def uses_retrieval(self) -> bool:
        return "retrieval" in self.record.external_tools

    @cached_property
    def documentation_for_simulator(self) -> str:
        """The spec re-dumped with default JSON separators and ``$ref``s unresolved (§2.6)."""
        return json.dumps(json.loads(self.record.Documentation))


@dataclass(frozen=True, eq=False)
class ToolAlpacaCase(CaseBase):
    """One instruction of one API, with its gold steps."""

    api: Api
    index: int  # position in the API's Instructions; upstream keys judge outputs by it
    instruction: str
    gold: tuple[GoldStep, ...] = field(repr=False)

    suite = "toolalpaca"
    language = "en"
    family = "agent"  # every instruction is a multi-call episode: the scheduler starts these first

    @property
    def subset(self) -> str:
        return self.api.subset

    @property
    def id(self) -> str:
        return self.test_id

    @property
    def category(self) -> str:
        return self.subset

    @property
    def marks(self) -> tuple[str, ...]:
        return (self.suite, self.subset)

    @property
    def replay_ids(self) -> tuple[str, ...]:
        """Upstream's generation output names an instance `<API Name>/<index>` (models/replay.py)."""
        return (f"{self.api_name}/{self.index}",)

    @property
    def expected_text(self) -> str:
        """The gold steps, one ``Action Action_Input`` per step (placeholders as written)."""
        return "; ".join(f"{step.Action} {step.Action_Input}" for step in self.gold)

    @property
    def api_name(self) -> str:
        return self.api.name

    @property
    def test_id(self) -> str:
        """``<subset>-<API>-<index>``, with the API name folded to ASCII and spaces as underscores."""
        return make_test_id(self.subset, self.api.name, self.index)


def make_test_id(subset: str, api_name: str, index: int) -> str:
    """The test id of instruction `index` of `api_name` (see `ToolAlpacaCase.test_id`)."""
    return f"{subset}-{_slug(api_name)}-{index}"


def _slug(name: str) -> str:
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"\s+", "_", ascii_name.strip())


# ---------------------------------------------------------------------------------------------- locating data


def locate(data_dir: str | None, cache_dir: Path, offline: bool) -> Path:
    """The ToolAlpaca root: the given folder (the root holding toolalpaca/, or toolalpaca/ itself), else the cache."""
    return locate_data(data_dir, cache_dir, offline, folder="toolalpaca", marker=SUBSET_FILES["simulated"],
                       expected="data/eval_simulated.json", label="ToolAlpaca", pin=load_pin)


def load_pin() -> Pin:
    """The pinned archive; the helper-tool descriptions are lifted from their classes into prompts.json."""
    pinned = json.loads(PIN_FILE.read_text(encoding="utf-8"))
    url = os.environ.get("TOOLEVAL_TOOLALPACA_URL", pinned["url"])
    helpers = pinned["helper_tool_descriptions"]
    return Pin(
        "toolalpaca", url, pinned["files"], pinned["prompt_constants"], pinned["prompts_sha256"],
        member_constants={helpers["file"]: helper_selectors(helpers["classes"])},
        members_sha256=helpers.get("sha256", ""),
    )


# ---------------------------------------------------------------------------------------------- loading cases


@cache
def load_subset(root: Path, subset: str) -> tuple[ToolAlpacaCase, ...]:
    """Every instruction of one subset, in file order (parsed once per process).

    Raises:
        DataError: the file is missing or malformed; the message names the file, the API record's position
            and name, and the field.
    """
    if subset not in SUBSET_FILES:
        raise ToolevalUsageError(f"unknown ToolAlpaca subset {subset!r}; known: {', '.join(SUBSETS)}")
    path = root / SUBSET_FILES[subset]
    raw = read_json(path)
    if not isinstance(raw, list):
        raise DataError(f"{path}: expected a JSON list of API records, found {_json_type(raw)}")
    cases: list[ToolAlpacaCase] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(raw):
        api = _load_api(path, subset, index, item)
        if api.name in seen:
            raise DataError(f"{_where(path, index, api.name)}: Name: duplicate of API [{seen[api.name]}]")
        seen[api.name] = index
        for position, instruction in enumerate(api.record.Instructions):
            cases.append(ToolAlpacaCase(api, position, instruction, tuple(api.record.Golden_Answers[position])))
    return tuple(cases)


def select(root: Path, subsets: tuple[str, ...] = SUBSETS) -> list[ToolAlpacaCase]:
    unknown = [name for name in subsets if name not in SUBSETS]
    if unknown:
        hint = did_you_mean(unknown[0], SUBSETS)
        raise ToolevalUsageError(f"unknown ToolAlpaca subset {unknown[0]!r}{f' ({hint})' if hint else ''}; known: "
                                 f"{', '.join(SUBSETS)}")
    return [case for subset in subsets for case in load_subset(root, subset)]


def _where(path: Path, index: int, name: object) -> str:
    label = f" {name!r}" if isinstance(name, str) else ""
    return f"{path}: API [{index}]{label}"


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)


def _load_api(path: Path, subset: str, index: int, item: object) -> Api:
    if not isinstance(item, dict):
        raise DataError(f"{path}: API [{index}]: expected a JSON object, found {_json_type(item)}")
    where = _where(path, index, item.get("Name"))
    try:
        record = ApiRecord.model_validate(item)
    except ValidationError as exc:
        first = exc.errors()[0]
        location = ".".join(str(part) for part in first["loc"]) or "record"
        raise DataError(f"{where}: {location}: {first['msg']}") from None
    if len(record.Golden_Answers) != len(record.Instructions):
        raise DataError(
            f"{where}: Golden_Answers: {counted(len(record.Golden_Answers), 'entry', 'entries')} for "
            f"{len(record.Instructions)} Instructions (they are aligned by index)"
        )
    try:
        spec = json.loads(record.Documentation)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where}: Documentation: not a JSON document ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(spec, dict) or not isinstance(spec.get("paths"), dict):
        raise DataError(f"{where}: Documentation: no 'paths' object in the OpenAPI spec")
    servers = spec.get("servers")
    if not (isinstance(servers, list) and servers and isinstance(servers[0], dict) and servers[0].get("url")):
        raise DataError(f"{where}: Documentation: no servers[0].url in the OpenAPI spec")
    if "components" not in record.Function_Description:
        raise DataError(f"{where}: Function_Description: no 'components' entry (use \"\" when there is none)")
    for name, (route, method) in record.Function_Projection.items():
        if name not in record.Function_Description:
            raise DataError(f"{where}: Function_Description: no description for function {name!r}")
        operation = spec["paths"].get(route, {}).get(method) if isinstance(spec["paths"].get(route), dict) else None
        if not isinstance(operation, dict):
            raise DataError(
                f"{where}: Function_Projection.{name}: {method.upper()} {route} is not an operation of the spec"
            )
    return Api(subset, index, record, resolve_refs(spec))


def resolve_refs(spec: JSONObject) -> JSONObject:
    """A copy of `spec` with local JSON-pointer ``$ref``s replaced by their targets.

    Upstream loads the spec with jsonref (§2.5); a ref object is replaced whole, sibling keys dropped. A cyclic
    or dangling ref is left as it is (no eval spec has one).
    """

    def walk(node: JSONValue, active: tuple[str, ...]) -> JSONValue:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/") and ref not in active:
                target = _pointer(spec, ref)
                if not isinstance(target, _Missing):
                    return walk(target, (*active, ref))
            return {key: walk(value, active) for key, value in node.items()}
        if isinstance(node, list):
            return [walk(value, active) for value in node]
        return node

    resolved = walk(spec, ())
    assert isinstance(resolved, dict)
    return resolved


class _Missing:
    """What a JSON pointer to nothing points to."""


_MISSING = _Missing()


def _pointer(document: JSONValue, ref: str) -> JSONValue | _Missing:
    node = document
    for token in ref[2:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return _MISSING
    return node


# ---------------------------------------------------------------------------------------------- credentials


def credential_env_var(api_name: str, parameter: str) -> str:
    """The environment variable holding `parameter` of `api_name` (see CREDENTIAL_ENV_VARS)."""
    known = CREDENTIAL_ENV_VARS.get((api_name, parameter))
    if known:
        return known
    token = re.sub(r"[^A-Z0-9]+", "_", f"{_slug(api_name)}_{parameter}".upper()).strip("_")
    return f"TOOLEVAL_TOOLALPACA_{token}"


def missing_credentials(case: ToolAlpacaCase, environ: Mapping[str, str] | None = None) -> str | None:
    """None when every credential `case` needs is set, else a skip reason naming the variables to set."""
    env = os.environ if environ is None else environ
    needed = [credential_env_var(case.api_name, name) for name in case.api.record.Authentication]
    absent = [name for name in needed if not env.get(name)]
    if not absent:
        return None
    return f"{case.api_name} needs an API key: set {', '.join(absent)}"


def credentials_for(case: ToolAlpacaCase, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Authentication parameter -> value, in the record's order (the order upstream writes them, §2.2).

    Raises:
        ToolevalUsageError: a credential is not set (check `missing_credentials` first to skip instead).
    """
    reason = missing_credentials(case, environ)
    if reason:
        raise ToolevalUsageError(reason)
    env = os.environ if environ is None else environ
    found = {name: (credential_env_var(case.api_name, name), env[credential_env_var(case.api_name, name)])
             for name in case.api.record.Authentication}
    for variable, value in found.values():  # the agent copies keys into its calls: never into the cache's file
        keep_out_of_storage(variable, value)
    return {name: value for name, (_, value) in found.items()}


# ---------------------------------------------------------------------------------------------- prompts


def helper_selectors(classes: Mapping[str, str]) -> dict[str, str]:
    """`download.lift_member_constants` selectors for upstream's helper tools: class name -> tool name becomes
    ``<Class>.__init__.description`` -> tool name (upstream assigns each description inside the constructor)."""
    return {f"{class_name}.__init__.description": tool for class_name, tool in classes.items()}


def lift_helper_descriptions(source: str, classes: Mapping[str, str], origin: str) -> dict[str, str]:
    """The descriptions of upstream's helper tools, read with ``ast`` from agent/tools.py (nothing executed).

    Upstream assigns each as a local ``description = "..."`` inside the tool class's ``__init__``; the text
    still holds the doubled braces of a format template (§2.2). The downloader lifts them the same way into
    prompts.json (pin.json ``helper_tool_descriptions``).

    Args:
        source: the text of upstream agent/tools.py.
        classes: class name -> tool name, e.g. ``{"GetDetailsTool": "getDetails"}``.
        origin: the file name, for error messages.
    """
    found: dict[str, str] = {}
    for selector, tool in helper_selectors(classes).items():
        try:
            found.update(lift_member_constants(source, {selector: tool}, origin))
        except DataError:
            continue
    missing = [tool for tool in classes.values() if tool not in found]
    if missing:
        raise DataError(f"{origin}: no description found for {', '.join(missing)}")
    return found


@cache
def load_prompts(root: Path) -> Prompts:
    """The prompt texts evaluation uses, read from the data folder (never from our code).

    Helper-tool descriptions (getDetails, retrievalDataFromFile) are taken from prompts.json under
    ``agent/tools.py`` when the download lifted them there, else lifted from ``agent/tools.py`` when the
    folder has that file; otherwise they are left out and rendering an agent prompt reports what is missing.
    """
    texts = {}
    for name in ("Evaluation", "Simulator", "get_details", "retrieval"):
        texts[name] = read_text(root / "prompts" / f"{name}.txt")
    constants_path = root / "prompts.json"
    constants = read_json(constants_path)
    agent_constants = constants.get("agent/agent_prompts.py") if isinstance(constants, dict) else None
    if not isinstance(agent_constants, dict):
        raise DataError(f"{constants_path}: no 'agent/agent_prompts.py' constants")
    try:
        agent = AgentPromptParts(
            prefix=agent_constants["prefix_test"],
            format_instructions=agent_constants["format_instructions_test"],
            suffix=agent_constants["suffix_test"],
        )
    except KeyError as exc:
        raise DataError(f"{constants_path}: agent/agent_prompts.py: constant {exc.args[0]} is missing") from None
    return Prompts(
        evaluation=texts["Evaluation"],
        simulator=texts["Simulator"],
        get_details=texts["get_details"],
        retrieval=texts["retrieval"],
        agent=agent,
        helper_descriptions=_helper_descriptions(root, constants),
    )


def helper_tool_source() -> str:
    """The upstream file holding the helper-tool descriptions (pin.json ``helper_tool_descriptions.file``)."""
    return str(json.loads(PIN_FILE.read_text(encoding="utf-8"))["helper_tool_descriptions"]["file"])


def _helper_descriptions(root: Path, constants: JSONObject) -> dict[str, str]:
    pinned = json.loads(PIN_FILE.read_text(encoding="utf-8"))["helper_tool_descriptions"]
    lifted = constants.get(pinned["file"])
    if isinstance(lifted, dict) and all(isinstance(value, str) for value in lifted.values()):
        return {key: value for key, value in lifted.items() if isinstance(value, str)}  # all of them
    source_path = root / pinned["file"]
    if source_path.is_file():
        return lift_helper_descriptions(source_path.read_text(encoding="utf-8"), pinned["classes"], str(source_path))
    return {}
