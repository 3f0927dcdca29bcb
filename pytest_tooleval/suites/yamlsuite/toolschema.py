"""A tool's parameter schema, checked at load for what the meta-schema cannot see.

Every call the model makes is validated against its tool's schema, so a fault of the schema would be scored as
the model's on every call, or would make the scoring reach out or run without end. The loader refuses, with the
place of the fault:

- a `$ref` (or `$dynamicRef`) that the tool's schema cannot resolve itself: references are resolved locally, in
  the schema and the JSON Schema meta-schemas that jsonschema ships, and never fetched (a remote one is a load
  error, so a suite file never makes the plugin talk to the network);
- references that loop without reaching a value (`a: {$ref: '#/$defs/b'}`, `b: {$ref: '#/$defs/a'}`, or
  `allOf: [{$ref: '#'}]` at the top): validating any call would recurse without end. A schema that refers to
  itself through a property or an item (a tree) is fine: each step goes one level into the arguments;
- a `pattern` or `patternProperties` pattern that cannot run (patterns.py: RE2, linear time);
- `unevaluatedProperties` together with `patternProperties`: jsonschema would match those patterns with Python's
  re while computing which properties were evaluated, outside the linear-time matcher.

The walk keeps its own stack, so a deep schema costs no recursion.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...json_value import JSONObject, JSONValue
from . import patterns

if TYPE_CHECKING:
    from referencing._core import Resolver  # the class Registry.resolver returns; referencing does not export it
    from referencing.jsonschema import Schema

Place = tuple[str | int, ...]  # keys from the top of the parameters schema

# keywords whose schemas apply to the same value (a loop through them never ends), and those that go one level in
_SAME_VALUE_ONE = ("not", "if", "then", "else")
_SAME_VALUE_MANY = ("allOf", "anyOf", "oneOf")
_SAME_VALUE_MAP = ("dependentSchemas", "dependencies")
_INNER_ONE = ("additionalProperties", "propertyNames", "items", "contains", "unevaluatedItems", "unevaluatedProperties",
              "additionalItems")
_INNER_MANY = ("prefixItems", "items")  # items as a list: drafts before 2020-12
_INNER_MAP = ("properties", "patternProperties", "$defs", "definitions")
_REFERENCES = ("$ref", "$dynamicRef")


Reference = tuple[int, str]  # (the id of the schema that holds it, "$ref" or "$dynamicRef")


class _Places:
    """Every mapping of the document, by identity, and where each is: its parent's id and its key there (a place
    is built only to be reported, so a deep schema costs no long tuples)."""

    def __init__(self, document: JSONValue) -> None:
        self.mappings: dict[int, JSONObject] = {}
        self.parents: dict[int, tuple[int, str | int]] = {}  # id -> (the id of the container, the key in it)
        seen: set[int] = set()
        pending: list[tuple[JSONValue, int | None, str | int]] = [(document, None, "")]
        while pending:
            value, parent, key = pending.pop()
            if not isinstance(value, (dict, list)) or id(value) in seen:
                continue
            seen.add(id(value))
            if parent is not None:
                self.parents[id(value)] = (parent, key)
            if isinstance(value, dict):
                self.mappings[id(value)] = value
                pending.extend((item, id(value), name) for name, item in value.items())
            elif isinstance(value, list):
                pending.extend((item, id(value), index) for index, item in enumerate(value))

    def of(self, value_id: int, *below: str | int) -> Place:
        keys: list[str | int] = []
        while value_id in self.parents:
            value_id, key = self.parents[value_id]
            keys.append(key)
        return (*reversed(keys), *below)


class _Node:
    """One schema (a mapping) of the tool's schema, and the schemas it applies to the same value."""

    __slots__ = ("same_value",)

    def __init__(self) -> None:
        # (the schema, the reference that leads there, or None for allOf, not, ...)
        self.same_value: list[tuple[object, Reference | None]] = []  # only their identities are used


def problem(parameters: JSONObject) -> tuple[Place, str] | None:
    """The first fault of the tool's schema `parameters` (already valid for the meta-schema), as (place, message),
    or None."""
    from referencing.exceptions import NoSuchAnchor, PointerToNowhere, Unresolvable
    from referencing.jsonschema import DRAFT202012

    places = _Places(parameters)
    nodes: dict[int, _Node] = {}
    pending: list[tuple[object, Resolver[Schema]]] = [(parameters, _root_resolver(parameters))]
    unevaluated: Place | None = None
    pattern_properties = False
    while pending:
        schema, resolver = pending.pop()
        # a schema outside the tool's (a meta-schema a reference names) is jsonschema's own: not walked
        if not isinstance(schema, dict) or id(schema) in nodes or id(schema) not in places.mappings:
            continue
        node = nodes[id(schema)] = _Node()
        found = _pattern_problem(schema, places, id(schema))
        if found:
            return found
        if "unevaluatedProperties" in schema and unevaluated is None:
            unevaluated = places.of(id(schema), "unevaluatedProperties")
        pattern_properties = pattern_properties or isinstance(schema.get("patternProperties"), dict)
        for keyword in _REFERENCES:
            ref = schema.get(keyword)
            if not isinstance(ref, str):
                continue
            try:
                resolved = resolver.lookup(ref)
            except (PointerToNowhere, NoSuchAnchor):
                return places.of(id(schema), keyword), f"{keyword} {ref!r} points to nothing in the tool's schema"
            except Unresolvable:
                return places.of(id(schema), keyword), (
                    f"{keyword} {ref!r} is not in the tool's schema: references are resolved within the file and "
                    "never fetched (copy the schema under $defs and refer to it as #/$defs/NAME)")
            if not isinstance(resolved.contents, (dict, bool)):
                return places.of(id(schema), keyword), f"{keyword} {ref!r} points to a value that is not a schema"
            node.same_value.append((resolved.contents, (id(schema), keyword)))
            pending.append((resolved.contents, resolved.resolver))  # a schema only a reference reaches: walked too
        for child, same_value in _subschemas(schema):
            if same_value:
                node.same_value.append((child, None))
            if isinstance(child, dict):
                pending.append((child, resolver.in_subresource(DRAFT202012.create_resource(child))))
    if unevaluated is not None and pattern_properties:
        return unevaluated, ("unevaluatedProperties together with patternProperties is not supported: "
                             "jsonschema would match those patterns outside the linear-time matcher")
    return _loop(places, nodes)


def _root_resolver(parameters: JSONObject) -> Resolver[Schema]:
    """A resolver of the tool's schema that knows it and the meta-schemas, and retrieves nothing."""
    import jsonschema_specifications  # type: ignore[import-untyped]  # jsonschema's own dependency
    from referencing.jsonschema import DRAFT202012

    resolver: Resolver[Schema] = jsonschema_specifications.REGISTRY.resolver_with_root(
        DRAFT202012.create_resource(parameters))
    return resolver


def _pattern_problem(schema: JSONObject, places: _Places, schema_id: int) -> tuple[Place, str] | None:
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        reason = patterns.problem(pattern)
        if reason:
            return places.of(schema_id, "pattern"), f"not a valid regular expression ({reason})"
    properties = schema.get("patternProperties")
    for key in properties if isinstance(properties, dict) else ():
        reason = patterns.problem(key)
        if reason:
            return places.of(schema_id, "patternProperties", key), f"not a valid regular expression ({reason})"
    return None


def _subschemas(schema: JSONObject) -> Iterator[tuple[JSONValue, bool]]:
    """(subschema, whether it applies to the same value) of each keyword holding schemas."""
    for keyword in _SAME_VALUE_ONE + _INNER_ONE:
        if keyword in schema:
            value = schema[keyword]
            if not isinstance(value, list):
                yield value, keyword in _SAME_VALUE_ONE
    for keyword in _SAME_VALUE_MANY + _INNER_MANY:
        children = schema.get(keyword)
        if isinstance(children, list):
            yield from ((child, keyword in _SAME_VALUE_MANY) for child in children)
    for keyword in _SAME_VALUE_MAP + _INNER_MAP:
        named = schema.get(keyword)
        if isinstance(named, dict):
            yield from ((child, keyword in _SAME_VALUE_MAP) for child in named.values())


def _loop(places: _Places, nodes: dict[int, _Node]) -> tuple[Place, str] | None:
    """A cycle among the schemas applied to one value: the place of the reference that closes it, and the
    references on the way. Depth first, with its own stack."""
    state: dict[int, int] = {}  # 1: on the current path, 2: done (no cycle through it)
    for start_id in nodes:
        if state.get(start_id):
            continue
        path: list[tuple[int, Reference | None]] = [(start_id, None)]  # (schema, the reference that led there)
        branches = [iter(nodes[start_id].same_value)]
        state[start_id] = 1
        while branches:
            step = next(branches[-1], None)
            if step is None:
                state[path.pop()[0]] = 2
                branches.pop()
                continue
            target, via = step
            target_id = id(target)
            if target_id not in nodes or state.get(target_id) == 2:
                continue  # a meta-schema, a boolean schema, or a schema already cleared
            if state.get(target_id) == 1:
                first = next(index for index, (step_id, _) in enumerate(path) if step_id == target_id)
                references = [reference for _, reference in path[first + 1:] if reference is not None]
                references += [via] if via is not None else []
                if not references:  # a mapping inside itself: the YAML loader refuses that before
                    return places.of(target_id), "this schema contains itself"
                chain = " -> ".join(str(places.mappings[holder][keyword]) for holder, keyword in references)
                return places.of(*references[-1]), (f"the references loop ({chain}) without going into the "
                                                     "arguments: validating a call would never end")
            state[target_id] = 1
            path.append((target_id, via))
            branches.append(iter(nodes[target_id].same_value))
    return None
