"""The world outside the daemon: a virtual table with a dealer and players, for demos and tests."""
