"""CPU cost of BFCL's 3,641 single-turn samples at zero latency: collection plus scoring, one JSON line out.

    python perf/bfcl_cpu.py                 # TOOLEVAL_DATA_DIR, or --data-dir
    python perf/bfcl_cpu.py --repeat 5

Three measurements, each the median of --repeat fresh processes:
- `suite_cpu_s`: the suite's own work in one process, no pytest: load the data, build the 3,641 cases, and score
  every case against the oracle's answer and against the replayed conformance answers (one per sample, the
  leaderboard test's pick);
- `collect_cpu_s`: `pytest ... -m bfcl --tooleval-model oracle --collect-only -q`, the whole process (start-up, the
  plugin, loading the data, 3,641 items made);
- `pytest_cpu_s`, `pytest_wall_s`: `pytest --pyargs pytest_tooleval.benchmarks -m bfcl --tooleval-model oracle -q`
  (no xdist), the whole process: start-up, collection, 3,641 tests run and reported, the summary. Its CPU is the
  process's user plus system time (the resource usage of the child).
Also: samples, passed (oracle), and the per-sample means.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROBE = """
import json, sys, time, zlib
from collections import defaultdict
from pathlib import Path
started = time.process_time()
from pytest_tooleval.outcome import Answer
from pytest_tooleval.suites.bfcl.oracle import oracle_output
from pytest_tooleval.suites.bfcl.suite import BfclSuite
from pytest_tooleval.suites.bfcl.upstream import ensure_data
root = ensure_data(sys.argv[1], Path(sys.argv[2]), True)
suite = BfclSuite(root)
cases = suite.cases()
passed = sum(suite.score(case, Answer(oracle_output(case.sample, "prompt"))).verdict.valid for case in cases)
outputs = defaultdict(list)
with (root / "conformance" / "official_verdicts.jsonl").open(encoding="utf-8") as handle:
    for line in handle:
        row = json.loads(line)
        if row["mode"] == "prompt":
            outputs[row["id"]].append(row)
for case in cases:
    found = sorted(outputs[case.id], key=lambda row: row["variant"])
    suite.score(case, Answer(found[zlib.crc32(case.id.encode()) % len(found)]["output"]))
print(json.dumps({"cpu_s": time.process_time() - started, "samples": len(cases), "passed": passed}))
"""


def suite_once(data_dir: str, cache: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, data_dir, str(cache)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def pytest_once(data_dir: str, cache: Path, *extra: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--pyargs",
            "pytest_tooleval.benchmarks",
            "-m",
            "bfcl",
            "--tooleval-model",
            "oracle",
            f"--tooleval-data-dir={data_dir}",
            f"--tooleval-cache-dir={cache}",
            "--tooleval-offline",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            *extra,
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=cache,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=os.environ.get("TOOLEVAL_DATA_DIR"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not args.data_dir:
        parser.error("needs the data: --data-dir or TOOLEVAL_DATA_DIR")
    data_dir = str(Path(args.data_dir).resolve())
    with tempfile.TemporaryDirectory() as scratch:
        cache = Path(scratch)
        suites = [suite_once(data_dir, cache) for _ in range(args.repeat)]
        collects = [pytest_once(data_dir, cache, "--collect-only") for _ in range(args.repeat)]
        runs = [pytest_once(data_dir, cache) for _ in range(args.repeat)]
    samples = int(suites[0]["samples"])
    suite_cpu = statistics.median(run["cpu_s"] for run in suites)
    pytest_cpu = statistics.median(cpu for cpu, _ in runs)
    print(
        json.dumps(
            {
                "samples": samples,
                "passed": int(suites[0]["passed"]),
                "suite_cpu_s": round(suite_cpu, 3),
                "suite_cpu_per_sample_ms": round(1000 * suite_cpu / samples, 3),
                "collect_cpu_s": round(statistics.median(cpu for cpu, _ in collects), 3),
                "pytest_cpu_s": round(pytest_cpu, 3),
                "pytest_wall_s": round(statistics.median(wall for _, wall in runs), 3),
                "pytest_cpu_per_sample_ms": round(1000 * pytest_cpu / samples, 3),
                "repeat": args.repeat,
            }
        )
    )


if __name__ == "__main__":
    main()
