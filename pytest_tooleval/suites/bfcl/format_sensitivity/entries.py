"""The 5,200 entries of the format-sensitivity category, each a single-turn sample asked in one configuration
(docs/bfcl.md#format-sensitivity).

bfcl's id file lists the 200 questions by category. bfcl takes the categories in the file's order and, in each,
the listed questions in the category's own file order (not the list's); every question then gives 26 entries,
one per configuration in CONFIGS order, numbered from 0 across the whole category.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ....data.files import parse_json, read_text
from ....errors import DataError
from ..data import CATEGORIES, Sample, load_samples
from .configs import CONFIGS, Config, parse_config

ID_FILE = "BFCL_v4_format_sensitivity.json"
CATEGORY = "format_sensitivity"
SIZE = 5_200


@dataclass(frozen=True)
class Entry:
    """One format-sensitivity entry.

    Attributes:
        index: its number in the category (0 to 5,199).
        config: the configuration it is asked in.
        sample: the single-turn question with its function docs and possible answers.
    """

    index: int
    config: Config
    sample: Sample

    @property
    def category(self) -> str:
        return CATEGORY

    @property
    def id(self) -> str:
        """bfcl's id: ``format_sensitivity_<index>:<configuration>:<question id>``."""
        return f"{CATEGORY}_{self.index}:{self.config.name}:{self.sample.id}"


def parse_entry_id(entry_id: str) -> tuple[int, Config, str]:
    """(index, configuration, question id) of an entry id; a ValueError for anything else."""
    parts = entry_id.split(":")
    head = f"{CATEGORY}_"
    if len(parts) != 3 or not parts[0].startswith(head) or not parts[0][len(head):].isdigit():
        raise ValueError(f"not a format-sensitivity id: {entry_id!r}")
    return int(parts[0][len(head):]), parse_config(parts[1]), parts[2]


def question_ids(root: Path) -> dict[str, list[str]]:
    """The id file: {category: the listed question ids}, in the file's order; categories with no id left out."""
    path = root / ID_FILE
    listed = parse_json(read_text(path), path)
    if not isinstance(listed, dict):
        raise DataError(f"{path}: not an object of categories")
    chosen: dict[str, list[str]] = {}
    for category, ids in listed.items():
        if not isinstance(ids, list) or not all(isinstance(value, str) for value in ids):
            raise DataError(f"{path}: {category}: not a list of question ids")
        if category not in CATEGORIES:
            raise DataError(f"{path}: {category} is not a single-turn category")
        if ids:
            chosen[category] = [value for value in ids if isinstance(value, str)]  # all of them
    return chosen


def load_entries(root: Path) -> list[Entry]:
    """The entries in bfcl's order; a listed question missing from its category's file is a DataError."""
    entries: list[Entry] = []
    for category, ids in question_ids(root).items():
        wanted = set(ids)
        samples = [sample for sample in load_samples(root, [category]) if sample.id in wanted]
        missing = wanted - {sample.id for sample in samples}
        if missing:
            raise DataError(f"{root / ID_FILE}: {category}: no question {sorted(missing)[0]!r} in its file")
        for sample in samples:
            first = len(entries)
            entries += [Entry(first + offset, config, sample) for offset, config in enumerate(CONFIGS)]
    return entries
