"""Record bfcl-eval's own `WebSearchAPI` on web_search_cases.py's call sequences, and its loader on the two web
search categories: digests only (docs/bfcl.md#web-search).

Run in a scratch venv that has bfcl-eval 2026.3.23 with what its web search module imports (requests,
html2text, beautifulsoup4, google-search-results), never in CI and never with the project's package:

    /tmp/bfcl-gen/bin/python tests/unit/bfcl/record_web_search.py

Upstream's class is pointed at web_search_server.py's fake service on 127.0.0.1 (the search client's endpoint
and the key are patched in, and its waits after a 429 are skipped); no other network is reached. Each sequence
starts from a new instance with the sequence's `show_snippet` and calls its methods directly. It writes
web_search_digests.json: per sequence, the digest of each call's result string (with the server's port and
object addresses normalized: web_search_cases.normalized), the result of a search whose endpoint refuses the
connection, and per category the ids and a digest of each entry as bfcl's generation loads it.
`--show N` prints sequence N's calls and results instead.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mypy reads this folder as the package it is under pytest
    from . import web_search_cases as cases
else:  # run as a script, outside any package: the cases are beside it, the fake service at the top of tests/
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    import web_search_cases as cases

from web_search_server import SearchServer

OUTPUT = Path(__file__).with_name("web_search_digests.json")
REFUSED = "http://127.0.0.1:1"  # nothing listens on port 1


def entry_digest(classes: Any, initial_config: Any, question: Any, functions: Any, accepted: Any) -> str:
    canonical = json.dumps([classes, initial_config, question, functions, accepted], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def upstream_api(show_snippet: bool) -> Any:
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import web_search

    web_search.time = types.SimpleNamespace(sleep=lambda seconds: None)  # its 429 waits, skipped
    api = web_search.WebSearchAPI()
    api._load_scenario({"show_snippet": show_snippet})
    return api


def point_at(base: str) -> None:
    from serpapi.serp_api_client import SerpApiClient

    SerpApiClient.BACKEND = base  # the client asks BACKEND + "/search"
    os.environ["SERPAPI_API_KEY"] = cases.KEY


def entries() -> dict[str, dict[str, str]]:
    from bfcl_eval.utils import (
        load_dataset_entry,
        load_ground_truth_entry,
        populate_initial_settings_for_web_search_test_cases,
    )

    out: dict[str, dict[str, str]] = {}
    for category in ("web_search_base", "web_search_no_snippet"):
        loaded = load_dataset_entry(category, include_language_specific_hint=False)
        loaded = populate_initial_settings_for_web_search_test_cases(loaded)
        truth = load_ground_truth_entry(category)
        assert len(truth) == len(loaded)
        out[category] = {
            entry["id"]: entry_digest(
                entry["involved_classes"],
                entry["initial_config"],
                entry["question"],
                entry["function"],
                answer["ground_truth"],
            )
            for entry, answer in zip(loaded, truth, strict=True)
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--show", type=int)
    options = parser.parse_args()
    recorded: list[list[str]] = []
    with SearchServer(cases.KEY, cases.pages()) as server:
        point_at(server.url(""))
        for number, (show_snippet, calls) in enumerate(cases.sequences()):
            bound = cases.bind(calls, server.url(""))
            results = cases.run(upstream_api(show_snippet), bound, cases.upstream_render, cases.upstream_error)
            results = [cases.normalized(result, server.port) for result in results]
            if options.show == number:
                for (method, args, kwargs), result in zip(bound, results, strict=True):
                    print(f"{method}(*{args!r}, **{kwargs!r})\n  {result}")
                return 0
            recorded.append([cases.digest(result) for result in results])
    point_at(REFUSED)
    refused = cases.run(
        upstream_api(True), [("search_engine_query", ["x"], {})], cases.upstream_render, cases.upstream_error
    )
    from importlib.metadata import version

    document = {
        "about": "bfcl-eval's own WebSearchAPI on web_search_cases.py's sequences against web_search_server.py, and "
        "its load_dataset_entry on the web search categories, recorded by record_web_search.py in a scratch venv.",
        "versions": {
            name: version(name) for name in ("bfcl-eval", "requests", "html2text", "beautifulsoup4", "urllib3")
        },
        "calls": sum(len(digests) for digests in recorded),
        "sequences": recorded,
        "refused_search": cases.normalized(refused[0], 0),
        "entries": entries(),
    }
    options.output.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print({"sequences": len(recorded), "calls": document["calls"], "versions": document["versions"]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
