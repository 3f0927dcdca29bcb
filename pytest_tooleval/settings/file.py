"""`tooleval.yaml`: the options as a file beside the project's ini file (pyproject.toml, pytest.ini, ...).

Keys are option names (`fail-under` or `fail_under`), values YAML values: lists and mappings are written as
YAML (`categories: [normal_atom_bool, special_irrelevant]`, `fail-under: {overall: 0.85}`, `prices: {gpt-4o:
[2.5, 10]}`). The file is checked against a JSON Schema made from the option table, so an unknown key or a
value of the wrong kind is one line naming the key and the file. It ranks between the environment and the ini
file: CLI > TOOLEVAL_* > tooleval.yaml > ini > default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..data.files import read_yaml
from ..errors import ToolevalUsageError
from ..json_value import JSONObject
from ..text import did_you_mean

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError


class OptionFields(Protocol):
    """What the file reads of an option (options.Option, which imports this module: no import back)."""

    @property
    def name(self) -> str: ...
    @property
    def help(self) -> str: ...
    @property
    def flag(self) -> bool: ...
    @property
    def default(self) -> object: ...

FILE_NAME = "tooleval.yaml"
FILE_NAMES = (FILE_NAME, "tooleval.yml")  # YAML's two spellings: a tooleval.yml is meant alike
# the schema of the file for the suites this package ships, for an editor's `# yaml-language-server: $schema=`;
# `python -m pytest_tooleval schema` prints the one of the suites installed (a test keeps the two equal)
PUBLISHED_SCHEMA = Path(__file__).parents[1] / "tooleval.schema.json"  # beside the package face, for editors


def schema(options: Sequence[OptionFields]) -> JSONObject:
    """The JSON Schema of the file: one property per option (both spellings), nothing else."""
    properties: JSONObject = {}
    for option in sorted(options, key=lambda option: option.name):
        kind: JSONObject
        if option.flag:
            kind = {"type": "boolean"}
        elif isinstance(option.default, dict):
            kind = {"type": ["object", "string"]}
        elif isinstance(option.default, tuple):
            kind = {"type": ["array", "string"], "items": {"type": "string"}}
        else:
            kind = {"type": ["string", "number", "boolean", "null"]}
        kind["description"] = f"--tooleval-{option.name}: {option.help}"
        properties[option.name] = properties[option.name.replace("-", "_")] = kind
    return {"$schema": "http://json-schema.org/draft-07/schema#", "title": "tooleval.yaml",
            "description": "pytest-tooleval's options as a file: keys are the option names without --tooleval-",
            "type": "object", "properties": properties, "additionalProperties": False}


def read_config_file(folder: Path, options: Sequence[OptionFields]) -> tuple[dict[str, str], Path | None]:
    """The options `folder/tooleval.yaml` (or `tooleval.yml`) sets, as the text their parsers take, and the file
    (None: no file). Both at once is refused: which one was meant?"""
    found = [folder / name for name in FILE_NAMES if (folder / name).exists()]
    if not found:
        return {}, None
    if len(found) > 1:
        raise ToolevalUsageError(f"{found[0]} and {found[1]} are both there: keep one (the options file is read from "
                                 "one place)")
    path = found[0]
    import jsonschema  # only a run with the file pays for it

    document = read_yaml(path, str(path))
    if document is None:
        return {}, path
    error = jsonschema.exceptions.best_match(jsonschema.Draft7Validator(schema(options)).iter_errors(document))
    if error is not None:
        raise ToolevalUsageError(f"{path}: {_describe(error, options)}")
    assert isinstance(document, dict)  # the schema's "type": "object"
    settings: dict[str, str] = {}
    for key, value in document.items():
        name = str(key).replace("_", "-")
        if name in settings:  # both spellings of one option: which one was meant?
            raise ToolevalUsageError(f"{path}: {name} is given twice (as {name!r} and "
                                     f"{name.replace('-', '_')!r}): keep one")
        settings[name] = _as_text(value, str(key), path)
    return settings, path


def _describe(error: ValidationError, options: Sequence[OptionFields]) -> str:
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = {option.name for option in options} | {option.name.replace("-", "_") for option in options}
        unknown = sorted(str(key) for key in error.instance if key not in known)
        if not unknown:
            return str(error.message)
        hint = did_you_mean(unknown[0], sorted(known))
        return (f"unknown key {unknown[0]!r}{f' ({hint})' if hint else ''}: the keys are the options without "
                "--tooleval- (e.g. model, fail-under, categories)")
    where = ".".join(str(part) for part in error.absolute_path)
    return f"{where}: {error.message}" if where else str(error.message)


def _as_text(value: object, where: str, path: Path) -> str:
    """A YAML value as the command line would spell it: a list as `a,b`, a mapping as `k=v,k2=v2` (a list in it as
    `v/w`, as prices are written). The option's parser splits that text again, so a key or value holding one of the
    separators would change what it reads (`overall=0.1,special: 0.5` would set two thresholds): it is refused,
    one line naming the key."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        entries = []
        for key, item in value.items():
            if any(separator in str(key) for separator in "=,"):
                raise ToolevalUsageError(f"{path}: {where}: the key {str(key)!r} holds '=' or ',', which the option's "
                                         "text form puts between its entries (KEY=VALUE,KEY=VALUE): rename it")
            entries.append(f"{key}={_entry_text(item, f'{where}.{key}', path)}")
        return ",".join(entries)
    if isinstance(value, list):
        items = []
        for index, item in enumerate(value):
            text = _as_text(item, f"{where}[{index}]", path)
            if "," in text and not isinstance(item, (list, Mapping)):
                raise ToolevalUsageError(f"{path}: {where}[{index}]: {text!r} holds ',', which the option's text form "
                                         "puts between its items: write each item apart")
            items.append(text)
        return ",".join(items)
    return "none" if value is None else str(value)


def _entry_text(value: object, where: str, path: Path) -> str:
    """A mapping's value as its entry spells it: a scalar, or a list of scalars joined by '/'."""
    parts = value if isinstance(value, list) else [value]
    separators = "=,/" if isinstance(value, list) else "=,"
    texts = []
    for part in parts:
        if isinstance(part, (list, Mapping)):
            raise ToolevalUsageError(f"{path}: {where}: a list or mapping has no place in this option's entries "
                                     "(KEY=VALUE or KEY=A/B)")
        text = _as_text(part, where, path)
        if any(separator in text for separator in separators):
            raise ToolevalUsageError(f"{path}: {where}: {text!r} holds {' or '.join(repr(s) for s in separators)}, "
                                     "which the option's text form puts between its entries")
        texts.append(text)
    return "/".join(texts)
