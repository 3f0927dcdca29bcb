"""The suite contract: what a benchmark declares to the plugin, and what it does once loaded for a run.

A benchmark is one folder (or an installed package) exposing a `SuitePlugin` under the entry-point group
`pytest_tooleval.suites`. The plugin object is imported when pytest starts, so it must be cheap: it declares
names, markers, options and helper roles, and imports its data and scoring code only in `load`. Writing a suite
is described in docs/writing-a-suite.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..models.access import ModelAccess
    from ..outcome import Answer, SampleResult
    from ..report.summary import SuiteSummary
    from ..settings.options import Option, Settings, SuiteSettings

ENTRY_POINT_GROUP = "pytest_tooleval.suites"


@runtime_checkable
class Case(Protocol):
    """One sample: a pytest test. Frozen, picklable-free (cases never leave their process; answers do)."""

    @property
    def suite(self) -> str: ...  # the SuitePlugin name

    @property
    def id(self) -> str: ...  # the benchmark's own sample id (report rows and replay files use it)

    @property
    def test_id(self) -> str: ...  # the pytest parametrize id; starts with one of the suite's id_prefixes

    @property
    def category(self) -> str: ...

    @property
    def language(self) -> str: ...

    @property
    def family(self) -> str: ...

    @property
    def index(self) -> int: ...  # position in the benchmark's own order (reports sort by it)

    @property
    def marks(self) -> tuple[str, ...]: ...  # marker names, each declared in the suite's `markers`

    @property
    def expected_text(self) -> str: ...  # the expected answer as failure messages show it ("" if none)

    # Optional members, read with getattr: `variant` (a protocol variant, "" for the benchmark's own), `repeat`
    # (--tooleval-repeats), `revision` (the benchmark revision the sample is scored against; report rows name it),
    # `data_unverified` (True: its data was not checked against that revision's pin; rows and titles say so).


@dataclass(frozen=True)
class Skipped:
    """A sample that is not evaluated in this run, and why (its test skips with the reason). A value, not an
    exception: it may come from `answer` (decided while answering) or `score`, and travels between processes."""

    reason: str


@dataclass(frozen=True)
class Role:
    """A helper model a suite asks besides the model under test (a simulated user, a tool simulator, a judge).

    Attributes:
        name: the key of its chat function in `ModelAccess.roles`.
        option: the option prefix: `--tooleval-<option>-model` names the model; `-base-url`, `-api-key`,
            `-temperature` and `-max-tokens` are used where the suite declares them.
        sends: request parameters the role always sends: `top_p` replaces the run's, anything else goes into
            the request body as is.
    """

    name: str
    option: str
    # request parameters the role always sends, as its upstream did (e.g. {"top_p": 1, "n": 1}); the rest are
    # the run's or the role's own options
    sends: Mapping[str, Any] = field(default_factory=dict)

    @property
    def model_key(self) -> str:
        return self.option.replace("-", "_") + "_model"

    def setting(self, settings: Settings, field: str) -> object:
        # named at run time, so no type checker can follow it: the caller narrows it (models/access.py role_option)
        return settings.get(f"{self.option.replace('-', '_')}_{field}")


class Suite(Protocol):
    """A benchmark loaded for one run (by `SuitePlugin.load`): its cases, how to answer and score one."""

    def cases(self) -> Sequence[Case]: ...

    async def answer(self, case: Any, access: ModelAccess) -> Answer | Skipped:
        """Everything that talks to a model or an API (runs on the engine's loop); JSON-plain result."""
        ...

    def score(self, case: Any, answer: Answer) -> SampleResult | Skipped:
        """Pure: the verdict of one answered case (runs in the test's thread)."""
        ...


class SuitePlugin(Protocol):
    """What a benchmark declares, before any of its data is read.

    Attributes:
        name: the suite name (`@pytest.mark.tooleval(name)`, report keys, the gate namespace `<name>.<figure>`).
        markers: marker name -> description, registered at start-up; every case's marks come from here.
        options: the suite's own options (shown in `--help` in the tooleval group, with env and ini twins).
        options_model: the same options typed, one field each (settings/options.py SuiteSettings); the suite
            reads them as `MySettings.of(settings).my_option`.
        roles: its helper models; a chat function is built for a role only when this suite is in the run.
        mark_profiles: the mark sets its cases can carry, so `-m` can rule the suite out unloaded.
        id_prefixes: every test id of the suite starts with one of these (the xdist controller maps the ids
            its workers collected to suites with them, without loading other suites).
    """

    name: str
    markers: Mapping[str, str]
    options: Sequence[Option]
    options_model: type[SuiteSettings]
    roles: Sequence[Role]
    mark_profiles: Sequence[frozenset[str]]
    id_prefixes: Sequence[str]

    def unavailable(self, settings: Settings) -> str | None:
        """Why the suite cannot run as configured (its tests then skip with this reason, and no data is
        looked for), or None. Must not read data files."""
        ...

    def load(self, settings: Settings) -> Suite:
        """Locate (download if needed), validate and load the data; a data problem raises DataError."""
        ...

    def summarize(self, rows: list[dict[str, Any]]) -> SuiteSummary:
        """The suite's figures from its report rows (pure). Figure names are relative: the run prefixes them
        with the suite name."""
        ...

    def fingerprint(self, settings: Settings) -> dict[str, Any] | None:
        """What changes this suite's scores besides the model and the shared sampling parameters."""
        ...

    def priority(self, case: Any) -> int:
        """Scheduling order: lower first (long rollouts first, so they do not form a tail)."""
        ...

    # Optional: `figure_names(self, settings: Settings) -> list[str]`, every figure (relative name) a run with
    # these settings can give: an unknown `--tooleval-fail-under` name then stops the run before any request.
    # Optional: `selection_hint(self, settings: Settings, markexpr: str) -> str | None`, said when a run
    # selected nothing (e.g. `-m zh` on an en-only run).
    # Optional: `weight(self, case: Any) -> float`, the case's expected cost beside the others of its category
    # (e.g. its prompt length; 1 by default): --tooleval-shard cuts every category into shards of equal weight.
    # Optional: `batched_role(self, case: Any) -> str | None`, the role whose one request --tooleval-batch may send
    # through the Batch API: "model" when answering the case is one request of the model under test, a helper
    # role's name when that role is asked once, last (the other roles then play the case out as usual), or None.
    # Optional: `asks_with_tools(self, settings: Settings) -> bool`, whether the model is offered native `tools`
    # under these settings (the endpoint probe then offers one too, so an endpoint without tool calling stops the
    # run before any sample).
    # Optional: `title` (the benchmark's name as people write it, e.g. "ACEBench"), and `revision_of(self, block,
    # settings=None) -> str`, the benchmark revision a report's fingerprint block names (block None: this run's):
    # a baseline of another revision is refused (controller.py), as is a merge of shards of two.
    # Optional: `rescore(self, rows, block, target, context) -> SuiteRescore`, the suite's report rows (and its
    # fingerprint block) scored again under revision `target`, from the answers the rows keep
    # (`python -m pytest_tooleval rescore`, report/rescore.py).
    # Optional: `replay_rows(self, path: Path, document: Any) -> list[dict[str, Any]] | None` reads recorded
    # outputs in the suite's own upstream format (`document` is the file's parsed JSON value, None for a folder
    # or JSON Lines); None when `path` is not in that format, and the generic rows of models/replay.py apply.
