"""Installed as the package ``rfid_table.console`` (see rfid_table/package_data.py): the floor's console page,
served beside the overlay by the brokers' WebSocket listener (rfid_table.ops.broker.install_pages). This file is not
served."""
