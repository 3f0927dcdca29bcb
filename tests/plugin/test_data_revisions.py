"""ACEBench revisions end to end (issue 25): a run names the revision it scores against (the header line, the
report's fingerprint and rows); a data folder is checked against that revision's pin before anything is asked
(another revision's folder, or a folder with a file changed, is one line and exit status 4, unless
--tooleval-data-unverified); each file's sha256 is remembered in the cache folder with what a stat says of the
file (size, mtime, ctime, inode, device: pytest_tooleval/data/hashes.py), and a file whose content changed is
read again and caught, even when its mtime was set back (issue 40)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI
from pytest_tooleval.data.hashes import RECORD_NAME, sha256_of, stamp
from pytest_tooleval.suites.acebench.revisions import DEFAULT, revision
from refused_runs import refused_line
from upstream_data import acebench_at

CATEGORY = "special_irrelevant"  # 50 samples, one request each; the oracle passes them all at either revision
SAMPLES = 50
CHANGED = f"data_all/data_en/data_{CATEGORY}.json"  # the file the tests change: a prompt file the run reads
ANSWERS = f"data_all/data_en/possible_answer/data_{CATEGORY}.json"  # its possible answers
GUARD_S = 60.0  # a hang guard, never a bound the test asserts


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """The thin ACEBench module; the data folder comes from each run's --tooleval-data-dir alone."""
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    return pytester


def run(pytester: pytest.Pytester, data: Path, *more: str) -> pytest.RunResult:
    """The oracle over CATEGORY, its report in report.json and its cache (the hash record) in cache/."""
    return pytester.runpytest_subprocess(
        "--tooleval-model=oracle",
        f"--tooleval-data-dir={data}",
        f"--tooleval-categories={CATEGORY}",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
        "--tooleval-report=report.json",
        *more,
    )


def report(pytester: pytest.Pytester) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    return loaded


def header(result: pytest.RunResult) -> str:
    return next(line for line in result.stdout.lines if line.startswith("tooleval: "))


def copy_of(folder: Path, to: Path) -> Path:
    """A copy of a revision's data files (data_all/, prompts.json, MANIFEST.json), as a user's own folder."""
    shutil.copytree(folder / "data_all", to / "data_all")
    for name in ("prompts.json", "MANIFEST.json"):
        shutil.copy2(folder / name, to / name)
    return to


def change_one_letter(path: Path) -> None:
    """Change the file's content, not its size: the first letter of its first question changes case (it stays
    JSON, and the sample's ground truth does not depend on it)."""
    content = path.read_bytes()
    at = content.index(b'"question": "') + len(b'"question": "')
    while not content[at : at + 1].isalpha():
        at += 1
    path.write_bytes(content[:at] + content[at : at + 1].swapcase() + content[at + 1 :])


def later_mtime(path: Path) -> None:
    """A modification time ten seconds after the file's own (however coarse the file system's clock)."""
    status = path.stat()
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 10_000_000_000))


# -- the revision a run scores against is named --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "chosen", "source"),
    [
        ("56dd66c", [], "default"),
        ("e6db74b", ["--tooleval-acebench-revision=e6db74b"], "cli"),
    ],
    ids=["default-56dd66c", "e6db74b"],
)
def test_a_run_on_the_data_root_names_its_revision_in_the_header_and_the_fingerprint(
    project: pytest.Pytester, data_root: Path, name: str, chosen: list[str], source: str, request: pytest.FixtureRequest
) -> None:
    """The data root holds both revisions' folders: the run reads the one its revision names, and says which."""
    acebench_at(request, name)  # that revision's folder is under the data root (the test skips without it)
    result = run(project, data_root, *chosen)
    result.assert_outcomes(passed=SAMPLES)
    assert f"acebench-revision={name} ({source})" in header(result), header(result)
    written = report(project)
    assert written["fingerprint"]["acebench"]["revision"] == name
    assert written["fingerprint"]["acebench"]["data_verified"] is True
    assert {row["revision"] for row in written["samples"]} == {name}


# -- a folder that is not the revision's is refused before anything is asked ---------------------------------


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_the_e6db74b_folder_under_the_default_revision_is_one_line_naming_it_and_the_option(
    project: pytest.Pytester,
    acebench_dir: Path,
    fake_openai: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    workers: list[str],
) -> None:
    monkeypatch.delenv("TOOLEVAL_NO_PROBE", raising=False)  # not even the endpoint probe may be sent
    result = project.runpytest_subprocess(
        *workers,
        "--tooleval-model=m",
        f"--tooleval-base-url={fake_openai.base_url}",
        "--tooleval-api-key=sk-revisions-1",
        f"--tooleval-data-dir={acebench_dir}",
        f"--tooleval-categories={CATEGORY}",
        f"--tooleval-cache-dir={project.path / 'cache'}",
        "-p",
        "no:cacheprovider",
    )
    assert refused_line(result) == (
        f"ERROR: {acebench_dir} holds ACEBench e6db74b, not 56dd66c (the default): pass "
        "--tooleval-acebench-revision e6db74b to score against it, or point --tooleval-data-dir at ACEBench "
        "56dd66c's data"
    )
    assert fake_openai.stats.requests == 0


def test_without_a_model_the_skip_names_why_a_given_folder_was_refused(
    project: pytest.Pytester, acebench_dir: Path
) -> None:
    """A bare `pytest` with a data folder of the other revision: the placeholder's skip says so, not that there is
    no data."""
    result = project.runpytest_subprocess("-rs", f"--tooleval-data-dir={acebench_dir}", "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*no model to evaluate, and * holds ACEBench e6db74b, not 56dd66c*"])
    assert "no local data" not in result.stdout.str()


def test_a_copy_with_one_file_changed_is_one_line_naming_the_file(
    project: pytest.Pytester, acebench_56dd66c_dir: Path
) -> None:
    copy = copy_of(acebench_56dd66c_dir, project.path / "mine")
    change_one_letter(copy / CHANGED)
    line = refused_line(run(project, copy))
    assert line.startswith(
        f"ERROR: {copy} matches no pinned ACEBench revision: 1 file differs from 56dd66c's pin, "
        f"first {CHANGED} (sha256 "
    ), line
    assert line.endswith("; pass --tooleval-data-unverified to run on it anyway"), line
    assert not (project.path / "report.json").exists()


def test_data_unverified_runs_on_the_changed_copy_and_says_so(
    project: pytest.Pytester, acebench_56dd66c_dir: Path
) -> None:
    copy = copy_of(acebench_56dd66c_dir, project.path / "mine")
    change_one_letter(copy / CHANGED)
    result = run(project, copy, "--tooleval-data-unverified")
    result.assert_outcomes(passed=SAMPLES)
    assert "data-unverified=True (cli)" in header(result), header(result)
    fingerprint = report(project)["fingerprint"]["acebench"]
    assert (fingerprint["revision"], fingerprint["data_verified"]) == (DEFAULT, False)


# -- the hash record ---------------------------------------------------------------------------------------


def test_after_a_first_run_every_pinned_file_is_in_the_record(project: pytest.Pytester, data_root: Path) -> None:
    run(project, data_root).assert_outcomes(passed=SAMPLES)
    record = json.loads((project.path / "cache" / RECORD_NAME).read_text(encoding="utf-8"))
    folder = data_root / revision(DEFAULT).folder
    for relative, pinned in revision(DEFAULT).files.items():
        status = (folder / relative).stat()
        assert record[str(folder / relative)] == [
            status.st_size,
            status.st_mtime_ns,
            status.st_ctime_ns,
            status.st_ino,
            status.st_dev,
            pinned,
        ], relative


def test_a_file_changed_with_a_new_mtime_is_read_again_and_caught(
    project: pytest.Pytester, acebench_56dd66c_dir: Path
) -> None:
    copy = copy_of(acebench_56dd66c_dir, project.path / "mine")
    run(project, copy).assert_outcomes(passed=SAMPLES)  # checked, and every file's digest recorded
    record = project.path / "cache" / RECORD_NAME
    key = str(copy / CHANGED)
    assert json.loads(record.read_text(encoding="utf-8"))[key][-1] == revision(DEFAULT).files[CHANGED]

    later_mtime(copy / CHANGED)  # touched, the same content: read again, and still the pinned file
    run(project, copy).assert_outcomes(passed=SAMPLES)

    change_one_letter(copy / CHANGED)  # the same size: only the new mtime says the record no longer holds
    later_mtime(copy / CHANGED)
    line = refused_line(run(project, copy))
    assert f"1 file differs from 56dd66c's pin, first {CHANGED} (sha256 " in line, line
    now = hashlib.sha256((copy / CHANGED).read_bytes()).hexdigest()
    assert json.loads(record.read_text(encoding="utf-8"))[key][-1] == now  # the new digest is remembered


def test_an_answer_edited_with_its_mtime_set_back_is_read_again_and_caught(
    project: pytest.Pytester, acebench_56dd66c_dir: Path
) -> None:
    """Issue 40: a possible answer edited in place, its size kept and its mtime set back with os.utime, was
    taken for the pinned file (the record's size and mtime held) and scored. Its inode change time moved with
    the edit, and that cannot be set back: the file is read again and the run refused, as for any changed
    pinned file."""
    copy = copy_of(acebench_56dd66c_dir, project.path / "mine")
    run(project, copy).assert_outcomes(passed=SAMPLES)  # checked, and every file's digest recorded
    (project.path / "report.json").unlink()
    answers = copy / ANSWERS
    before = answers.stat()
    content = answers.read_bytes()
    answers.write_bytes(content.replace(b'"ground_truth": "Due', b'"ground_truth": "due', 1))
    os.utime(answers, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = answers.stat()
    assert answers.read_bytes() != content
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)  # all the old record saw
    line = refused_line(run(project, copy))
    assert f"1 file differs from 56dd66c's pin, first {ANSWERS} (sha256 " in line, line
    assert not (project.path / "report.json").exists()  # nothing scored


# -- filehashes.py on its own --------------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path: Path) -> dict[Path, str]:
    """Two files and their sha256."""
    made = {tmp_path / "a.json": b'{"a": 1}\n', tmp_path / "b.json": b"[" + b"2, " * 500_000 + b"2]\n"}
    for path, content in made.items():
        path.write_bytes(content)
    return {path: hashlib.sha256(content).hexdigest() for path, content in made.items()}


def test_without_a_record_each_file_is_hashed_and_the_record_written(files: dict[Path, str], tmp_path: Path) -> None:
    missing = tmp_path / "gone.json"
    assert sha256_of([*files, missing], tmp_path / "cache") == {**files, missing: None}
    record = json.loads((tmp_path / "cache" / RECORD_NAME).read_text(encoding="utf-8"))
    assert {key: value[-1] for key, value in record.items()} == {str(path): digest for path, digest in files.items()}
    assert all(value[:-1] == stamp(Path(key).stat()) for key, value in record.items())
    assert sha256_of(files, None) == files  # no record folder: hashed all the same


def test_the_record_is_what_a_second_call_reads(files: dict[Path, str], tmp_path: Path) -> None:
    """A file whose stamp the record saw is not read again (the record's digest is the answer); one whose mtime
    changed is."""
    first, second = files
    sha256_of(files, tmp_path)
    record_path = tmp_path / RECORD_NAME
    record = json.loads(record_path.read_text(encoding="utf-8"))
    record[str(first)][-1] = record[str(second)][-1] = "0" * 64
    record_path.write_text(json.dumps(record), encoding="utf-8")
    later_mtime(second)
    assert sha256_of(files, tmp_path) == {first: "0" * 64, second: files[second]}


def test_an_edit_with_the_mtime_set_back_is_read_again(files: dict[Path, str], tmp_path: Path) -> None:
    """The same size, the same mtime (os.utime), new content: the inode change time the edit moved tells."""
    first, second = files
    sha256_of(files, tmp_path / "cache")
    before = first.stat()
    first.write_bytes(b'{"b": 1}\n')  # as long as before
    os.utime(first, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (first.stat().st_size, first.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert sha256_of(files, tmp_path / "cache") == {
        first: hashlib.sha256(b'{"b": 1}\n').hexdigest(),
        second: files[second],
    }


def test_a_file_replaced_by_a_copy_is_read_again(files: dict[Path, str], tmp_path: Path) -> None:
    """A file swapped for another one with the same size and times (a copy renamed over it) has a new inode."""
    first, _ = files
    sha256_of(files, tmp_path / "cache")
    before = first.stat()
    swapped = tmp_path / "swapped"
    swapped.write_bytes(b'{"c": 1}\n')
    os.utime(swapped, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(swapped, first)
    assert sha256_of(files, tmp_path / "cache")[first] == hashlib.sha256(b'{"c": 1}\n').hexdigest()


FIFO_PROBE = """
import json, sys
from pathlib import Path
from pytest_tooleval.data.hashes import sha256_of
paths = [Path(arg) for arg in sys.argv[2:]]
print(json.dumps({str(path): digest for path, digest in sha256_of(paths, Path(sys.argv[1])).items()}))
"""


def test_a_fifo_among_the_pinned_files_is_not_opened(files: dict[Path, str], tmp_path: Path) -> None:
    """A named pipe where a data file should be has no digest (it differs from the pin): opening it for reading
    would wait for a writer forever. In a process of its own, with a hang guard."""
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    try:
        done = subprocess.run(
            [sys.executable, "-c", FIFO_PROBE, str(tmp_path / "cache"), *map(str, files), str(fifo)],
            capture_output=True,
            text=True,
            timeout=GUARD_S,
            check=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"hashing hung on the FIFO for the {GUARD_S:.0f} s hang guard")
    assert json.loads(done.stdout) == {**{str(path): digest for path, digest in files.items()}, str(fifo): None}


@pytest.mark.parametrize(
    "damage",
    ["not json {", "[1, 2]", '{"%s": "abc"}', '{"%s": [1, 2]}', ""],
    ids=["not-json", "a-list", "a-string-entry", "a-short-entry", "empty"],
)
def test_a_damaged_record_is_ignored_and_replaced(files: dict[Path, str], tmp_path: Path, damage: str) -> None:
    record_path = tmp_path / RECORD_NAME
    record_path.write_text(damage.replace("%s", str(next(iter(files)))), encoding="utf-8")
    assert sha256_of(files, tmp_path) == files
    record = json.loads(record_path.read_text(encoding="utf-8"))
    assert {key: value[-1] for key, value in record.items()} == {str(path): digest for path, digest in files.items()}


def test_a_record_folder_that_cannot_be_written_still_hashes(files: dict[Path, str], tmp_path: Path) -> None:
    """The folder cannot be made (a file stands where its parent should be: unwritable even for root)."""
    blocker = tmp_path / "cache"
    blocker.write_text("a file, not a folder", encoding="utf-8")
    assert sha256_of(files, blocker / "tooleval") == files
    assert sha256_of(files, blocker / "tooleval") == files  # again: nothing was remembered, nothing went wrong
    assert blocker.read_text(encoding="utf-8") == "a file, not a folder"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.json", "b.json", "cache"]
