"""Installed as the package ``rfid_table.firmware`` (see rfid_table/package_data.py): the reader firmware, which the
simulator and the reader benchmark run in the MicroPython unix port (``sim.pn5180``). Not flashed: the Pico needs only
the files docs/hardware.md names."""
