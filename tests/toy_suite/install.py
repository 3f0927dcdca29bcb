"""Install the toy suite as a throwaway distribution: a .dist-info folder with its entry point, on sys.path."""

from __future__ import annotations

import shutil
from pathlib import Path

HERE = Path(__file__).parent


def install_toy_suite(folder: Path, name: str = "toyecho") -> Path:
    """Copy a toy suite's module (`toyecho`, `slowscore`) into `folder` as a package, with the metadata of an
    installed distribution that exposes `pytest_tooleval.suites: <name>`. Put `folder` on sys.path (or
    PYTHONPATH) and the plugin finds it."""
    package = folder / f"{name}_suite"
    package.mkdir(parents=True)
    shutil.copy(HERE / f"{name}.py", package / "__init__.py")
    info = folder / f"{name}_suite-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}-suite\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[pytest_tooleval.suites]\n{name} = {name}_suite:SUITE\n", encoding="utf-8")
    return folder
