"""Where a run's `*.tooleval.yaml` files are: under the paths pytest was asked to collect.

pytest finds the files one folder at a time (collect.py turns each into a test module), but the suite is
loaded whole, once per process: its cases, category sizes and test ids must be known at once, and the xdist
controller, which collects nothing, must map its workers' test ids to cases too. So the files are found
again here, under the same paths (the command line's, else `testpaths`, else the folder pytest started in:
pytest's own `config.args`), skipping the folders pytest skips (`norecursedirs`), on first use only: a run
that never needs the suite never walks. A `--pyargs` package is not walked (its files are not ours to know).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

#: a suite file's name ends with one of these: `.yml` is YAML's other spelling, and a file named so is meant alike
SUFFIXES = (".tooleval.yaml", ".tooleval.yml")


@dataclass(frozen=True)
class Roots:
    paths: tuple[Path, ...]
    skip: tuple[str, ...]  # norecursedirs patterns


_roots: Roots | None = None
_found: tuple[Path, ...] | None = None  # the walk's result, until the next configure (an in-process rerun)


def configure(invocation_dir: Path, args: Sequence[str], norecursedirs: Sequence[str]) -> None:
    """Set the collection roots of this process's run (collect.py's pytest_configure)."""
    global _roots, _found
    paths = []
    for arg in args:
        path = (invocation_dir / arg.split("::", 1)[0]).resolve()
        if path.exists():  # a --pyargs module name is no path: nothing is walked for it
            paths.append(path)
    _roots = Roots(tuple(paths), tuple(norecursedirs))
    _found = None


def suite_files() -> tuple[Path, ...]:
    """Every `*.tooleval.yaml` (or `.yml`) under the roots, sorted (the first call walks; later ones are free)."""
    global _found
    if _roots is None:
        return ()
    if _found is None:
        _found = _walk(_roots)
    return _found


def is_suite_file(path: Path) -> bool:
    return any(path.name.endswith(suffix) and len(path.name) > len(suffix) for suffix in SUFFIXES)


def _walk(roots: Roots) -> tuple[Path, ...]:
    found: set[Path] = set()
    for root in roots.paths:
        if root.is_file():
            if is_suite_file(root):
                found.add(root)
            continue
        for folder, subfolders, files in os.walk(root):
            subfolders[:] = [name for name in subfolders if not _skipped(Path(folder) / name, roots.skip)]
            found.update(Path(folder) / name for name in files if is_suite_file(Path(name)))
    return tuple(sorted(found))


def _skipped(folder: Path, patterns: Sequence[str]) -> bool:
    """Whether pytest would not recurse into `folder`: a pattern matches its name, or, when the pattern holds a
    separator (`examples`), the end of its path (pytest's own fnmatch_ex)."""
    if folder.name == "__pycache__":
        return True
    for pattern in patterns:
        if os.sep != "/" and os.sep not in pattern:
            pattern = pattern.replace("/", os.sep)
        if os.sep not in pattern:
            matched = fnmatch.fnmatch(folder.name, pattern)
        else:
            matched = fnmatch.fnmatch(str(folder), pattern if os.path.isabs(pattern) else f"*{os.sep}{pattern}")
        if matched:
            return True
    return False
