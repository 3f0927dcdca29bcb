"""The run and what one process of it holds: the session, its engine, the schedule, shards, repeats and quarantine."""
