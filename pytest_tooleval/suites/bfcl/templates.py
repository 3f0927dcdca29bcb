"""The texts bfcl puts around a question, lifted with `ast` from the pinned wheel's Python source (bfcl §1.3).

Nothing of bfcl-eval is imported or executed: each source file is parsed and the few assignments, returns and
`+=` additions that hold the texts are read from the tree. The lifted content is hashed (canonical JSON) and
that hash is pinned, so another wheel's texts are caught rather than sent.
"""

from __future__ import annotations

import ast
import string
from collections.abc import ItemsView, Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import TypeAlias, TypeVar

from ... import python_ast
from ...data.download import canonical_sha256
from ...errors import DataError
from ...json_value import JSONObject, JSONValue
from ..json_ops import as_getter

PROMPTS_FILE = "bfcl_eval/constants/default_prompts.py"
TYPES_FILE = "bfcl_eval/constants/type_mappings.py"
HINTS_FILE = "bfcl_eval/utils.py"
TOOLS_FILE = "bfcl_eval/model_handler/utils.py"
SOURCE_FILES = (PROMPTS_FILE, TYPES_FILE, HINTS_FILE, TOOLS_FILE)

# the pieces of text between the values a note is filled with (a note with one value has two pieces)
Note = tuple[str, ...]
#: a module-level value lifted from bfcl's source: a string, or a dict of such values
_Literal: TypeAlias = "str | dict[str, _Literal]"
_V = TypeVar("_V")


@dataclass(frozen=True)
class Templates:
    """Exactly what composing a request needs (bfcl §2).

    Attributes:
        system_before: the default system prompt up to the function docs (bfcl §2.1).
        system_after: the default system prompt after the function docs.
        doc_format: the function-doc format the default prompt names ("json").
        language_hints: {"python" | "java" | "javascript": text appended to each function description}.
        java_notes / javascript_notes: {"any" | "typed" | "items" | "schema": note appended to a parameter's
            description} (bfcl §2.1.2); "typed", "items" and "schema" take one value.
        float_note: appended to a float parameter's description in FC mode (bfcl §2.2).
        openapi_types: bfcl's type name -> the JSON Schema type it sends in FC mode.
        held_out_fc: the user message of a multi-turn turn that reveals held-out docs, FC mode
            (bfcl-multiturn §3.2).
        held_out_prompting: the same in prompt mode, in two pieces around the docs' Python `str()`
            (bfcl-multiturn §3.4).
    """

    system_before: str
    system_after: str
    doc_format: str
    language_hints: Mapping[str, str]
    java_notes: Mapping[str, Note]
    javascript_notes: Mapping[str, Note]
    float_note: str
    openapi_types: Mapping[str, str]
    held_out_fc: str
    held_out_prompting: Note

    def content(self) -> JSONObject:
        """The lifted content as plain JSON values (what the pinned hash covers)."""
        plain: JSONObject = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, Mapping):
                value = {key: list(inner) if isinstance(inner, tuple) else inner for key, inner in value.items()}
            elif isinstance(value, tuple):
                value = list(value)
            plain[item.name] = value
        return plain

    def sha256(self) -> str:
        return canonical_sha256(self.content())

    def __hash__(self) -> int:  # the mappings are read-only views, which do not hash: the content does
        return hash(self.sha256())

    @classmethod
    def from_content(cls, content: Mapping[str, JSONValue]) -> Templates:
        """Back from `content()` (a templates file); DataError when a field is missing or of the wrong shape."""
        try:
            return cls(
                system_before=content_text(content["system_before"]),
                system_after=content_text(content["system_after"]),
                doc_format=content_text(content["doc_format"]),
                language_hints=_frozen({key: content_text(value) for key, value in _items(content["language_hints"])}),
                java_notes=_frozen({key: _note(value) for key, value in _items(content["java_notes"])}),
                javascript_notes=_frozen({key: _note(value) for key, value in _items(content["javascript_notes"])}),
                float_note=content_text(content["float_note"]),
                openapi_types=_frozen({key: content_text(value) for key, value in _items(content["openapi_types"])}),
                held_out_fc=content_text(content["held_out_fc"]),
                held_out_prompting=_note(content["held_out_prompting"]),
            )
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise DataError(f"bfcl templates: malformed content ({type(exc).__name__}: {exc})") from None


def fill(note: Note, *values: str) -> str:
    """A note with its values put between its pieces."""
    if len(values) != len(note) - 1:
        raise ValueError(f"the note takes {len(note) - 1} values, got {len(values)}")
    out = [note[0]]
    for value, piece in zip(values, note[1:], strict=True):
        out += [value, piece]
    return "".join(out)


def lift_templates(sources: Mapping[str, str]) -> Templates:
    """The templates from the wheel's source files ({path in the wheel: text}, the paths of SOURCE_FILES).

    Raises:
        DataError: a file is missing, or does not hold the texts where the pinned version holds them.
    """
    missing = [path for path in SOURCE_FILES if path not in sources]
    if missing:
        raise DataError(f"bfcl wheel lacks {', '.join(missing)}")
    before, after, doc_format = _system_prompt(sources[PROMPTS_FILE])
    hints, java, javascript = _language_notes(sources[HINTS_FILE])
    held_out_fc, held_out_prompting = _held_out_messages(sources[PROMPTS_FILE])
    return Templates(
        system_before=before,
        system_after=after,
        doc_format=doc_format,
        language_hints=_frozen(hints),
        java_notes=_frozen(java),
        javascript_notes=_frozen(javascript),
        float_note=_float_note(sources[TOOLS_FILE]),
        openapi_types=_frozen(_string_dict(module_values(sources[TYPES_FILE], TYPES_FILE), "GORILLA_TO_OPENAPI",
                                           TYPES_FILE)),
        held_out_fc=held_out_fc,
        held_out_prompting=held_out_prompting,
    )


# ------------------------------------------------------------------------------------------ the system prompt

_FUNCTIONS_MARK = "\x00functions\x00"  # stands for the function docs while the prompt is composed, then split on


def _system_prompt(source: str) -> tuple[str, str, str]:
    """The default system prompt around its function docs, composed from the lifted pieces (bfcl §2.1).

    The default configuration string names the return format, tag use, doc format, layout and style; the
    pieces it selects are filled in as bfcl fills them, with a mark for the docs, and split on the mark."""
    values = module_values(source, PROMPTS_FILE)
    config_text = values.get("DEFAULT_SYSTEM_PROMPT_FORMAT")
    if not isinstance(config_text, str):
        raise DataError(f"{PROMPTS_FILE}: DEFAULT_SYSTEM_PROMPT_FORMAT not found")
    config = dict(part.partition("=")[::2] for part in config_text.split("&"))
    wanted = ("ret_fmt", "tool_call_tag", "func_doc_fmt", "prompt_fmt", "style")
    if any(key not in config for key in wanted) or config["tool_call_tag"] not in ("True", "False"):
        raise DataError(f"{PROMPTS_FILE}: DEFAULT_SYSTEM_PROMPT_FORMAT {config_text!r} is not understood")
    if config["func_doc_fmt"] != "json":  # our requests render the docs as JSON only
        raise DataError(f"{PROMPTS_FILE}: the default function-doc format is {config['func_doc_fmt']!r}, not json")
    output_format = _string_dict(values, "OUTPUT_FORMAT_MAPPING", PROMPTS_FILE).get(config["ret_fmt"])
    param_types = _string_dict(values, "PARAM_TYPE_MAPPING", PROMPTS_FILE).get(config["ret_fmt"])
    layout = _string_dict(values, "PROMPT_TEMPLATE_MAPPING", PROMPTS_FILE).get(config["prompt_fmt"])
    styles = values.get("PROMPT_STYLE_TEMPLATES")
    style = styles.get(config["style"]) if isinstance(styles, dict) else None
    tag_key = "tool_call_with_tag" if config["tool_call_tag"] == "True" else "tool_call_no_tag"
    keys = ("persona", "task", tag_key, "multiturn_behavior", "available_tools")
    if (output_format is None or param_types is None or layout is None or not isinstance(style, dict)
            or not all(isinstance(style.get(key), str) for key in keys)):
        raise DataError(f"{PROMPTS_FILE}: the texts of the default system prompt ({config_text}) are not all there")
    texts = {key: value for key, value in style.items() if isinstance(value, str)}  # those of `keys` among them
    try:
        tool_call = texts[tag_key].format(output_format=output_format, param_types=param_types)
        tools = texts["available_tools"].format(format=config["func_doc_fmt"], functions=_FUNCTIONS_MARK)
        composed = layout.format(persona=texts["persona"], task=texts["task"], tool_call_format=tool_call,
                                 multiturn_behavior=texts["multiturn_behavior"], available_tools=tools)
    except (KeyError, IndexError, ValueError) as exc:
        raise DataError(f"{PROMPTS_FILE}: the default system prompt's fields do not fit ({exc})") from None
    before, mark, after = composed.partition(_FUNCTIONS_MARK)
    if not mark or _FUNCTIONS_MARK in after:
        raise DataError(f"{PROMPTS_FILE}: the default system prompt does not hold the function docs once")
    return before, after, config["func_doc_fmt"]


# ------------------------------------------------------------------------------------------ held-out docs

_HELD_OUT_FC = "DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC"
_HELD_OUT_PROMPTING = "DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING"


def _held_out_messages(source: str) -> tuple[str, Note]:
    """The user messages of a multi-turn turn that reveals held-out docs (bfcl-multiturn §3.2, §3.4): FC mode's
    text, and prompt mode's format string split around its one `{functions}` field (its escapes undone, as
    `format` does)."""
    values = module_values(source, PROMPTS_FILE)
    fc, prompting = values.get(_HELD_OUT_FC), values.get(_HELD_OUT_PROMPTING)
    if not isinstance(fc, str) or not isinstance(prompting, str):
        raise DataError(f"{PROMPTS_FILE}: the held-out-function user messages are not there")
    pieces = [""]
    try:
        for literal, name, spec, conversion in string.Formatter().parse(prompting):
            pieces[-1] += literal
            if name is None:
                continue
            if name != "functions" or spec or conversion is not None:
                raise ValueError(f"field {name!r}")
            pieces.append("")
    except ValueError as exc:
        raise DataError(f"{PROMPTS_FILE}: {_HELD_OUT_PROMPTING} is not understood ({exc})") from None
    if len(pieces) != 2:
        raise DataError(f"{PROMPTS_FILE}: {_HELD_OUT_PROMPTING} does not hold {{functions}} exactly once")
    return fc, tuple(pieces)


# ------------------------------------------------------------------------------------------ language notes

_LANGUAGE_TESTS = {"is_java": "java", "is_js": "javascript"}  # bfcl's category predicates, by language
_NOTE_ROLES = {"java": ("any", "typed", "items"), "javascript": ("any", "typed", "items", "schema")}
_NOTE_VALUES = {"any": 0, "typed": 1, "items": 1, "schema": 1}  # how many values each note takes


def _language_notes(source: str) -> tuple[dict[str, str], dict[str, Note], dict[str, Note]]:
    """The description hint per language and the Java / JavaScript parameter notes (bfcl §2.1.2)."""
    functions = _functions(source, HINTS_FILE)
    hint_function = functions.get("_get_language_specific_hint")
    notes_function = functions.get("_func_doc_language_specific_pre_processing")
    if hint_function is None or notes_function is None:
        raise DataError(f"{HINTS_FILE}: the language-hint functions are not there")
    hints: dict[str, str] = {}
    for language, body in _branches(hint_function.body):
        returned = [node.value.value for node in body if isinstance(node, ast.Return)
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)]
        if len(returned) == 1:
            hints[language] = returned[0]
    notes: dict[str, dict[str, Note]] = {}
    chain_heads = [node for node in ast.walk(notes_function) if isinstance(node, ast.If)
                   and isinstance(node.test, ast.Call) and isinstance(node.test.func, ast.Name)
                   and node.test.func.id == "is_java"]
    for head in chain_heads[:1]:
        for language, body in _branches([head]):
            found = _added_texts(body)
            roles = _NOTE_ROLES.get(language, ())
            if len(found) == len(roles) and all(len(note) == _NOTE_VALUES[role] + 1
                                                for role, note in zip(roles, found, strict=True)):
                notes[language] = dict(zip(roles, found, strict=True))
    if set(hints) != {"python", "java", "javascript"} or set(notes) != {"java", "javascript"}:
        raise DataError(f"{HINTS_FILE}: the language hints are not where bfcl-eval 2026.3.23 holds them")
    return hints, notes["java"], notes["javascript"]


def _branches(body: list[ast.stmt]) -> list[tuple[str, list[ast.stmt]]]:
    """An `if is_java(...) / elif is_js(...) / else` chain's branches, by language ("python" for the else)."""
    chains = [node for node in body if isinstance(node, ast.If)]
    if not chains:
        return []
    out: list[tuple[str, list[ast.stmt]]] = []
    node: ast.If | None = chains[0]
    while node is not None:
        test = node.test
        name = test.func.id if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) else ""
        if name not in _LANGUAGE_TESTS:
            return []
        out.append((_LANGUAGE_TESTS[name], node.body))
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
        else:
            if node.orelse:
                out.append(("python", node.orelse))
            node = None
    return out


def _added_texts(body: list[ast.stmt]) -> list[Note]:
    """Every text added with `+=` under `body`, in source order, as pieces around its formatted values."""
    found: list[tuple[int, int, Note]] = []
    for statement in body:
        for node in ast.walk(statement):
            if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
                note = _pieces(node.value)
                if note is not None:
                    found.append((node.lineno, node.col_offset, note))
    return [note for _, _, note in sorted(found)]


def _pieces(node: ast.expr) -> Note | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if not isinstance(node, ast.JoinedStr):
        return None
    pieces = [""]
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            pieces[-1] += part.value
        elif isinstance(part, ast.FormattedValue) and part.conversion == -1 and part.format_spec is None:
            pieces.append("")
        else:
            return None
    return tuple(pieces)


def _float_note(source: str) -> str:
    """The text FC mode adds to a float parameter's description: the one `+=` text of the type caster."""
    caster = _functions(source, TOOLS_FILE).get("_cast_to_openai_type")
    notes = _added_texts(caster.body) if caster is not None else []
    if len(notes) != 1 or len(notes[0]) != 1:
        raise DataError(f"{TOOLS_FILE}: the float note of _cast_to_openai_type is not there")
    return notes[0][0]


# ------------------------------------------------------------------------------------------ reading the tree


def _parse(source: str, origin: str) -> ast.Module:
    try:
        return python_ast.parse(source, filename=origin)
    except (SyntaxError, ValueError) as exc:
        raise DataError(f"{origin}: not readable Python ({exc})") from None


def _functions(source: str, origin: str) -> dict[str, ast.FunctionDef]:
    return {node.name: node for node in _parse(source, origin).body if isinstance(node, ast.FunctionDef)}


def module_values(source: str, origin: str) -> dict[str, _Literal]:
    """Module-level assignments whose value is a string, or a dict of them (nested), in file order.

    A name in a dict stands for a string assigned earlier in the module; anything else is skipped."""
    values: dict[str, _Literal] = {}
    for node in _parse(source, origin).body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        literal = _literal(value, values)
        if literal is None:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                values[target.id] = literal
    return values


def _literal(node: ast.expr, known: Mapping[str, _Literal]) -> _Literal | None:
    """A string (a `+` of strings too) or a dict of string keys and such values, or None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left, known), _literal(node.right, known)
        return left + right if isinstance(left, str) and isinstance(right, str) else None
    if isinstance(node, ast.Name):
        found = known.get(node.id)
        if isinstance(found, str):
            return found
    if isinstance(node, ast.Dict):
        out: dict[str, _Literal] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return None
            literal = _literal(value, known)
            if literal is None:
                return None
            out[key.value] = literal
        return out
    return None


def _string_dict(values: Mapping[str, _Literal], name: str, origin: str) -> dict[str, str]:
    found = values.get(name)
    if not isinstance(found, dict) or not all(isinstance(value, str) for value in found.values()):
        raise DataError(f"{origin}: {name} (a dict of strings) not found")
    return {key: value for key, value in found.items() if isinstance(value, str)}  # all of them


def _items(value: JSONValue) -> ItemsView[str, JSONValue]:
    return as_getter(value).items()  # an AttributeError for anything but an object, as `.items()` raises


def content_text(value: object) -> str:
    """A cache file's text field, or a TypeError (from_content turns it into a DataError)."""
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _note(value: object) -> Note:
    if not isinstance(value, list) or not value or not all(isinstance(piece, str) for piece in value):
        raise TypeError("expected a list of strings")
    return tuple(piece for piece in value if isinstance(piece, str))  # all of them


def _frozen(mapping: dict[str, _V]) -> Mapping[str, _V]:
    return MappingProxyType(dict(mapping))
