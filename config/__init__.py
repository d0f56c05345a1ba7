"""Installed as the package ``rfid_table.configs`` (see rfid_table/package_data.py): the Mosquitto configurations
and the example table configurations, read at run time."""
