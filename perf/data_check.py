"""What checking the ACEBench data against its revision's pin costs a process, one JSON line per case.

    python perf/data_check.py                  # TOOLEVAL_DATA_DIR, or --data-dir
    python perf/data_check.py --processes 10 --revision e6db74b

Each measurement is a fresh Python process (as each xdist worker is) timing `data.locate` alone, the plugin's
import excluded:
- `unverified`: --tooleval-data-unverified, the folder is found and nothing is read (what a run did before data
  was checked);
- `first`: an empty cache folder, so every pinned file is hashed (a first run, or a data folder that changed);
- `after_first`: the same cache folder again: each file's digest comes from the record (filehashes.py) after a stat.
Output: the median and the largest of each, in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = """
import sys, time
from pathlib import Path
from pytest_tooleval.suites.acebench import data
data_dir, cache, revision, unverified = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
started = time.perf_counter()
folder = data.locate(data_dir, cache, True, revision, unverified=unverified)
print((time.perf_counter() - started) * 1000)
"""


def _time_once(data_dir: str, cache: Path, revision: str, unverified: bool) -> float:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, data_dir, str(cache), revision, "1" if unverified else "0"],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data-dir", default=os.environ.get("TOOLEVAL_DATA_DIR"))
    parser.add_argument("--revision", default="56dd66c")
    parser.add_argument("--processes", type=int, default=8, help="processes timed per case")
    args = parser.parse_args()
    if not args.data_dir:
        parser.error("needs the upstream data: pass --data-dir or set TOOLEVAL_DATA_DIR")
    data_dir = str(Path(args.data_dir).resolve())
    with tempfile.TemporaryDirectory() as scratch:
        cases: dict[str, list[float]] = {"unverified": [], "first": [], "after_first": []}
        for number in range(args.processes):
            cases["unverified"].append(_time_once(data_dir, Path(scratch) / "none", args.revision, True))
            cache = Path(scratch) / f"cache{number}"  # empty: every file is hashed
            cases["first"].append(_time_once(data_dir, cache, args.revision, False))
            cases["after_first"].append(_time_once(data_dir, cache, args.revision, False))
        for name, times in cases.items():
            print(
                json.dumps(
                    {
                        "case": name,
                        "revision": args.revision,
                        "processes": len(times),
                        "median_ms": round(statistics.median(times), 2),
                        "max_ms": round(max(times), 2),
                    }
                )
            )


if __name__ == "__main__":
    main()
