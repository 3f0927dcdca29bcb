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
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .errors import DataError


@dataclass(frozen=True)
class Pin:
    """What to download and how to check it.

    Attributes:
        name: suite folder name in the cache (e.g. "acebench").
        url: the archive URL (a .tar.gz).
        files: {relative path: sha256} of every data file to keep.
        prompt_constants: {upstream .py path: [constant names]} to lift into prompts.json.
        prompts_sha256: sha256 of the lifted prompts (canonical JSON), or "" to skip that check.
    """

    name: str
    url: str
    files: dict[str, str]
    prompt_constants: dict[str, list[str]]
    prompts_sha256: str = ""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def canonical_sha256(value: object) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def lift_string_constants(source: str, names: list[str], origin: str) -> dict[str, str]:
    """Module-level `NAME = "text"` assignments, read with ast; nothing is imported or executed."""
    wanted = set(names)
    found: dict[str, str] = {}
    for node in ast.parse(source, filename=origin).body:
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


def ensure_downloaded(pin: Pin, cache_root: Path, *, timeout: float = 120.0) -> Path:
    """Return the verified folder for `pin`, downloading it first if the cache lacks it."""
    target = cache_path(pin, cache_root)
    if (target / "MANIFEST.json").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=target.parent))
    try:
        archive = _fetch(pin.url, timeout)
        _extract_verified(pin, archive, staging)
        try:
            os.rename(staging, target)
        except OSError:
            if not (target / "MANIFEST.json").exists():  # not a concurrent winner: a real failure
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def cache_path(pin: Pin, cache_root: Path) -> Path:
    """Where `pin` lives in the cache: one folder per archive URL, so a new pin never reuses old files."""
    return cache_root / pin.name / hashlib.sha256(pin.url.encode()).hexdigest()[:16]


def _fetch(url: str, timeout: float) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (pinned https URL)
            return response.read()
    except (urllib.error.URLError, OSError) as exc:
        raise DataError(
            f"could not download {url}: {exc}. Point --tooleval-data-dir (or TOOLEVAL_DATA_DIR) at a copy "
            "of the data, or retry when the network is reachable"
        ) from None


def _extract_verified(pin: Pin, archive: bytes, staging: Path) -> None:
    try:
        tar = tarfile.open(fileobj=io.BytesIO(archive), mode="r:*")
    except tarfile.TarError as exc:
        raise DataError(f"{pin.url}: not a readable archive ({exc})") from None
    wanted = set(pin.files) | set(pin.prompt_constants)
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
    (staging / "prompts.json").write_text(json.dumps(prompts, ensure_ascii=False, indent=1), encoding="utf-8")
    manifest = {"url": pin.url, "files": pin.files}
    (staging / "MANIFEST.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
