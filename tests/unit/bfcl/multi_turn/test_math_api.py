"""MathAPI pays for mpmath only when its logarithm runs (docs/development.md#dependencies); its behaviour is held
to upstream's by test_differential.py."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from pytest_tooleval.suites.bfcl.multi_turn.apis.math_api import MathAPI
from pytest_tooleval.suites.bfcl.multi_turn.tables import Tables
import pytest_tooleval.hooks.plugin
tables = Tables({
    "math_api.MathAPI.si_unit_conversion.to_meters": {"m": 1},
    "math_api.MathAPI.imperial_si_conversion.conversion": {"m_to_ft": 3.0},
})
api = MathAPI(tables)
print("mpmath" in sys.modules, api.add(1, 2), api.square_root(2, 3))
print(api.logarithm(8, 2, 5), "mpmath" in sys.modules)
"""


def test_mpmath_is_imported_only_when_logarithm_runs() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [
        "False {'result': 3} {'result': Decimal('1.41')}",
        "{'result': mpf('3.0')} True",
    ]
