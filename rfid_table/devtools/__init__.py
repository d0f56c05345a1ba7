"""The developer's tools: the simulated table (``simulate``, behind ``rfid-table sim``), the demo, the PHH replay,
the benchmarks and the soak test."""
