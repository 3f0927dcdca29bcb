"""BFCL v4 single-turn (the Berkeley Function Calling Leaderboard, bfcl-eval 2026.3.23) as a suite (bfcl §1)."""
