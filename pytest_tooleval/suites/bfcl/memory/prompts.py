"""The texts bfcl puts around a memory question, lifted with `ast` from the pinned wheel's `default_prompts.py`
(docs/bfcl.md#memory), and the system prompt composed from them as bfcl composes it.

Nothing of bfcl-eval is imported or executed: the module-level string assignments are read from the parsed
source (templates.py's reader), and the lifted content is pinned by its canonical sha256 (pin.json).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ....data.download import canonical_sha256
from ....errors import DataError
from ....json_value import JSONObject, JSONValue
from ..templates import PROMPTS_FILE, content_text, module_values

SOURCE_FILES = (PROMPTS_FILE,)
_NAMES = {  # our field -> bfcl's name in default_prompts.py
    "answer_format": "ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT",
    "core_archival": "MEMORY_BACKEND_INSTRUCTION_CORE_ARCHIVAL",
    "unified": "MEMORY_BACKEND_INSTRUCTION_UNIFIED",
}
_SCENARIOS = "MEMORY_AGENT_SETTINGS"

Message = dict[str, JSONValue]


@dataclass(frozen=True)
class MemoryPrompts:
    """Attributes:
        answer_format: the system message bfcl puts first in every agentic question (not in a prerequisite
            conversation): how the final answer must look.
        core_archival: the memory system prompt of the kv and vector backends, with `{scenario_setting}` and
            `{memory_content}` to fill.
        unified: the same for rec_sum.
        scenarios: scenario name -> the assistant's setting the prompt begins with.
    """

    answer_format: str
    core_archival: str
    unified: str
    scenarios: Mapping[str, str]

    def content(self) -> JSONObject:
        return {"answer_format": self.answer_format, "core_archival": self.core_archival, "unified": self.unified,
                "scenarios": dict(self.scenarios)}

    def sha256(self) -> str:
        return canonical_sha256(self.content())

    def __hash__(self) -> int:  # the mapping is a read-only view, which does not hash: the content does
        return hash(self.sha256())

    @classmethod
    def from_content(cls, content: Mapping[str, JSONValue]) -> MemoryPrompts:
        """Back from `content()` (a cache file); DataError when a field is missing or of the wrong shape."""
        try:
            scenarios = content["scenarios"]
            if not isinstance(scenarios, dict):
                raise TypeError("scenarios is not an object")
            return cls(answer_format=content_text(content["answer_format"]),
                       core_archival=content_text(content["core_archival"]), unified=content_text(content["unified"]),
                       scenarios=MappingProxyType({key: content_text(value) for key, value in scenarios.items()}))
        except (KeyError, TypeError) as exc:
            raise DataError(f"bfcl memory prompts: malformed content ({type(exc).__name__}: {exc})") from None

    def system_prompt(self, backend: str, scenario: str, memory_content: str) -> str:
        """The memory system prompt: the scenario's setting and the backend's dump of its memory put into the
        backend's template (rec_sum's own, the core-and-archival one otherwise), as bfcl's `str.format` does.
        The memory's text is a value put in, never read as a template."""
        template = self.unified if backend == "rec_sum" else self.core_archival
        return template.format(scenario_setting=self.scenarios[scenario], memory_content=memory_content)


def with_system_prompt(first_turn: list[Message], prompt: str) -> list[Message]:
    """The first turn's messages with the memory system prompt first: before the content of a system message
    that is already first (joined by a blank line), else as a system message of its own, as bfcl puts it."""
    messages = [dict(message) for message in first_turn]
    if messages and messages[0].get("role") == "system":
        messages[0]["content"] = f"{prompt}\n\n{content_text(messages[0].get('content'))}"
        return messages
    return [{"role": "system", "content": prompt}, *messages]


def lift_memory_prompts(sources: Mapping[str, str]) -> MemoryPrompts:
    """The memory texts from the wheel's source files ({path in the wheel: text}).

    Raises:
        DataError: the file is missing, or does not hold the texts as the pinned version does.
    """
    if PROMPTS_FILE not in sources:
        raise DataError(f"bfcl wheel lacks {PROMPTS_FILE}")
    values = module_values(sources[PROMPTS_FILE], PROMPTS_FILE)
    texts = {}
    for field, name in _NAMES.items():
        found = values.get(name)
        if not isinstance(found, str):
            raise DataError(f"{PROMPTS_FILE}: {name} (a string) not found")
        texts[field] = found
    scenarios = values.get(_SCENARIOS)
    if not isinstance(scenarios, dict) or not all(isinstance(value, str) for value in scenarios.values()):
        raise DataError(f"{PROMPTS_FILE}: {_SCENARIOS} (a dict of strings) not found")
    return MemoryPrompts(texts["answer_format"], texts["core_archival"], texts["unified"],
                         MappingProxyType({key: value for key, value in scenarios.items() if isinstance(value, str)}))

