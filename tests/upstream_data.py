"""What a test needs of the upstream data beyond the folder its session fixture (tests/conftest.py) finds.

A data root made of the plugin's download cache holds each suite's pinned upstream files and nothing else. The
folder CI gives (TOOLEVAL_DATA_DIR=../shared/data) also holds what was recorded by running the reference
implementations: the verified agent gold sequences (which the oracle plays in ACEBench's agent samples) and the
official verdicts (conformance/). A test that reads one of them skips, named, where the folder lacks it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

#: The session fixture (tests/conftest.py) that finds each ACEBench revision's folder under the data root.
ACEBENCH_FIXTURES = {"e6db74b": "acebench_dir", "56dd66c": "acebench_56dd66c_dir"}


def acebench_at(request: pytest.FixtureRequest, revision: str) -> Path:
    """The folder of ACEBench at `revision`: the test skips, named, where the data root lacks that revision."""
    folder: Path = request.getfixturevalue(ACEBENCH_FIXTURES[revision])
    return folder


def recorded(folder: Path, name: str) -> Path:
    """`folder / name`, a file recorded from the reference implementation: the test skips where it is missing."""
    path = folder / name
    if not path.exists():
        pytest.skip(f"needs the upstream {folder.name} data with its recorded {name}, which the plugin's download "
                    "does not hold: set TOOLEVAL_DATA_DIR (CI uses ../shared/data)")
    return path
