"""The texts bfcl builds a format-sensitivity system prompt from, lifted with `ast` from the pinned wheel's
`default_prompts.py`, and the prompt composed from them as bfcl's `formulate_system_prompt` composes it
(docs/bfcl.md#format-sensitivity).

Nothing of bfcl-eval is imported or executed: the module-level assignments are read from the parsed source
(templates.py's reader), and the lifted content is pinned by its canonical sha256 (pin.json).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ....data.download import canonical_sha256
from ....errors import DataError
from ....json_value import JSONObject, JSONValue
from ..templates import PROMPTS_FILE, content_text, module_values
from .configs import RETURN_FORMATS, Config
from .docs import function_docs

SOURCE_FILES = (PROMPTS_FILE,)
_NAMES = {  # our field -> bfcl's name in default_prompts.py
    "call_formats": "OUTPUT_FORMAT_MAPPING",
    "type_notes": "PARAM_TYPE_MAPPING",
    "styles": "PROMPT_STYLE_TEMPLATES",
    "layouts": "PROMPT_TEMPLATE_MAPPING",
}
STYLE_PARTS = ("persona", "task", "tool_call_no_tag", "tool_call_with_tag", "multiturn_behavior", "available_tools")
_LAYOUTS = ("plaintext", "markdown")
_STYLES = ("classic", "experimental")


@dataclass(frozen=True)
class FormatPrompts:
    """Attributes:
        call_formats: return format -> the example of a call list the prompt asks for.
        type_notes: return format -> the sentence on parameter types ("" for python and json).
        styles: style -> {part: text}, the parts of STYLE_PARTS; the tool-call and tool parts are templates.
        layouts: layout -> the template the parts are put into.
    """

    call_formats: Mapping[str, str]
    type_notes: Mapping[str, str]
    styles: Mapping[str, Mapping[str, str]]
    layouts: Mapping[str, str]

    def content(self) -> JSONObject:
        return {"call_formats": dict(self.call_formats), "type_notes": dict(self.type_notes),
                "styles": {name: dict(parts) for name, parts in self.styles.items()}, "layouts": dict(self.layouts)}

    def sha256(self) -> str:
        return canonical_sha256(self.content())

    def __hash__(self) -> int:  # the mappings are read-only views, which do not hash: the content does
        return hash(self.sha256())

    @classmethod
    def from_content(cls, content: Mapping[str, JSONValue]) -> FormatPrompts:
        """Back from `content()` (a cache file); DataError when a field is missing or of the wrong shape."""
        try:
            return _checked(_texts(content["call_formats"]), _texts(content["type_notes"]),
                            {name: _texts(parts) for name, parts in _pairs(content["styles"])},
                            _texts(content["layouts"]))
        except (KeyError, TypeError) as exc:
            raise DataError(f"bfcl format-sensitivity prompts: malformed content ({type(exc).__name__}: {exc})") \
                from None

    def system_prompt(self, config: Config, functions: list[JSONObject]) -> str:
        """bfcl's system prompt for `config` around `functions` (already hinted), as `str.format` fills it: the
        docs are a value put in, never read as a template."""
        style = self.styles[config.style]
        tool_call = style["tool_call_with_tag" if config.tool_call_tag else "tool_call_no_tag"]
        tools = style["available_tools"].format(format=config.doc_format,
                                                functions=function_docs(functions, config.doc_format))
        return self.layouts[config.layout].format(
            persona=style["persona"], task=style["task"],
            tool_call_format=tool_call.format(output_format=self.call_formats[config.return_format],
                                              param_types=self.type_notes[config.return_format]),
            multiturn_behavior=style["multiturn_behavior"], available_tools=tools)


def lift_format_prompts(sources: Mapping[str, str]) -> FormatPrompts:
    """The format-sensitivity texts from the wheel's source files ({path in the wheel: text}).

    Raises:
        DataError: the file is missing, or does not hold the texts as the pinned version does.
    """
    if PROMPTS_FILE not in sources:
        raise DataError(f"bfcl wheel lacks {PROMPTS_FILE}")
    values = module_values(sources[PROMPTS_FILE], PROMPTS_FILE)
    found: dict[str, object] = {}
    for field, name in _NAMES.items():
        value = values.get(name)
        if not isinstance(value, dict):
            raise DataError(f"{PROMPTS_FILE}: {name} (a dict) not found")
        found[field] = value
    try:
        return _checked(_texts(found["call_formats"]), _texts(found["type_notes"]),
                        {name: _texts(parts) for name, parts in _pairs(found["styles"])}, _texts(found["layouts"]))
    except TypeError as exc:
        raise DataError(f"{PROMPTS_FILE}: the format-sensitivity texts are not where the pinned wheel holds them "
                        f"({exc})") from None


def _checked(call_formats: dict[str, str], type_notes: dict[str, str], styles: dict[str, dict[str, str]],
             layouts: dict[str, str]) -> FormatPrompts:
    """The texts, once every configuration finds its own (a TypeError naming what is missing)."""
    for what, mapping, keys in (("call formats", call_formats, RETURN_FORMATS), ("type notes", type_notes,
                                RETURN_FORMATS), ("layouts", layouts, _LAYOUTS), ("styles", styles, _STYLES)):
        if not set(keys) <= set(mapping):
            raise TypeError(f"the {what} lack {sorted(set(keys) - set(mapping))}")
    for name, parts in styles.items():
        if not set(STYLE_PARTS) <= set(parts):
            raise TypeError(f"the style {name!r} lacks {sorted(set(STYLE_PARTS) - set(parts))}")
    return FormatPrompts(MappingProxyType(call_formats), MappingProxyType(type_notes),
                         MappingProxyType({name: MappingProxyType(parts) for name, parts in styles.items()}),
                         MappingProxyType(layouts))


def _pairs(value: object) -> list[tuple[str, object]]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, got {type(value).__name__}")
    return list(value.items())


def _texts(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object of texts, got {type(value).__name__}")
    return {str(key): content_text(text) for key, text in value.items()}
