"""Install the toy suite as a throwaway distribution: a .dist-info folder with its entry point, on sys.path."""

from __future__ import annotations

import shutil
from pathlib import Path

HERE = Path(__file__).parent


def install_toy_suite(folder: Path) -> Path:
    """Copy the toy suite's package into `folder` with the metadata of an installed distribution that exposes
    `pytest_tooleval.suites: toyecho`. Put `folder` on sys.path (or PYTHONPATH) and the plugin finds it."""
    package = folder / "toyecho_suite"
    package.mkdir(parents=True)
    shutil.copy(HERE / "toyecho.py", package / "__init__.py")
    info = folder / "toyecho_suite-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toyecho-suite\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[pytest_tooleval.suites]\ntoyecho = toyecho_suite:SUITE\n",
                                           encoding="utf-8")
    return folder
