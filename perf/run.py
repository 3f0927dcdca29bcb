"""Throughput benchmark: the plugin against the fake OpenAI server at a fixed latency, one JSON line out.

    python perf/run.py --latency 1.0 -n 4 --concurrency 16 --categories normal,special
    python perf/run.py --latency 0 -n 0 --concurrency 8           # per-sample overhead
    python perf/run.py --latency 1.0 -n 4 --concurrency 16 --fault-rate 0.5 --retry-after 1 \
        --fault-on-arrival                                                    # a 429 storm from a rate limiter
    python perf/run.py --design-card [--hog 4] [--beside-bfcl]     # ACEBench en normal+special, pytest -n 8
    python perf/run.py --bfcl-card [--hog 4] [--beside-bfcl]       # BFCL's first four categories, pytest -n 8

It needs the upstream data (TOOLEVAL_DATA_DIR or --data-dir). It runs pytest as a user does in a clone: from the
repository, with its configuration, the endpoint probe on (--no-probe leaves it out), and the environment's
bytecode setting (PYTHONDONTWRITEBYTECODE; `bytecode_cache` in the output says which). Only this project's test
dependency hypothesis is left out (-p no:hypothesispytest): an evaluation's environment does not have it. Each run
uses a fresh response cache and pytest cache, so every sample is asked for real. Output fields:
- samples, outcomes, wall_s (the pytest subprocess), cpu_s (its user and system time, its workers' included),
  ideal_s (requests that waited the latency x latency / total
  concurrency), efficiency (ideal / wall), samples_per_s, requests, peak_in_flight (seen by the server);
- abandoned: answers the server generated for a request the client had given up on (a one-slot server with
  --server-concurrency 1 spends its slot on them);
- where the wall time goes: first_request_s (start-up before the first request), answering_lag_s (how far the
  last request trails full rounds from the first on), after_last_answer_s (the last answer to the exit), of which
  shutdown_s (after the last test) and shutdown_steps_s (the controller: to its sessionfinish, to its unconfigure,
  to the exit), worker_end_s, collection_s, busy_s (per-process time between its first and last test),
  idle_share (largest share of the run a worker spent without a test while samples remained);
- memory: max_rss_mb (largest worker's peak), collected_rss_mb (its peak when its collection ended),
  controller_rss_mb (xdist: the controller, which asks the model for its workers);
- process_cpu_s, collected_cpu_s: each process's own CPU time, in all and by the end of its collection (the
  controller's collection is its own xdist collection, after the one it made ahead for the hub);
- data_check_ms (what a later process spends checking the data against its revision's pins, once the run has
  remembered the digests), output_lines (what pytest printed);
- with --beside-bfcl: bfcl (bfcl_side.py's figures) and efficiency_vs_bfcl.

PERF_PROFILE=PATH runs the pytest process under cProfile and writes its profile there (the controller only,
with xdist, and only its main thread). PERF_WRAP="py-spy record -o PATH -f raw -r 100 --" puts a sampling profiler
in front instead, which sees every thread (the hub's event loop runs in one).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(HERE))

from fake_openai import FakeOpenAI, Fault  # noqa: E402 - importable only after the sys.path insert above

TIMING_PLUGIN = """
import json, os, resource, time
import pytest

_events = []

_rss = {}

def _peak_rss_mb():
    # VmHWM: this process's own peak (Linux keeps ru_maxrss across exec, so a worker would report the peak of
    # the controller it was forked from)
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def _cpu_s():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime

def pytest_collection_finish(session):
    _events.append(("collected", time.time()))
    _rss["collected"] = _peak_rss_mb()
    _rss["collected_cpu_s"] = _cpu_s()

def pytest_runtest_logstart(nodeid, location):
    _events.append(("start", time.time()))

def pytest_runtest_logfinish(nodeid, location):
    _events.append(("finish", time.time()))

@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    _events.append(("sessionfinish", time.time()))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    path = os.environ["TOOLEVAL_PERF_OUT"] + "." + worker
    rss = _peak_rss_mb()
    with open(path, "w") as handle:
        json.dump({"worker": worker, "events": _events, "max_rss_mb": rss,
                   "collected_rss_mb": _rss.get("collected"), "written_at": time.time(),
                   "cpu_s": _cpu_s(), "collected_cpu_s": _rss.get("collected_cpu_s")}, handle)
"""


def make_responder(args: argparse.Namespace) -> Any:
    """Agent rollouts always get one harmless call, so they run to --tooleval-max-dialog-turns (about
    --agent-turns agent calls); single-call samples get their ground truth (gold) or that same call (fixed)."""
    gold: dict[str, str] = {}
    if args.replies == "gold":
        from pytest_tooleval.suites.acebench import data
        from pytest_tooleval.suites.acebench.categories import NORMAL_COLLECTION_ORDER, SPECIAL_CATEGORIES
        from pytest_tooleval.suites.acebench.scoring import render_ground_truth

        root = data.locate(args.data_dir, Path(tempfile.gettempdir()), True, args.revision).root
        for case in data.select(root, (args.language,), NORMAL_COLLECTION_ORDER + SPECIAL_CATEGORIES):
            gold[case.record["question"]] = render_ground_truth(case.ground_truth, case.category)

    def respond(body: dict[str, Any]) -> str:
        if body["model"] == "perf-user":
            return "Please go on."
        last = body["messages"][-1]["content"]
        question = last.split("\n", 1)[1] if "\n" in last else last
        return gold.get(question, "[turn_on_wifi()]")

    return respond


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("-n", "--workers", type=int, default=4, help="xdist workers (0: no xdist)")
    parser.add_argument("--concurrency", type=int, default=16, help="--tooleval-concurrency per process")
    parser.add_argument("--categories", default="normal,special", help="families: normal,special,agent")
    parser.add_argument("--language", default="en")
    parser.add_argument("--data-dir", default=os.environ.get("TOOLEVAL_DATA_DIR"))
    parser.add_argument("--server-concurrency", type=int, default=None)
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of requests answered 429")
    parser.add_argument("--retry-after", type=float, default=1.0)
    parser.add_argument(
        "--fault-on-arrival",
        action="store_true",
        help="answer the 429s at once, as a rate limiter in front of the model does "
        "(default: after the latency, as a model server that gives up on the request)",
    )
    parser.add_argument("--seed", type=int, default=1, help="the fake server's random faults")
    parser.add_argument("--agent-turns", type=int, default=10)
    parser.add_argument("--rpm", type=int, default=None)
    parser.add_argument(
        "--replies",
        choices=("gold", "fixed"),
        default="gold",
        help="gold: the ground truth of each sample (a strong model: most tests pass); "
        "fixed: one harmless call for everything (every single-call sample fails)",
    )
    parser.add_argument(
        "--pytest-arg",
        action="append",
        default=[],
        dest="pytest_args",
        help="one more argument for pytest (repeat it), e.g. --pytest-arg=--tb=no",
    )
    parser.add_argument(
        "--no-probe",
        dest="probe",
        action="store_false",
        help="leave out the endpoint probe (one round trip before any sample), which a user's run makes",
    )
    parser.add_argument("--revision", default="56dd66c", help="--tooleval-acebench-revision")
    parser.add_argument("--keep-output", type=Path, default=None, help="write pytest's stdout to this file")
    parser.add_argument(
        "--slow-start",
        choices=("auto", "on", "off"),
        default=None,
        help="--tooleval-slow-start (the fake is plain http, so auto means on: a hosted API's "
        "https endpoint starts at the ceiling, which off stands for)",
    )
    parser.add_argument(
        "--arrivals",
        type=Path,
        default=None,
        help="write when each request reached the server (seconds from the process start) to this file",
    )
    parser.add_argument(
        "--hog", type=int, default=0, help="busy processes beside the run (a shared CI runner is rarely quiet)"
    )
    parser.add_argument(
        "--beside-bfcl",
        action="store_true",
        help="then run bfcl-eval's own generator (`bfcl generate`, 64 threads, 1,000 BFCL samples) "
        "against the same fake, with the same hogs, and report it under `bfcl` "
        "(perf/bfcl_side.py says how to build its venv)",
    )
    parser.add_argument(
        "--design-card",
        action="store_true",
        help="the design card's command against a hosted API: ACEBench en normal and special (973 samples), -n 8, "
        "the default concurrency (8), every answer wrong, --slow-start off",
    )
    parser.add_argument(
        "--bfcl-card",
        action="store_true",
        help="the same for BFCL: simple_python, multiple, parallel and parallel_multiple (1,000 samples, the ones "
        "--beside-bfcl asks bfcl generate), prompt mode",
    )
    args = parser.parse_args()
    if args.design_card or args.bfcl_card:
        args.workers, args.concurrency, args.replies, args.slow_start = 8, 8, "fixed", args.slow_start or "off"
    if not args.data_dir:
        sys.exit("needs the upstream data: --data-dir or TOOLEVAL_DATA_DIR")
    args.data_dir = str(Path(args.data_dir).resolve())  # pytest runs in a scratch folder

    if args.bfcl_card:
        from bfcl_side import CATEGORIES as BFCL_CATEGORIES

        selection = ["-m", "bfcl", f"--tooleval-bfcl-categories={BFCL_CATEGORIES}", "--tooleval-mode=prompt"]
    else:
        families = [family.strip() for family in args.categories.split(",")]
        selection = [
            "-m",
            " or ".join(families),
            f"--tooleval-language={args.language}",
            f"--tooleval-max-dialog-turns={2 * args.agent_turns}",
            f"--tooleval-acebench-revision={args.revision}",
        ]
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeOpenAI(
            responder=make_responder(args),
            latency_s=args.latency,
            max_concurrency=args.server_concurrency,
            fault_rate=args.fault_rate,
            fault=Fault.rate_limit(retry_after=args.retry_after),
            fault_on_arrival=args.fault_on_arrival,
            seed=args.seed,
        ) as server,
    ):
        plugin = Path(tmp) / "perf_timing.py"
        plugin.write_text(TIMING_PLUGIN)
        out = Path(tmp) / "timing"
        command = [
            sys.executable,
            *(["-m", "cProfile", "-o", os.environ["PERF_PROFILE"]] if os.environ.get("PERF_PROFILE") else []),
            "-m",
            "pytest",
            "-q",
            "-p",
            "perf_timing",
            # hypothesis (a test dependency of this project, not of an evaluation) costs 0.2 s per process
            "-p",
            "no:hypothesispytest",
            "-o",
            f"cache_dir={Path(tmp) / 'pytest-cache'}",
            *selection,
            "--tooleval-model",
            "perf-model",
            f"--tooleval-base-url={server.base_url}",
            "--tooleval-api-key=sk-perf",
            f"--tooleval-data-dir={args.data_dir}",
            f"--tooleval-cache-dir={Path(tmp) / 'cache'}",
            f"--tooleval-concurrency={args.concurrency}",
            "--tooleval-user-model=perf-user",
            f"--tooleval-report={Path(tmp) / 'report.json'}",
        ]
        if args.rpm:
            command.append(f"--tooleval-rpm={args.rpm}")
        if args.slow_start:
            command.append(f"--tooleval-slow-start={args.slow_start}")
        if args.workers:
            command += ["-n", str(args.workers)]
        if os.environ.get("PERF_WRAP"):  # a profiler in front, e.g. PERF_WRAP="py-spy record -o out.txt -f raw --"
            command = os.environ["PERF_WRAP"].split() + command
        if not args.probe:
            command.append("--tooleval-no-probe")
        command += args.pytest_args
        pythonpath = tmp + os.pathsep + os.environ.get("PYTHONPATH", "")
        env = dict(os.environ, TOOLEVAL_PERF_OUT=str(out), PYTHONPATH=pythonpath)
        load_before = round(os.getloadavg()[0], 2)
        with busy(args.hog):
            started, started_mono = time.time(), time.monotonic()
            children = resource.getrusage(resource.RUSAGE_CHILDREN)
            completed = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
            wall = time.time() - started
            # the pytest process and every process it waited for (xdist's workers), user and system time
            ended = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu_s = (ended.ru_utime - children.ru_utime) + (ended.ru_stime - children.ru_stime)
        if args.keep_output:
            args.keep_output.write_text(completed.stdout)
        if completed.returncode not in (0, 1):
            sys.stderr.write(completed.stdout[-4000:] + completed.stderr[-4000:])
            sys.exit(f"pytest exited {completed.returncode}")
        report = json.loads((Path(tmp) / "report.json").read_text())
        timings = [json.loads(path.read_text()) for path in Path(tmp).glob("timing.*")]
        figures = summarise(args, report, timings, server, wall, started, started_mono, completed.stdout.count("\n"))
        figures["cpu_s"] = round(cpu_s, 2)
        figures["cpu_per_1000_s"] = round(1000 * cpu_s / max(figures["samples"], 1), 2)
        figures["bytecode_cache"] = not os.environ.get("PYTHONDONTWRITEBYTECODE")
        figures["load_before"] = load_before
        if args.arrivals:
            args.arrivals.write_text(json.dumps([round(r.at - started_mono, 3) for r in server.stats.received]))
        # what the next run's processes each spend checking the data against its pins (the record is warm now)
        if not args.bfcl_card:
            figures["data_check_ms"] = round(data_check_ms(args.data_dir, Path(tmp) / "cache", args.revision), 2)
        if args.beside_bfcl:
            from bfcl_side import run_bfcl_generate

            with busy(args.hog):
                figures["bfcl"] = run_bfcl_generate(server, threads=64, latency_s=args.latency)
            bfcl = figures["bfcl"]
            if figures["efficiency"] and bfcl.get("efficiency"):
                figures["efficiency_vs_bfcl"] = round(figures["efficiency"] / bfcl["efficiency"], 3)
            if bfcl.get("cpu_s") and bfcl.get("samples"):
                # ours asks and scores; bfcl generate only asks
                figures["cpu_vs_bfcl"] = round(figures["cpu_per_1000_s"] / (1000 * bfcl["cpu_s"] / bfcl["samples"]), 2)
        print(json.dumps(figures))


@contextlib.contextmanager
def busy(processes: int) -> Iterator[None]:
    """`processes` busy loops beside what runs inside (a shared CI runner is rarely quiet)."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def data_check_ms(data_dir: str, cache: Path, revision: str) -> float:
    """`data.locate` alone, timed in a fresh process with the run's cache folder (perf/data_check.py)."""
    from data_check import PROBE

    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(Path(data_dir).resolve()), str(cache), revision, "0"],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip())


def _controller_steps(timings: list[dict[str, Any]], run_end: float, exit_at: float) -> list[float]:
    main = next((t for t in timings if t["worker"] == "main"), None)
    finish = next((at for name, at in (main or {}).get("events", []) if name == "sessionfinish"), None)
    if main is None or finish is None:
        return []
    return [round(finish - run_end, 2), round(main["written_at"] - finish, 2), round(exit_at - main["written_at"], 2)]


def summarise(
    args: argparse.Namespace,
    report: dict[str, Any],
    timings: list[dict[str, Any]],
    server: FakeOpenAI,
    wall: float,
    started: float,
    started_mono: float,
    output_lines: int,
) -> dict[str, Any]:
    samples = len(report["samples"])
    processes = max(1, args.workers)
    requests = server.stats.requests
    # a request rejected on arrival holds no server time
    waited = requests - server.stats.faults_on_arrival
    ideal = waited * args.latency / (processes * args.concurrency) if args.latency else 0.0
    workers = [t for t in timings if t["worker"] != "main" or not args.workers]
    collected = [e[1] for t in workers for e in t["events"] if e[0] == "collected"]
    ends = [e[1] for t in workers for e in t["events"] if e[0] == "finish"]
    run_end = max(ends) if ends else started + wall
    busy, idle = {}, 0.0
    for timing in workers:
        stamps = [e for e in timing["events"] if e[0] in ("start", "finish")]
        if not stamps:
            continue
        first, last = stamps[0][1], stamps[-1][1]
        busy[timing["worker"]] = round(last - first, 2)
        idle = max(idle, (run_end - last) / max(run_end - min(collected or [started]), 1e-9))
    arrivals = [r.at - started_mono for r in server.stats.received]
    outcomes: dict[str, int] = {}
    for sample in report["samples"]:
        outcomes[sample["outcome"]] = outcomes.get(sample["outcome"], 0) + 1
    return {
        "samples": samples,
        "outcomes": outcomes,
        "workers": args.workers,
        "concurrency": args.concurrency,
        "slow_start": args.slow_start or "auto",
        "hog": args.hog,
        "latency_s": args.latency,
        "fault_rate": args.fault_rate,
        "fault_on_arrival": args.fault_on_arrival,
        "wall_s": round(wall, 2),
        "ideal_s": round(ideal, 2),
        "efficiency": round(ideal / wall, 3) if ideal else None,
        "samples_per_s": round(samples / wall, 1),
        "output_lines": output_lines,
        "requests": requests,
        "peak_in_flight": server.stats.peak_in_flight,
        "abandoned": server.stats.abandoned,  # answers the server made for a client that had timed out
        # where the wall time goes: before the first request, and after the last one was answered
        "first_request_s": round(min(arrivals), 2) if arrivals else None,
        "after_last_answer_s": round(wall - max(arrivals) - args.latency, 2) if arrivals else None,
        # how far the last request trails the lockstep of full rounds (every slot busy from the first request on)
        "answering_lag_s": round(
            max(arrivals) - min(arrivals) - (math.ceil(waited / (processes * args.concurrency)) - 1) * args.latency, 2
        )
        if arrivals and args.latency and not args.fault_rate
        else None,
        # of which: the last test's end after the last answer, and the shut-down after it (summary, reports, exit)
        "shutdown_s": round(started + wall - run_end, 2) if ends else None,
        # the controller's: from the last test's end to its sessionfinish (the workers finishing), to its unconfigure
        # (the summary and reports), to the process's exit (the rest of pytest's shut-down, the interpreter's)
        "worker_end_s": max(
            (
                round(
                    next(at for name, at in t["events"] if name == "sessionfinish")
                    - max(at for name, at in t["events"] if name == "finish"),
                    2,
                )
                for t in workers
                if any(name == "finish" for name, _ in t["events"])
            ),
            default=None,
        ),
        "shutdown_steps_s": _controller_steps(timings, run_end, started + wall) if args.workers and ends else None,
        "collection_s": round(min(collected) - started, 2) if collected else None,
        "max_rss_mb": round(max((t["max_rss_mb"] for t in workers), default=0), 1),
        # the same at the end of the worker's collection: what importing, loading and collecting cost
        "collected_rss_mb": round(max((t.get("collected_rss_mb") or 0 for t in workers), default=0), 1),
        # with xdist the controller asks the model for all workers (the hub): its memory, separately
        "controller_rss_mb": round(max((t["max_rss_mb"] for t in timings if t["worker"] == "main"), default=0), 1)
        if args.workers
        else None,
        "busy_s": busy,
        "idle_share": round(idle, 3),
        # each process's own CPU (user + system): in all, and by the end of its collection
        "process_cpu_s": {t["worker"]: round(t.get("cpu_s") or 0, 2) for t in timings},
        "collected_cpu_s": {t["worker"]: round(t.get("collected_cpu_s") or 0, 2) for t in timings},
    }


if __name__ == "__main__":
    main()
