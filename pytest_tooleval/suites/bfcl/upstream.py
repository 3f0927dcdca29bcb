"""The pinned bfcl-eval wheel: its data folder, found or downloaded and verified, and its request texts (bfcl §1).

One download of the wheel (from the registry's file URL, or a copy the user points at) gives both: the data
files, checked one by one against pin.json and moved into the cache folder whole, and the request texts,
lifted with `ast` (templates.py) into a file of their own beside it. Nothing of bfcl-eval is installed,
imported or executed. Scoring reads only the data; only asking a model needs the texts.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import io
import json
import os
import shutil
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from ...data.download import canonical_sha256, move_into_place
from ...data.files import FileRefused, read_bytes
from ...data.hashes import sha256_of
from ...errors import DataError, ToolevalUsageError
from ...json_value import JSONValue
from .format_sensitivity.prompts import SOURCE_FILES as FORMAT_SOURCE_FILES
from .format_sensitivity.prompts import FormatPrompts, lift_format_prompts
from .memory.prompts import SOURCE_FILES as MEMORY_SOURCE_FILES
from .memory.prompts import MemoryPrompts, lift_memory_prompts
from .multi_turn.tables import Tables, lift_tables, source_files
from .prices import SOURCE_FILES as PRICE_SOURCE_FILES
from .prices import PriceTable, lift_prices
from .templates import SOURCE_FILES, Templates, lift_templates
from .web_search.data import WebSearchFiles, lift_web_search
from .web_search.data import source_files as web_search_files

PIN_FILE = Path(__file__).with_name("pin.json")
WHEEL_ENV = "TOOLEVAL_BFCL_WHEEL"  # a local copy of the pinned wheel (--tooleval-bfcl-wheel)
MARKER = "BFCL_v4_simple_python.json"  # a file that tells a BFCL data folder
LABEL = "BFCL"
_DOWNLOAD_LIMIT = 64 << 20  # the pinned wheel is under 2 MB; a response past this is not it


@dataclass(frozen=True)
class WheelPin:
    """The pinned wheel and what is kept of it (pin.json).

    Attributes:
        upstream: the project, for MANIFEST.json.
        version: bfcl-eval's version.
        wheel: the wheel's file name.
        url: the registry's file URL.
        wheel_sha256: the wheel's sha256.
        prefix: the data folder's path inside the wheel ("bfcl_eval/data/").
        files: {path under the data folder: sha256} of every file kept (web_search's questions and answers and
            unused_datasets/ are not, bfcl §1.1).
        templates_sha256: canonical sha256 of the lifted request texts ("" skips that check).
        tables_sha256: canonical sha256 of the lifted multi-turn tables ("" skips that check).
        memory_prompts_sha256: canonical sha256 of the lifted memory texts ("" skips that check).
        web_search_sha256: canonical sha256 of the web search questions and answers ("" skips that check).
        format_prompts_sha256: canonical sha256 of the lifted format-sensitivity texts ("" skips that check).
        prices_sha256: canonical sha256 of the lifted price table ("" skips that check).
    """

    upstream: str
    version: str
    wheel: str
    url: str
    wheel_sha256: str
    prefix: str
    files: Mapping[str, str]
    templates_sha256: str
    tables_sha256: str = ""
    memory_prompts_sha256: str = ""
    web_search_sha256: str = ""
    format_prompts_sha256: str = ""
    prices_sha256: str = ""

    def manifest_text(self) -> str:
        """MANIFEST.json as the data folder holds it, byte for byte (bfcl §1.2)."""
        manifest = {"upstream": self.upstream, "version": self.version, "wheel": self.wheel,
                    "wheel_sha256": self.wheel_sha256, "wheel_path_prefix": self.prefix,
                    "files": dict(sorted(self.files.items()))}
        return json.dumps(manifest, indent=1)


@cache
def load_pin() -> WheelPin:
    raw: dict[str, Any] = json.loads(PIN_FILE.read_text(encoding="utf-8"))
    return WheelPin(raw["upstream"], raw["version"], raw["wheel"], raw["url"], raw["wheel_sha256"],
                    raw["wheel_path_prefix"], dict(raw["files"]), raw["templates_sha256"], raw.get("tables_sha256", ""),
                    raw.get("memory_prompts_sha256", ""), raw.get("web_search_sha256", ""),
                    raw.get("format_prompts_sha256", ""), raw.get("prices_sha256", ""))


def given_wheel(option: str | None) -> Path | None:
    """The local wheel the user points at: the option's value, else TOOLEVAL_BFCL_WHEEL, else None."""
    value = option or os.environ.get(WHEEL_ENV)
    return Path(value).expanduser() if value else None


def data_folder(pin: WheelPin, cache_dir: Path) -> Path:
    """Where the pinned data lives in the download cache."""
    return cache_dir / "bfcl" / pin.version


def templates_file(pin: WheelPin, cache_dir: Path) -> Path:
    """Where the lifted request texts live in the download cache: beside the data folder, not in it."""
    return cache_dir / f"bfcl-templates-{pin.version}.json"


def tables_file(pin: WheelPin, cache_dir: Path) -> Path:
    """Where the lifted multi-turn tables live in the download cache: beside the templates file."""
    return cache_dir / f"bfcl-tables-{pin.version}.json"


def memory_prompts_file(pin: WheelPin, cache_dir: Path) -> Path:
    """Where the lifted memory texts live in the download cache: beside the templates file."""
    return cache_dir / f"bfcl-memory-prompts-{pin.version}.json"


def web_search_file(pin: WheelPin, cache_dir: Path) -> Path:
    """Where the web search questions and answers live in the download cache: beside the templates file."""
    return cache_dir / f"bfcl-web-search-{pin.version}.json"


def format_prompts_file(pin: WheelPin, cache_dir: Path) -> Path:
    """Where the lifted format-sensitivity texts live in the download cache: beside the templates file."""
    return cache_dir / f"bfcl-format-prompts-{pin.version}.json"


def prices_file(pin: WheelPin, cache_dir: Path) -> Path:
    """Where the lifted price table lives in the download cache: beside the templates file."""
    return cache_dir / f"bfcl-prices-{pin.version}.json"


# ------------------------------------------------------------------------------------------ the data


def ensure_data(data_dir: str | None, cache_dir: Path, offline: bool, *, wheel: Path | None = None,
                pin: WheelPin | None = None, timeout: float = 120.0) -> Path:
    """The verified BFCL data folder: under `data_dir` (its bfcl/ or itself), else the download cache, filled
    first from `wheel` (a local copy) or the registry unless offline.

    Every pinned file is checked against its sha256 (remembered by size and mtime, data/hashes.py).

    Raises:
        DataError: no BFCL data in `data_dir`; a file that differs from the pin; a download or wheel that
            cannot be read or verified; a cache folder that cannot be written.
        ToolevalUsageError: offline, not in the cache, and no wheel given.
    """
    pinned = pin or load_pin()
    if data_dir:
        given = Path(data_dir).expanduser()
        for candidate in (given / "bfcl", given):
            if (candidate / MARKER).exists():
                _check_folder(candidate, pinned, cache_dir, cached=False)
                return candidate
        raise DataError(f"{given}: no {LABEL} data there (expected {MARKER} under it or under {given}/bfcl; "
                        "without the data folder option the data is downloaded, or -m 'not bfcl' leaves BFCL out)")
    cached = data_folder(pinned, cache_dir)
    if not (cached / "MANIFEST.json").exists():
        if wheel is None and offline:
            raise ToolevalUsageError(
                f"{LABEL} data is not in the cache and --tooleval-offline forbids the download: pass "
                f"--tooleval-data-dir or set TOOLEVAL_DATA_DIR (or point --tooleval-bfcl-wheel or {WHEEL_ENV} at "
                f"{pinned.wheel})"
            )
        archive = _read_wheel(wheel, pinned) if wheel is not None else _download(pinned, timeout)
        _install(archive, pinned, cache_dir)
    _check_folder(cached, pinned, cache_dir, cached=True)
    return cached


_checked: set[tuple[Path, str]] = set()  # (folder, pin's wheel sha256) verified in this process


def _check_folder(folder: Path, pin: WheelPin, cache_dir: Path, *, cached: bool) -> None:
    key = (folder.absolute(), pin.wheel_sha256)
    if key in _checked:
        return
    paths = sorted(pin.files)
    hashed = sha256_of([folder / path for path in paths], cache_dir)
    differ = [f"{path} (missing)" if hashed[folder / path] is None
              else f"{path} (sha256 {str(hashed[folder / path])[:12]}, pinned {pin.files[path][:12]})"
              for path in paths if hashed[folder / path] != pin.files[path]]
    if differ:
        files = "1 file differs" if len(differ) == 1 else f"{len(differ)} files differ"
        fix = (f"delete {folder} to download it again" if cached else
               f"point --tooleval-data-dir at an unmodified copy of bfcl-eval {pin.version}'s data, or leave it unset "
               "to download it")
        raise DataError(f"{folder} is not bfcl-eval {pin.version}'s data: {files}, first "
                        f"{', '.join(differ[:3])}; {fix}")
    _checked.add(key)


# ------------------------------------------------------------------------------------------ what is lifted


class _Lifted(Protocol):
    """What a lifter makes of the wheel's sources: content that goes into a cache file and its canonical hash."""

    def content(self) -> Mapping[str, object]: ...

    def sha256(self) -> str: ...


_L = TypeVar("_L", bound=_Lifted)


@dataclass(frozen=True)
class _Artifact(Generic[_L]):
    """One kind of thing lifted from the wheel's sources with `ast` and memoised beside the data folder.

    Attributes:
        what: how messages name it ("request texts").
        needed_by: what needs it, for the offline error ("asking a model").
        key: its key in the cache file, and its pin's `<key>_sha256`.
        file: where the cache file lives.
        sources: the wheel's files it is lifted from.
        lift: sources (path -> text) -> the artifact.
        restore: a cache file's content -> the artifact (DataError when it is not one).
    """

    what: str
    needed_by: str
    key: str
    file: Callable[[WheelPin, Path], Path]
    sources: Callable[[], list[str]]
    lift: Callable[[Mapping[str, str]], _L]
    restore: Callable[[Mapping[str, JSONValue]], _L]

    def pinned_sha256(self, pin: WheelPin) -> str:
        return {"templates": pin.templates_sha256, "tables": pin.tables_sha256,
                "memory_prompts": pin.memory_prompts_sha256, "web_search": pin.web_search_sha256,
                "format_prompts": pin.format_prompts_sha256, "prices": pin.prices_sha256}[self.key]

    def lifted(self, archive: bytes, pin: WheelPin) -> _L:
        """The artifact of a verified wheel, checked against the pinned hash."""
        sources = _members(archive, pin, self.sources())
        try:
            texts = {path: data.decode("utf-8") for path, data in sources.items()}
        except UnicodeDecodeError as exc:
            raise DataError(f"{pin.wheel}: a source file is not UTF-8 ({exc.reason})") from None
        made = self.lift(texts)
        pinned = self.pinned_sha256(pin)
        if pinned and made.sha256() != pinned:
            raise DataError(f"{pin.wheel}: the lifted {self.what} have sha256 {made.sha256()[:12]}, pinned "
                            f"{pinned[:12]}")
        return made

    def stored(self, pin: WheelPin, cache_dir: Path) -> _L | None:
        """The cache file's artifact, or None when it is missing or not the pinned wheel's (then made again)."""
        try:
            stored = json.loads(self.file(pin, cache_dir).read_text(encoding="utf-8"))
            content = stored[self.key]
            if stored["wheel_sha256"] != pin.wheel_sha256:
                return None
            pinned = self.pinned_sha256(pin)
            if pinned and canonical_sha256(content) != pinned:
                return None
            return self.restore(content)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, DataError):
            return None

    def write(self, made: _L, pin: WheelPin, cache_dir: Path) -> None:
        _write_record(self.file(pin, cache_dir), {"wheel": pin.wheel, "wheel_sha256": pin.wheel_sha256,
                                                  f"{self.key}_sha256": made.sha256(), self.key: made.content()})

    def load(self, cache_dir: Path, offline: bool, wheel: Path | None, pin: WheelPin | None,
             timeout: float) -> _L:
        """From `wheel` when given, else the cache file, else the wheel downloaded (which also fills the cache's
        data folder, if it is empty, and the other artifacts' files)."""
        pinned = pin or load_pin()
        if wheel is not None:
            made = self.lifted(_read_wheel(wheel, pinned), pinned)
            with contextlib.suppress(OSError):  # a memo for later runs; a read-only cache just goes without
                self.write(made, pinned, cache_dir)
            return made
        stored = self.stored(pinned, cache_dir)
        if stored is not None:
            return stored
        if offline:
            raise ToolevalUsageError(
                f"{self.needed_by} needs bfcl-eval {pinned.version}'s {self.what}, which are not in the cache and "
                f"--tooleval-offline forbids downloading its wheel: point --tooleval-bfcl-wheel (or {WHEEL_ENV}) "
                f"at {pinned.wheel} (pip download --no-deps bfcl-eval=={pinned.version}), or run once without "
                "--tooleval-offline"
            )
        archive = _download(pinned, timeout)
        _install(archive, pinned, cache_dir)
        return self.lifted(archive, pinned)


def _write_record(path: Path, record: Mapping[str, object]) -> None:
    """Write a cache file whole (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.stem}-", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(record, out, ensure_ascii=False, indent=1)
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


_TEMPLATES = _Artifact("request texts", "asking a model", "templates", templates_file, lambda: list(SOURCE_FILES),
                       lift_templates, Templates.from_content)
_TABLES = _Artifact("multi-turn API tables", "the multi-turn categories", "tables", tables_file,
                    lambda: list(source_files()), lift_tables, Tables.from_content)
_MEMORY_PROMPTS = _Artifact("memory texts", "the memory categories", "memory_prompts", memory_prompts_file,
                            lambda: list(MEMORY_SOURCE_FILES), lift_memory_prompts, MemoryPrompts.from_content)
_WEB_SEARCH = _Artifact("web search questions and answers", "the web search categories", "web_search",
                        web_search_file, lambda: web_search_files(load_pin().prefix), lift_web_search,
                        WebSearchFiles.from_content)
_FORMAT_PROMPTS = _Artifact("format-sensitivity texts", "the format-sensitivity category", "format_prompts",
                            format_prompts_file, lambda: list(FORMAT_SOURCE_FILES), lift_format_prompts,
                            FormatPrompts.from_content)
_PRICES = _Artifact("model prices", "the cost column", "prices", prices_file, lambda: list(PRICE_SOURCE_FILES),
                    lift_prices, PriceTable.from_content)


def load_templates(cache_dir: Path, offline: bool, *, wheel: Path | None = None, pin: WheelPin | None = None,
                   timeout: float = 120.0) -> Templates:
    """The request texts of the pinned wheel (templates.py).

    Raises:
        DataError: the wheel is not the pinned one, or its texts are not the pinned texts.
        ToolevalUsageError: offline, and neither a wheel nor the cache's templates file.
    """
    return _TEMPLATES.load(cache_dir, offline, wheel, pin, timeout)


def load_tables(cache_dir: Path, offline: bool, *, wheel: Path | None = None, pin: WheelPin | None = None,
                timeout: float = 120.0) -> Tables:
    """The multi-turn APIs' tables of the pinned wheel (multi_turn/tables.py).

    Raises:
        DataError: the wheel is not the pinned one, or its tables are not the pinned tables.
        ToolevalUsageError: offline, and neither a wheel nor the cache's tables file.
    """
    return _TABLES.load(cache_dir, offline, wheel, pin, timeout)


def load_web_search(cache_dir: Path, offline: bool, *, wheel: Path | None = None, pin: WheelPin | None = None,
                    timeout: float = 120.0) -> WebSearchFiles:
    """The web search questions and answers of the pinned wheel, which its data folder leaves out
    (web_search/data.py).

    Raises:
        DataError: the wheel is not the pinned one, or its files are not the pinned files.
        ToolevalUsageError: offline, and neither a wheel nor the cache's web search file.
    """
    return _WEB_SEARCH.load(cache_dir, offline, wheel, pin, timeout)


def load_memory_prompts(cache_dir: Path, offline: bool, *, wheel: Path | None = None, pin: WheelPin | None = None,
                        timeout: float = 120.0) -> MemoryPrompts:
    """The memory category's texts of the pinned wheel (memory/prompts.py).

    Raises:
        DataError: the wheel is not the pinned one, or its texts are not the pinned texts.
        ToolevalUsageError: offline, and neither a wheel nor the cache's memory texts file.
    """
    return _MEMORY_PROMPTS.load(cache_dir, offline, wheel, pin, timeout)


def load_format_prompts(cache_dir: Path, offline: bool, *, wheel: Path | None = None, pin: WheelPin | None = None,
                        timeout: float = 120.0) -> FormatPrompts:
    """The format-sensitivity category's texts of the pinned wheel (format_sensitivity/prompts.py).

    Raises:
        DataError: the wheel is not the pinned one, or its texts are not the pinned texts.
        ToolevalUsageError: offline, and neither a wheel nor the cache's format-sensitivity texts file.
    """
    return _FORMAT_PROMPTS.load(cache_dir, offline, wheel, pin, timeout)


def load_prices(cache_dir: Path, offline: bool, *, wheel: Path | None = None, pin: WheelPin | None = None,
                timeout: float = 120.0) -> PriceTable:
    """bfcl's model prices and local-model constants of the pinned wheel (prices.py).

    Raises:
        DataError: the wheel is not the pinned one, or its prices are not the pinned prices.
        ToolevalUsageError: offline, and neither a wheel nor the cache's prices file.
    """
    return _PRICES.load(cache_dir, offline, wheel, pin, timeout)


# ------------------------------------------------------------------------------------------ the wheel


def _read_wheel(path: Path, pin: WheelPin) -> bytes:
    """The local copy of the wheel, whole and verified: a regular file of at most `_DOWNLOAD_LIMIT` bytes."""
    try:
        archive = read_bytes(path, _DOWNLOAD_LIMIT)
    except FileRefused as exc:
        raise DataError(f"{path}: {exc}: point --tooleval-bfcl-wheel (or {WHEEL_ENV}) at {pin.wheel}") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read the bfcl-eval wheel ({exc.strerror or exc}): point "
                        f"--tooleval-bfcl-wheel (or {WHEEL_ENV}) at {pin.wheel}") from None
    actual = hashlib.sha256(archive).hexdigest()
    if actual != pin.wheel_sha256:
        raise DataError(f"{path}: sha256 {actual[:12]}, not the pinned {pin.wheel} ({pin.wheel_sha256[:12]}): "
                        f"get that one with pip download --no-deps bfcl-eval=={pin.version}")
    return archive


def _download(pin: WheelPin, timeout: float) -> bytes:
    """The wheel from the registry, whole and verified; nothing is written here."""
    fix = (f"retry when the network is reachable, or point --tooleval-bfcl-wheel (or {WHEEL_ENV}) at a copy of "
           f"{pin.wheel} (pip download --no-deps bfcl-eval=={pin.version})")
    try:
        with urllib.request.urlopen(pin.url, timeout=timeout) as response:  # the pinned https URL
            archive: bytes = response.read(_DOWNLOAD_LIMIT + 1)
            announced = response.headers.get("Content-Length", "")
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        reason = type(exc).__name__ if isinstance(exc, http.client.IncompleteRead) else str(exc)
        raise DataError(f"could not download {pin.url}: {reason}: {fix}") from None
    if announced.isdigit() and int(announced) != len(archive):  # the connection closed early
        raise DataError(f"could not download {pin.url}: it stopped after {len(archive)} of {announced} bytes: {fix}")
    actual = hashlib.sha256(archive).hexdigest()
    if actual != pin.wheel_sha256:
        raise DataError(f"{pin.url}: the download has sha256 {actual[:12]}, not the pinned {pin.wheel_sha256[:12]}: "
                        f"{fix}")
    return archive


def _members(archive: bytes, pin: WheelPin, wanted: list[str]) -> dict[str, bytes]:
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as wheel:
            names = set(wheel.namelist())
            missing = [name for name in wanted if name not in names]
            if missing:
                raise DataError(f"{pin.wheel}: lacks {len(missing)} expected files, e.g. {missing[0]}")
            return {name: wheel.read(name) for name in wanted}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as exc:
        raise DataError(f"{pin.wheel}: not a readable wheel ({exc})") from None


def _install(archive: bytes, pin: WheelPin, cache_dir: Path) -> None:
    """What a verified wheel gives, into the cache: the data folder (if missing), and the files of what is lifted
    from it (request texts, tables, memory and format-sensitivity texts, web search questions, prices).

    The data files are written into a fresh hidden folder beside the target and that folder renamed into
    place whole, so a concurrent worker or an interrupted run never leaves a half-written data folder."""
    templates = _TEMPLATES.lifted(archive, pin)
    tables = _TABLES.lifted(archive, pin)
    memory_prompts = _MEMORY_PROMPTS.lifted(archive, pin)
    web_search = _WEB_SEARCH.lifted(archive, pin)
    format_prompts = _FORMAT_PROMPTS.lifted(archive, pin)
    prices = _PRICES.lifted(archive, pin)
    target = data_folder(pin, cache_dir)
    contents = None if (target / "MANIFEST.json").exists() else _data_files(archive, pin)  # verified before writing
    try:
        if contents is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            _place(contents, pin, target)
        _TEMPLATES.write(templates, pin, cache_dir)
        _TABLES.write(tables, pin, cache_dir)
        _MEMORY_PROMPTS.write(memory_prompts, pin, cache_dir)
        _WEB_SEARCH.write(web_search, pin, cache_dir)
        _FORMAT_PROMPTS.write(format_prompts, pin, cache_dir)
        _PRICES.write(prices, pin, cache_dir)
    except OSError as exc:
        raise DataError(
            f"{LABEL} data must be downloaded into {cache_dir}, which cannot be written "
            f"({exc.strerror or exc}): point --tooleval-data-dir (or TOOLEVAL_DATA_DIR) at a copy of the data, or "
            "--tooleval-cache-dir (or TOOLEVAL_CACHE_DIR) at a writable folder"
        ) from None


def _data_files(archive: bytes, pin: WheelPin) -> dict[str, bytes]:
    """The pinned data files of the wheel, each checked against its sha256."""
    members = _members(archive, pin, [pin.prefix + path for path in sorted(pin.files)])
    contents = {path: members[pin.prefix + path] for path in sorted(pin.files)}
    for path, data in contents.items():
        actual = hashlib.sha256(data).hexdigest()
        if actual != pin.files[path]:
            raise DataError(f"{pin.wheel}: {pin.prefix}{path} has sha256 {actual[:12]}, pinned {pin.files[path][:12]}")
    return contents


def _place(contents: Mapping[str, bytes], pin: WheelPin, target: Path) -> None:
    staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=target.parent))
    try:
        for path, data in contents.items():
            destination = staging / path
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(data)
        (staging / "MANIFEST.json").write_text(pin.manifest_text(), encoding="utf-8")
        move_into_place(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
