"""ACEBench data: find the upstream tree, read both JSON Lines files of a category, pair them by line.

Layout (acebench-scoring §1.1): data_all/data_<lang>/data_<category>.json (prompt side) and
.../possible_answer/data_<category>.json (answer side), aligned by line index.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ...data.download import Pin, cached_or_downloaded, canonical_sha256
from ...data.files import read_bytes, read_json, read_jsonl
from ...data.hashes import sha256_of
from ...errors import DataError, ToolevalUsageError
from ...json_value import JSONObject
from ...text import did_you_mean
from ..base import CaseBase
from .categories import COLLECTION_ORDER
from .revisions import DEFAULT, REVISIONS, Revision, revision

LANGUAGES = ("en", "zh")
# the mark of an fc case whose functions a grammar-based server may fail to compile (docs/models.md)
GRAMMAR_UNSAFE = "grammar_unsafe"
_BOUNDS = frozenset({"maxLength", "minLength", "maxItems", "minItems"})


def grammar_unsafe(functions: object) -> bool:
    """Whether a record's functions have a parameter schema (what fc.py sends: `parameters`, or the atom
    categories' `arguments`) that llama-cpp-python 0.3.36 turns into a grammar llama.cpp cannot parse, which
    takes its server down: a regex `pattern` with a backslash (`\\d`, `\\w`, `\\.`, ...: its converter copies them
    into the grammar, whose parser knows few escapes), or a length or item bound over 1,000 (the repetition it
    spells out is refused). A superset by a few samples: `\\-` and `\\{` parse."""
    return isinstance(functions, list) and any(
        isinstance(function, dict) and _unsafe_schema(function.get("parameters", function.get("arguments")))
        for function in functions)


def _unsafe_schema(node: object) -> bool:
    if isinstance(node, dict):
        return any((key == "pattern" and isinstance(value, str) and "\\" in value)
                   or (key in _BOUNDS and isinstance(value, int) and value > 1000) or _unsafe_schema(value)
                   for key, value in node.items())
    return isinstance(node, list) and any(_unsafe_schema(item) for item in node)


def family_of(category: str) -> str:
    return category.split("_", 1)[0]


class PromptRecord(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    question: object
    function: object


class AnswerRecord(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    ground_truth: object


@dataclass(frozen=True, eq=False)
class AceCase(CaseBase):
    """One ACEBench sample: the prompt record and its answer record, as upstream pairs them."""

    language: str
    category: str
    index: int  # line index in the category file; upstream pairs and orders by it
    # the tests index deep into the record's function lists (tests/unit/acebench/test_acebench_fc.py)
    record: dict[str, Any] = field(repr=False)
    answer: JSONObject = field(repr=False)
    mode: str = "prompt"  # "prompt": the text protocol; "fc": native function calling (--tooleval-mode)
    revision: str = ""  # the ACEBench revision it is scored against (revisions.py); its report row names it
    data_unverified: bool = False  # --tooleval-data-unverified: the data was not checked against the pin

    suite = "acebench"

    @property
    def id(self) -> str:
        sample_id: str = self.record["id"]  # a string: PromptRecord validated it
        return sample_id

    @property
    def family(self) -> str:
        return family_of(self.category)

    @property
    def marks(self) -> tuple[str, ...]:
        marks = (self.suite, self.family, self.language)
        # fc only: the text protocol sends no schema to compile
        return (*marks, GRAMMAR_UNSAFE) if self.mode == "fc" and grammar_unsafe(self.record.get("function")) else marks

    @property
    def cluster(self) -> str:
        """What must stay together when samples are split across shards: a multi-turn step's dialogue."""
        if "normal_multi_turn" in self.category:
            return self.id.rsplit("_", 1)[0]  # normal_multi_turn_user_adjust_3_1 -> ..._3
        return self.id

    @property
    def variant(self) -> str:
        """"fc" for a function-calling case; "" for the benchmark's own text protocol (report rows say so)."""
        return "" if self.mode == "prompt" else self.mode

    @property
    def test_id(self) -> str:
        suffix = "" if self.mode == "prompt" else f"-{self.mode}"
        return f"{self.language}-{self.id}{suffix}"

    @property
    def ground_truth(self) -> Any:  # the tests pass it on as the shape its category has (scoring.GroundTruth)
        return self.answer["ground_truth"]

    @property
    def expected_text(self) -> str:
        """The ground truth in the official output format, for failure messages."""
        if self.family == "agent":
            return ""
        from .scoring import render_ground_truth

        return render_ground_truth(self.ground_truth, self.category)


@dataclass(frozen=True)
class DataFolder:
    """The ACEBench data a run reads: its folder, the revision it was checked against, and whether it was."""

    root: Path
    revision: Revision
    verified: bool  # False: --tooleval-data-unverified, the files were not checked


def locate(data_dir: str | None, cache_dir: Path, offline: bool, revision_name: str = DEFAULT, *,
           unverified: bool = False) -> DataFolder:
    """The data of ACEBench at `revision_name`: in the given folder, or in the download cache (downloaded first
    unless offline), checked against that revision's pin (docs/upstream/acebench-revisions.md#data-folders).

    A given folder is either one revision's folder (it holds data_all/) or a root holding revision folders, as
    ../shared/data holds acebench/ (e6db74b) and acebench-56dd66c/: the revision's own folder name is tried first,
    then any other, by content.

    Raises:
        DataError: no ACEBench data there; files of another revision (naming it and the option that selects it);
            files of no pinned revision (naming the first that differ); a download that cannot be made.
        ToolevalUsageError: offline, and not in the cache.
    """
    wanted = revision(revision_name)
    if data_dir:
        return _given(Path(data_dir).expanduser(), wanted, cache_dir, unverified)
    cached = cached_or_downloaded(wanted.pin(), cache_dir, offline, f"ACEBench {wanted.name}")
    if unverified:
        return DataFolder(cached, wanted, False)
    problem = _check_folder(cached, wanted, cache_dir)
    if problem:
        raise DataError(f"{problem}; delete {cached} to download it again")
    return DataFolder(cached, wanted, True)


def _given(given: Path, wanted: Revision, cache_dir: Path, unverified: bool) -> DataFolder:
    if (given / "data_all").is_dir():
        candidates = [given]
    else:
        names = [wanted.folder, *(known.folder for known in REVISIONS if known is not wanted)]
        others = sorted(path.name for path in given.glob("acebench*") if path.name not in names)
        candidates = [given / name for name in (*names, *others) if (given / name / "data_all").is_dir()]
    if not candidates:
        raise DataError(f"{given}: no ACEBench data there (expected data_all/data_en/... under it or under "
                        f"{given}/{wanted.folder})")
    if unverified:
        return DataFolder(candidates[0], wanted, False)
    first_problem = ""  # what the revision's own folder (or the one given) holds: the line to show
    for candidate in candidates:  # in order, each read only when the ones before it did not match
        problem = _check_folder(candidate, wanted, cache_dir)
        if problem is None:
            return DataFolder(candidate, wanted, True)
        first_problem = first_problem or problem
    raise DataError(first_problem)


@cache
def _check_folder(folder: Path, wanted: Revision, record_folder: Path | None) -> str | None:
    """None when `folder` holds `wanted`'s pinned files, else one line saying what it holds and what to do.

    Once per process and folder; each file's sha256 is computed once and remembered by its size and mtime
    (data/hashes.py), so after a first run this is a stat of each file."""
    paths = sorted({path for known in REVISIONS for path in known.files})
    hashed = sha256_of([folder / path for path in paths], record_folder)
    digests = {path: hashed[folder / path] for path in paths}
    prompts = _prompts_sha256(folder / "prompts.json")

    def differences(known: Revision) -> list[str]:
        missing = [f"{path} (missing)" for path in known.files if digests[path] is None]
        changed = [f"{path} (sha256 {str(digests[path])[:12]}, pinned {pinned[:12]})"
                   for path, pinned in known.files.items() if digests[path] not in (None, pinned)]
        if prompts != known.prompts_sha256:
            changed.append("prompts.json (missing)" if prompts is None else "prompts.json (other prompt texts)")
        return missing + changed

    if not differences(wanted):
        return None
    held = next((known for known in REVISIONS if known is not wanted and not differences(known)), None)
    default = " (the default)" if wanted.name == DEFAULT else ""
    if held is not None:
        return (f"{folder} holds ACEBench {held.name}, not {wanted.name}{default}: pass "
                f"--tooleval-acebench-revision {held.name} to score against it, or point --tooleval-data-dir at "
                f"ACEBench {wanted.name}'s data")
    differ = differences(wanted)
    files = "1 file differs" if len(differ) == 1 else f"{len(differ)} files differ"
    return (f"{folder} matches no pinned ACEBench revision: {files} from {wanted.name}'s pin, "
            f"first {', '.join(differ[:3])}; pass --tooleval-data-unverified to run on it anyway")


def _prompts_sha256(path: Path) -> str | None:
    try:
        return canonical_sha256(json.loads(read_bytes(path).decode("utf-8")))
    except (OSError, ValueError, RecursionError):
        return None


def load_pin(revision_name: str = DEFAULT) -> Pin:
    return revision(revision_name).pin()


@cache
def load_category(root: Path, language: str, category: str) -> tuple[AceCase, ...]:
    """Both files of one category, validated and paired by line (parsed once per process)."""
    folder = root / "data_all" / f"data_{language}"
    prompt_path = folder / f"data_{category}.json"
    answer_path = folder / "possible_answer" / f"data_{category}.json"
    prompts, answers = read_jsonl(prompt_path), read_jsonl(answer_path)
    if not prompts:  # every upstream category has samples: an empty file is a broken copy, not an empty category
        raise DataError(f"{prompt_path}: no records")
    if len(prompts) != len(answers):
        raise DataError(f"{answer_path}: {len(answers)} records, but {prompt_path} has {len(prompts)}")
    cases = []
    for index, (prompt, answer) in enumerate(zip(prompts, answers, strict=True)):  # lengths checked above
        _validate(PromptRecord, prompt, prompt_path, index)
        _validate(AnswerRecord, answer, answer_path, index)
        if prompt["id"] != answer["id"]:
            raise DataError(f"{answer_path}:{index + 1}: id {answer['id']!r} does not match {prompt['id']!r}")
        problem = _ground_truth_problem(category, answer["ground_truth"])
        if problem:
            raise DataError(f"{answer_path}:{index + 1}: ground_truth: {problem}")
        cases.append(AceCase(language, category, index, prompt, answer))
    return tuple(cases)


def _ground_truth_problem(category: str, truth: object) -> str | None:
    """What is wrong with a ground truth the scorers cannot read (the shapes upstream's files hold), or None."""
    if category == "special_irrelevant":
        expected, valid = "a sentence", isinstance(truth, str)
    elif category in ("special_incomplete", "special_error_param"):
        expected = "{api or parameter: [names or values]}"
        valid = isinstance(truth, dict) and all(isinstance(v, list) for v in truth.values())
    elif family_of(category) == "normal":
        expected = "{api: {parameter: value}} (or a list of them)"
        alternatives = truth if isinstance(truth, list) else [truth]
        valid = bool(alternatives) and all(
            isinstance(calls, dict) and all(isinstance(args, dict) for args in calls.values()) for calls in alternatives
        )
    else:
        return None  # agent milestones and end states are checked where they are graded
    if valid:
        return None
    got = "an empty list" if truth == [] else type(truth).__name__
    return f"expected {expected}, got {got}"


def _validate(model: type[BaseModel], row: object, path: Path, index: int) -> None:
    try:
        model.model_validate(row)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "record"
        raise DataError(f"{path}:{index + 1}: {where}: {first['msg']}") from None


@cache
def load_prompts(root: Path) -> dict[str, dict[str, str]]:
    prompts: dict[str, dict[str, str]] = read_json(root / "prompts.json")
    return prompts


MODES = {"prompt": ("prompt",), "fc": ("fc",), "both": ("prompt", "fc")}


def select(root: Path, languages: tuple[str, ...], categories: tuple[str, ...], mode: str = "prompt",
           revision_name: str = "", *, unverified: bool = False) -> list[AceCase]:
    unknown = [name for name in categories if name not in COLLECTION_ORDER]
    if unknown:
        hint = did_you_mean(unknown[0], COLLECTION_ORDER)
        raise ToolevalUsageError(f"--tooleval-categories: unknown category {unknown[0]!r}"
                                 f"{f' ({hint})' if hint else ''}; known: {', '.join(COLLECTION_ORDER)}")
    # Collection order (categories.py), not upstream's: the order test ids have always had.
    chosen = categories or COLLECTION_ORDER
    cases = [case for language in languages for category in chosen for case in load_category(root, language, category)]
    # --tooleval-mode both: every sample twice, the function-calling copy after the text-protocol ones
    return [replace(case, mode=variant, revision=revision_name, data_unverified=unverified)
            for variant in MODES[mode] for case in cases]
