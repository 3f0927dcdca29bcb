"""BM25+ scores as the memory backend's key search computes them (docs/bfcl.md#memory).

bfcl ranks keys with `rank_bm25.BM25Plus` (k1 1.5, b 0.75, delta 1) over numpy arrays. Each score here is the
same sequence of IEEE double operations on Python floats, in the same order, so the scores, their reprs and the
order of ties are the same without numpy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

K1 = 1.5
B = 0.75
DELTA = 1.0


class Index:
    """The statistics of a tokenised corpus, made before any query is read (as upstream builds its BM25Plus
    first): an empty corpus raises ZeroDivisionError here, as upstream's average document length does."""

    def __init__(self, corpus: Sequence[Sequence[str]]) -> None:
        self.lengths = [len(document) for document in corpus]
        self.average = sum(self.lengths) / len(corpus)  # upstream: a running int total over the count
        self.counts: list[dict[str, int]] = []
        holding: dict[str, int] = {}  # word -> documents that hold it
        for document in corpus:
            frequencies: dict[str, int] = {}
            for word in document:
                frequencies[word] = frequencies.get(word, 0) + 1
            self.counts.append(frequencies)
            for word in frequencies:
                holding[word] = holding.get(word, 0) + 1
        self.idf = {word: math.log((len(corpus) + 1) / held) for word, held in holding.items()}

    def scores(self, query: Sequence[str]) -> list[float]:
        """The BM25+ score of each document for the tokenised query."""
        result = [0.0] * len(self.counts)
        for word in query:
            weight = self.idf.get(word) or 0
            for index, frequencies in enumerate(self.counts):
                frequency = frequencies.get(word) or 0
                # numpy's order: ((f * (k1 + 1)) / (k1 * ((1 - b) + ((b * len) / avg)) + f) + delta) * idf, summed
                part = (frequency * (K1 + 1)) / (K1 * (1 - B + B * self.lengths[index] / self.average) + frequency)
                result[index] += weight * (DELTA + part)
        return result

