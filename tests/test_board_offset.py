"""The board-sync offset ([broadcast] board_offset_ms): on the delayed feed each board card goes out that much later
than the delay alone would send it, to match a video whose board shot comes later; the rest of the hand does not
wait for it (but what follows a board card, which the feed keeps in order).

Through the daemon's pipeline and publisher and a real Mosquitto, on the simulated table's own clock: the test
steps the table time and labels each message with the table time at which it arrived.
"""

import dataclasses
import json
import re
import threading
from pathlib import Path

import pytest

from conftest import Recorder
from rfid_table.config.table import load_config
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.service.journal import Journal
from rfid_table.service.publisher import MqttPublisher
from test_check_config import check_config_fails, edited, line_of, write

DELAY_S = 2.0
OFFSET_S = 1.5


def test_board_cards_reach_the_delayed_topic_no_earlier_than_the_delay_and_the_offset(table_config, tmp_path):
    config = dataclasses.replace(table_config, table_id="offset-1", broadcast_delay_s=DELAY_S,
                                 broadcast_release="time", broadcast_board_offset_s=OFFSET_S)
    base = f"{config.mqtt.topic_prefix}/{config.table_id}"
    journal = Journal(tmp_path / "journal.db", feeds=("public", "secure", "delayed"))
    assert journal.open().ok
    publisher = MqttPublisher(config.mqtt, config.table_id, epoch=journal.epoch)
    table = SimulatedTable(config, SimOptions(hands=1, seed=5, speed=0, pace_s=0.5, link="direct"), publisher,
                           journal)
    now = {"t": 1000.0}  # the table time of the step under way: the label of what arrives meanwhile
    arrived: list[tuple[float, dict]] = []
    lock = threading.Lock()
    feed = Recorder(config.mqtt, f"{base}/delayed/events")

    def label(client, userdata, message):
        with lock:
            arrived.append((now["t"], json.loads(message.payload)))

    feed.client.on_message = label
    table.pipeline.restore(now["t"])
    assert publisher.start()
    board_at: list[float] = []  # the table times of the board cards, as the pipeline made them
    t, dealing = now["t"], True
    try:
        for _ in range(int(120 / table.cycle_s)):  # a hand is well under two minutes of table time
            now["t"] = t
            dealing = dealing and table.advance(t)
            board_at += [e.t for e in table.step(t) if e.type == "board_card"]
            publisher.service(0.001)
            # Around the moments a board card could go out, wait until whatever the broker had has arrived, so that
            # a card sent early would be labelled with the step that sent it.
            if any(b + DELAY_S - table.cycle_s <= t <= b + DELAY_S + OFFSET_S + 2 * table.cycle_s for b in board_at):
                feed.sync()
            with lock:
                if any(body["type"] == "hand_ended" for _, body in arrived):
                    break
            t += table.cycle_s
        else:
            pytest.fail("the hand never went out whole on delayed/events")
    finally:
        publisher.stop()
        feed.close()
        journal.close()

    boards = [(at, body) for at, body in arrived if body["type"] == "board_card"]
    assert len(boards) == len(board_at) == 5
    for at, body in boards:
        due = body["t"] + DELAY_S + OFFSET_S
        assert at >= due - 1e-6, f"board card {body['card']} on delayed/events {due - at:.2f} s early"
        assert at <= due + 0.5, f"board card {body['card']} held {at - due:.2f} s past its offset"
    # The rest of the hand waits for the delay, not for the offset: its start went out before its first board card
    # could have.
    started = next(at for at, body in arrived if body["type"] == "hand_started")
    start_t = next(body["t"] for _, body in arrived if body["type"] == "hand_started")
    assert start_t + DELAY_S <= started < start_t + DELAY_S + 0.5
    assert [body["seq"] for _, body in arrived] == sorted(body["seq"] for _, body in arrived)  # in order


SHIPPED = 'delay_s = 900\nrelease = "hand"\n'  # config/table-6max.toml's [broadcast]


@pytest.mark.parametrize("broadcast, expected", [
    ('delay_s = 900\nrelease = "hand"\nboard_offset_ms = 800\n',
     "broadcast.board_offset_ms: needs release = 'time': with 'hand' a whole hand goes out at once and the overlay "
     "plays it back by the events' own times"),
    ('delay_s = 0\nboard_offset_ms = 800\n',
     "broadcast.board_offset_ms: holds board cards back on the delayed feed: it needs delay_s"),
    ('delay_s = 900\nrelease = "time"\nboard_offset_ms = 1.5\n',
     "broadcast.board_offset_ms: expected milliseconds from 0 to 60000, got float 1.5"),
    ('delay_s = 900\nreveal = "river"\n',
     "broadcast.reveal: expected 'never', 'showdown', 'all_in' or 'hand_end' (the hole cards live/events shows, "
     "without delay), got 'river'"),
])
def test_check_config_names_a_broadcast_setting_it_cannot_apply(tmp_path, capsys, broadcast, expected):
    text = edited(SHIPPED, broadcast)
    path = write(tmp_path, text)
    key = broadcast.splitlines()[-1].split(" =")[0]
    assert check_config_fails(path, capsys) == [
        "bad configuration (1 problem):", f"  {path}:{line_of(text, key + ' =')}: {expected}"]


def test_the_configuration_pages_broadcast_example_is_what_the_table_reads(tmp_path):
    """docs/configuration.md's [broadcast] example in a shipped table: the keys and values the page shows are read."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text(encoding="utf-8")
    example = next(block for block in re.findall(r"```toml\n(.*?)```", page, re.S) if block.startswith("[broadcast]"))
    config = load_config(write(tmp_path, edited("[broadcast]\n" + SHIPPED, example)))
    assert (config.broadcast_delay_s, config.broadcast_release, config.broadcast_board_offset_s,
            config.broadcast_reveal) == (900.0, "time", 1.2, "showdown")
