"""The fastest a 429 storm can go: an ideal client simulated, for comparison with `run.py --fault-rate`.

    python perf/storm_floor.py --samples 973 --slots 64 --fault-rate 0.5 --retry-after 1
    python perf/storm_floor.py ... --fault-on-arrival

The ideal client has no start-up, no CPU cost and no queueing of its own: `slots` requests in flight at all
times while samples remain, each answered after `latency` seconds; a rejected request is retried exactly
`retry-after` seconds after its 429, and a request waiting out that delay holds no slot. A 429 comes after
the latency (the server gave up on the request) or, with --fault-on-arrival, at once (a rate limiter in
front of the model: it holds no slot either). Prints one JSON line: the median, 10th and 90th percentile
of the simulated wall time over `runs` random seeds, and the calm wall time (no faults) for the ratio.
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
import statistics
from collections import deque


def simulate(
    samples: int,
    slots: int,
    latency: float,
    fault_rate: float,
    retry_after: float,
    on_arrival: bool,
    rng: random.Random,
) -> float:
    """Seconds until the last sample is answered; fresh samples and retries share the slots in arrival order."""
    free, fresh, ready = slots, samples, deque[int]()
    events: list[tuple[float, int, str]] = []  # (time, tie-breaker, what happens)
    counter, finished_at = 0, 0.0

    def schedule(at: float, what: str) -> None:
        nonlocal counter
        counter += 1
        heapq.heappush(events, (at, counter, what))

    def fill(now: float) -> None:
        nonlocal free, fresh
        while free and (ready or fresh):
            if ready:
                ready.popleft()
            else:
                fresh -= 1
            rejected = rng.random() < fault_rate
            if rejected and on_arrival:
                schedule(now + retry_after, "retry")
                continue
            free -= 1
            schedule(now + latency, "rejected" if rejected else "answered")

    fill(0.0)
    while events:
        now, _, what = heapq.heappop(events)
        if what == "answered":
            free += 1
            finished_at = now
        elif what == "rejected":
            free += 1
            schedule(now + retry_after, "retry")
        else:
            ready.append(0)
        fill(now)
    return finished_at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=973)
    parser.add_argument("--slots", type=int, default=64, help="requests in flight (-n x --tooleval-concurrency)")
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--fault-rate", type=float, default=0.5)
    parser.add_argument("--retry-after", type=float, default=1.0)
    parser.add_argument("--fault-on-arrival", action="store_true")
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()

    walls = sorted(
        simulate(
            args.samples,
            args.slots,
            args.latency,
            args.fault_rate,
            args.retry_after,
            args.fault_on_arrival,
            random.Random(seed),
        )
        for seed in range(args.runs)
    )
    calm = simulate(args.samples, args.slots, args.latency, 0.0, args.retry_after, False, random.Random(0))
    print(
        json.dumps(
            {
                "samples": args.samples,
                "slots": args.slots,
                "fault_rate": args.fault_rate,
                "fault_on_arrival": args.fault_on_arrival,
                "calm_s": round(calm, 2),
                "median_s": round(statistics.median(walls), 2),
                "p10_s": round(walls[len(walls) // 10], 2),
                "p90_s": round(walls[len(walls) * 9 // 10], 2),
                "median_over_calm": round(statistics.median(walls) / calm, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
