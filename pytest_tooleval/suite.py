"""Everything a benchmark suite needs from pytest-tooleval, in one import (docs/writing-a-suite.md).

    import pytest_tooleval.suite as tooleval  # tooleval.SuitePlugin, tooleval.Answer, ...

The names live in the plugin's own modules; this one only gathers them, and stays cheap to import (no model
client), since a suite's plugin object is imported by every pytest process.
"""

from __future__ import annotations

from .data.download import Pin, ensure_downloaded, locate_data
from .data.files import read_json, read_jsonl, read_text
from .errors import DataError, InfrastructureError, ToolevalUsageError
from .models.access import ModelAccess
from .models.base import Reply, ToolCall
from .models.meter import Meter, reply_tokens, role_tokens
from .models.replay import Recorded, unique_rows
from .outcome import Answer, SampleError, SampleResult
from .report.rescoring import RescoreContext, RowRescore, SuiteRescore
from .report.sections import (
    CellTable,
    Data,
    FigureBlock,
    FigureRow,
    Paragraph,
    ReportSection,
    Strong,
    generic_figure_blocks,
    generic_sections,
)
from .report.suite_summary import SuiteSummary, Table, outcome_counts
from .settings.options import (
    Option,
    Settings,
    SuiteSettings,
    choice,
    option_field,
    parse_bool,
    parse_float,
    parse_fraction,
    parse_int,
    parse_list,
    parse_positive,
)
from .suites.base import (
    Case,
    CaseBase,
    CategoryFigures,
    Figures,
    Hints,
    Role,
    Skipped,
    Suite,
    SuitePlugin,
    Tools,
    Unit,
    Upstream,
)
from .verdict import Verdict

__all__ = [
    "Answer",
    "Case",
    "CaseBase",
    "CategoryFigures",
    "CellTable",
    "Data",
    "DataError",
    "FigureBlock",
    "FigureRow",
    "Figures",
    "Hints",
    "InfrastructureError",
    "Meter",
    "ModelAccess",
    "Option",
    "Paragraph",
    "Pin",
    "Recorded",
    "Reply",
    "ReportSection",
    "RescoreContext",
    "Role",
    "RowRescore",
    "SampleError",
    "SampleResult",
    "Settings",
    "Skipped",
    "Strong",
    "Suite",
    "SuitePlugin",
    "SuiteRescore",
    "SuiteSettings",
    "SuiteSummary",
    "Table",
    "ToolCall",
    "ToolevalUsageError",
    "Tools",
    "Unit",
    "Upstream",
    "Verdict",
    "choice",
    "ensure_downloaded",
    "generic_figure_blocks",
    "generic_sections",
    "locate_data",
    "option_field",
    "outcome_counts",
    "parse_bool",
    "parse_float",
    "parse_fraction",
    "parse_int",
    "parse_list",
    "parse_positive",
    "read_json",
    "read_jsonl",
    "read_text",
    "reply_tokens",
    "role_tokens",
    "unique_rows",
]
