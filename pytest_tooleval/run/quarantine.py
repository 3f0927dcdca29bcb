"""Quarantined samples (--tooleval-quarantine FILE): known to be broken, run but kept out of every figure.

The file is YAML: test id -> why, e.g.

    en-normal_preference_40: the schema's array has no items, so no answer can pass
    zh-normal_similar_api_2: its function names end in _<digits>

A quarantined sample's test is marked xfail (not strict): its failure does not fail the run, a pass shows as
XPASS. Its report row keeps the reason (`quarantined`), and the summaries, the comparison with a baseline and
the gate leave it out.
"""

from __future__ import annotations

from pathlib import Path

from ..data.files import read_yaml
from ..errors import ToolevalUsageError


def read_quarantine(path: str) -> dict[str, str]:
    """Test id -> reason from the YAML file at `path`; a usage error (one line, naming the file) otherwise."""
    where = f"--tooleval-quarantine: {path}"
    document = read_yaml(Path(path), where)
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ToolevalUsageError(f"{where}: expected test id: reason lines (a mapping), got a "
                                 f"{type(document).__name__}")
    quarantine = {}
    for test_id, reason in document.items():
        if not isinstance(test_id, str) or not test_id.strip():
            raise ToolevalUsageError(f"{where}: {test_id!r} is not a test id (e.g. en-normal_preference_40)")
        if not isinstance(reason, str) or not reason.strip():
            raise ToolevalUsageError(f"{where}: {test_id}: give the reason it is quarantined, as text")
        quarantine[test_id.strip()] = " ".join(reason.split())
    return quarantine
