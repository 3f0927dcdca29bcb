"""Answers as JSON-plain dicts: how they are kept by a pool and travel on the run board between processes."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, TypedDict

from ..errors import ContextOverflowError
from ..models.base import InfrastructureError
from ..outcome import Answer, InternalError, SampleError, Skipped
from ..suites.base import Case


class EncodedError(TypedDict):
    type: str  # the exception's class, as `decode` raises it again
    message: str


class Encoded(TypedDict, total=False):
    """A sample's answer as kept and shared: one of its keys."""

    answer: dict[str, Any]  # an Answer's fields (asdict), as `decode` passes them to Answer again
    skip: str
    error: EncodedError


def sample_key(case: Case) -> str:
    # the same sample in two protocols is answered twice, and each repeat apart (--tooleval-repeats)
    return (f"{case.suite}/{case.language}/{case.id}" + (f"/{case.variant}" if case.variant else "")
            + (f"/r{case.repeat}" if case.repeat > 1 else ""))


def encode_answer(answer: Answer | Skipped) -> Encoded:
    if isinstance(answer, Skipped):  # a suite decided while answering that the sample is not evaluated
        return {"skip": answer.reason}
    return {"answer": asdict(answer)}


def encode_error(exc: BaseException) -> Encoded:
    kind = type(exc).__name__ if isinstance(exc, (InfrastructureError, SampleError)) else "InternalError"
    return {"error": {"type": kind, "message": str(exc) if kind != "InternalError" else f"{type(exc).__name__}: {exc}"}}


def decode(result: Encoded) -> Answer | Skipped:
    if "skip" in result:
        return Skipped(result["skip"])
    if "error" in result:
        error = result["error"]
        if error["type"] == "ContextOverflowError":
            raise ContextOverflowError(error["message"])
        if error["type"] == "SampleError":
            raise SampleError(error["message"])
        if error["type"] == "InternalError":
            raise InternalError(error["message"])
        raise InfrastructureError(error["message"])
    return Answer(**result["answer"])


