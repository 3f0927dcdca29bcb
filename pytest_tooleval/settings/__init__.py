"""The options: one table, one Settings object, the config file, and the run's secrets."""
