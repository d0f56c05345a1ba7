"""The table outside the daemon in the full-table part of ``rfid-table bench`` (``rfid_table.devtools.bench_table``):
the field, a firmware emulator per reader on a pty with RF noise, players who bet with chips and a dealer, in a
process of its own.
"""

import json
import os
import time

from hal.zone_names import Zone
from rfid_table.config.table import MqttSettings, load_config
from rfid_table.service.contract import QOS
from rfid_table.mqtt import make_client

HAND_PACE_S = 0.5  # a brisk dealer, an action every 0.5 s: enough cards for a p99 in a few minutes
# A card pitched every 0.3 s, a fast dealer's pace. At 0.15 s, twice as fast as anyone pitches, a card read late (at
# a zone's edge) overtook the next card about once in 1,200, and the table asked the floor, as it must when it cannot
# tell that from a card dealt out of turn (read_order uncertain): a false event, since this dealer makes no mistakes.
DEAL_S = 0.3


def table_world(conn, config_path: str, link_dir: str, noise: float, seed: int, settings: MqttSettings,
                commands_topic: str) -> None:
    """The table outside the daemon, in its own process so that the daemon's CPU is its own: the field, a firmware
    emulator per reader on a pty (with RF noise), and players who bet with chips and a dealer, on the monotonic
    clock; the floor's stacks go to the daemon as MQTT commands. Records when each tag placed on a zone is first
    read there (perf_counter, shared by all processes)."""
    import select as select_module
    from pathlib import Path

    from rfid_table.config.table import ENGINE_VARIANTS
    from sim.betting_dealer import TABLE_CLEAR, BettingDealer
    from sim.field import TableField
    from sim.firmware import FirmwareEmulator
    from sim.noise import NoiseModel

    config = load_config(config_path)
    waiting: dict[tuple[str, int, str], float] = {}  # (reader, antenna, uid) → when placed, until first read
    first_reads: list[tuple[str, str, float, float]] = []  # (uid, zone, placed, first read)
    zone_at = {where: zone for zone, where in config.zones.items()}

    class WatchedField(TableField):
        def place(self, uid: str, zone: str) -> None:
            super().place(uid, zone)
            reader, antenna = config.zones[zone]
            waiting[(reader, antenna, uid)] = time.perf_counter()

    class WatchedNoise(NoiseModel):
        reader = ""

        def antenna_reads(self, cycle, antenna, tags, neighbour_tags={}):
            reads = super().antenna_reads(cycle, antenna, tags, neighbour_tags)
            if waiting:
                now = time.perf_counter()
                for read in reads:
                    placed = waiting.pop((self.reader, antenna + 1, read.uid), None)  # the wire counts from 0
                    if placed is not None:
                        first_reads.append((read.uid, zone_at[(self.reader, antenna + 1)], placed, now))
            return reads

    field = WatchedField(config.zones)
    emulators = []
    for index, reader in enumerate(config.readers.values()):
        model = WatchedNoise.realistic(noise, seed=seed + index)
        model.reader = reader.name
        emulators.append(FirmwareEmulator(field, reader=reader.name, antenna_count=reader.antennas,
                                          cycle_s=reader.cycle_s, noise=model, serial=f"BENCH-{reader.name}",
                                          link_path=Path(link_dir) / reader.name, seed=seed))
    floor = make_client(settings, f"rfid-table-bench-floor-{os.getpid()}")
    floor.connect(settings.host, settings.port)
    floor.loop_start()
    commands = iter(range(1, 1 << 30))

    def command(body: dict) -> None:
        floor.publish(commands_topic, json.dumps({"id": f"bench-{next(commands)}", **body}), qos=QOS)

    game = config.game
    dealer = BettingDealer(field, config.decks[config.active_deck], config.chips.chips,
                           list(range(1, config.seats + 1)), variant=ENGINE_VARIANTS[game.variant],
                           blinds=(game.small_blind, game.big_blind), ante=game.ante, command=command,
                           pace_s=HAND_PACE_S, deal_s=DEAL_S, seed=seed,
                           players_style="random")  # many chips moved, as the figures measured before
    conn.send("ready")
    moves, due = None, 0.0
    try:
        while True:
            now = time.monotonic()
            if conn.poll(0):
                what, *arguments = conn.recv()
                if what == "stop":
                    break
                if what == "rest":  # the river: every card out, the bets in the pot
                    (count,) = arguments
                    field.clear()
                    deck = list(config.decks[config.active_deck])
                    cards = [Zone("cards", s).name for s in range(1, config.seats + 1) for _ in range(2)]
                    cards += ["board"] * 5 + ["burn"] * 3
                    for uid, zone in zip(deck, cards):
                        field.place(uid, zone)
                    for uid in list(config.chips.chips)[:count - len(cards)]:
                        field.place(uid, "pot")
                    conn.send(("placed", field.version))
                elif what == "clear":
                    field.clear()
                    conn.send(("cleared", field.version))
                elif what == "hands":
                    (hands,) = arguments
                    field.clear()
                    first_reads.clear()
                    waiting.clear()
                    # The floor opens the game: who plays, where the button is (the tags at rest were no hand).
                    button = next((p for p in dealer.players if p > dealer.button), dealer.players[0])
                    command({"command": "seats", "seats": dealer.players})
                    command({"command": "set_button", "seat": button})
                    moves, due, hands_dealt = dealer.hands(hands), now + 1.0, 0
                    current = next(moves)
            while moves is not None and now >= due:
                current.apply()
                if current.describe == TABLE_CLEAR:
                    hands_dealt += 1
                    conn.send(("hand dealt", hands_dealt))
                current = next(moves, None)
                if current is None:
                    moves = None
                    conn.send(("hands done", list(first_reads)))
                else:
                    due += current.delay_s
            for emulator in emulators:
                emulator.step(now)
            select_module.select([e.master_fd for e in emulators if e.master_fd is not None], [], [], 0.002)
    finally:
        floor.disconnect()
        floor.loop_stop()
        for emulator in emulators:
            emulator.close()
