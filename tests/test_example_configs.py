"""The example table configurations' comments say what the configuration takes: a technician copies from them."""

import re
import tomllib
from pathlib import Path

import pytest

from controller.rules import PROFILES
from rfid_table.config.table import VARIANTS
from rfid_table.ops.broker_setup import table_user

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "config").glob("table-*.toml"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda path: path.name)
def test_the_comments_list_every_choice_and_name_the_tables_broker_user(path):
    text = path.read_text(encoding="utf-8")
    for key, known in (("variant", list(VARIANTS)), ("rules", list(PROFILES))):
        # e.g.  variant = "nlhe"   # nlhe, plhe, ...   or   rules = "tda"   # house rules: tda, ...
        for listed in re.findall(rf"^{key} = \S+ +# (?:[a-z ]+: )?(.+)$", text, re.M):
            assert listed.split(", ") == known, f"{path.name}: the comment of {key} lists {listed}"
    table_id = tomllib.loads(text)["table"]["id"]
    for user in re.findall(r'^# username = "([^"]+)"', text, re.M):  # broker-setup's user for this table
        assert user == table_user(table_id), f"{path.name}: [mqtt] username {user} is not the table's"
