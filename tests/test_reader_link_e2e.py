"""The daemon over the emulated reader firmware: unplug and replug while a hand is running."""

from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.service.sink import Sink


class ListSink(Sink):
    def __init__(self):
        self.events = []

    def publish_events(self, events):
        self.events.extend(events)

    def publish_snapshots(self, public_snapshot, secure_snapshot):
        pass

    def take_acknowledged(self):
        return {}

    def take_commands(self):
        return []

    def publish_reply(self, role, user, body):
        pass

    def publish_diagnostics(self, report):
        self.diagnostics = report


def run(table, t, seconds):
    end = t + seconds
    while t < end:
        table.step(t)
        t += table.cycle_s
    return t


def test_unplug_is_reported_within_two_seconds_and_every_zone_is_right_after_the_replug(table_config):
    sink = ListSink()
    table = SimulatedTable(table_config, SimOptions(link="pty", hands=None, seed=1), sink)
    uid = {card: u for u, card in table_config.decks["A"].items()}
    try:
        for card, zone in (("As", "seat1.cards"), ("7h", "seat2.cards"), ("Kd", "seat1.cards"),
                           ("7c", "seat2.cards")):
            table.field.place(uid[card], zone)
        t = run(table, 1000.0, 2.0)
        assert [e.type for e in sink.events].count("card_dealt") == 4

        emulator = table.emulators[0]
        emulator.unplug()
        unplugged_at = t
        t = run(table, t, 2.5)
        down = [e for e in sink.events if e.type == "reader_link" and e.public["state"] == "down"]
        assert len(down) == 1 and down[0].t - unplugged_at <= 2.0, down

        # While the reader is away, seat 2 folds and the dealer turns the flop.
        table.field.place(uid["7h"], "muck")
        table.field.place(uid["7c"], "muck")
        for card in ("Jh", "Th", "3c"):
            table.field.place(uid[card], "board")
        before_replug = len(sink.events)
        t = run(table, t, 1.0)
        assert sink.events[before_replug:] == []  # nothing is invented while the link is down

        emulator.replug()
        t = run(table, t, 6.0)  # the link retries with backoff, identifies, asks for a full inventory
        after = sink.events[before_replug:]
        assert [e.public["state"] for e in after if e.type == "reader_link"] == ["up"]
        # What happened during the outage arrives with the first full inventory (in no knowable order).
        assert sorted((e.type, e.public.get("seat")) for e in after if e.type in ("fold", "board_card")) == [
            ("board_card", None), ("board_card", None), ("board_card", None), ("fold", 2)]
        controller = table.pipeline.controller
        assert controller.on_table() == {u: table.field.zone_of(u) for u in controller.on_table()}
        assert set(controller.on_table()) == {uid[c] for c in ("As", "Kd", "7h", "7c", "Jh", "Th", "3c")}
        assert controller.snapshot(secure=False)["readers"]["main"]["link"] == "up"
    finally:
        table.close()
