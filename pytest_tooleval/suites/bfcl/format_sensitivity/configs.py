"""The 26 prompt configurations of bfcl's format-sensitivity category (docs/bfcl.md#format-sensitivity).

A configuration names how the answer must be written (return format, whether inside a tool-call tag), how the
function docs are shown, the system prompt's layout and its wording style. bfcl writes it as a query string, which
is also the middle part of an entry's id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

ReturnFormat = Literal["python", "json", "verbose_xml", "concise_xml"]
DocFormat = Literal["python", "xml", "json"]

RETURN_FORMATS: tuple[ReturnFormat, ...] = ("python", "json", "verbose_xml", "concise_xml")
DOC_FORMATS: tuple[DocFormat, ...] = ("python", "xml", "json")

# bfcl's own reading of a configuration: each field in this order, each value one of these
_PATTERN = re.compile(
    r"ret_fmt=(?P<ret>python|json|verbose_xml|concise_xml)&tool_call_tag=(?P<tag>True|False)"
    r"&func_doc_fmt=(?P<doc>python|xml|json)&prompt_fmt=(?P<layout>plaintext|markdown)"
    r"&style=(?P<style>classic|experimental)"
)


@dataclass(frozen=True)
class Config:
    """One prompt configuration.

    Attributes:
        return_format: how the calls must be written.
        tool_call_tag: whether they must sit inside a ``<TOOLCALL>`` tag.
        doc_format: how the function docs are shown.
        layout: the system prompt's layout ("plaintext" or "markdown").
        style: its wording ("classic" or "experimental").
    """

    return_format: ReturnFormat
    tool_call_tag: bool
    doc_format: DocFormat
    layout: str = "plaintext"
    style: str = "classic"

    @property
    def name(self) -> str:
        """bfcl's query string for it."""
        return (f"ret_fmt={self.return_format}&tool_call_tag={self.tool_call_tag}&func_doc_fmt={self.doc_format}"
                f"&prompt_fmt={self.layout}&style={self.style}")


def parse_config(name: str) -> Config:
    """The configuration of a query string; a ValueError for one bfcl does not read."""
    match = _PATTERN.fullmatch(name)
    if match is None:
        raise ValueError(f"not a format-sensitivity configuration: {name!r}")
    ret, doc = match["ret"], match["doc"]
    return_format = next(value for value in RETURN_FORMATS if value == ret)
    doc_format = next(value for value in DOC_FORMATS if value == doc)
    return Config(return_format, match["tag"] == "True", doc_format, match["layout"], match["style"])


def _all_configs() -> tuple[Config, ...]:
    # bfcl's order: 4 return formats x tag (with, then without) x 3 doc formats, then a markdown layout and an
    # experimental style, both of the default configuration otherwise
    base = [Config(ret, tag, doc) for ret in RETURN_FORMATS for tag in (True, False) for doc in DOC_FORMATS]
    return (*base, Config("python", False, "json", layout="markdown"), Config("python", False, "json",
                                                                               style="experimental"))


CONFIGS: tuple[Config, ...] = _all_configs()
#: the configuration bfcl's other prompting categories use
DEFAULT = Config("python", False, "json")
