"""The table's daemon: its loop (``run``), the pipeline from the readers through the controller to the broker
(``daemon``), the journal and its writer, checkpoints, the publisher and the MQTT contract (``contract``: topic
names and payload shapes, for every program that talks to a table), commands, the clocks, the table's GPIO, the
equity worker, systemd's notifications and the diagnostics counters."""
