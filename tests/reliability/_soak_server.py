"""The soak test's endpoint, in a process of its own so the run under test counts only its own threads and sockets.

    python _soak_server.py ANSWERS.json FAULT_RATE SEED

ANSWERS.json maps each prompt (`_reliability.prompt_key`) to its answer. A share FAULT_RATE of
requests, drawn with SEED, gets one of the transient faults below instead. Prints the base URL, serves until
SIGTERM, then prints the request and fault counts as JSON.
"""

from __future__ import annotations

import json
import random
import signal
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent))
from _reliability import prompt_key

from fake_openai import FakeOpenAI, Fault

TRANSIENT = [
    Fault.rate_limit(retry_after=0),
    Fault.rate_limit(),
    Fault.http(500),
    Fault.http(502),
    Fault.http(503),
    Fault.reset(),
    Fault.malformed_json(),
    Fault.empty_choices(),
    Fault.invalid_utf8(),
    Fault.delay(3),
]


def main() -> None:
    answers: dict[str, str] = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    rate, rng = float(sys.argv[2]), random.Random(int(sys.argv[3]))
    faults = 0

    def respond(body: dict[str, Any]) -> str | Fault:
        nonlocal faults
        if rng.random() < rate:
            faults += 1
            return rng.choice(TRANSIENT)
        return answers[prompt_key(body["messages"])]

    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with FakeOpenAI(responder=respond) as server:
        print(server.base_url, flush=True)
        done.wait()
        print(json.dumps({"requests": server.stats.requests, "faults": faults}), flush=True)


if __name__ == "__main__":
    main()
