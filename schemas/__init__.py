"""Installed as the package ``rfid_table.schemas`` (see rfid_table/package_data.py): the published JSON schemas;
the daemon validates commands against command.schema.json."""
