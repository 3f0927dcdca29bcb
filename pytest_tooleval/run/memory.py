"""The collected run's objects, kept out of the garbage collector's walks while the session lasts."""

from __future__ import annotations

import gc


class FrozenHeap:
    """The data and the collected tests live as long as the session: the garbage collector need not walk them again
    on every full collection (`freeze`, after collection); `thaw` gives them back (pytest may run again in this
    process: pytester, an embedding program). An xdist worker never thaws: its process ends with the session."""

    def __init__(self) -> None:
        self._frozen = False

    def freeze(self) -> None:
        gc.freeze()
        self._frozen = True

    def thaw(self) -> None:
        if self._frozen:
            gc.unfreeze()
            self._frozen = False
