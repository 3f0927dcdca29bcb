"""bfcl's multi-turn result files as recorded outputs (bfcl-multiturn §1.5):
`<dir>/multi_turn/BFCL_v4_<category>_result.json`, JSON Lines of `{"id", "result", ...}`, `result` one list of raw
answers per user turn (or the inference-error string generation left).

As for single-turn (plugin_suite.py), a folder may be partial: a sample whose id has no row is simply absent, and
its test errors with "no recorded output" where it is asked for; a row repeated exactly is read once, two
different rows for one id are refused.
"""

from __future__ import annotations

from pathlib import Path

from ....errors import DataError
from ....json_value import JSONValue
from ....models.replay import Recorded, unique_rows
from ..data import id_rows


def result_file(folder: Path, category: str) -> Path:
    return folder / "multi_turn" / f"BFCL_v4_{category}_result.json"


def read_results(folder: Path, category: str) -> dict[str, JSONValue]:
    """{id: result} of one category's result file in `folder` (a model's folder in bfcl's result/), ordered as
    bfcl's evaluator orders the entries: by the number that ends the id (§1.1). No file: no rows. A line
    that is not an object with an id of that category and a result is a DataError naming the file and line."""
    path = result_file(folder, category)
    if not path.exists():
        return {}
    recorded, results = [], {}
    for number, row in id_rows(path):
        sample_id = row["id"]
        prefix = f"{category}_"
        if not isinstance(sample_id, str) or not (sample_id.startswith(prefix) and sample_id[len(prefix):].isdecimal()):
            raise DataError(f"{path}:{number}: id {sample_id!r} is not of {category} (expected {category}_<n>)")
        if "result" not in row:
            raise DataError(f"{path}:{number}: {sample_id} has no \"result\" (bfcl writes one list of answers per "
                            "turn there)")
        recorded.append(Recorded({"id": sample_id, "result": row["result"]}, path, "line", number))
        results[sample_id] = row["result"]
    unique_rows(recorded, str(path))  # an id recorded twice with different results is refused
    return {sample_id: results[sample_id]
            for sample_id in sorted(results, key=lambda sample_id: int(sample_id.removeprefix(f"{category}_")))}
