"""One Settings object, resolved once per process: CLI > TOOLEVAL_* env > ini/pyproject > default.

Every option is declared once: the core ones in CORE_OPTIONS, each suite's in its SuitePlugin.options_model. The
same table drives `addoption`, `addini`, the env twin, validation and the header line that says where each
value came from.
"""

from __future__ import annotations

import itertools
import math
import os
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

import pytest
from pydantic import BaseModel, ConfigDict, create_model

from ..errors import ToolevalUsageError
from ..text import did_you_mean, tidy_path
from .credentials import safe_url

DEFAULT_CACHE_DIR = Path("~/.cache/pytest-tooleval")


def parse_float(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ToolevalUsageError(f"--tooleval-{name}: {text!r} is not a number, e.g. 0.5") from None
    if not math.isfinite(value):  # nan and inf cannot even be sent: JSON has no spelling for them
        raise ToolevalUsageError(f"--tooleval-{name}: {text!r} is not a finite number")
    return value


def parse_positive(name: str, text: str) -> float:
    value = parse_float(name, text)
    if value <= 0:
        raise ToolevalUsageError(f"--tooleval-{name}: {text!r} must be more than 0")
    return value


def parse_non_negative(name: str, text: str) -> float:
    value = parse_float(name, text)
    if value < 0:
        raise ToolevalUsageError(f"--tooleval-{name}: {text!r} must be 0 or more")
    return value


def parse_fraction(name: str, text: str) -> float:
    value = parse_float(name, text)
    if not 0.0 <= value <= 1.0:
        raise ToolevalUsageError(f"--tooleval-{name}: {text!r} must lie between 0 and 1, e.g. 0.02")
    return value


def parse_shard(name: str, text: str) -> str:
    """`2/3`, checked: the second of three shards (1-based), as `shard_parts` reads it."""
    index, sep, count = str(text).partition("/")
    try:
        shard = (int(index), int(count))
    except ValueError:
        shard = (0, 0)
    if not sep or not 1 <= shard[0] <= shard[1]:
        raise ToolevalUsageError(f"--tooleval-{name}: {text!r} is not a shard; expected I/N with 1 <= I <= N, e.g. 2/3")
    return f"{shard[0]}/{shard[1]}"


def shard_parts(shard: str) -> tuple[int, int]:
    index, _, count = shard.partition("/")
    return int(index), int(count)


def parse_int(name: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ToolevalUsageError(f"--tooleval-{name}: {text!r} is not a whole number, e.g. 8") from None
    if value < 0:
        raise ToolevalUsageError(f"--tooleval-{name}: {text!r} must not be negative")
    return value


def parse_token_limit(name: str, text: str) -> int | None:
    """A token limit, or `none` to send no limit at all (a reasoning model's own budget)."""
    if text.strip().lower() == "none":
        return None
    value = parse_int(name, text)
    if value < 1:
        raise ToolevalUsageError(f"--tooleval-{name}: {text!r} must be at least 1 (or none, for no limit)")
    return value


ReasoningEffort = Literal["minimal", "low", "medium", "high"]  # what --tooleval-*reasoning-effort may say


def reasoning_effort_help(role: str) -> str:
    """The help of `--tooleval-<role>-reasoning-effort`: a helper model's reasoning_effort (unset: not sent)."""
    return f"reasoning_effort sent to the {role} model (unset: not sent)"


def parse_bool(name: str, text: str) -> bool:
    lowered = str(text).strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off", ""):
        return False
    raise ToolevalUsageError(f"--tooleval-{name}: {text!r} is not a boolean (true/false)")


def parse_list(name: str, text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in str(text).split(",") if part.strip())


def parse_prices(name: str, text: str) -> dict[str, tuple[float, float]]:
    """`gpt-4o=2.5/10,gpt-4o-mini=0.15/0.6` -> {model: (input, output)}, USD per million tokens."""
    prices: dict[str, tuple[float, float]] = {}
    for part in parse_list(name, text):
        model, sep, value = part.rpartition("=")
        given, _, taken = value.partition("/")
        try:
            price = (float(given), float(taken))
        except ValueError:
            price = (-1.0, -1.0)
        if not sep or not model.strip() or min(price) < 0:
            raise ToolevalUsageError(f"--tooleval-{name}: {part!r} is not a price; expected MODEL=INPUT/OUTPUT in "
                                     "USD per million tokens, e.g. gpt-4o=2.5/10")
        prices[model.strip()] = price
    return prices


def parse_thresholds(name: str, text: str) -> dict[str, float]:
    """`overall=0.85,special=0.8` -> {"overall": 0.85, "special": 0.8}; fractions in [0, 1]."""
    thresholds: dict[str, float] = {}
    for part in parse_list(name, text):
        key, sep, value = part.partition("=")
        example = "expected GROUP=FRACTION, e.g. overall=0.80"
        if not sep or not key.strip():
            raise ToolevalUsageError(f"--tooleval-{name}: {part!r} is not a valid threshold; {example}")
        try:
            fraction = float(value)
        except ValueError:
            raise ToolevalUsageError(f"--tooleval-{name}: {part!r} is not a valid threshold; {example}") from None
        if not 0.0 <= fraction <= 1.0:
            raise ToolevalUsageError(f"--tooleval-{name}: {part!r}: the fraction must lie between 0 and 1")
        thresholds[key.strip().lower()] = fraction
    return thresholds


def choice(*allowed: str) -> Callable[[str, str], str]:
    def parse(name: str, text: str) -> str:
        if text not in allowed:
            hint = did_you_mean(text, allowed)
            raise ToolevalUsageError(
                f"--tooleval-{name}: {text!r} is not valid; choose one of {', '.join(allowed)}"
                + (f" ({hint})" if hint else "")
            )
        return text

    parse.allowed = allowed  # type: ignore[attr-defined]  # read by _value_type: the field is a Literal of these
    return parse


REASONING_EFFORT = choice("minimal", "low", "medium", "high")


@dataclass(frozen=True)
class Option:
    name: str  # CLI suffix: --tooleval-<name>; ini key tooleval_<name>; env TOOLEVAL_<NAME>
    help: str
    default: object = None
    parse: Callable[[str, str], object] | None = None
    flag: bool = False  # a store_true switch
    secret: bool = False  # never printed
    path: bool = False  # a file or folder: resolved once, against where it was given (see resolve)

    @property
    def dest(self) -> str:
        return "tooleval_" + self.name.replace("-", "_")

    @property
    def env(self) -> str:
        return "TOOLEVAL_" + self.name.replace("-", "_").upper()


CORE_OPTIONS: tuple[Option, ...] = (
    Option("model", "model to evaluate: a model name served by the endpoint, 'oracle' (ground truth, a "
           "self-check) or 'replay:PATH' (recorded outputs)"),
    Option("base-url", "OpenAI-compatible endpoint (default: OPENAI_BASE_URL or api.openai.com)"),
    Option("api-key", "API key (default: OPENAI_API_KEY); never printed or stored", secret=True),
    Option("temperature", "sampling temperature", 0.0, parse_float),
    Option("top-p", "nucleus sampling top_p (unset: the endpoint's default)", None, parse_float),
    Option("max-tokens", "max_tokens per answer (ACEBench's runner uses 1200); none: no limit is sent", 1200,
           parse_token_limit),
    Option("sampling", "plugin: the options' sampling for every suite (greedy by default); upstream: each suite's "
           "own where it differs (ACEBench: temperature 0.7, top_p 1, max_tokens 1200 single-turn, 0.001, 1, 1000 "
           "for agents); options given explicitly win", "plugin", choice("plugin", "upstream")),
    Option("mode", "protocol of the suites that have two (ACEBench, BFCL, and yaml files that name none): prompt "
           "(calls written as text, the leaderboards'), fc (native function calling: the functions as tools, answers "
           "as tool_calls) or both (every sample in each; test ids of the fc copies end in -fc)", "prompt",
           choice("prompt", "fc", "both")),
    Option("reasoning", "keep: an answer's leading <think> block is scored with it, as upstream scores it; strip: "
           "it is taken off before scoring, and kept as the answer's reasoning", "keep", choice("keep", "strip")),
    Option("tools-system", "as-is: requests that offer tools are sent as the benchmark makes them; empty: one "
           "without a system message gets an empty one first, for servers that render tools only into a system "
           "message (llama-cpp-python's chatml-function-calling); a deviation, recorded in the report", "as-is",
           choice("as-is", "empty")),
    Option("reasoning-effort", "reasoning_effort sent to the model under test (reasoning models; unset: not sent)",
           None, REASONING_EFFORT),
    Option("timeout", "seconds one request attempt may take, to the last byte of the answer", 120.0, parse_positive),
    Option("score-timeout", "seconds one sample's scoring may take; past it the sample fails with a verdict naming "
           "the limit (0: no limit)", 60.0, parse_non_negative),
    Option("max-retries", "retries of a transient failure (429, 5xx, timeout, connection)", 6, parse_int),
    Option("concurrency", "samples answered at once ahead of their tests, and requests in flight per model, "
           "per process (with xdist: per worker, asked by the controller) (0: ask only when a sample's test runs)",
           8, parse_int),
    Option("workers", "xdist workers that start when the controller asks for every sample (a live model under -n, "
           "whose workers only score the answers): auto (at most one per CPU core; the requests in flight stay -n "
           "times the concurrency) or all (as many as -n says)", "auto", choice("auto", "all")),
    Option("slow-start", "auto: the in-flight limit starts at two and grows while latency stays flat for a server "
           "you may run yourself (plain http, or a local or private host), at the concurrency for a hosted API "
           "(https to a public host name); on, off: always, never", "auto", choice("auto", "on", "off")),
    Option("rpm", "requests per minute for the whole run, all xdist workers together", None, parse_int),
    Option("tpm", "tokens per minute for the whole run (prompt estimated, settled with the reported usage)",
           None, parse_int),
    Option("data-dir", "folder holding the upstream data (default: TOOLEVAL_DATA_DIR, then the download cache)",
           path=True),
    Option("cache-dir", "folder for downloads and the response cache (default: ~/.cache/pytest-tooleval)",
           path=True),
    Option("offline", "never download; fail if the data is not there", False, parse_bool, flag=True),
    Option("cache", "which cached answers a run uses: resume (only those of the unfinished run of the same model "
           "and endpoint that it finishes), reuse (any earlier run's answer to the same request of the same served "
           "model), fresh (none: every request is asked and cached), off (no response cache)", "resume",
           choice("resume", "reuse", "fresh", "off")),
    Option("no-cache", "do not read or write the response cache (--tooleval-cache off)", False, parse_bool,
           flag=True),
    Option("no-probe", "skip the endpoint probe: one small request per model role before any sample", False,
           parse_bool, flag=True),
    Option("scorer", "official (reproduces the reference, default) or fixed (documented bugs fixed)",
           "official", choice("official", "fixed")),
    Option("report", "write the JSON report to this path", path=True),
    Option("fail-under", "gate: GROUP=FRACTION thresholds, e.g. overall=0.85,special=0.8", {},
           parse_thresholds),
    Option("no-progress", "no live status line while samples are answered (also silenced by -q -q)", False,
           parse_bool, flag=True),
    Option("progress-interval", "seconds between status lines when the output is not a terminal (a CI log)", 10.0,
           parse_positive),
    Option("max-error-rate", "gate: the largest share of samples that may end in errors", 0.02, parse_fraction),
    Option("markdown", "write the summary as GitHub-flavoured Markdown to this path (it is also appended to "
           "$GITHUB_STEP_SUMMARY whenever that is set)", path=True),
    Option("prices", "estimate the run's cost: MODEL=INPUT/OUTPUT USD per million tokens, comma-separated, e.g. "
           "gpt-4o=2.5/10,gpt-4o-mini=0.15/0.6 (the ini key tooleval_prices holds a price table)", {}, parse_prices),
    Option("max-cost", "stop starting samples once the run's estimated cost (--tooleval-prices) reaches this many "
           "USD; the rest are not run, and the run is incomplete: it never passes a gate", None, parse_float),
    Option("batch", "send the requests that are one per sample (ACEBench normal and special, GPT4Tools, one-turn "
           "YAML cases, ToolAlpaca's judge) through the provider's Batch API (half price, results within 24 h) "
           "before the tests score them; agent rollouts stay interactive; an interrupted run resumes its batch",
           False, parse_bool, flag=True),
    Option("batch-poll", "seconds between polls of a submitted batch", 30.0, parse_positive),
    Option("batch-wait", "seconds to wait for the batch before the tests; the samples of a batch still running then "
           "are not run (the run is incomplete) and a later run collects it; 0 submits and moves on (default: wait "
           "until it ends)", None, parse_non_negative),
    Option("batch-fallback", "what becomes of batch entries that failed or expired: ask (asked as ordinary "
           "requests) or error (errors of their samples, with the reason)", "ask", choice("ask", "error")),
    Option("html", "write a self-contained HTML page of the run (charts with intervals, the comparison, the "
           "flipped samples with their outputs, the fingerprint) to this path", path=True),
    Option("shard", "I/N: collect only the I-th of N shards of the samples, e.g. 2/3: every category cut into N "
           "parts of equal expected cost, by a hash of each sample (stable as samples come and go; its variants "
           "and repeats go with it)", None,
           parse_shard),
    Option("sample", "FRACTION (0 to 1): a stratified share of every category, whole dialogues, chosen by "
           "--tooleval-seed (the same samples for the same seed); the run is marked partial", None, parse_fraction),
    Option("seed", "seed of --tooleval-sample's choice", 0, parse_int),
    Option("repeats", "ask every sample this many times, each a test of its own (-r2, -r3 ...): the summary adds "
           "each figure's mean over the repeats, pass^k and the flaky samples; the tables and the gate are the first "
           "ask's", 1, parse_int),
    Option("quarantine", "YAML file of test id: reason; those samples run (as xfail) but stay out of every "
           "figure, the comparison and the gate", path=True),
    Option("baseline", "compare with this previous JSON report, sample by sample (differences with their "
           "intervals and p-values, flipped samples)", path=True),
    Option("max-regression", "gate: FIGURE=MARGIN, e.g. overall=0.02,special=0.05: fail when a figure dropped "
           "below the baseline's by more than the margin, significantly (needs --tooleval-baseline)", {},
           parse_thresholds),
    Option("alpha", "gate: significance level of --tooleval-max-regression, Holm-corrected across the figures "
           "gated", 0.05, parse_fraction),
    Option("strict-baseline", "a baseline whose fingerprint differs in anything but the model is an error "
           "(exit 4), not a warning", False, parse_bool, flag=True),
)


def add_options(parser: pytest.Parser, options: Sequence[Option]) -> None:
    """Every option of the table (suites.all_options) as a command-line option and an ini key."""
    group = parser.getgroup("tooleval", "tool-use evaluation (pytest-tooleval)")
    for option in options:
        shown_default = "" if option.default in (None, (), {}) or option.secret else f" (default: {option.default})"
        text = option.help.replace("%", "%%")  # argparse formats help with %: a suite's "95%" is text
        if option.flag:
            group.addoption(f"--tooleval-{option.name}", action="store_true", default=None, dest=option.dest,
                            help=text)
        else:
            group.addoption(f"--tooleval-{option.name}", default=None, dest=option.dest,
                            help=text + shown_default.replace("%", "%%"))
        parser.addini(option.dest, option.help, default=None)


#: options the header names even at their defaults: what the figures are scored against
HEADER_ALWAYS = ("scorer", "acebench-revision")


class Settings(BaseModel):
    """The effective configuration of one run: one typed, frozen field per option of the table (the core
    options and every registered suite's), validated by pydantic; `sources` tells where each value came from.

    The core options are declared here, each as its parsed value's type, so mypy checks every read; their
    defaults, parsing, help and names stay the table's (CORE_OPTIONS), and a test keeps the two the same set of
    the same types. A suite's options are fields too, added by `settings_model`, and read through the suite's
    typed `options_model` (`AceBenchSettings.of(settings).language`). Build one with `build_settings`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    #: the options table the class was made from (settings_model): what the header and the secret check go over
    options: ClassVar[tuple[Option, ...]] = ()

    sources: dict[str, str]

    model: str | None
    base_url: str | None
    api_key: str | None
    temperature: float
    top_p: float | None
    max_tokens: int | None
    sampling: Literal["plugin", "upstream"]
    mode: Literal["prompt", "fc", "both"]
    reasoning: Literal["keep", "strip"]
    tools_system: Literal["as-is", "empty"]
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None
    timeout: float
    score_timeout: float
    max_retries: int
    concurrency: int
    workers: Literal["auto", "all"]
    slow_start: Literal["auto", "on", "off"]
    rpm: int | None
    tpm: int | None
    data_dir: str | None
    cache_dir: str | None
    offline: bool
    cache: Literal["resume", "reuse", "fresh", "off"]
    no_cache: bool
    no_probe: bool
    scorer: Literal["official", "fixed"]
    report: str | None
    fail_under: dict[str, float]
    no_progress: bool
    progress_interval: float
    max_error_rate: float
    markdown: str | None
    prices: dict[str, tuple[float, float]]
    max_cost: float | None
    batch: bool
    batch_poll: float
    batch_wait: float | None
    batch_fallback: Literal["ask", "error"]
    html: str | None
    shard: str | None
    sample: float | None
    seed: int
    repeats: int
    quarantine: str | None
    baseline: str | None
    max_regression: dict[str, float]
    alpha: float
    strict_baseline: bool

    @property
    def values(self) -> dict[str, object]:
        """Every option's value by attribute name (`user_model`)."""
        return {name: getattr(self, name) for name in type(self).model_fields if name != "sources"}

    def get(self, name: str, default: object = None) -> object:
        """A value by an attribute name computed at run time, or `default` when no option has that name.

        Only for the helper roles (`Role.setting`, suites/base.py): their option names (`<role>_model`,
        `<role>_base_url`, ...) are made from each suite's `roles`, so no type checker can follow them, and the
        value is an `object` the caller narrows. Every other read is an attribute mypy checks: a core option
        here, a suite's through its `options_model`.
        """
        return getattr(self, name) if name in type(self).model_fields and name != "sources" else default

    def explicit(self, option: str) -> bool:
        """Whether `--tooleval-<option>` was given (on the command line, in the environment or the ini file)."""
        return self.sources.get(option, "default") != "default"

    @property
    def cache_path(self) -> Path:
        """The folder of downloads, the response cache and the run boards."""
        return Path(self.cache_dir or DEFAULT_CACHE_DIR).expanduser()

    @property
    def cache_mode(self) -> str:
        """--tooleval-cache, where --tooleval-no-cache is `off`."""
        return "off" if self.no_cache else self.cache

    def replace(self, **changes: object) -> Settings:
        return self.model_copy(update=changes)

    def secrets_on_command_line(self) -> list[str]:
        """The secret options given as command-line arguments (which pytest's --debug log records)."""
        return [f"--tooleval-{option.name}" for option in self.options
                if option.secret and self.sources.get(option.name) == "cli"]

    def header(self) -> str:
        """One line for the pytest header: the values that differ from the defaults, and the scorer and ACEBench
        revision even at theirs (the figures depend on them: a reader of a log should not have to know the
        defaults); secrets show only whether they are set."""
        shown = []
        for option in self.options:
            source = self.sources[option.name]
            if source == "default" and option.name not in HEADER_ALWAYS:
                continue
            value = getattr(self, option.name.replace("-", "_"))
            text = "set" if option.secret else _show(value)
            shown.append(f"{option.name}={text} ({source})")
        return "tooleval: " + ", ".join(shown)


_S = TypeVar("_S", bound="SuiteSettings")


@dataclass(frozen=True)
class _Declared:
    """What `option_field` records of a suite option; the rest comes from the field (settings_of_fields)."""

    help: str
    default: object
    parse: Callable[[str, str], object] | None
    secret: bool
    path: bool


def option_field(help: str, default: object = None, parse: Callable[[str, str], object] | None = None, *,
                 secret: bool = False, path: bool = False) -> Any:  # Any: a field's default, as dataclasses.field
    """A suite option, declared once, as a field of the suite's SuiteSettings:

        language: Literal["en", "zh", "all"] = option_field("ACEBench language: en, zh or all", "en")

    The option is `--tooleval-language` (the field's name, `-` for `_`); its value is parsed as the field's type
    says (bool: a switch; int, float; a Literal: one of its values; tuple[str, ...]: a comma list; str) unless
    `parse` is given; `secret` is never printed, `path` is resolved against where it was given."""
    return _Declared(help, default, parse, secret, path)


class SuiteSettings(BaseModel):
    """A suite's own options, typed and declared once: a subclass declares one field per option, each with
    `option_field` (its help and default), and the suite names it as its `options_model` (suites/base.py), from
    which its options table is read (`declared_options`). A suite without options names this class itself.

    Read one with `AceBenchSettings.of(settings).language`: mypy checks the field's name and type.
    """

    # built on first use, not at import: the suites declare theirs at start-up, in every xdist worker too
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    @classmethod
    def of(cls: type[_S], settings: Settings) -> _S:
        """The suite's options as this run resolved them (the values of `settings`' own fields)."""
        return cls.model_validate({name: getattr(settings, name) for name in cls.model_fields})

    @classmethod
    def declared_options(cls) -> tuple[Option, ...]:
        """The options table of the fields, in their order (read once per class)."""
        if cls not in _DECLARED:
            _DECLARED[cls] = tuple(_option_of(cls.__name__, name, field.annotation, field.default)
                                   for name, field in cls.model_fields.items())
        return _DECLARED[cls]


_DECLARED: dict[type[SuiteSettings], tuple[Option, ...]] = {}


def _option_of(owner: str, name: str, annotation: object, declared: object) -> Option:
    if not isinstance(declared, _Declared):
        raise ToolevalUsageError(f"{owner}.{name}: declare the option with "
                                 "pytest_tooleval.suite.option_field(help, default) (docs/writing-a-suite.md)")
    kind = _without_none(annotation)
    parse = declared.parse or _parser_of(owner, name, kind)
    return Option(name.replace("_", "-"), declared.help, declared.default, parse, flag=kind is bool,
                  secret=declared.secret, path=declared.path)


def _without_none(annotation: object) -> object:
    """`X | None` -> X; anything else as it is."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        inner = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(inner) == 1:
            return inner[0]
    return annotation


def _parser_of(owner: str, name: str, kind: object) -> Callable[[str, str], object] | None:
    """How an option's text becomes the value its field's type holds (None: the text itself)."""
    if typing.get_origin(kind) is Literal:
        return choice(*typing.get_args(kind))
    parsers: dict[object, Callable[[str, str], object] | None] = {
        bool: parse_bool, int: parse_int, float: parse_float, tuple[str, ...]: parse_list, str: None}
    if kind not in parsers:
        raise ToolevalUsageError(f"{owner}.{name}: no parser for a field of type {kind!r}: give "
                                 "option_field(..., parse=...)")
    return parsers[kind]


def paths_after_a_space(args: Sequence[str], options: Sequence[Option]) -> list[tuple[str, str]]:
    """`--tooleval-<option> VALUE` pairs whose VALUE is an existing file or folder. pytest chooses its rootdir and
    ini file before it knows a plugin's options, and takes such a VALUE for a test path there: the rootdir moves to
    a folder above both, and the project's ini file may go unread. `--tooleval-<option>=VALUE` is read right."""
    valued = {f"--tooleval-{option.name}" for option in options if not option.flag}
    return [(flag, value) for flag, value in itertools.pairwise(args)
            if flag in valued and not value.startswith("-") and Path(value).exists()]


_MODELS: dict[tuple[str, ...], type[Settings]] = {}


def settings_model(options: tuple[Option, ...]) -> type[Settings]:
    """The Settings class for an options table: one typed field per option, its default the option's."""
    key = tuple(option.name for option in options)
    if key not in _MODELS:
        # Any: pydantic's create_model takes type forms, which mypy cannot check made at run time
        fields: dict[str, Any] = {option.name.replace("-", "_"): (_value_type(option), option.default)
                                  for option in options}
        _MODELS[key] = create_model("ToolevalSettings", __base__=Settings, **fields)
        _MODELS[key].options = tuple(options)
    return _MODELS[key]


def build_settings(values: dict[str, object], sources: dict[str, str], options: tuple[Option, ...]) -> Settings:
    """Validated Settings from values by attribute name (an option's default where one is missing)."""
    return settings_model(options).model_validate({**values, "sources": sources})


def _value_type(option: Option) -> object:
    """The field type of an option's parsed value, read from how it is parsed."""
    kinds: dict[object, object] = {parse_float: float, parse_positive: float, parse_non_negative: float,
                             parse_fraction: float, parse_int: int,
                             parse_token_limit: int | None,
                             parse_bool: bool, parse_list: tuple[str, ...], parse_thresholds: dict[str, float],
                             parse_prices: dict[str, tuple[float, float]]}
    allowed = getattr(option.parse, "allowed", None)
    kind = Literal[allowed] if allowed else kinds.get(option.parse, str)
    return typing.Optional[kind] if option.default is None else kind  # noqa: UP045 (a value: object has no `|`)


def _show(value: object) -> str:
    if isinstance(value, str) and "://" in value:
        return safe_url(value)  # a password in an endpoint URL (https://user:password@host) is a secret too
    if isinstance(value, tuple):
        return ",".join(value) or "-"
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items()) or "-"
    return str(value)


def resolve(config: pytest.Config, options: tuple[Option, ...], environ: dict[str, str] | None = None) -> Settings:
    """CLI > TOOLEVAL_* env > tooleval.yaml > ini > default; every value validated, errors name the option and an
    example (and the file or variable it was written in)."""
    from .file import read_config_file

    environ = dict(os.environ if environ is None else environ)
    values: dict[str, object] = {}
    sources: dict[str, str] = {}
    from_file, file_path = read_config_file(_config_folder(config), options)
    for option in options:
        raw, source = config.getoption(option.dest), "cli"
        if raw is None and environ.get(option.env) not in (None, ""):
            raw, source = environ[option.env], "env"
        if raw is None and option.name in from_file:
            raw, source = from_file[option.name], "file"
        if raw is None:
            raw, source = config.getini(option.dest), "ini"
        if raw is None:
            raw, source = option.default, "default"
        if source != "default" and option.parse is not None and not isinstance(raw, bool):
            try:
                raw = option.parse(option.name, str(raw))
            except ToolevalUsageError as exc:
                raise ToolevalUsageError(_from_source(str(exc), option, source, raw, config, file_path)) from None
        if option.path and isinstance(raw, str) and raw:
            raw = _absolute(raw, source, config)
        values[option.name.replace("-", "_")] = raw
        sources[option.name] = source
    _fill_api_key(values, sources, environ)
    return build_settings(values, sources, options)


def _config_folder(config: pytest.Config) -> Path:
    """Where tooleval.yaml is looked for: beside the ini file, else in the root folder pytest chose."""
    return config.inipath.parent if config.inipath else config.rootpath


def _absolute(path: str, source: str, config: pytest.Config) -> str:
    """A path as the user meant it: relative to the ini file's folder for an ini or tooleval.yaml value, else to
    the folder pytest was started in. Resolved once, so a test that changes the working directory (pytester)
    cannot move it."""
    base = _config_folder(config) if source in ("ini", "file") else config.invocation_params.dir
    return tidy_path(str(base / Path(path).expanduser()))


def _from_source(message: str, option: Option, source: str, raw: object, config: pytest.Config,
                 file_path: Path | None = None) -> str:
    """A value's error names where the value was written: the option, the environment variable, tooleval.yaml's
    key or the ini key."""
    flag = f"--tooleval-{option.name}"
    if source == "env":
        where = f"{option.env}={raw}"
    elif source == "file":
        where = f"{option.name}: {raw} in {file_path}"
    elif source == "ini":
        where = f"{option.dest} = {raw} in {config.inipath or 'the ini file'}"
    else:
        return message
    return where + message[len(flag):] if message.startswith(flag) else f"{where}: {message}"


def _fill_api_key(values: dict[str, object], sources: dict[str, str], environ: dict[str, str]) -> None:
    if values["api_key"] is None and environ.get("OPENAI_API_KEY"):
        values["api_key"], sources["api-key"] = environ["OPENAI_API_KEY"], "env OPENAI_API_KEY"
    if values["base_url"] is None and environ.get("OPENAI_BASE_URL"):
        values["base_url"], sources["base-url"] = environ["OPENAI_BASE_URL"], "env OPENAI_BASE_URL"
