"""Fetch a pinned upstream archive once into the per-user cache, verifying every file we keep.

The archive is a GitHub tarball (one top-level folder). We keep only the files the manifest names, check
each against its sha256, lift prompt constants out of upstream Python files with `ast` (never importing
or executing them), and move the finished folder into place atomically, so concurrent xdist workers and
interrupted downloads never see a half-written tree.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .. import python_ast
from ..errors import DataError, ToolevalUsageError


@dataclass(frozen=True)
class Pin:
    """What to download and how to check it.

    Attributes:
        name: suite folder name in the cache (e.g. "acebench").
        url: the archive URL (a .tar.gz).
        files: {relative path: sha256} of every data file to keep.
        prompt_constants: {upstream .py path: [constant names]} to lift into prompts.json.
        prompts_sha256: sha256 of the lifted prompt constants (canonical JSON), or "" to skip that check.
        member_constants: {upstream .py path: {selector: key}}: strings held by a class rather than the module,
            stored in prompts.json under the path, by key (see `lift_member_constants` for the selectors).
        members_sha256: sha256 of the lifted member constants (canonical JSON), or "" to skip that check.
    """

    name: str
    url: str
    files: dict[str, str]
    prompt_constants: dict[str, list[str]]
    prompts_sha256: str = ""
    member_constants: dict[str, dict[str, str]] = field(default_factory=dict)
    members_sha256: str = ""


def canonical_sha256(value: object) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def lift_string_constants(source: str, names: list[str], origin: str) -> dict[str, str]:
    """Module-level `NAME = "text"` assignments, read with ast; nothing is imported or executed."""
    wanted = set(names)
    found: dict[str, str] = {}
    for node in python_ast.parse(source, filename=origin).body:
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Constant):
            continue
        if not isinstance(node.value.value, str):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id in wanted:
                found[target.id] = node.value.value
    missing = wanted - set(found)
    if missing:
        raise DataError(f"{origin}: prompt constants not found: {', '.join(sorted(missing))}")
    return {name: found[name] for name in names}


def lift_member_constants(source: str, selectors: Mapping[str, str], origin: str) -> dict[str, str]:
    """String constants held by classes, read with ast; nothing is imported or executed.

    A selector is ``Class.name`` (an assignment in the class body, annotated or not) or
    ``Class.__init__.name`` (an assignment in the constructor, to a local or to ``self.name``).

    Args:
        source: the text of the Python file.
        selectors: selector -> the key the string is returned under.
        origin: the file name, for error messages.

    Raises:
        DataError: a selector matched no string assignment.
    """
    body = python_ast.parse(source, filename=origin).body
    classes = {node.name: node for node in body if isinstance(node, ast.ClassDef)}
    found: dict[str, str] = {}
    for selector, key in selectors.items():
        class_name, _, member = selector.partition(".")
        method, _, name = member.rpartition(".")
        node = classes.get(class_name)
        if node is None:
            continue
        body = node.body
        if method:
            body = next((item.body for item in node.body if isinstance(item, ast.FunctionDef) and item.name == method),
                        [])
        text = _string_assigned(body, name, allow_self=bool(method))
        if text is not None:
            found[key] = text
    missing = [selector for selector, key in selectors.items() if key not in found]
    if missing:
        raise DataError(f"{origin}: class constants not found: {', '.join(missing)}")
    return {key: found[key] for key in selectors.values()}


def _string_assigned(body: list[ast.stmt], name: str, *, allow_self: bool) -> str | None:
    """The last string constant assigned to `name` (or `self.name`) among `body`'s own statements."""
    text = None
    for statement in body:
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        else:
            continue
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            continue
        for target in targets:
            named = isinstance(target, ast.Name) and target.id == name
            self_attribute = (allow_self and isinstance(target, ast.Attribute) and target.attr == name
                              and isinstance(target.value, ast.Name) and target.value.id == "self")
            if named or self_attribute:
                text = value.value
    return text


def ensure_downloaded(pin: Pin, cache_root: Path, *, timeout: float = 120.0, label: str = "") -> Path:
    """Return the verified folder for `pin`, downloading it first if the cache lacks it.

    Raises:
        DataError: the archive cannot be fetched or verified, or the cache folder cannot be written (checked
            before the download: a read-only cache folder or HOME, say).
    """
    target = cache_path(pin, cache_root)
    if (target / "MANIFEST.json").exists():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=target.parent))
    except OSError as exc:
        raise DataError(
            f"{label or pin.name} data must be downloaded into {cache_root}, which cannot be written "
            f"({exc.strerror or exc}): point --tooleval-data-dir (or TOOLEVAL_DATA_DIR) at a copy of the data, or "
            "--tooleval-cache-dir (or TOOLEVAL_CACHE_DIR) at a writable folder"
        ) from None
    try:
        archive = _fetch(pin.url, timeout)
        _extract_verified(pin, archive, staging)
        move_into_place(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def move_into_place(staging: Path, target: Path) -> None:
    """Rename the finished folder `staging` to `target` in one step, so no reader sees it half-written.

    A concurrent worker may have put its own copy there first: the rename then fails, and a `target` holding a
    MANIFEST.json (written last) is that winner's complete copy, kept. The caller removes `staging` either way.

    Raises:
        OSError: the rename failed and no complete copy stands at `target`.
    """
    try:
        os.rename(staging, target)
    except OSError:
        if not (target / "MANIFEST.json").exists():  # not a concurrent winner: a real failure
            raise


def cache_path(pin: Pin, cache_root: Path) -> Path:
    """Where `pin` lives in the cache: one folder per archive URL, so a new pin never reuses old files."""
    return cache_root / pin.name / hashlib.sha256(pin.url.encode()).hexdigest()[:16]


def _fetch(url: str, timeout: float) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # a pinned https URL
            body: bytes = response.read()  # urlopen's result has no static type: read() gives bytes
            return body
    except (urllib.error.URLError, OSError) as exc:
        raise DataError(
            f"could not download {url}: {exc}. Point --tooleval-data-dir (or TOOLEVAL_DATA_DIR) at a copy "
            "of the data, or retry when the network is reachable"
        ) from None


def _extract_verified(pin: Pin, archive: bytes, staging: Path) -> None:
    try:
        # opened apart from the `with tar:` below, so that only a bad archive is reported as one
        tar = tarfile.open(fileobj=io.BytesIO(archive), mode="r:*")  # noqa: SIM115
    except tarfile.TarError as exc:
        raise DataError(f"{pin.url}: not a readable archive ({exc})") from None
    wanted = set(pin.files) | set(pin.prompt_constants) | set(pin.member_constants)
    contents: dict[str, bytes] = {}
    with tar:
        for member in tar.getmembers():
            parts = PurePosixPath(member.name).parts
            if len(parts) < 2 or not member.isfile():
                continue
            relative = "/".join(parts[1:])  # drop the archive's top-level folder
            if relative in wanted:
                handle = tar.extractfile(member)
                contents[relative] = handle.read() if handle else b""
    missing = sorted(wanted - set(contents))
    if missing:
        raise DataError(f"{pin.url}: archive lacks {len(missing)} expected files, e.g. {missing[0]}")
    for relative, expected in pin.files.items():
        actual = hashlib.sha256(contents[relative]).hexdigest()
        if actual != expected:
            raise DataError(f"{pin.url}: {relative} has sha256 {actual}, expected {expected}")
        destination = staging / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(contents[relative])
    prompts = {
        path: lift_string_constants(contents[path].decode("utf-8"), names, path)
        for path, names in pin.prompt_constants.items()
    }
    if pin.prompts_sha256 and canonical_sha256(prompts) != pin.prompts_sha256:
        raise DataError(f"{pin.url}: lifted prompt constants do not match the pinned hash")
    members = {
        path: lift_member_constants(contents[path].decode("utf-8"), selectors, path)
        for path, selectors in pin.member_constants.items()
    }
    if pin.members_sha256 and canonical_sha256(members) != pin.members_sha256:
        raise DataError(f"{pin.url}: lifted class constants do not match the pinned hash")
    for path, lifted in members.items():
        prompts.setdefault(path, {}).update(lifted)
    (staging / "prompts.json").write_text(json.dumps(prompts, ensure_ascii=False, indent=1), encoding="utf-8")
    manifest = {"url": pin.url, "files": pin.files}
    (staging / "MANIFEST.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def locate_data(data_dir: str | None, cache_dir: Path, offline: bool, *, folder: str, marker: str, expected: str,
                label: str, pin: Callable[[], Pin]) -> Path:
    """A suite's data root: the given folder (the root holding `folder`/, or that folder itself, recognised by
    `marker`), else the download cache, downloading the pinned archive there first unless offline."""
    if data_dir:
        given = Path(data_dir).expanduser()
        for candidate in (given / folder, given):
            if (candidate / marker).exists():
                return candidate
        raise DataError(f"{given}: no {label} data there (expected {expected} under it or under {given}/{folder})")
    return cached_or_downloaded(pin(), cache_dir, offline, label)


def cached_or_downloaded(pinned: Pin, cache_dir: Path, offline: bool, label: str) -> Path:
    """`pinned`'s folder in the download cache, downloaded there first unless offline (a usage error then)."""
    cached = cache_path(pinned, cache_dir)
    if (cached / "MANIFEST.json").exists():
        return cached
    if offline:
        raise ToolevalUsageError(
            f"{label} data is not in the cache and --tooleval-offline forbids the download: "
            "pass --tooleval-data-dir or set TOOLEVAL_DATA_DIR"
        )
    return ensure_downloaded(pinned, cache_dir, label=label)


def manifest_sha256(root: Path) -> str | None:
    """sha256 of a data folder's MANIFEST.json (the pinned files it holds), None when it has none."""
    manifest = root / "MANIFEST.json"
    return hashlib.sha256(manifest.read_bytes()).hexdigest() if manifest.exists() else None
