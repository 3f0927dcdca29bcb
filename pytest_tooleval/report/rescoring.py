"""The rescore contract: what a suite's optional `rescore` member (suites/base.py) is given and gives back.

`python -m pytest_tooleval rescore` (report/rescore.py) calls it with a report's rows of the suite; the types
live here, beside the contract, so that the contract names them without importing the command.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..models.access import ModelAccess
    from ..models.engine import Engine


@dataclass(frozen=True)
class RowRescore:
    """One sample row, rescored by its suite.

    Attributes:
        before: the row as this plugin scores its answer under the report's revision (the figures' "before").
        after: the row under the target revision, as the new report holds it.
        reasons: what in the benchmark changed its outcome ("new ground truth", "new decoder", "prompt changed").
        carried: why it could not be rescored faithfully (it keeps its verdict), else None.
        prompt_changed: the target revision asks it differently; its answer is to the old prompt unless `asked`.
        asked: answered again (`ask`), under the target revision's prompt.
        answered: the revision whose prompt its answer answers, where that matters (its prompt changed).
    """

    before: dict[str, Any]
    after: dict[str, Any]
    reasons: tuple[str, ...] = ()
    carried: str | None = None
    prompt_changed: bool = False
    asked: bool = False
    answered: str = ""


@dataclass(frozen=True)
class SuiteRescore:
    """A suite's rows rescored (one RowRescore per row given, in order) and its fingerprint block under the target
    revision."""

    source: str
    target: str
    rows: list[RowRescore]
    fingerprint: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # what the reader of the figures should know (printed, recorded)


@dataclass
class RescoreContext:
    """What a suite's rescorer may use besides the rows: where the data are, the report's model and how to run
    its coroutines. `access(asking)` is the report's model: answering from its source (the oracle, the replay file)
    or its response cache alone when not `asking`, a live model with the cache in front when asking; a usage error
    (one line) when it cannot be reached that way."""

    data_dir: str | None
    cache_dir: Path
    offline: bool
    ask: bool
    scorer: str
    engine: Engine
    access: Callable[[bool], ModelAccess]
    # suite -> the revision its answers were made under: the run's, before any rescore (a row asked again by a
    # rescore says so itself)
    answered: Mapping[str, str] = field(default_factory=dict)
    concurrency: int = 8
    score_timeout: float = 60.0  # --tooleval-score-timeout: seconds one sample's scoring may take
