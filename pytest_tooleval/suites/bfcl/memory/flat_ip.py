"""faiss's `IndexIDMap(IndexFlatIP)` as bfcl's vector memory uses it, in numpy: the same float32 scores, the same
results in the same order, and the same exceptions for the arguments bfcl's code can hand it (docs/bfcl.md#memory).

faiss-cpu 1.11.0 (bfcl's pin) ships a build for each x86 instruction set and loads the widest one the CPU has; each
build sums the products of an inner product in its own order, so the last bits of a score depend on the build.
Measured against faiss itself (tests/unit/bfcl/record_memory_vector.py), each build's sum is:

- generic: 4 float32 lanes, each product rounded to float32 before it is added to its lane;
- avx2: the same with 8 lanes;
- avx512: 16 lanes, each product added with a fused multiply-add (one rounding for product and sum);

then the lanes summed as a halving tree (lane i + lane i+L/2, and so on down to one). `build()` picks the one faiss
would load here; on other machines (ARM's builds are not measured) it falls back to generic.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

if TYPE_CHECKING:  # annotations only (they are not evaluated)
    from numpy.typing import NDArray

    Matrix: TypeAlias = NDArray[np.float32]  # unknown to mypy where numpy is not installed

#: lanes and whether a product and its sum are fused, per faiss build
BUILDS: dict[str, tuple[int, bool]] = {"generic": (4, False), "avx2": (8, False), "avx512": (16, True)}


def build() -> str:
    """The faiss build its loader picks on this CPU, from numpy's CPU features as faiss's loader reads them."""
    try:
        umath = importlib.import_module("numpy._core._multiarray_umath")  # numpy 2
    except ImportError:
        umath = importlib.import_module("numpy.core._multiarray_umath")  # numpy 1
    present = {str(name) for name, on in umath.__cpu_features__.items() if on}
    if any("AVX512" in name for name in present):
        return "avx512"
    return "avx2" if "AVX2" in present else "generic"


class FlatIP:
    """Vectors and their ids in storage order: an add goes to the end, a removal closes the gap (as faiss's
    IndexIDMap over IndexFlatIP keeps them)."""

    def __init__(self, dim: int, kernel: str) -> None:
        self.dim = dim
        self.lanes, self.fused = BUILDS[kernel]
        self.ids: list[int] = []
        self.vectors: Matrix = np.zeros((0, dim), dtype=np.float32)

    @property
    def ntotal(self) -> int:
        return len(self.ids)

    def add_with_ids(self, x: Matrix, ids: object) -> None:
        """Append `x`'s rows, with faiss's own checks in its order: two dimensions, the width, one id a row."""
        n, d = x.shape
        if d != self.dim:
            raise AssertionError
        labels = np.ascontiguousarray(ids, dtype=np.int64)
        if labels.shape != (n,):
            raise AssertionError("not same nb of vectors as ids")
        self.vectors = np.concatenate([self.vectors, np.ascontiguousarray(x, dtype=np.float32)])
        self.ids.extend(int(label) for label in labels)

    def remove_ids(self, ids: Sequence[int]) -> None:
        keep = [n for n, label in enumerate(self.ids) if label not in ids]
        self.vectors = self.vectors[keep]
        self.ids = [self.ids[n] for n in keep]

    def reset(self) -> None:
        self.ids = []
        self.vectors = np.zeros((0, self.dim), dtype=np.float32)

    def search(self, x: Matrix, k: Any) -> list[tuple[float, int]]:
        """The first query row's k best (score, id), best first, as faiss returns them, its padding (id -1) left
        out. The checks are faiss's, in its order; `k` is what bfcl passes (any JSON value that got past `min`)."""
        n, d = x.shape
        query = np.ascontiguousarray(x, dtype=np.float32)
        if d != self.dim:
            raise AssertionError
        if not k > 0:
            raise AssertionError
        np.empty((n, k), dtype=np.float32)  # faiss allocates its result so: a k that is no integer fails here
        return select(self.scores(query[0]), self.ids, int(k))

    def scores(self, query: Matrix) -> list[float]:
        """The inner product of `query` with each stored vector, summed in the build's order."""
        lanes = self.lanes
        width = self.vectors.shape[1]
        acc = np.zeros((len(self.ids), lanes), dtype=np.float32)
        for start in range(0, width, lanes):
            block = self.vectors[:, start:start + lanes]
            if self.fused:
                acc = fma(block, query[start:start + lanes], acc)
            else:
                acc = acc + block * query[start:start + lanes]
        while acc.shape[1] > 1:
            half = acc.shape[1] // 2
            acc = acc[:, :half] + acc[:, half:]
        return [float(score) for score in acc[:, 0]]


def fma(a: Matrix, b: Matrix, c: Matrix) -> Matrix:
    """a * b + c rounded once to float32. The product of two float32 is exact in float64, and the float64 sum's
    own error is known exactly (TwoSum): it decides the one case where rounding twice differs, a float64 sum that
    lies exactly halfway between two float32."""
    product = a.astype(np.float64) * b.astype(np.float64)
    wide = c.astype(np.float64)
    total = product + wide
    back = total - wide
    error = (wide - (total - back)) + (product - back)
    near = total.astype(np.float32)
    gap = total - near.astype(np.float64)
    other = np.nextafter(near, np.where(gap > 0, np.float32(np.inf), np.float32(-np.inf)))
    halfway = (gap != 0) & (total == (near.astype(np.float64) + other.astype(np.float64)) / 2)
    beyond = halfway & (np.sign(error) == np.sign(gap))
    return np.where(beyond, other, near).astype(np.float32)


def select(scores: Sequence[float], ids: Sequence[int], k: int) -> list[tuple[float, int]]:
    """faiss's k best of a flat search. A heap of k keeps the best seen so far, in storage order: a newcomer enters
    only with a score above the heap's worst, and the one that leaves is the worst by (score, position), so of tied
    worst ones the earliest leaves first. The kept ones come out by (score, position), the greatest first: ties
    latest first. k = 1 keeps the first best."""
    kept: list[tuple[float, int]] = []  # (score, position)
    for position, score in enumerate(scores):
        if len(kept) < k:
            kept.append((score, position))
        else:
            worst = min(kept)
            if score > worst[0]:
                kept.remove(worst)
                kept.append((score, position))
    return [(score, ids[position]) for score, position in sorted(kept, reverse=True)]
