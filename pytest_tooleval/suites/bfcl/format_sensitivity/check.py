"""bfcl's verdict on a format-sensitivity answer: decoded in the entry's configuration, then judged by the
single-turn AST checker as a Python answer to the entry's question (docs/bfcl.md#format-sensitivity)."""

from __future__ import annotations

from .. import ast_rules
from ..checker import BfclVerdict, is_call_format, plain
from ..errors import DecodeError
from .decode import decode_output
from .entries import Entry


def check_output(entry: Entry, output: object) -> BfclVerdict:
    """bfcl's verdict on `output`, the text a prompting model answered to `entry`; no input raises."""
    try:
        decoded = decode_output(output, entry.config)
    except DecodeError as exc:
        return BfclVerdict(False, "ast_decoder:decoder_failed", (f"the answer does not decode: {exc}",), None)
    if not is_call_format(decoded):
        # (bfcl §4.8) a decoded answer that is not a list of {name: {arguments}} is a format error
        return BfclVerdict(False, "ast_decoder:decoder_wrong_output_format",
                           ("the decoded answer is not a list of {function: {arguments}} calls: "
                            f"{ast_rules.safe_repr(decoded, limit=200)}",), plain(decoded))
    sample = entry.sample
    if sample.ground_truth is None:
        raise ValueError(f"{sample.id} has no possible answers")
    # bfcl hands its checker the question's id as the category: the same words choose the same checker
    outcome = ast_rules.check_calls(sample.category, "prompt", "python", sample.functions, decoded,
                                    sample.ground_truth)
    return BfclVerdict(outcome.valid, outcome.error_type, outcome.errors, plain(decoded))
