"""The files the programs read at run time, shipped inside the installed package.

pyproject.toml maps five directories of the source tree into ``rfid_table`` (``package-dir``), each with an
``__init__.py`` so that it is a regular package both in a wheel and in an editable checkout:

* ``config/`` → ``rfid_table.configs``: the Mosquitto configurations (``mosquitto/private.conf`` for the private
  broker, ``mosquitto/cardroom.conf`` for ``rfid-table broker-setup``) and the example table configurations the
  demo, the benchmarks and the soak test start from;
* ``overlay/`` → ``rfid_table.overlay``: the broadcast overlay page, served by the brokers' WebSocket listener;
* ``console/`` → ``rfid_table.console``: the floor's console page, served beside the overlay (it loads the
  overlay's MQTT.js: :func:`rfid_table.ops.broker.install_pages` lays both out);
* ``schemas/`` → ``rfid_table.schemas``: the published JSON schemas (commands are validated against one);
* ``firmware/`` → ``rfid_table.firmware``: the reader firmware with its ``config.json`` and the unix port's stand-ins
  (``host/``), which the simulator and the reader benchmark run in MicroPython (``sim.pn5180``).

The paths are found with ``importlib.resources``, never by walking up from a source file: an installed wheel has
no source tree around it.
"""

from importlib import resources
from pathlib import Path


def _directory(package: str) -> Path:
    # A regular package on disk (the wheel is installed unzipped): its files are a real directory, which
    # mosquitto's http_dir and shutil.copytree need.
    return Path(resources.files(package))


CONFIG_DIR = _directory("rfid_table.configs")
MOSQUITTO_DIR = CONFIG_DIR / "mosquitto"
OVERLAY_DIR = _directory("rfid_table.overlay")
try:
    CONSOLE_DIR = _directory("rfid_table.console")
except ModuleNotFoundError:
    # An editable install made before the console was a package maps no rfid_table.console (until `pip install -e .`
    # runs again); its directory lies beside the overlay's there, as in a wheel.
    CONSOLE_DIR = OVERLAY_DIR.parent / "console"
SCHEMA_DIR = _directory("rfid_table.schemas")
FIRMWARE_DIR = _directory("rfid_table.firmware")
# What the data packages' __init__.py leave behind in a copy of a data directory that is served or installed.
NOT_DATA = ("__init__.py", "__pycache__")
