"""What a test needs of the upstream data beyond the folder its session fixture (tests/conftest.py) finds.

A data root made of the plugin's download cache holds each suite's pinned upstream files and nothing else. The
folder CI gives (TOOLEVAL_DATA_DIR=../shared/data) also holds what was recorded by running the reference
implementations: the verified agent gold sequences (which the oracle plays in ACEBench's agent samples) and the
official verdicts (conformance/). A test that reads one of them skips, named, where the folder lacks it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
        pytest.skip(
            f"needs the upstream {folder.name} data with its recorded {name}, which the plugin's download "
            "does not hold: set TOOLEVAL_DATA_DIR (CI uses ../shared/data)"
        )
    return path


def prepared_manifest(folder: Path) -> dict[str, Any]:
    """The MANIFEST.json of `folder` as ../shared/data prepared it, naming the upstream commit; a download writes its
    own from the package's pin (the archive's URL and files), which a test of the pin against the data cannot use."""
    manifest: dict[str, Any] = json.loads((folder / "MANIFEST.json").read_text(encoding="utf-8"))
    if "commit" not in manifest:
        pytest.skip(
            f"needs the upstream {folder.name} data as prepared with its MANIFEST.json naming the commit, "
            "not the plugin's download: set TOOLEVAL_DATA_DIR (CI uses ../shared/data)"
        )
    return manifest
