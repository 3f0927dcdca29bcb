"""BFCL v4's multi-turn categories (docs/bfcl-multi-turn.md): the simulated APIs, their tables and result strings."""
