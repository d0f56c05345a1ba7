"""The ``rfid-table`` command (``cli.py``) over four packages: ``service`` (the daemon: its loop, the pipeline, the
journal, the publisher, commands, the table's GPIO), ``config`` (the table configuration and the chip registry, one
checker), ``ops`` (the operator's tools: registration, the broker, watch, diag, export) and ``devtools`` (the
developer's tools: the simulated table, demo, replay, benchmarks, soak test)."""

__version__ = "0.1.0"
