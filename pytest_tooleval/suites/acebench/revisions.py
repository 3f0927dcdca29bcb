"""The ACEBench revisions a run can score against: what each pins, and which evaluator behaviour it selects.

Upstream keeps fixing its ground truth and its evaluator under published numbers (docs/upstream/acebench-revisions.md),
so a score names the revision it was made against. Each revision pins its archive, the sha256 of every data file and
the prompt constants (pins/<name>.json), and says how its official evaluator decodes a single-turn normal answer.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal, TypedDict

from ...data.download import Pin
from ...errors import ToolevalUsageError

#: How the official evaluator reads a single-turn normal answer before decoding it (acebench-revisions §2):
#: "delete_whitespace" deletes every whitespace character first, inside strings too (e6db74b, and every revision's
#: multi-turn categories); "outermost_brackets" decodes the first outermost [...] of the answer as written (56dd66c).
Decoding = Literal["delete_whitespace", "outermost_brackets"]

PINS = Path(__file__).with_name("pins")


@dataclass(frozen=True)
class Revision:
    """One upstream revision of ACEBench.

    Attributes:
        name: the short commit the option takes (``56dd66c``).
        upstream: the GitHub repository it comes from.
        date: the commit's date, for reports.
        folder: its folder's name under a data root holding several revisions (``../shared/data`` has
            ``acebench/`` and ``acebench-56dd66c/``).
        single_turn_decoding: how its evaluator reads a single-turn normal answer (see `Decoding`).
    """

    name: str
    upstream: str
    date: str
    folder: str
    single_turn_decoding: Decoding

    def decoding(self, category: str) -> Decoding:
        """How this revision's official evaluator reads an answer of `category` (normal categories only): every
        revision still deletes whitespace in the multi-turn ones (acebench-revisions §2)."""
        return "delete_whitespace" if "multi_turn" in category else self.single_turn_decoding

    @property
    def label(self) -> str:
        return f"{self.name} ({self.upstream}, {self.date})"

    def pin(self) -> Pin:
        """The pinned download; TOOLEVAL_ACEBENCH_URL replaces its URL (a mirror, or a test's local server). The cache
        keeps each revision under a folder of its own name, so a mirror URL given for both never mixes them."""
        pinned = _pin_document(self.name)
        url = os.environ.get("TOOLEVAL_ACEBENCH_URL", pinned["url"])
        return Pin(self.folder, url, pinned["files"], pinned["prompt_constants"], pinned["prompts_sha256"])

    @property
    def files(self) -> dict[str, str]:
        """{relative path: sha256} of every pinned data file."""
        files: dict[str, str] = _pin_document(self.name)["files"]
        return files

    @property
    def prompts_sha256(self) -> str:
        digest: str = _pin_document(self.name)["prompts_sha256"]
        return digest

    @property
    def commit(self) -> str:
        commit: str = _pin_document(self.name)["commit"]
        return commit


#: Oldest first. 56dd66c is what upstream's own repository runs today, so it is the default.
REVISIONS = (
    Revision("e6db74b", "ACEBench/ACEBench", "2025-08-24", "acebench", "delete_whitespace"),
    Revision("56dd66c", "chenchen0103/ACEBench", "2025-10-29", "acebench-56dd66c", "outermost_brackets"),
)
BY_NAME = {revision.name: revision for revision in REVISIONS}
DEFAULT = "56dd66c"


def revision(name: str) -> Revision:
    """The revision named `name` (a short or full commit)."""
    for known in REVISIONS:
        if name and (name == known.name or known.commit.startswith(name)) and len(name) >= 7:
            return known
    raise ToolevalUsageError(f"--tooleval-acebench-revision: {name!r} is not a pinned ACEBench revision; pinned: "
                             + ", ".join(known.label for known in REVISIONS))


def parse_revision(option: str, text: str) -> str:
    """The option's parser: a pinned revision's short name."""
    return revision(text.strip()).name


class _PinDocument(TypedDict):
    """A pins/<name>.json file, shipped with the package."""

    upstream: str
    commit: str
    url: str
    files: dict[str, str]
    prompt_constants: dict[str, list[str]]
    prompts_sha256: str


@cache
def _pin_document(name: str) -> _PinDocument:
    document: _PinDocument = json.loads((PINS / f"{name}.json").read_text(encoding="utf-8"))
    return document
