"""Installed as the package ``rfid_table.overlay`` (see rfid_table/package_data.py): the broadcast overlay page,
served by the brokers' WebSocket listener. This file is not served."""
