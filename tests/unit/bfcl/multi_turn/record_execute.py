"""Record bfcl-eval's own executor on the harmless corpus of execute_corpus.py: digests only
(docs/bfcl-multi-turn.md#executing-a-call).

Run in the scratch venv that has bfcl-eval 2026.3.23 and mpmath, never in CI and never with the project's
package (upstream evaluates call text: only the corpus's strings are fed to it):

    /tmp/bfcl-ref-mt/bin/python tests/unit/bfcl/multi_turn/record_execute.py --data-dir ../shared/data/bfcl

It writes tests/unit/bfcl/multi_turn/upstream_execute.json: per case, per call, the digest of upstream's result
string. `--show CASE` prints upstream's plain results for one case instead. Each case starts from fresh
instances (the executor's cached instances and post_tweet's shared default lists are reset), on the evaluation
side of a model named "tooleval", so the instance variables are the ones checker.py names.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mypy reads this folder as the package it is under pytest
    from . import execute_corpus
else:  # run as a script, outside any package: execute_corpus.py is beside it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import execute_corpus  # stdlib only

OUTPUT = Path(__file__).with_name("upstream_execute.json")
CATEGORIES = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--show", metavar="CASE")
    options = parser.parse_args()

    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import posting_api

    entries: dict[str, Any] = {}
    for category in CATEGORIES:
        for line in (options.data_dir / f"BFCL_v4_{category}.json").read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            entries[entry["id"]] = entry

    def reset() -> None:
        for name in [name for name in vars(multi_turn_utils) if name.endswith("_instance")]:
            delattr(multi_turn_utils, name)
        posting_api.TwitterAPI.post_tweet.__defaults__ = ([], [])

    def record(sample_id: str, calls: list[str]) -> list[str]:
        reset()
        entry = entries[sample_id]
        results = []
        try:
            for call in calls:  # one call at a time, as the checker's steps may hold one
                out, _ = multi_turn_utils.execute_multi_turn_func_call(
                    [call],
                    entry["initial_config"],
                    entry["involved_classes"],
                    "tooleval",
                    sample_id,
                    long_context="long_context" in sample_id,
                    is_evaL_run=True,
                )
                results.extend(out)
        finally:
            reset()
        return results

    if options.show:
        for key, sample_id, calls in execute_corpus.CASES:
            if key == options.show:
                for call, result in zip(calls, record(sample_id, calls), strict=True):
                    print(f"--- {call}\n{result}")
                return 0
        print(f"no case {options.show}", file=sys.stderr)
        return 1

    cases = {
        key: [execute_corpus.digest(result) for result in record(sample_id, calls)]
        for key, sample_id, calls in execute_corpus.CASES
    }
    stored = {
        "about": "sha256 digests (12 hex) of bfcl-eval's result string for each call of execute_corpus.CASES, "
        "recorded by record_execute.py in a scratch venv. Only digests are kept, no upstream text.",
        "bfcl_eval": "2026.3.23",
        "python": sys.version.split()[0],
        "cases": cases,
    }
    OUTPUT.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    print(f"{len(cases)} cases, {sum(map(len, cases.values()))} calls")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
