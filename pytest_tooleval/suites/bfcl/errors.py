"""The exception the BFCL decoders raise where bfcl-eval's decoders raise (bfcl §3)."""

from __future__ import annotations

__all__ = ["DecodeError"]


class DecodeError(ValueError):
    """The answer cannot be decoded: bfcl's verdict is a decode failure (``ast_decoder:decoder_failed``)."""
