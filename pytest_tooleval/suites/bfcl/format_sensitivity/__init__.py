"""BFCL v4's format-sensitivity category: 200 single-turn questions asked in 26 prompt configurations
(docs/bfcl.md#format-sensitivity)."""
