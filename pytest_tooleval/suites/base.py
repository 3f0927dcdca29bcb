"""The suite contract: what a benchmark declares to the plugin, and what it does once loaded for a run.

A benchmark is one folder (or an installed package) exposing a `SuitePlugin` subclass instance under the
entry-point group `pytest_tooleval.suites`. The plugin object is imported when pytest starts, so it must be cheap:
it declares names, markers, options and helper roles, and imports its data and scoring code only in `load`.
Writing a suite is described in docs/writing-a-suite.md; suite authors import from `pytest_tooleval.suite`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

# the contract's values live where the core uses them, and are named here for suites
from ..models.access import Role as Role
from ..outcome import Skipped as Skipped
from ..report.suite_summary import CombineFn as CombineFn
from ..report.suite_summary import Unit as Unit
from ..report.suite_summary import UnitsFn as UnitsFn

if TYPE_CHECKING:
    from ..models.access import ModelAccess
    from ..outcome import Answer, SampleResult
    from ..report.rescoring import RescoreContext, SuiteRescore
    from ..report.sections import FigureBlock, ReportSection
    from ..report.suite_summary import SuiteSummary
    from ..settings.options import Option, Settings, SuiteSettings

ENTRY_POINT_GROUP = "pytest_tooleval.suites"


@runtime_checkable
class Case(Protocol):
    """One sample: a pytest test. Frozen, picklable-free (cases never leave their process; answers do).

    The first eight members are the suite's to give; the others have defaults in `CaseBase`, which a suite's case
    class subclasses."""

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

    @property
    def variant(self) -> str: ...  # a protocol variant; "" for the benchmark's own

    @property
    def repeat(self) -> int: ...  # which ask of the sample (--tooleval-repeats); 1 for the first

    @property
    def revision(self) -> str: ...  # the benchmark revision it is scored against; "" for none named

    @property
    def data_unverified(self) -> bool: ...  # its data was not checked against that revision's pin

    @property
    def cluster(self) -> str: ...  # what stays in one shard with it (a dialogue); "" for the sample alone


class CaseBase:
    """The optional members of a `Case`, with their defaults: a suite's case class subclasses this (a frozen
    dataclass may) and defines, as a field, a property or a class attribute, those its cases have.

    Attributes:
        expected_text: the expected answer as failure messages show it (`expected: ...`); "" shows none.
        variant: the same sample asked another way (ACEBench's `-fc` copies); "" for the benchmark's own protocol.
            Report rows carry it, and answers and category sizes are kept apart by it; its test id must differ.
        repeat: which ask of the sample this is; the plugin's own copies for --tooleval-repeats say 2, 3, ...
        revision: the benchmark revision the sample is scored against (report rows name it); "" names none.
        data_unverified: True when its data was not checked against that revision's pin (rows and titles say so).
        cluster: the samples --tooleval-shard and --tooleval-sample keep together share it (a multi-turn
            dialogue's steps); "" keeps the sample on its own (as its id would).
    """

    if TYPE_CHECKING:  # read-only to a type checker, so a subclass may give each as a property or as a field
        @property
        def expected_text(self) -> str:
            return ""

        @property
        def variant(self) -> str:
            return ""

        @property
        def repeat(self) -> int:
            return 1

        @property
        def revision(self) -> str:
            return ""

        @property
        def data_unverified(self) -> bool:
            return False

        @property
        def cluster(self) -> str:
            return ""
    else:  # plain class attributes at run time: a dataclass field of the same name, with or without a default,
        # sets its own (a property here would refuse the assignment)
        expected_text = ""
        variant = ""
        repeat = 1
        revision = ""
        data_unverified = False
        cluster = ""


CaseT = TypeVar("CaseT", bound=Case)


RescoreFn = Callable[[list[dict[str, Any]], Mapping[str, Any], str, "RescoreContext"], "SuiteRescore"]


class Suite(Protocol[CaseT]):
    """A benchmark loaded for one run (by `SuitePlugin.load`): its cases, how to answer and score one."""

    def cases(self) -> Sequence[CaseT]: ...

    async def answer(self, case: CaseT, access: ModelAccess) -> Answer | Skipped:
        """Everything that talks to a model or an API (runs on the engine's loop); JSON-plain result."""
        ...

    def score(self, case: CaseT, answer: Answer) -> SampleResult | Skipped:
        """Pure: the verdict of one answered case (runs in the test's thread)."""
        ...


class SuitePlugin(ABC, Generic[CaseT]):
    """What a benchmark declares, before any of its data is read: a suite subclasses this (the type parameter is
    its case class) and sets the six attributes and the five abstract methods; every other member has a default
    that a suite overrides where it has more to say.

    Attributes:
        name: the suite name (`@pytest.mark.tooleval(name)`, report keys, the gate namespace `<name>.<figure>`).
        markers: marker name -> description, registered at start-up; every case's marks come from here.
        options_model: the suite's own options, one typed field each, declared with `option_field`
            (settings/options.py SuiteSettings); the suite reads them as `MySettings.of(settings).my_option`.
        roles: its helper models; a chat function is built for a role only when this suite is in the run.
        mark_profiles: the mark sets its cases can carry, so `-m` can rule the suite out unloaded.
        id_prefixes: every test id of the suite starts with one of these (the xdist controller maps the ids
            its workers collected to suites with them, without loading other suites).
        units: optional, None by default: `units(rows) -> list[Unit]`, the units of the suite's proportion
            figures (a sample, or a dialogue that counts as one), each with a key that names it in any run.
            With `combine`, a run compares with a baseline sample by sample (report/compare.py) and repeats
            get their figures (report/repeated.py); without both, the comparison says the suite was not compared.
        combine: optional, None by default: `combine(proportions) -> dict[str, float]`, the suite's other
            figures (groups, overall) computed from its proportion figures (only used together with `units`).
        rescore: optional, None by default: `rescore(rows, block, target, context) -> SuiteRescore`, the
            suite's report rows (and its fingerprint block) scored again under revision `target`, from the answers
            the rows keep (`python -m pytest_tooleval rescore`, report/rescore.py); None: it cannot be rescored.
    """

    if TYPE_CHECKING:  # the required declarations, read-only to a type checker: a suite gives each as a class
        # attribute (a ClassVar too) or a property; the registry refuses a plugin without one
        @property
        def name(self) -> str: ...

        @property
        def markers(self) -> Mapping[str, str]: ...

        @property
        def options_model(self) -> type[SuiteSettings]: ...

        @property
        def roles(self) -> Sequence[Role]: ...

        @property
        def mark_profiles(self) -> Sequence[frozenset[str]]: ...

        @property
        def id_prefixes(self) -> Sequence[str]: ...

    # optional members the plugin must know a suite has before it calls them: defined as methods to switch on
    units: UnitsFn | None = None
    combine: CombineFn | None = None
    rescore: RescoreFn | None = None

    @property
    def options(self) -> tuple[Option, ...]:
        """The suite's own options (in `--help`'s tooleval group, with env and ini twins): `options_model`'s."""
        return self.options_model.declared_options()

    @abstractmethod
    def unavailable(self, settings: Settings) -> str | None:
        """Why the suite cannot run as configured (its tests then skip with this reason, and no data is
        looked for), or None. Must not read data files."""

    @abstractmethod
    def load(self, settings: Settings) -> Suite[CaseT]:
        """Locate (download if needed), validate and load the data; a data problem raises DataError."""

    @abstractmethod
    def summarize(self, rows: list[dict[str, Any]]) -> SuiteSummary:
        """The suite's figures from its report rows (pure). Figure names are relative: the run prefixes them
        with the suite name."""

    @abstractmethod
    def fingerprint(self, settings: Settings) -> dict[str, Any] | None:
        """What changes this suite's scores besides the model and the shared sampling parameters."""

    @abstractmethod
    def priority(self, case: CaseT) -> int:
        """Scheduling order: lower first (long rollouts first, so they do not form a tail)."""

    # -- optional, with defaults -----------------------------------------------------------------------------------

    @property
    def title(self) -> str:
        """The benchmark's name as people write it (e.g. "ACEBench"): the heading of its figures in the reports,
        and the messages about its revisions; by default the suite's name."""
        return self.name

    def report_sections(self, block: Any) -> list[ReportSection]:
        """The suite's summary block as a report holds it (`summary.<name>`: the `data` of its `summarize`, any
        JSON value, maybe from an older run) as headed tables: what the Markdown summary shows. Must not fail
        on a block of another shape. By default its numeric figures by dotted name, under the suite's title."""
        from ..report.sections import generic_sections

        return generic_sections(self.title, block)

    def row_details_schema(self) -> dict[str, Any] | None:
        """A JSON Schema of what `summarize` reads of a row's `details`: a merge refuses a shard whose rows break
        it, with one line naming the file and the field (report/shard_check.py), rather than fail in the
        summariser. None (the default): the details may be any object, or null."""
        return None

    def figure_blocks(self, block: Any) -> list[FigureBlock]:
        """The same block as charts of figures (categories, groups, OVERALL): what the HTML page draws; the
        block's members no chart draws are shown as JSON. By default every member shaped `categories` (each
        with its `accuracy`), `groups` and `overall`, as ACEBench's blocks are."""
        from ..report.sections import generic_figure_blocks

        return generic_figure_blocks(self.title, block)

    def figure_names(self, settings: Settings) -> list[str] | None:
        """Every figure (relative name) a run with these settings can give: an unknown `--tooleval-fail-under`
        name then stops the run before any request. None (the default): any name might be this suite's."""
        return None

    def selection_hint(self, settings: Settings, markexpr: str) -> str | None:
        """A line said when `-m markexpr` could not select some of the suite's samples (e.g. `-m zh` on an
        en-only run), or None (the default)."""
        return None

    def weight(self, case: CaseT) -> float:
        """The case's expected cost beside the others of its category (e.g. its prompt's length):
        --tooleval-shard cuts every category into shards of equal weight. 1.0 by default."""
        return 1.0

    def batched_role(self, case: CaseT) -> str | None:
        """The role whose one request --tooleval-batch may send through the Batch API: "model" when answering the
        case is one request of the model under test, a helper role's name when that role is asked once, last (the
        other roles then play the case out as usual), or None (the default): nothing of the case is batched."""
        return None

    def asks_with_tools(self, settings: Settings) -> bool:
        """Whether the model is offered native `tools` under these settings (the endpoint probe then offers one
        too, so an endpoint without tool calling stops the run before any sample). False by default."""
        return False

    def tools_without_system(self, settings: Settings) -> bool:
        """Whether some request that offers `tools` has no system message (BFCL's questions, a YAML file without
        `system:`): the probe's request with tools then has none either, since a server may render tools only into
        a system message (llama-cpp-python's chatml-function-calling). By default, whenever the suite offers tools."""
        return self.asks_with_tools(settings)

    def revision_of(self, block: Mapping[str, Any] | None, settings: Settings | None = None) -> str | None:
        """The benchmark revision a report's fingerprint block names (block None: this run's, from `settings`): a
        baseline of another revision is refused (hooks/controller.py), and `rescore` moves a report between two.
        None (the default): the suite has no revisions."""
        return None

    def replay_rows(self, path: Path, document: Any) -> list[dict[str, Any]] | None:
        """Recorded outputs in the suite's own upstream format (`document` is the file's parsed JSON value, None
        for a folder or JSON Lines), as rows with an "id" (and "lang"); None (the default) when `path` is not
        in that format, and the generic rows of models/replay.py apply."""
        return None
