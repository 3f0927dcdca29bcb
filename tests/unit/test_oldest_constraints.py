"""The oldest-versions job (.ci/oldest, which .ci/run ends with) installs .ci/oldest-constraints.txt: every lower
bound pyproject.toml declares is pinned there, at that version, so what the job tests is what the project promises."""

from __future__ import annotations

import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import Specifier
from packaging.utils import canonicalize_name
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest itself needs tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
#: declared with a lower bound but not pinned, with the constraints file's reason (it must give one)
NOT_PINNED = {"mypy"}


def lower_bounds() -> dict[str, Version]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = [
        *project["dependencies"],
        *(line for lines in project["optional-dependencies"].values() for line in lines),
    ]
    bounds: dict[str, Version] = {}
    for line in declared:
        requirement = Requirement(line)
        for specifier in requirement.specifier:
            if specifier.operator == ">=":
                bounds[canonicalize_name(requirement.name)] = Version(specifier.version)
    return bounds


def pins() -> dict[str, Version]:
    text = (ROOT / ".ci" / "oldest-constraints.txt").read_text(encoding="utf-8")
    pinned: dict[str, Version] = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            requirement = Requirement(line)
            (specifier,) = requirement.specifier
            assert isinstance(specifier, Specifier) and specifier.operator == "==", line
            pinned[canonicalize_name(requirement.name)] = Version(specifier.version)
    return pinned


def test_every_lower_bound_is_pinned_at_its_version() -> None:
    bounds, pinned = lower_bounds(), pins()
    assert {"pytest", "pytest-xdist", "openai", "pytest-asyncio"} <= set(bounds)  # the parse found the lists
    assert {name: bounds[name] for name in bounds if name not in NOT_PINNED} == pinned


def test_what_is_not_pinned_says_why() -> None:
    text = (ROOT / ".ci" / "oldest-constraints.txt").read_text(encoding="utf-8")
    for name in NOT_PINNED:
        assert f"# {name} is not pinned: " in text
