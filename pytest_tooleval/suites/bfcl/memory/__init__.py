"""BFCL's memory category: the memory backends a model writes to and reads from (docs/bfcl.md#memory)."""
