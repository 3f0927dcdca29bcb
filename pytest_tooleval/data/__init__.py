"""Upstream benchmark data: the pinned download, reading its files, and their hashes."""
