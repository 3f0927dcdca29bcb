"""The suite contract: what a benchmark declares to the plugin, and what it does once loaded for a run.

A benchmark is one folder (or an installed package) exposing a `SuitePlugin` subclass instance under the
entry-point group `pytest_tooleval.suites`. The plugin object is imported when pytest starts, so it must be cheap:
it declares names, markers, options and helper roles, and imports its data and scoring code only in `load`.
Its twelve members are six declarations, three methods (`unavailable`, `load`, `fingerprint`) and three objects
with defaults (`figures`, `upstream`, `hints`). Writing a suite is described in docs/writing-a-suite.md; suite
authors import from `pytest_tooleval.suite`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

from ..errors import SampleError
from ..json_value import JSONObject

# the contract's values live where the core uses them, and are named here for suites
from ..models.access import Role as Role
from ..outcome import Skipped as Skipped
from ..report.suite_summary import CombineFn as CombineFn
from ..report.suite_summary import Unit as Unit
from ..report.suite_summary import UnitsFn as UnitsFn

if TYPE_CHECKING:
    from ..models.access import ModelAccess
    from ..models.replay import ReplayStore
    from ..outcome import Answer, SampleResult
    from ..report.rescoring import RescoreContext, SuiteRescore
    from ..report.sections import FigureBlock, ReportSection
    from ..report.suite_summary import SuiteSummary
    from ..settings.options import Settings, SuiteSettings

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

    @property
    def replay_ids(self) -> tuple[str, ...]: ...  # other ids its recorded row may carry (upstream's naming)


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
        replay_ids: ids besides its test id and id that its recorded row may carry (upstream's own naming).
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

        @property
        def replay_ids(self) -> tuple[str, ...]:
            return ()
    else:  # plain class attributes at run time: a dataclass field of the same name, with or without a default,
        # sets its own (a property here would refuse the assignment)
        expected_text = ""
        variant = ""
        repeat = 1
        revision = ""
        data_unverified = False
        cluster = ""
        replay_ids: tuple[str, ...] = ()


CaseT = TypeVar("CaseT", bound=Case)


RescoreFn = Callable[[list[dict[str, Any]], Mapping[str, Any], str, "RescoreContext"], "SuiteRescore"]


class Suite(Protocol[CaseT]):
    """A benchmark loaded for one run (by `SuitePlugin.load`): its cases, how to answer and score one. The core
    picks the answer's source (`answer_by_access`): the oracle, a recorded row, or the live model."""

    def cases(self) -> Sequence[CaseT]: ...

    async def oracle(self, case: CaseT) -> Answer | Skipped:
        """What a perfect model answers (`--tooleval-model oracle`); an agent suite may play its gold sequence
        through its environment here. A suite without one raises SampleError saying why."""
        ...

    async def replayed(self, case: CaseT, row: dict[str, Any], access: ModelAccess) -> Answer | Skipped:
        """The answer one recorded row holds (`--tooleval-model replay:PATH`): the core found the row by the case's
        language and ids, and says so when there is none. `access` gives the helper roles (a judge may still be
        asked); a row without what the suite reads raises SampleError."""
        ...

    async def answer(self, case: CaseT, access: ModelAccess) -> Answer | Skipped:
        """Ask the live model (`access.chat`, and the helper roles): runs on the engine's loop; JSON-plain result."""
        ...

    def score(self, case: CaseT, answer: Answer) -> SampleResult | Skipped:
        """Pure: the verdict of one answered case (runs in the test's thread)."""
        ...


async def answer_by_access(suite: Suite[Any], case: Case, access: ModelAccess) -> Answer | Skipped:
    """The oracle / replay / live switch, once for every suite."""
    if access.kind == "oracle":
        return await suite.oracle(case)
    if access.kind == "replay":
        assert access.replay is not None
        return await suite.replayed(case, recorded_row(case, access.replay), access)
    return await suite.answer(case, access)


def recorded_row(case: Case, store: ReplayStore) -> dict[str, Any]:
    """The row recorded for `case`: by its test id, its id, then its other `replay_ids`."""
    for key in dict.fromkeys((case.test_id, case.id, *case.replay_ids)):
        if (row := store.lookup(case.language, key)) is not None:
            return row
    raise SampleError(f"no recorded output for {case.language}/{case.id} in {store.source}")


class Figures(ABC):
    """A suite's figures: its summary from report rows, and how reports show it. A suite with figures of its own
    subclasses this; `CategoryFigures` is the default (per-category accuracy with intervals).

    Attributes:
        suite: the suite's name (its summary's, and the prefix of its figures in a run).
        title: the benchmark's name as people write it (e.g. "ACEBench"): the heading of its figures in the
            reports and the messages about its revisions; by default the suite's name.
        units: optional, None by default: `units(rows) -> list[Unit]`, the units of the suite's proportion figures
            (a sample, or a dialogue that counts as one), each with a key that names it in any run. With `combine`,
            a run compares with a baseline sample by sample (report/compare.py) and repeats get their figures
            (report/repeated.py); without both, the comparison says the suite was not compared.
        combine: optional, None by default: `combine(proportions) -> dict[str, float]`, the suite's other figures
            (groups, overall) computed from its proportion figures (only used together with `units`).
    """

    units: UnitsFn | None = None
    combine: CombineFn | None = None

    def __init__(self, suite: str, title: str | None = None) -> None:
        self.suite = suite
        self.title = title or suite

    @abstractmethod
    def summarize(self, rows: list[JSONObject]) -> SuiteSummary:
        """The suite's figures from its report rows (pure). Figure names are relative: the run prefixes them
        with the suite name."""

    def figure_names(self, settings: Settings) -> list[str] | None:
        """Every figure (relative name) a run with these settings can give: an unknown `--tooleval-fail-under`
        name then stops the run before any request. None (the default): any name might be this suite's."""
        return None

    def report_sections(self, block: Any) -> list[ReportSection]:
        """The suite's summary block as a report holds it (`summary.<name>`: the `data` of its `summarize`, any
        JSON value, maybe from an older run) as headed tables: what the Markdown summary shows. Must not fail
        on a block of another shape. By default its numeric figures by dotted name, under the title."""
        from ..report.sections import generic_sections

        return generic_sections(self.title, block)

    def figure_blocks(self, block: Any) -> list[FigureBlock]:
        """The same block as charts of figures (categories, groups, OVERALL): what the HTML page draws; the
        block's members no chart draws are shown as JSON. By default every member shaped `categories` (each
        with its `accuracy`), `groups` and `overall`, as ACEBench's blocks are."""
        from ..report.sections import generic_figure_blocks

        return generic_figure_blocks(self.title, block)

    def row_details_schema(self) -> dict[str, Any] | None:
        """A JSON Schema of what `summarize` reads of a row's `details`: a merge refuses a shard whose rows break
        it, with one line naming the file and the field (report/shard_check.py), rather than fail in the
        summariser. None (the default): the details may be any object, or null."""
        return None


class CategoryFigures(Figures):
    """The default figures: per language (and variant), each category's accuracy with its 95% Wilson interval,
    and `overall`, the mean of the categories' (each counts once). Figures `<language>[.<variant>].<category>`
    and `<language>[.<variant>].overall`; comparable with a baseline sample by sample."""

    def summarize(self, rows: list[JSONObject]) -> SuiteSummary:
        from ..report.category_summary import summarize_categories

        return summarize_categories(self.suite, self.title, rows)

    def units(self, rows: list[JSONObject]) -> list[Unit]:
        from ..report.category_summary import category_units

        return category_units(rows)

    def combine(self, proportions: Mapping[str, float]) -> dict[str, float]:
        from ..report.category_summary import combine_categories

        return combine_categories(proportions)


class Upstream:
    """How a suite meets its upstream's files: its revisions, rescoring a report between them, and upstream's
    own format of recorded outputs. Every member has a default: a suite subclasses this where it has more to say.

    Attributes:
        rescore: optional, None by default: `rescore(rows, block, target, context) -> SuiteRescore`, the suite's
            report rows (and its fingerprint block) scored again under revision `target`, from the answers the
            rows keep (`python -m pytest_tooleval rescore`, report/rescore.py); None: it cannot be rescored.
    """

    rescore: RescoreFn | None = None

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


class Tools(Enum):
    """Whether a suite offers the model native `tools` (the endpoint probe then offers one too, so an endpoint
    without tool calling stops the run before any sample), and whether with a system message."""

    NONE = "none"
    WITH_SYSTEM = "with_system"  # every request with tools has a system message
    # some request with tools has none (BFCL's questions, a YAML file without `system:`): the probe's has none
    # either, since a server may render tools only into a system message (llama-cpp-python)
    WITHOUT_SYSTEM = "without_system"


class Hints(Generic[CaseT]):
    """How the core schedules, shards, batches and probes for a suite; every member has a default."""

    def priority(self, case: CaseT) -> int:
        """Scheduling order: lower first (long rollouts first, so they do not form a tail). 1 by default."""
        return 1

    def weight(self, case: CaseT) -> float:
        """The case's expected cost beside the others of its category (e.g. its prompt's length):
        --tooleval-shard cuts every category into shards of equal weight. 1.0 by default."""
        return 1.0

    def batched_role(self, case: CaseT) -> str | None:
        """The role whose one request --tooleval-batch may send through the Batch API: "model" when answering the
        case is one request of the model under test, a helper role's name when that role is asked once, last (the
        other roles then play the case out as usual), or None (the default): nothing of the case is batched."""
        return None

    def tools(self, settings: Settings) -> Tools:
        """Whether the model is offered native `tools` under these settings. Tools.NONE by default."""
        return Tools.NONE

    def collected_without_mark(self) -> bool:
        """Whether the run collects tests of this suite that carry no tooleval mark (your own *.tooleval.yaml files,
        each a test module of its own), as far as is known before collecting: the early endpoint probe's guess of
        the suites in the run reads the marks of the test modules, and this. False by default."""
        return False

    def selection_hint(self, settings: Settings, markexpr: str) -> str | None:
        """A line said when `-m markexpr` could not select some of the suite's samples (e.g. `-m zh` on an
        en-only run), or None (the default)."""
        return None


class SuitePlugin(ABC, Generic[CaseT]):
    """What a benchmark declares, before any of its data is read: a suite subclasses this (the type parameter is
    its case class), sets the six attributes and writes `load` and `fingerprint`; `unavailable`, `figures`,
    `upstream` and `hints` have defaults a suite replaces where it has more to say.

    Attributes:
        name: the suite name (`@pytest.mark.tooleval(name)`, report keys, the gate namespace `<name>.<figure>`).
        markers: marker name -> description, registered at start-up; every case's marks come from here.
        options_model: the suite's own options, one typed field each, declared with `option_field`
            (settings/options.py SuiteSettings); the suite reads them as `MySettings.of(settings).my_option`.
        roles: its helper models; a chat function is built for a role only when this suite is in the run.
        mark_profiles: the mark sets its cases can carry, so `-m` can rule the suite out unloaded.
        id_prefixes: every test id of the suite starts with one of these (the xdist controller maps the ids
            its workers collected to suites with them, without loading other suites).
        upstream: its revisions, rescoring and upstream's replay format (`Upstream`: none by default).
        hints: scheduling, sharding, batching and the probe's tools (`Hints`: neutral by default).
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

    upstream: Upstream = Upstream()
    hints: Hints[Any] = Hints()

    @property
    def figures(self) -> Figures:
        """The suite's summary and how reports show it: `CategoryFigures` by default."""
        return CategoryFigures(self.name)

    def unavailable(self, settings: Settings) -> str | None:
        """Why the suite cannot run as configured (its tests then skip with this reason, and no data is
        looked for), or None (the default). Must not read data files."""
        return None

    @abstractmethod
    def load(self, settings: Settings) -> Suite[CaseT]:
        """Locate (download if needed), validate and load the data; a data problem raises DataError."""

    @abstractmethod
    def fingerprint(self, settings: Settings) -> dict[str, Any] | None:
        """What changes this suite's scores besides the model and the shared sampling parameters."""
