"""The agent's tools: API functions built from the OpenAPI spec, getDetails, and retrievalDataFromFile.

Reproduces upstream's tool executor (toolalpaca-gpt4tools §2.5, §2.8): JSON extraction from the action input,
parameter placement and type/enum checks with upstream's messages, the missing-parameter message the released
outputs show, re-sends on 5xx, the 3000-character cap (or file offloading when retrieval is available), and
the invalid-action observation. Sending is delegated to a `Transport`: the API simulator for the simulated
subset, an HTTP client for the real one.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from ...json_value import JSONObject, JSONValue
from ..json_ops import as_getter, contains, iterate
from .episode import Observation, TraceEntry
from .modelfn import ModelFn, ask
from .prompts import GET_DETAILS, RETRIEVAL, render_retrieval_prompt, render_user_prompt

__all__ = [
    "ERROR_ADVICE",
    "INVALID_JSON_MESSAGE",
    "LIST_INPUT_MESSAGE",
    "MAX_ATTEMPTS",
    "MAX_OBSERVATION_CHARS",
    "EpisodeFiles",
    "GetDetails",
    "HttpRequest",
    "HttpResponse",
    "RequestRejected",
    "Retrieval",
    "ToolCrash",
    "Transport",
    "TransportError",
    "build_request",
    "call_function",
    "extract_json",
    "invalid_action_message",
]

# Observation texts the released models were trained on; they must match upstream character for character.
INVALID_JSON_MESSAGE = "Invalid JSON format. Please ensure 'Action Input' is a valid JSON object."
LIST_INPUT_MESSAGE = "'Action Input' cannot be a list. Only call one function per action."
ERROR_ADVICE = (
    ". You should choose one of: (1) change the input and retry; (2) return the 'Final Answer' and explain what "
    "happened; (You must choose this one when the error occurs more than 3 times.) (3) call another function."
)
TYPE_ERROR_LINE = (
    'Parameter type error: "{name}", expected {expected}, but got {got}. You need to change the input and try again.'
)
MISSING_MESSAGE = "Missing required parameters: {names}. You need to change the input and try again."
TOO_LONG_MESSAGE = (
    "The output is too long. You need to use the 'retrievalDataFromFile' function to retrieve the output from "
    "the file: "
)
# ToolAlpaca quirk: "Recieved" is misspelt upstream (toolalpaca-gpt4tools §2.5)
IMAGE_MESSAGE = "Recieved an image, saved in '{path}'."
GET_DETAILS_SHAPE_MESSAGE = (
    'For `getDetails`, the "Action Input" must be like {Question": "The question to prompt user to provide '
    'sufficient information."}.'
)
FILE_MISSING_MESSAGE = "File does not exist."

MAX_OBSERVATION_CHARS = 3000
MAX_ATTEMPTS = 3  # sends per call while the status is 5xx

REQUESTS_USER_AGENT = "python-requests/2.28.2"  # the version upstream's requirements pin


# ---------------------------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class HttpRequest:
    """One API call, built from the spec and the action input, before any transport sends it.

    Attributes:
        method: upper-case HTTP method.
        url: base URL + path with path parameters filled in (no query string yet).
        query: query parameters, values as the model gave them (encoded by `prepared_url`).
        headers: ``Content-Type: application/json`` plus header parameters, in order.
        cookies: cookie parameters.
        body: the JSON body object, or None when the operation declares no request body.
    """

    method: str
    url: str
    query: Mapping[str, JSONValue] = field(default_factory=dict)
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),)
    cookies: Mapping[str, JSONValue] = field(default_factory=dict)
    body: JSONObject | None = None

    def body_bytes(self) -> bytes | None:
        """The body as upstream's HTTP client serialises it (default json.dumps, UTF-8), or None."""
        if self.body is None:
            return None
        return json.dumps(self.body, allow_nan=False).encode("utf-8")

    def prepared_url(self) -> str:
        """The URL with the query string, encoded and re-quoted the way requests 2.28 prepares it."""
        scheme, netloc, path, query, fragment = urlsplit(self.url)
        encoded = _encode_query(self.query)
        if encoded:
            query = f"{query}&{encoded}" if query else encoded
        return _requote(urlunsplit((scheme, netloc, path or "/", query, fragment)))

    def wire_headers(self, user_agent: str = REQUESTS_USER_AGENT) -> list[tuple[str, str]]:
        """Header lines in the order the server receives them from requests, names lower-cased as ASGI gives them."""
        netloc = urlsplit(self.url).netloc
        merged: dict[str, str] = {
            "host": netloc,
            "user-agent": user_agent,
            "accept-encoding": "gzip, deflate",
            "accept": "*/*",
            "connection": "keep-alive",
        }
        for name, value in self.headers:
            merged[name.lower()] = str(value)  # a parameter overrides a default in place, as requests merges
        if self.cookies:
            merged["cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        body = self.body_bytes()
        if body is not None:
            merged["content-length"] = str(len(body))
        elif self.method not in ("GET", "HEAD"):
            merged["content-length"] = "0"
        return list(merged.items())


def _encode_query(query: Mapping[str, JSONValue]) -> str:
    # requests expands iterables into repeated keys (a dict yields its keys) and drops None values; of JSON
    # values, strings are kept whole and numbers, booleans and null have no __iter__
    pairs: list[tuple[str, JSONValue]] = []
    for key, value in query.items():
        values = value if isinstance(value, (list, dict)) else [value]
        pairs.extend((key, item) for item in values if item is not None)
    return urlencode(pairs, doseq=True)


_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _requote(uri: str) -> str:
    """Quote what is not already quoted, leaving valid %-escapes alone (the normalisation requests applies)."""
    pieces = uri.split("%")
    rebuilt = [pieces[0]]
    valid = True
    for piece in pieces[1:]:
        code = piece[:2]
        if len(code) == 2 and code.isalnum():
            try:
                char = chr(int(code, 16))
            except ValueError:
                valid = False
                break
            rebuilt.append(char + piece[2:] if char in _UNRESERVED else "%" + piece)
        else:
            rebuilt.append("%" + piece)
    if valid:
        return quote("".join(rebuilt), safe="!#$%&'()*+,/:;=?@[]~")
    return quote(uri, safe="!#$&'()*+,/:;=?@[]~")


@dataclass(frozen=True)
class HttpResponse:
    """What a transport returns: the status, the decoded text, and for binary bodies the content type and bytes."""

    status: int
    text: str
    content_type: str = "application/json"
    content: bytes = b""


# An async function sending one request; the simulator implements it for the simulated subset.
Transport = Callable[[HttpRequest], Awaitable[HttpResponse]]


class TransportError(Exception):
    """The request could not be sent (connection refused, bad host, ...): the episode ends as an error, as
    upstream's uncaught client exception ended it."""


class RequestRejected(Exception):
    """The action input failed the spec checks; the message is the observation the model sees.

    A transport raises it too where upstream's HTTP client raised a ValueError (an invalid or schemeless URL):
    upstream caught those and showed their text to the model.
    """


class ToolCrash(Exception):
    """A failure upstream did not catch inside the tool: the episode ends as an error with this message."""


# ---------------------------------------------------------------------------------------------- parameters


def extract_json(text: str) -> JSONObject | list[JSONValue]:
    """Parse the span from the first ``{``/``[`` to the last ``}``/``]`` (upstream's lenient extraction, §2.5).

    Raises:
        ValueError: no bracket, or the span is not JSON.
    """
    starts = [index for index in (text.find("{"), text.find("[")) if index != -1]
    ends = [index for index in (text.rfind("}"), text.rfind("]")) if index != -1]
    if not starts or not ends:
        raise ValueError("no JSON object or array in the text")
    value = json.loads(text[min(starts) : max(ends) + 1])
    assert isinstance(value, (dict, list))  # JSON text that starts with "{" or "[" is an object or an array
    return value


_SCHEMA_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}
_TYPE_NAMES = {python_type: name for name, python_type in _SCHEMA_TYPES.items()}


def _type_name(python_type: type) -> str:
    return str(_TYPE_NAMES.get(python_type))  # upstream prints None for a type outside the table


def _declared(holder: JSONValue) -> JSONObject:
    """Where the evaluated code found a value's type and enum: the ``schema`` entry of what declares it.

    ToolAlpaca quirk: the released outputs show query and path values checked against the parameter's
    ``schema`` (an enum error on an Axolotl query parameter, an integer error on an AniAPI path parameter) and
    request-body values never checked (Apache Superset bodies with a string where the spec says integer reach
    the simulator). Reading ``schema`` explains both: parameters have one, body property schemas do not. The
    released code reads the declaring object itself instead, which matches neither (toolalpaca-gpt4tools §2.5).
    """
    declared = as_getter(holder).get("schema", {})
    return declared if isinstance(declared, dict) else {}


def _check(name: str, schema: JSONObject, params: JSONObject) -> list[tuple[str, str, str]]:
    """Type and enum errors for one supplied value; a coercible string (or int for a number) is converted in
    `params` in place, so later checks and later sends see the converted value, as upstream's do."""
    errors = []
    declared = schema.get("type", "")
    target = _SCHEMA_TYPES.get(declared) if isinstance(declared, str) else None
    if target is not None and not isinstance(params[name], target):
        converted = False
        value = params[name]
        # ToolAlpaca quirk: strings are coerced with int()/float()/bool(), so any non-empty string is a valid
        # boolean; bools pass as integers (toolalpaca-gpt4tools §2.5)
        if (target in (int, float, bool) and type(value) is str) or (target is float and type(value) is int):
            try:
                params[name] = target(value)
                converted = True
            except ValueError:
                pass
        if not converted:
            errors.append((name, _type_name(target), _type_name(type(params[name]))))
    if "enum" in schema and params[name] != "" and not contains(schema["enum"], params[name]):
        errors.append((name, f"one of {schema['enum']}", f'"{params[name]}"'))
    return errors


def build_request(
    operation: JSONValue,
    params: JSONObject,
    *,
    route: str,
    method: str,
    base_url: str,
    fix_relative_path: bool = False,
) -> HttpRequest:
    """The request for one function call, checked against its OpenAPI operation (§2.5).

    Args:
        operation: the spec's operation object, ``$ref``s resolved.
        params: the parsed action input; coerced values are written back into it.
        route: the spec path, e.g. ``/anime/{animeId}``.
        method: the spec method, e.g. ``get``.
        base_url: the simulator URL for the API, or the spec's server URL.
        fix_relative_path: insert the missing leading slash of a route (the Fruityvice bug); off for
            upstream-compatible runs.

    Raises:
        RequestRejected: type/enum errors or missing required parameters (the observation text).
        ToolCrash: what upstream would have crashed on (a path placeholder without a value, an unknown
            parameter location, a body that is not JSON-serialisable).
    """
    locations: dict[str, JSONObject] = {"query": {}, "header": {}, "path": {}, "cookie": {}}
    required: dict[tuple[JSONValue, JSONValue], None] = {}  # ordered set; upstream's set has no stable order
    errors: list[tuple[str, str, str]] = []
    operation = as_getter(operation)  # upstream calls `.get` on it first
    for parameter_value in iterate(operation.get("parameters", [])):
        parameter = as_getter(parameter_value)
        key = (parameter.get("in"), parameter.get("name"))
        if parameter.get("required"):
            required[key] = None
        parameter_name = parameter["name"]
        if parameter_name in params:
            assert isinstance(parameter_name, str)  # a key of `params`
            required.pop(key, None)
            location = parameter["in"]
            if location not in locations:
                raise ToolCrash(repr(location))
            assert isinstance(location, str)  # a key of `locations`
            locations[location][parameter_name] = params[parameter_name]
            errors.extend(_check(parameter_name, _declared(parameter), params))

    body: JSONObject | None = None
    required_body: dict[JSONValue, None] = {}
    if "requestBody" in operation:
        body = {}
        content = as_getter(as_getter(operation["requestBody"]).get("content", {}))
        schema_value = as_getter(content.get("application/json", {})).get("schema", {})
        if contains(schema_value, "properties"):
            schema = as_getter(schema_value)
            required_body = dict.fromkeys(iterate(schema.get("required", [])))
            for name, property_schema in as_getter(schema["properties"]).items():
                if name in params:
                    body[name] = params[name]  # undeclared input keys are dropped without a word
                    required_body.pop(name, None)
                    errors.extend(_check(name, _declared(property_schema), params))

    if errors:
        raise RequestRejected(
            "\n".join(TYPE_ERROR_LINE.format(name=name, expected=expected, got=got) for name, expected, got in errors)
        )
    missing = [name for _, name in required] + list(required_body)
    if missing:
        # ToolAlpaca bug: the released code crashes here (str + list); the evaluated run returned this message,
        # listing parameter names then body names (toolalpaca-gpt4tools §6.2)
        raise RequestRejected(MISSING_MESSAGE.format(names=", ".join(f'"{name}"' for name in missing)))

    if fix_relative_path and not route.startswith("/"):
        route = "/" + route
    try:
        path = route.format(**locations["path"])
    except (KeyError, IndexError) as exc:
        raise ToolCrash(str(exc)) from None
    except ValueError as exc:  # upstream catches ValueError around the whole call: its text is the observation
        raise RequestRejected(str(exc)) from None
    headers = {"Content-Type": "application/json"}
    headers.update({name: str(value) for name, value in locations["header"].items()})
    request = HttpRequest(
        method=method.upper(),
        url=f"{base_url.rstrip('/')}{path}",
        query=dict(locations["query"]),
        headers=tuple(headers.items()),
        cookies=dict(locations["cookie"]),
        body=body,
    )
    try:
        request.body_bytes()
    except ValueError as exc:  # NaN or infinity: requests refuses to send it
        raise ToolCrash(str(exc)) from None
    return request


# ---------------------------------------------------------------------------------------------- files


class EpisodeFiles:
    """Where tools put long outputs and images. Kept in memory; paths are shaped like upstream's.

    Upstream writes ``./tmp/retrieval_<unix seconds>.txt`` and ``./images/<MMDDhhmmss>.<ext>`` and reads back
    any path the model names; here only files this episode wrote can be read, so the model never reads the
    disk.
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self.texts: dict[str, str] = {}
        self.images: dict[str, bytes] = {}

    def offload(self, text: str) -> str:
        path = f"./tmp/retrieval_{int(self._clock())}.txt"
        self.texts[path] = text  # same second, same name: the later output replaces the earlier, as upstream
        return path

    def save_image(self, content: bytes, extension: str) -> str:
        stamp = datetime.fromtimestamp(self._clock()).strftime("%m%d%H%M%S")
        path = f"./images/{stamp}.{extension}"
        self.images[path] = content
        return path

    def read(self, path: object) -> str | None:
        return self.texts.get(path) if isinstance(path, str) else None


# ---------------------------------------------------------------------------------------------- tools


async def call_function(
    tool_input: str,
    *,
    operation: JSONValue,
    route: str,
    method: str,
    base_url: str,
    transport: Transport,
    files: EpisodeFiles,
    retrieval_available: bool,
    fix_relative_path: bool = False,
) -> str:
    """Run one API function for an action input and return the observation (§2.5).

    Raises:
        ToolCrash: the episode must end as an error (see `build_request`, `TransportError`).
    """
    try:
        params = extract_json(tool_input)
    except ValueError:
        return INVALID_JSON_MESSAGE
    if isinstance(params, list):
        return LIST_INPUT_MESSAGE
    attempts = 0
    response: HttpResponse | None = None
    message = ""
    while attempts < MAX_ATTEMPTS:
        try:
            request = build_request(
                operation, params, route=route, method=method, base_url=base_url, fix_relative_path=fix_relative_path
            )
        except RequestRejected as rejected:
            return str(rejected)
        try:
            response = await transport(request)
        except RequestRejected as rejected:  # the client refused the URL (requests' ValueError family)
            return str(rejected)
        except TransportError as exc:
            raise ToolCrash(str(exc)) from None
        text = response.text
        if "image" in response.content_type:
            text = IMAGE_MESSAGE.format(path=files.save_image(response.content, response.content_type.split("/")[-1]))
        message = f"Status Code: {response.status}. Response: {text}"
        if response.status >= 500:
            attempts += 1
            continue
        break
    assert response is not None
    if not 200 <= response.status < 300:
        message += ERROR_ADVICE
    if len(message) > MAX_OBSERVATION_CHARS:
        if retrieval_available:
            return TOO_LONG_MESSAGE + files.offload(message)
        message = message[:MAX_OBSERVATION_CHARS]
    return message


def invalid_action_message(tool: str, tool_names: list[str]) -> str:
    """The observation for an action that names no tool; the loop goes on (§2.5)."""
    return f"`{tool}` is not a valid action. The action must be one of {tool_names}."


class GetDetails:
    """The asks-the-user tool: the question goes to a user simulator, its answer is the observation (§2.8)."""

    name = GET_DETAILS

    def __init__(self, user: ModelFn, instructions: str, trace: list[TraceEntry] | None = None) -> None:
        self._user = user
        self._instructions = instructions
        self._trace = trace if trace is not None else []
        self.history: list[tuple[str, JSONValue]] = []

    async def __call__(self, tool_input: str, episode_input: str) -> str:
        if not self.history or episode_input != self.history[0][1]:
            # ToolAlpaca quirk: the first turn is stored stripped, so an input with surrounding whitespace never
            # equals it again and each call starts a fresh history (toolalpaca-gpt4tools §2.8)
            self.history = [("User", episode_input)]
        try:
            question = extract_json(tool_input)
        except ValueError:
            return INVALID_JSON_MESSAGE
        if "Question" not in question:
            return GET_DETAILS_SHAPE_MESSAGE
        self.history.append(("AI", question))
        self.history[0] = ("User", str(self.history[0][1]).strip())
        messages = [{"role": "user", "content": render_user_prompt(self._instructions, self.history)}]
        answer = await ask(self._user, messages)
        self._trace.append({"kind": "user", "messages": messages, "reply": answer.text})
        details = answer.text
        if details.strip().startswith("[User]:"):
            details = details.strip().split("[User]:", 1)[1].strip()
        details = details.strip().split("[AI]:", 1)[0].strip()
        self.history.append(("User", details))
        return details


class Retrieval:
    """retrievalDataFromFile: answers a query about an offloaded long output (real APIs only, §2.8)."""

    name = RETRIEVAL

    def __init__(
        self, model: ModelFn, template: str, files: EpisodeFiles, trace: list[TraceEntry] | None = None
    ) -> None:
        self._model = model
        self._template = template
        self._files = files
        self._trace = trace if trace is not None else []

    async def __call__(self, tool_input: str) -> Observation:
        try:
            params = extract_json(tool_input)
            if isinstance(params, list):
                raise TypeError("list indices must be integers or slices, not str")
            file_path = params["file_path"]
            query = params["query"]
        except (ValueError, KeyError, TypeError, IndexError):
            return INVALID_JSON_MESSAGE
        content = self._files.read(file_path)
        if content is None:
            return FILE_MISSING_MESSAGE
        messages = [{"role": "user", "content": render_retrieval_prompt(self._template, content, query)}]
        answer = await ask(self._model, messages)
        self._trace.append({"kind": "retrieval", "messages": messages, "reply": answer.text})
        return {"retrieved_info": answer.text}
