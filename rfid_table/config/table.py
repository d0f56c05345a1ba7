"""The table configuration: one TOML file per table, validated before anything starts.

Every problem is reported, not just the first, each as ``FILE:LINE: key.path: what is wrong (what was
expected)``. The line comes from the TOML parser for syntax errors and from a scan of the file for the
rest, so a technician can go straight to it (:mod:`rfid_table.config.checker` reads, parses and collects; the chip
registry named in ``[chips]`` is loaded by :mod:`rfid_table.config.registry`).
"""

import importlib
import re
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.cards import FULL_DECK, parse_card
from controller.chip_betting import BettingSetup
from controller.levels import Level
from controller.player_limits import limit_rule, max_players
from controller.rotation import (CHANGE_HANDS, CHANGE_LEVEL, FLOP_GAME_STAKES, HORSE, STUD_GAME_STAKES, Game,
                                 RotationSetup, Stakes)
from controller.table import TableSetup
from hal.gpio import HEADER_GPIO, PHYSICAL_PINS, RESERVED_GPIO, PinMap
from hal.pn5180_reader import DEFAULT_AGC, DEFAULT_SPI_HZ, SPI_BUSES, FrontEndWiring, dwell_schedule, gpio_chip_select
from hal.zone_names import FIXED_ZONES, SEAT_ZONE_KINDS, Zone
from hal.zones import DebounceSettings
from rfid_table.config.checker import (Checker, ConfigError, UnreadableFile, describe_value, parse_toml, read_bounded,
                                       read_config_text)
from rfid_table.config.gpio import parse_pin_map, validate_pin_map
from rfid_table.config.registry import ISO14443A, ISO15693, load_chip_registry, tag_entries, uid_standard

EX_CONFIG = 78  # sysexits.h: configuration error

READER_BACKENDS = ("sim", "serial", "usb", "metratec", "feig", "pn5180")
# The air interfaces a reader's antennas may run (each antenna one): the tags of cards and chips are one or the other.
STANDARDS = {ISO15693: "ISO 15693", ISO14443A: "ISO 14443A"}
PN5180_KEYS = ("spi_bus", "spi_hz", "frontends", "agc")
FRONTEND_KEYS = {"cs": "the chip select line of the SPI bus (0: CE0, 1: CE1)", "nss": "a GPIO as the chip select",
                 "busy": "the BUSY pin", "rst": "the RST pin", "select": "the antenna switch's select pins",
                 "release": "the switch's release (decoder enable) pin", "antennas": "1 to 8"}
# Readers one can buy, each speaking its maker's protocol (firmware_bridge.metratec, firmware_bridge.feig)
BOUGHT_READERS = ("metratec", "feig")
# Debouncing per kind of zone. Cards: three reads in a row and 0.6 s of silence give an exact picture under
# realistic RF noise (tests/test_noise.py). Chips: a stack larger than what one antenna reads per cycle is
# never read whole in consecutive cycles, so one read must do, with a longer silence.
# Piles (the muck): cards heaped higher than a reader gets through in one cycle, read like chips.
# A stack read in turns (its collisions resolved over two or three dwells) has each chip read every second or
# third pass: a chip or a piled card leaves only after three passes unread as well.
ZONE_KINDS = {"cards": DebounceSettings(2, 0.6, move_after_cycles=3),
              "chips": DebounceSettings(1, 1.0, absent_after_cycles=3),
              "piles": DebounceSettings(1, 1.0, absent_after_cycles=3)}
ENGINE_VARIANTS = {"nlhe": "NLHE", "plhe": "PLHE", "flhe": "FLHE", "plo4": "PLO", "plo5": "PLO5", "plo6": "PLO6",
                   "plo7": "PLO7", "plo8": "PLO8", "flo8": "FLO8", "flhe8": "FLHE8",
                   "stud": "STUD", "stud8": "STUD8", "razz": "RAZZ"}
HI_LO_VARIANTS = ("plo8", "flo8", "flhe8")  # split high and low, eight or better (each board on its own)
# Seven Card Stud, its eight-or-better hi-lo and Razz: seven cards each, two down, four up, the last down; no board
# but a community card when the deck runs short on seventh street. Fixed limit: antes, a bring-in, a small bet on
# third and fourth street and a big bet from fifth ([game] bring_in, small_bet, big_bet: STUD_STAKES).
STUD_VARIANTS = ("stud", "stud8", "razz")
STUD_STAKES = ("bring_in", "small_bet", "big_bet")
STUD_MAX_PLAYERS = 8  # eight stud hands: 56 cards, more than the deck; with seven or eight the deck can run short
# The least settle window, in passes of the chips' reader (TableConfig.bet_settle_s): a pass for the chips that landed
# after their antenna's dwell, and half a pass for a pass running late; on the reader firmware (and the simulated
# reader's stack limit) a stack is read in turns, its collisions left to the antenna's next dwell, so a chip that
# landed in a part already read is read a pass later still. The readers one buys read a stack whole in one inventory.
SETTLE_PASSES = 1.5
SETTLE_PASSES_STACK_IN_TURNS = 2.5
STACK_IN_TURNS_BACKENDS = ("sim", "serial", "usb", "pn5180")
RULE_PROFILES = ("tda", "casinos_austria", "poker_play", "allin_club", "club_tournament_de")
VARIANTS = {"nlhe": 2, "plhe": 2, "flhe": 2, "plo4": 4, "plo5": 5, "plo6": 6, "plo7": 7,  # variant → hole cards
            "plo8": 4, "flo8": 4, "flhe8": 2, "stud": 7, "stud8": 7, "razz": 7}
TABLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # it becomes an MQTT topic level: no '/', '+' or '#'


@dataclass(frozen=True)
class MqttSettings:
    host: str = "localhost"
    port: int = 1883
    topic_prefix: str = "rfid-table"
    client_id: str | None = None
    username: str | None = None
    password: str | None = None
    keepalive: int = 30
    reconnect_max_s: int = 10  # the longest wait between two connection attempts
    # Journaled events the broker has not acknowledged (after an outage or a restart) go out at this pace, so
    # that the queues Mosquitto keeps for slow subscribers do not overflow (docs/mqtt.md, "Delivery").
    backlog_in_flight: int = 100  # messages sent from the backlog and not yet acknowledged
    backlog_per_s: int = 200  # messages per second from the backlog
    tls: bool = False
    tls_ca_file: str | None = None  # None: the system's certificate authorities
    tls_cert_file: str | None = None  # a client certificate, for brokers that ask for one
    tls_key_file: str | None = None
    tls_insecure: bool = False  # skip the check that the broker's certificate names the host


@dataclass(frozen=True)
class ReaderSettings:
    name: str
    backend: str
    antennas: int
    cycle_s: float = 0.05
    link: dict[str, Any] = field(default_factory=dict)  # serial: port, baudrate; usb: vendor_id, product_id, ...
    standards: tuple[str, ...] = ()  # per antenna, antenna 1 first: "iso15693" or "iso14443a" (empty: all iso15693)

    def standard(self, antenna: int) -> str:
        return self.standards[antenna - 1] if self.standards else ISO15693


@dataclass(frozen=True)
class GameSettings:
    variant: str = "nlhe"
    small_blind: int = 1
    big_blind: int = 2
    ante: int = 0
    big_blind_ante: int = 0
    rules: str = "tda"  # the house rule profile (controller/rules.py)
    settle_s: float = 0.5  # a bet is read once its chips have not moved for this long
    levels: tuple[Level, ...] = ()  # [tournament]: the level schedule, replacing the blinds and antes above
    start_level: int = 1
    double_board: bool = False  # two boards every hand, the pot divided equally between them (CA GR 14.1)
    max_players: int = 10  # the most players dealt in (CA GR 15 by variant; the house may set fewer)
    # A mixed game: the games dealt in turn (variant: the one the table starts with), changed every hands_per_game
    # hands or at each level (change); () deals variant only.
    rotation: tuple[str, ...] = ()
    hands_per_game: int = 0
    change: str = CHANGE_HANDS
    # the stud games' stakes: the bring-in of third street, the small bet (third and fourth street) and the big bet
    bring_in: int = 0
    small_bet: int = 0
    big_bet: int = 0
    # a mixed game's games with stakes of their own ([game.stakes.<game>]): (game, its stakes), in the file's order
    stakes: tuple[tuple[str, Stakes], ...] = ()

    def games(self) -> RotationSetup:
        """The games the table deals, in turn; one game has a rotation of one. Where some games of a rotation have
        stakes of their own, every game is played at stakes it names: its own, or the table's blinds and antes."""
        names = self.rotation or (self.variant,)
        own = dict(self.stakes)
        table = Stakes(self.small_blind, self.big_blind, self.ante, self.big_blind_ante)
        return RotationSetup(tuple(Game.named(name, ENGINE_VARIANTS.get(name, ""), VARIANTS[name],
                                              own.get(name, table) if own else None) for name in names),
                             self.hands_per_game, self.change, names.index(self.variant))

    @property
    def hole_cards(self) -> int:
        return VARIANTS[self.variant]

    @property
    def omaha(self) -> bool:  # exactly two hole cards and three of the board
        return self.variant.startswith("plo") or self.variant == "flo8"

    @property
    def hi_lo(self) -> bool:  # each pot split high and low, eight or better
        return self.variant in HI_LO_VARIANTS

    @property
    def stud(self) -> bool:  # cards dealt up and down to each seat, no board
        return self.variant in STUD_VARIANTS


@dataclass(frozen=True)
class ChipSettings:
    registry: str  # the chip registry file (rfid-table register-chips)
    active_set: str
    chips: dict[str, int]  # the active set: tag UID → denomination
    others: dict[str, str]  # tags of the other registered sets → set id (foreign chips)


# [broadcast] reveal: when live/events shows hole cards (rfid_table.service.live_feed; docs/mqtt.md, "The live feed")
REVEAL_POLICIES = ("never", "showdown", "all_in", "hand_end")


@dataclass(frozen=True)
class TableConfig:
    path: str
    table_id: str
    seats: int
    game: GameSettings
    mqtt: MqttSettings
    readers: dict[str, ReaderSettings]
    zones: dict[str, tuple[str, int]]  # zone name → (reader, antenna)
    decks: dict[str, dict[str, str]]  # deck id → {tag UID → card}
    active_deck: str
    debounce: dict[str, DebounceSettings] = field(default_factory=lambda: dict(ZONE_KINDS))
    clear_after_s: float = 1.0
    name: str = ""
    journal_path: str | None = None
    journal_retention: int = 200_000
    broadcast_delay_s: float = 0.0  # 0: no delayed feed
    broadcast_release: str = "hand"
    gpio: PinMap | None = None
    chips: ChipSettings | None = None
    min_rssi_dbm: int | None = None  # reads weaker than this are ignored (cross reads); None: no floor
    order_window_s: float = 1.0  # arrivals are released in the order their tags were first read
    button: int | None = None  # the first hand's button (then it moves); None: the highest seat
    players: tuple[int, ...] | None = None  # the seats dealt in at the start; None: learned from the first deal
    exposed_by: str = "console"  # an exposed card is reported by the console, or laid on the exposed zone
    audit_hands: int = 50  # every card of the active deck must show up within this many hands
    missing_card_s: float = 10.0  # a card of the hand off the table this long while the hand goes on is missing; 0: off
    broadcast_equity: bool = False  # equity events on the secure (and so the delayed) branch
    broadcast_reveal: str = "never"  # the hole cards live/events shows, and when (rfid_table.service.live_feed)
    broadcast_board_offset_s: float = 0.0  # board cards go out on the delayed feed this much later than the rest

    def debounce_by_zone(self) -> dict[str, DebounceSettings]:
        return {zone: self.debounce[Zone.parse(zone).holds] for zone in self.zones}
    def antenna_zones(self) -> dict[tuple[str, int], str]:
        return {antenna: zone for zone, antenna in self.zones.items()}

    @property
    def bet_settle_s(self) -> float:
        """How long a bet's chips must lie still before they are read as one push. A push's chips are read over a
        pass of the chips' reader (those that landed after their antenna's dwell, a pass later), so a window shorter
        than that splits one push into a bet and a string bet. The house's ``settle_ms`` is the floor; the window is
        at least a pass and a half of each reader of the chip zones (``cycle_ms``: set to at least the reader's
        pass), the half for a pass running late; a pass more where the reader reads a stack in turns. Where the
        chips' zones hand a push on once read unchanged (``[hal.chips] still_after_reads``), the reads have waited
        for the rest of it already: the window is ``settle_ms``."""
        if self.debounce["chips"].still_after_reads:
            return self.game.settle_s
        chip_readers = {reader for zone, (reader, _antenna) in self.zones.items() if Zone.parse(zone).holds == "chips"}
        passes = [self.readers[name].cycle_s * (SETTLE_PASSES_STACK_IN_TURNS if self.readers[name].backend in
                                                STACK_IN_TURNS_BACKENDS else SETTLE_PASSES) for name in chip_readers]
        return max([self.game.settle_s, *passes])

    def betting_setup(self) -> BettingSetup:
        """What the chip layer needs. A table without a chip set has no chips in it: the controller reads no betting,
        and knows the stakes of each hand all the same (the snapshot shows them)."""
        chips = self.chips if self.chips is not None else ChipSettings("", "", {}, {})
        game = self.game
        if game.stud:  # no blinds: the ante, the bring-in and the two bets of fixed limit
            return BettingSetup(variant=ENGINE_VARIANTS[game.variant], small_blind=0, big_blind=0, ante=game.ante,
                                chips=chips.chips, chip_set=chips.active_set, other_chips=chips.others,
                                rules=game.rules, settle_s=self.bet_settle_s, bet_limits=(game.small_bet, game.big_bet),
                                table_id=self.table_id, bring_in=game.bring_in)
        return BettingSetup(variant=ENGINE_VARIANTS[game.variant], small_blind=game.small_blind,
                            big_blind=game.big_blind, ante=game.ante, big_blind_ante=game.big_blind_ante,
                            chips=chips.chips, chip_set=chips.active_set, other_chips=chips.others,
                            rules=game.rules, settle_s=self.bet_settle_s, table_id=self.table_id,
                            double_board=game.double_board)

    def table_setup(self) -> TableSetup:
        # The deal's windows for cards read late follow the readers of the zones cards lie on (all but the chips'):
        # the slowest one's pass (cycle_ms: set to at least the reader's pass), and the reads that settle a card.
        card_pass_s = max((self.readers[reader].cycle_s for zone, (reader, _antenna) in self.zones.items()
                           if Zone.parse(zone).holds != "chips"), default=TableSetup.card_pass_s)
        return TableSetup(
            table_id=self.table_id,
            seats=self.seats,
            deck=self.decks[self.active_deck],
            decks=self.decks,
            deck_id=self.active_deck,
            hole_cards=self.game.hole_cards,
            clear_after_s=self.clear_after_s,
            button=self.button,
            players=self.players,
            rules=self.game.rules,
            exposed_by=self.exposed_by,
            missing_card_s=self.missing_card_s,
            levels=self.game.levels,
            start_level=self.game.start_level,
            double_board=self.game.double_board,
            max_players=self.game.max_players,
            rotation=self.game.games(),
            card_pass_s=card_pass_s,
            card_reads=self.debounce["cards"].present_after_cycles,
            variant=self.game.variant,
        )


def _zone_names(seats: int) -> str:
    each = [f"{Zone(kind, 1).name} … {Zone(kind, seats).name}" for kind in ("cards", "up", "bets")]
    return ", ".join([*each, *FIXED_ZONES])


def load_config(path: str | Path) -> TableConfig:
    """Read and validate a table configuration; raise :class:`ConfigError` listing every problem."""
    path = str(path)
    text = read_config_text(path)
    doc = parse_toml(path, text)
    return _validate(path, text, doc)


def _validate(path: str, text: str, doc: dict) -> TableConfig:
    c = Checker(text)
    top = {"table": "the table", "game": "the game", "tournament": "the tournament's level schedule",
           "mqtt": "the broker", "readers": "the readers",
           "zones": "the antenna zones", "decks": "the card decks", "chips": "the chip set",
           "hal": "tag debouncing",
           "journal": "the event journal",
           "broadcast": "the broadcast's feeds (the delayed feed, the live feed's reveal policy)",
           "gpio": "the GPIO pins (buttons, seat lights and sensors)"}
    for key in doc:
        if key not in top:
            c.problem((key,), f"unknown key (expected one of: {', '.join(top)})")

    # [table]
    table = c.table(doc, ("table",), {"id": "a table id", "name": "a display name", "seats": "2 to 10",
                                       "active_deck": "a deck id", "clear_after_s": "seconds",
                                       "button": "a seat", "players": "a list of seats",
                                       "exposed_cards": "'console' or 'zone'", "audit_hands": "hands",
                                       "missing_card_s": "seconds"},
                    ("id", "seats"))
    table_id = c.value(table, ("table", "id"), str, "letters, digits, '-' or '_' (it is an MQTT topic level)",
                       "table", TABLE_ID.fullmatch)
    seats = c.value(table, ("table", "seats"), int, "a number of seats from 2 to 10", 0, lambda v: 2 <= v <= 10)
    name = c.value(table, ("table", "name"), str, "a display name", "")
    clear_after_s = c.value(table, ("table", "clear_after_s"), (int, float), "seconds > 0", 1.0,
                            lambda v: 0 < v < float("inf"))
    on_table = lambda v: 1 <= v <= (seats or 10)  # noqa: E731
    button = c.value(table, ("table", "button"), int, f"a seat from 1 to {seats or 10}", None, on_table)
    players = c.value(table, ("table", "players"), list, f"a list of at least two seats from 1 to {seats or 10}",
                      None, lambda v: len(v) >= 2 and all(isinstance(x, int) and on_table(x) for x in v)
                      and len(set(v)) == len(v))
    audit_hands = c.value(table, ("table", "audit_hands"), int, "hands from 1 to 10000 (every card of the deck must "
                          "show up within this many hands)", 50, lambda v: 1 <= v <= 10_000)
    missing_card_s = c.value(table, ("table", "missing_card_s"), (int, float), "seconds from 1 to 600 (a card of the "
                             "hand off the table this long while the hand goes on is missing), or 0 (not checked)",
                             10.0, lambda v: v == 0 or 1 <= v <= 600)
    exposed_by = c.value(table, ("table", "exposed_cards"), str, "'console' (the dealer reports an exposed card) or "
                         "'zone' (the dealer lays it on the exposed zone)", "console", ("console", "zone").__contains__)

    # [game]
    game = c.table(doc, ("game",), {"variant": f"one of {', '.join(VARIANTS)}", "small_blind": "chips",
                                    "big_blind": "chips", "ante": "chips", "big_blind_ante": "chips",
                                    "rules": f"one of {', '.join(RULE_PROFILES)}", "settle_ms": "milliseconds",
                                    "double_board": "true or false", "max_players": "players",
                                    "rotation": "the games dealt in turn", "hands_per_game": "hands",
                                    "stakes": "a mixed game's stakes per game ([game.stakes.<game>])",
                                    "change": f"'{CHANGE_HANDS}' or '{CHANGE_LEVEL}'",
                                    "bring_in": "chips (stud)", "small_bet": "chips (stud)", "big_bet": "chips (stud)"})
    variant = c.value(game, ("game", "variant"), str, f"one of {', '.join(VARIANTS)}", "nlhe", VARIANTS.__contains__)
    before = len(c.problems)
    small = c.value(game, ("game", "small_blind"), int, "a positive number of chips", 1, lambda v: v > 0)
    big = c.value(game, ("game", "big_blind"), int, "a positive number of chips", 2, lambda v: v > 0)
    if small > big and len(c.problems) == before and "tournament" not in doc and variant not in STUD_VARIANTS:
        # (a tournament's levels are checked there; a stud game has no blinds)
        c.problem(("game", "small_blind"), f"the small blind ({small}) is larger than the big blind ({big})")
    ante = c.value(game, ("game", "ante"), int, "chips, 0 or more", 0, lambda v: v >= 0)
    bb_ante = c.value(game, ("game", "big_blind_ante"), int, "chips, 0 or more", 0, lambda v: v >= 0)
    if ante and bb_ante:
        c.problem(("game", "big_blind_ante"), "a table has either an ante from every player or a big-blind ante, "
                                              "not both (set one of them to 0)")
    rules = c.value(game, ("game", "rules"), str, f"one of {', '.join(RULE_PROFILES)}", "tda",
                    RULE_PROFILES.__contains__)
    settle_ms = c.value(game, ("game", "settle_ms"), int, "milliseconds from 100 to 5000", 500,
                        lambda v: 100 <= v <= 5000)
    levels, start_level = _tournament_levels(c, doc, game)
    double_board = c.value(game, ("game", "double_board"), bool, "true (two boards every hand, CA GR 14.1) or false",
                           False)
    if double_board and variant in STUD_VARIANTS:
        c.problem(("game", "double_board"), f"{variant} is a stud game: it has no board to double (set "
                                            "double_board = false)")
    stud_stakes = _stud_stakes(c, doc, game, variant)
    rotation, hands_per_game, change = _rotation(c, doc, game, variant)
    game_stakes = _game_stakes(c, doc, game, rotation, Stakes(small, big, ante, bb_ante))
    if rotation and "variant" not in game:
        variant = rotation[0]  # a mixed game starts with its first game unless [game] variant names another
    # the players dealt in: as many as every game of a mixed game deals (the most hole cards deal the fewest)
    most_players = _max_players(c, game, max(rotation or (variant,), key=lambda v: VARIANTS.get(v, 2)),
                                double_board, seats, players)

    # [mqtt]
    m = c.table(doc, ("mqtt",), {"host": "a host name", "port": "1 to 65535", "topic_prefix": "a topic prefix",
                                 "client_id": "a client id", "username": "a user name", "password": "a password",
                                 "keepalive": "seconds", "reconnect_max_s": "seconds",
                                 "backlog_in_flight": "messages", "backlog_per_s": "messages per second",
                                 "tls": "true or false", "tls_ca_file": "a file", "tls_cert_file": "a file",
                                 "tls_key_file": "a file", "tls_insecure": "true or false"})
    no_wildcards = lambda v: v and not any(ch in v for ch in "+#")  # noqa: E731
    mqtt = MqttSettings(
        host=c.value(m, ("mqtt", "host"), str, "a host name", "localhost", bool),
        port=c.value(m, ("mqtt", "port"), int, "a port from 1 to 65535", 1883, lambda v: 1 <= v <= 65535),
        topic_prefix=c.value(m, ("mqtt", "topic_prefix"), str, "a topic prefix without '+' or '#'", "rfid-table",
                             no_wildcards),
        client_id=c.value(m, ("mqtt", "client_id"), str, "a client id without '+' or '#'", None, no_wildcards),
        username=c.value(m, ("mqtt", "username"), str, "a user name without '+' or '#'", None, no_wildcards),
        password=c.value(m, ("mqtt", "password"), str, "a password", None),
        keepalive=c.value(m, ("mqtt", "keepalive"), int, "seconds from 5 to 3600", 30, lambda v: 5 <= v <= 3600),
        reconnect_max_s=c.value(m, ("mqtt", "reconnect_max_s"), int, "seconds from 1 to 300", 10,
                                lambda v: 1 <= v <= 300),
        backlog_in_flight=c.value(m, ("mqtt", "backlog_in_flight"), int, "messages from 2 to 10000", 100,
                                  lambda v: 2 <= v <= 10_000),
        backlog_per_s=c.value(m, ("mqtt", "backlog_per_s"), int, "messages per second from 2 to 100000", 200,
                              lambda v: 2 <= v <= 100_000),
        **_tls_settings(c, m, Path(path).parent),
    )

    # [hal.cards], [hal.chips]: debouncing per kind of zone (a chip stack reads differently from a card)
    h = c.table(doc, ("hal",), {**{kind: "a table" for kind in ZONE_KINDS}, "min_rssi_dbm": "dBm",
                                "order_window_ms": "milliseconds"})
    debounce: dict[str, DebounceSettings] = {}
    for kind, default in ZONE_KINDS.items():
        k = c.table(doc, ("hal", kind), {"present_after_cycles": "cycles", "absent_after_ms": "milliseconds",
                                         "max_gap_cycles": "cycles", "move_after_cycles": "cycles",
                                         "still_after_reads": "reads"}) if kind in h else {}
        debounce[kind] = DebounceSettings(
            present_after_cycles=c.value(k, ("hal", kind, "present_after_cycles"), int, "cycles from 1 to 20",
                                         default.present_after_cycles, lambda v: 1 <= v <= 20),
            absent_after_s=c.value(k, ("hal", kind, "absent_after_ms"), int, "milliseconds from 0 to 10000",
                                   round(default.absent_after_s * 1000), lambda v: 0 <= v <= 10000) / 1000,
            max_gap_cycles=c.value(k, ("hal", kind, "max_gap_cycles"), int, "cycles from 0 to 10",
                                   default.max_gap_cycles, lambda v: 0 <= v <= 10),
            move_after_cycles=c.value(k, ("hal", kind, "move_after_cycles"), int, "cycles from 1 to 20",
                                      default.move_after_cycles, lambda v: 1 <= v <= 20),
            absent_after_cycles=default.absent_after_cycles,
            still_after_reads=c.value(k, ("hal", kind, "still_after_reads"), int, "reads from 0 to 10",
                                      default.still_after_reads, lambda v: 0 <= v <= 10),
        )
    min_rssi = c.value(h, ("hal", "min_rssi_dbm"), int, "dBm from -120 to 0", None, lambda v: -120 <= v <= 0)
    order_window_ms = c.value(h, ("hal", "order_window_ms"), int, "milliseconds from 0 to 5000", 1000,
                              lambda v: 0 <= v <= 5000)

    # [journal]
    j = c.table(doc, ("journal",), {"path": "a file path", "retention_events": "events"})
    journal_path = c.value(j, ("journal", "path"), str, "a file path", None, bool)
    retention = c.value(j, ("journal", "retention_events"), int, "events from 1,000 to 100,000,000", 200_000,
                        lambda v: 1_000 <= v <= 100_000_000)

    # [broadcast]: the secure feed released to overlays after a delay
    b = c.table(doc, ("broadcast",), {"delay_s": "seconds", "release": "'time' or 'hand'",
                                      "equity": "true or false (equity events; default: true with a delay)",
                                      "reveal": "'never', 'showdown', 'all_in' or 'hand_end'",
                                      "board_offset_ms": "milliseconds"})
    delay_s = c.value(b, ("broadcast", "delay_s"), (int, float), "seconds from 0 to 86400", 0,
                      lambda v: 0 <= v <= 86400)
    release = c.value(b, ("broadcast", "release"), str, "'time' (each event delay_s after it happened) or 'hand' "
                      "(a whole hand, delay_s after it ended)", "hand", ("time", "hand").__contains__)
    equity = c.value(b, ("broadcast", "equity"), bool, "true or false", bool(delay_s))
    reveal = c.value(b, ("broadcast", "reveal"), str, "'never', 'showdown', 'all_in' or 'hand_end' (the hole cards "
                     "live/events shows, without delay)", "never", REVEAL_POLICIES.__contains__)
    board_offset_ms = c.value(b, ("broadcast", "board_offset_ms"), int, "milliseconds from 0 to 60000", 0,
                              lambda v: 0 <= v <= 60_000)
    if board_offset_ms and not delay_s:
        c.problem(("broadcast", "board_offset_ms"), "holds board cards back on the delayed feed: it needs delay_s")
    elif board_offset_ms and release == "hand":
        c.problem(("broadcast", "board_offset_ms"), "needs release = 'time': with 'hand' a whole hand goes out at "
                                                    "once and the overlay plays it back by the events' own times")
    if delay_s and not journal_path:
        c.problem(("broadcast", "delay_s"), "the delayed feed needs [journal] path (the delay must survive a restart)")

    # [gpio]: the dealer console's buttons, seat lights and sensors on the Pi's header
    gpio_section, pin_map = doc.get("gpio"), None
    if gpio_section is not None:
        before = len(c.problems)
        reserved = _pn5180_pins(doc)  # a PN5180 reader's SPI bus and lines are not the console's
        for key_path, message in validate_pin_map(gpio_section, seats=seats or None, reserved=reserved):
            c.problem(tuple(key_path), message)
        if len(c.problems) == before:
            pin_map = parse_pin_map(gpio_section, seats or None, reserved=reserved)

    # [readers.NAME]
    readers: dict[str, ReaderSettings] = {}
    pi_pins: dict[int, str] = {}  # the header's pins the pn5180 readers use so far: pin → what
    reader_tables = c.section(doc, "readers", "at least one [readers.NAME] table (with backend and antennas)")
    for rname in reader_tables or {}:
        p = ("readers", rname)
        r = c.table(doc, p, {"backend": f"one of {', '.join(READER_BACKENDS)}", "antennas": "1 to 64",
                             "cycle_ms": "milliseconds", "port": "a serial device path",
                             "baudrate": "bits per second", "vendor_id": "a USB vendor id",
                             "product_id": "a USB product id", "serial_number": "a USB serial number",
                             "interface": "a USB interface number", "host": "a reader's network address (metratec)",
                             "tcp_port": "a TCP port (metratec)", "bus_address": "a bus address (feig)",
                             "channels": "the reader's antenna channel of each antenna (metratec, feig)",
                             "standard": "what its antennas read: iso15693 or iso14443a",
                             "antenna_standards": "antennas that read another standard than the reader's",
                             "spi_bus": "the Pi's SPI bus (pn5180)", "spi_hz": "the SPI clock (pn5180)",
                             "frontends": "the PN5180s (pn5180)", "agc": "the antenna fault limits (pn5180)",
                             "dwell_ms": "each antenna's dwell in the reader firmware's schedule (serial, usb)",
                             "front_ends": "how many antennas each front end switches (serial, usb)"},
                    ("backend", "antennas"))
        backend = c.value(r, p + ("backend",), str, f"one of: {', '.join(READER_BACKENDS)}", None,
                          READER_BACKENDS.__contains__)
        antennas = c.value(r, p + ("antennas",), int, "a number of antennas from 1 to 64", 0, lambda v: 1 <= v <= 64)
        cycle_ms = c.value(r, p + ("cycle_ms",), int, "milliseconds from 5 to 5000", 50, lambda v: 5 <= v <= 5000)
        link: dict[str, Any] = {}
        if backend == "serial":
            if "port" not in r:
                c.problem(p + ("port",), "missing (expected the reader's serial device, best a stable "
                                         "/dev/serial/by-id/... path)")
            link["port"] = c.value(r, p + ("port",), str, "a serial device path", None, bool)
            link["baudrate"] = c.value(r, p + ("baudrate",), int, "a baud rate from 9600 to 12000000", 115200,
                                       lambda v: 9600 <= v <= 12_000_000)
        elif backend == "usb":
            for key in ("vendor_id", "product_id"):
                if key not in r:
                    c.problem(p + (key,), "missing (expected a USB id such as 0x1209)")
                link[key] = c.value(r, p + (key,), int, "a USB id from 0x0001 to 0xFFFF", None,
                                    lambda v: 1 <= v <= 0xFFFF)
            link["serial_number"] = c.value(r, p + ("serial_number",), str, "a USB serial number", None)
            link["interface"] = c.value(r, p + ("interface",), int, "an interface number from 0 to 31", 0,
                                        lambda v: 0 <= v <= 31)
        if backend in ("serial", "usb") and antennas:
            link.update(_schedule_link(c, r, p, antennas))
        elif backend in BOUGHT_READERS:
            link = _bought_reader_link(c, r, p, backend, antennas)
        standards = _standards(c, r, p, antennas)
        if backend == "pn5180":
            link = _pn5180_link(c, r, p, antennas, pi_pins)
            link["standards"] = list(standards or (ISO15693,) * antennas)
        wrong = [key for key in ("port", "baudrate", "vendor_id", "product_id", "serial_number", "interface", "host",
                                 "tcp_port", "bus_address", "channels", "dwell_ms", "front_ends", *PN5180_KEYS)
                 if key in r and key not in link]
        for key in wrong:
            c.problem(p + (key,), f"not used by backend {backend!r}")
        if backend and antennas and all(v is not None for k, v in link.items() if k != "serial_number"):
            readers[rname] = ReaderSettings(rname, backend, antennas, cycle_ms / 1000, link, standards)

    # [zones]: name = { reader = "...", antenna = N }; seat zones as seatN.cards / seatN.bets
    zones: dict[str, tuple[str, int]] = {}
    used: dict[tuple[str, int], str] = {}
    zone_tables = c.section(doc, "zones", "the [zones] table mapping each zone to a reader antenna")
    for zpath, ztable in _flatten_zones(zone_tables or {}, ("zones",)):
        zname = ".".join(zpath[1:])
        zone = Zone.parse(zname)
        if not zone.known(seats):
            if zone.seat is not None and zone.kind in SEAT_ZONE_KINDS and seats:
                c.problem(zpath, f"no seat {zone.seat}: table.seats is {seats} (expected seat1 … seat{seats})")
            else:
                c.problem(zpath, f"unknown zone (expected one of: {_zone_names(seats or 10)})")
            continue
        if not isinstance(ztable, dict):
            c.problem(zpath, f"expected {{ reader = \"NAME\", antenna = N }}, got {describe_value(ztable)}")
            continue
        for key in ztable:
            if key not in ("reader", "antenna"):
                c.problem(zpath + (key,), "unknown key (expected one of: reader, antenna)")
        reader = c.value(ztable, zpath + ("reader",), str, "a reader name", None)
        antenna = c.value(ztable, zpath + ("antenna",), int, "an antenna number", None)
        if reader is None or antenna is None:
            if "reader" not in ztable or "antenna" not in ztable:
                c.problem(zpath, "expected both reader and antenna")
            continue
        if reader_tables is not None and reader not in reader_tables:  # no [readers]: reported already
            c.problem(zpath + ("reader",),
                      f"no reader named {reader!r} (readers: {', '.join(reader_tables) or 'none'})")
            continue
        if reader in readers and not 1 <= antenna <= readers[reader].antennas:
            c.problem(zpath + ("antenna",),
                      f"reader {reader!r} has antennas 1 to {readers[reader].antennas}, not {antenna}")
            continue
        if (reader, antenna) in used:
            c.problem(zpath + ("antenna",),
                      f"antenna {antenna} of reader {reader!r} is already assigned to zone {used[(reader, antenna)]!r}")
            continue
        used[(reader, antenna)] = zname
        zones[zname] = (reader, antenna)
    if zone_tables is not None:  # (a missing [zones] table is one problem, not one per zone)
        for seat in range(1, (seats or 0) + 1):
            cards = Zone("cards", seat)
            if cards.name not in zones and not _reported(c, f"zones.{cards.name}"):
                c.problem(("zones", cards.seat_key), f"seat {seat} has no card zone (add {cards.name} = "
                                                     "{ reader = \"NAME\", antenna = N })")
        dealt = rotation or (variant,)  # a mixed game needs the zones of every game it deals
        stud = next((name for name in dealt if name in STUD_VARIANTS), None)
        if stud is not None:
            _check_stud_zones(c, zones, stud, seats, most_players)
        if any(name not in STUD_VARIANTS for name in dealt):
            for required in ("board", "burn", "muck"):
                if required not in zones and not _reported(c, f"zones.{required}"):
                    c.problem(("zones", required), "missing: every table needs a board, a burn and a muck zone")

    # [decks.ID]: UID = "card"
    decks: dict[str, dict[str, str]] = {}
    owner_of_uid: dict[str, str] = {}
    deck_tables = c.section(doc, "decks", "at least one [decks.ID] table registering tag UID = \"card\"") or {}
    for deck_id, cards in deck_tables.items():
        p = ("decks", deck_id)
        if not isinstance(cards, dict):
            c.problem(p, f"expected a table of tag UID = \"card\", got {describe_value(cards)}")
            continue
        deck: dict[str, str] = {}
        uid_of_card: dict[str, str] = {}
        for kp, uid, _, raw_card in tag_entries(c, cards, p):
            try:
                card = parse_card(raw_card)
            except ValueError as exc:
                c.problem(kp, str(exc))
                continue
            if uid in owner_of_uid:
                c.problem(kp, f"duplicate UID: tag {uid} is already registered in deck {owner_of_uid[uid]!r}")
                continue
            if card in uid_of_card:
                c.problem(kp, f"duplicate card: {card} is already registered to tag {uid_of_card[card]} in this deck")
                continue
            owner_of_uid[uid] = deck_id
            uid_of_card[card] = uid
            deck[uid] = card
        missing = [card for card in FULL_DECK if card not in uid_of_card]
        if missing and len(deck) == len(cards):
            c.problem(p, f"deck has {len(deck)} cards, expected 52 (missing: {' '.join(missing)})")
        decks[deck_id] = deck
    active = c.value(table, ("table", "active_deck"), str, "a deck id", next(iter(deck_tables), ""))
    if deck_tables and active not in deck_tables:
        c.problem(("table", "active_deck"), f"no deck {active!r} (decks: {', '.join(deck_tables)})")

    chips = _chip_settings(c, doc, Path(path).parent, decks, zones)
    if chips is not None and variant not in ENGINE_VARIANTS:
        c.problem(("game", "variant"), f"{variant}: the chip layer does not read the betting of this game yet; a "
                                       "table with [chips] deals one of: " + ", ".join(ENGINE_VARIANTS))
    if not c.problems:  # (a wrong deck, zone or reader says more than what its tags are read with)
        _check_standards(c, readers, zones, decks.get(active, {}), chips)
    for reader in readers.values():
        if reader.backend == "pn5180":
            reader.link["dwell_ms"] = dwell_schedule(zones, reader.name, reader.antennas)
        elif "dwell_ms" in reader.link:
            from hal.firmware_reader import hint_every_of  # noqa: PLC0415 (the link's code, for a told reader only)

            # parked where the table expects the next tag (the next seat's card, the seat to act's chips), by a reader
            # that can (protocol 1.2's PARK)
            reader.link["park"] = True
            reader.link["hint_every"] = hint_every_of(zones, reader.name)
    if exposed_by == "zone" and "exposed" not in zones:
        c.problem(("table", "exposed_cards"), "'zone' needs an exposed zone in [zones] (exposed = { reader = ..., "
                                              "antenna = N })")

    if c.problems:
        raise ConfigError(path, c.problems)
    return TableConfig(path, table_id, seats, GameSettings(variant, small, big, ante, bb_ante, rules,
                                                           settle_ms / 1000, levels, start_level, double_board,
                                                           most_players, rotation, hands_per_game, change,
                                                           *stud_stakes, game_stakes),
                       mqtt, readers, zones, decks, active, debounce, float(clear_after_s), name, journal_path,
                       retention, float(delay_s), release, pin_map, chips, min_rssi, order_window_ms / 1000,
                       button, tuple(players) if players else None, exposed_by, audit_hands,
                       float(missing_card_s), broadcast_equity=equity, broadcast_reveal=reveal,
                       broadcast_board_offset_s=board_offset_ms / 1000)


def _rotation(c: Checker, doc: dict, game: dict, variant: str) -> tuple[tuple[str, ...], int, str]:
    """``[game] rotation``: the games a mixed game deals in turn (a list of variants, or "horse"), changed every
    ``hands_per_game`` hands (default 8) or, with ``change = "level"``, at each level of the [tournament] schedule.
    Returns the games (() for one game), the hands per game and the change."""
    horse = ", ".join(HORSE)
    def names_games(v: list | str) -> bool:
        return v == "horse" if isinstance(v, str) else len(v) >= 2 and all(isinstance(x, str) for x in v)

    listed = c.value(game, ("game", "rotation"), (list, str), f"a list of at least two of {', '.join(VARIANTS)}, "
                     f"or \"horse\" ({horse})", None, names_games)
    change = c.value(game, ("game", "change"), str, f"'{CHANGE_HANDS}' (every hands_per_game hands) or "
                     f"'{CHANGE_LEVEL}' (at each tournament level)", CHANGE_HANDS,
                     (CHANGE_HANDS, CHANGE_LEVEL).__contains__)
    hands = c.value(game, ("game", "hands_per_game"), int, "hands from 1 to 1000", 8, lambda v: 1 <= v <= 1000)
    if listed is None:
        for key in ("hands_per_game", "change"):
            if key in game:
                c.problem(("game", key), "a mixed game's setting, without a rotation (add rotation = [...] or remove "
                                         "it)")
        return (), 0, CHANGE_HANDS
    games = HORSE if listed == "horse" else tuple(listed)
    for name in games:
        if name not in VARIANTS:
            c.problem(("game", "rotation"), f"{name!r} is not a game (one of {', '.join(VARIANTS)})")
    if "chips" in doc:
        unread = [name for name in games if name in VARIANTS and name not in ENGINE_VARIANTS]
        if unread:
            c.problem(("game", "rotation"), f"{', '.join(unread)}: the chip layer does not read the betting of this "
                                            "game yet; a table with [chips] deals " + ", ".join(ENGINE_VARIANTS))
        stud = [name for name in games if name in STUD_VARIANTS]
        if stud and not isinstance(game.get("stakes"), dict):  # [game]'s stakes are the flop games' blinds
            c.problem(("game", "rotation"), f"{', '.join(stud)}: a table with [chips] reads a stud game of a "
                                            f"rotation at its own stakes: add [game.stakes.{stud[0]}] with ante, "
                                            "bring_in, small_bet and big_bet")
    if "variant" in game and isinstance(game["variant"], str) and variant not in games:
        c.problem(("game", "variant"), f"{variant} is not in the rotation ({', '.join(games)}): variant names the "
                                       "game the table starts with")
    if change == CHANGE_LEVEL:
        if "tournament" not in doc:
            c.problem(("game", "change"), "'level' changes the game with the tournament's level: the table has no "
                                          "[tournament] level schedule")
        if "hands_per_game" in game:
            c.problem(("game", "hands_per_game"), "not used: the game changes at each level (change = 'level')")
    games = tuple(name for name in games if name in VARIANTS)
    return (games if len(games) >= 2 else ()), hands if change == CHANGE_HANDS else 0, change


def _game_stakes(c: Checker, doc: dict, game: dict, rotation: tuple[str, ...], table: Stakes
                 ) -> tuple[tuple[str, Stakes], ...]:
    """``[game.stakes.<game>]``: a game of the rotation played at stakes of its own, as a card room plays the flop
    games with blinds and the stud games with antes and a bring-in. A flop game's blinds and antes not given are the
    table's (``table``: [game]'s); a stud game names its bring_in, small_bet and big_bet (and ante), and once one
    game has its own stakes every stud game of the rotation needs them: [game]'s stakes are blinds. Not with a
    [tournament]: its levels set every game's blinds and antes."""
    path = ("game", "stakes")
    listed = game.get("stakes")
    if listed is None:
        return ()
    if not isinstance(listed, dict):
        c.problem(path, f"expected a table per game ([game.stakes.plo4]), got {describe_value(listed)}")
        return ()
    if not rotation:
        c.problem(path, "a mixed game's setting, without a rotation (add rotation = [...] or remove it)")
        return ()
    if "tournament" in doc:
        c.problem(path, "the [tournament] levels set every game's blinds and antes (remove [game.stakes])")
        return ()
    own = []
    for name in listed:
        where = path + (name,)
        if name not in rotation:
            c.problem(where, f"{name!r} is not in the rotation ({', '.join(rotation)})")
            continue
        stud = name in STUD_VARIANTS
        keys = STUD_GAME_STAKES if stud else FLOP_GAME_STAKES
        given = c.table(doc, where, {key: "chips" for key in keys})
        before = len(c.problems)
        values = {key: c.value(given, where + (key,), int, "chips, 0 or more", 0 if stud else getattr(table, key),
                               lambda v: v >= 0) for key in keys}
        if stud:
            missing = [key for key in ("bring_in", "small_bet", "big_bet") if key not in given]
            if missing:
                c.problem(where, f"missing {', '.join(missing)}: a stud game is played with a bring-in and a small "
                                 "and a big bet")
            elif len(c.problems) == before and not 0 < values["bring_in"] < values["small_bet"] <= values["big_bet"]:
                c.problem(where + ("bring_in",), f"expected 0 < bring_in ({values['bring_in']}) < small_bet "
                                                 f"({values['small_bet']}) <= big_bet ({values['big_bet']})")
        else:
            if not 0 < values["small_blind"] <= values["big_blind"]:
                c.problem(where + ("small_blind",), f"expected 0 < small_blind ({values['small_blind']}) <= "
                                                    f"big_blind ({values['big_blind']})")
            if values["ante"] and values["big_blind_ante"]:
                c.problem(where + ("big_blind_ante",), "a game has either an ante from every player or a big-blind "
                                                       "ante, not both (set one of them to 0)")
        if len(c.problems) == before:
            own.append((name, Stakes(**values)))
    if own:
        for name in rotation:
            if name in STUD_VARIANTS and name not in listed:
                c.problem(path, f"{name} has no [game.stakes.{name}]: in a rotation whose games have their own stakes "
                                "a stud game names its bring_in, small_bet and big_bet")
    return tuple(own)


def _stud_stakes(c: Checker, doc: dict, game: dict, variant: str) -> tuple[int, int, int]:
    """``[game] bring_in``, ``small_bet`` and ``big_bet``: a stud game's stakes, needed where the chips are read
    (``[chips]``): 0 < bring-in < small bet <= big bet (the bring-in is less than a full bet; the completion is the
    small bet). A flop game has none. Returns (bring-in, small bet, big bet), zeros where not read."""
    stud = variant in STUD_VARIANTS
    if not stud:
        for key in STUD_STAKES:
            if key in game:
                c.problem(("game", key), f"a stud game's stake: {variant} has blinds (remove it, or set variant = "
                                         "\"stud\", \"stud8\" or \"razz\")")
        return 0, 0, 0
    before = len(c.problems)
    values = [c.value(game, ("game", key), int, "a positive number of chips", 0, lambda v: v > 0)
              for key in STUD_STAKES]
    if "chips" not in doc:
        return 0, 0, 0  # (a table without chips reads the cards only: the stakes are not needed)
    for key in ("small_blind", "big_blind", "big_blind_ante"):
        if key in game:
            c.problem(("game", key), f"{variant} has no blinds: antes, a bring-in, a small bet and a big bet "
                                     "(ante, bring_in, small_bet, big_bet)")
    if "tournament" in doc:
        c.problem(("tournament",), f"{variant} with [chips] is read at the stakes of [game] (bring_in, small_bet, "
                                   "big_bet): a tournament's levels give blinds (remove [tournament] or [chips])")
    missing = [key for key in STUD_STAKES if key not in game]
    if missing:
        c.problem(("game",), f"a stud table with [chips] needs its stakes: missing {', '.join(missing)} (e.g. "
                             "ante = 1, bring_in = 2, small_bet = 5, big_bet = 10)")
        return 0, 0, 0
    bring_in, small, big = values
    if len(c.problems) == before:
        if bring_in >= small:
            c.problem(("game", "bring_in"), f"the bring-in ({bring_in}) must be less than the small bet ({small}): "
                                            "a bring-in of a full bet is the completion")
        if small > big:
            c.problem(("game", "small_bet"), f"the small bet ({small}) is larger than the big bet ({big})")
    return bring_in, small, big


def _max_players(c: Checker, game: dict, variant: str, double_board: bool, seats: int, players: list | None) -> int:
    """``[game] max_players`` (default: CA GR 15's limit for the variant, or the table's seats), and the players
    of ``[table] players`` against it."""
    hole_cards = VARIANTS.get(variant, 2)
    if variant in STUD_VARIANTS:
        allowed, rule = min(STUD_MAX_PLAYERS, seats or 10), "a stud game deals seven cards to each"
    else:
        allowed, rule = min(max_players(hole_cards, double_board), seats or 10), limit_rule(double_board)
    doubled = " with a double board" if double_board and variant not in STUD_VARIANTS else ""
    why = f"{rule}: at most {allowed} players at {variant}{doubled}"
    most = c.value(game, ("game", "max_players"), int, f"players from 2 to {allowed} ({why})", allowed,
                   lambda v: 2 <= v <= allowed)
    if players and len(players) > most:
        c.problem(("table", "players"), f"{len(players)} players, but at most {most} may be dealt in "
                                        f"({'[game] max_players' if 'max_players' in game else why})")
    return most


LEVEL_KEYS = {"small_blind": "chips", "big_blind": "chips", "ante": "chips (from every player)",
              "big_blind_ante": "chips (from the big blind, for the table)", "minutes": "the level's length"}
GAME_STAKES = ("small_blind", "big_blind", "ante", "big_blind_ante")


def _tournament_levels(c: Checker, doc: dict, game: dict) -> tuple[tuple[Level, ...], int]:
    """[tournament]: the level schedule, one [[tournament.levels]] table per level (DE 11's "Runde Small Big
    Minuten"), and start_level. Its levels set the blinds and antes, so [game] must not set them too."""
    section = c.table(doc, ("tournament",), {"levels": "one [[tournament.levels]] table per level",
                                             "start_level": "the level the table starts at"})
    if "tournament" not in doc or not isinstance(doc["tournament"], dict):
        return (), 1
    for key in GAME_STAKES:
        if key in game:
            c.problem(("game", key), "set by the [tournament] levels at a tournament table (remove it from [game])")
    raw = section.get("levels")
    if not isinstance(raw, list) or not raw or not all(isinstance(entry, dict) for entry in raw):
        c.problem(("tournament", "levels"), "missing or not a list of levels (expected one [[tournament.levels]] "
                                            "table per level, with small_blind and big_blind)"
                  if raw is None else f"expected one [[tournament.levels]] table per level, got {describe_value(raw)}")
        return (), 1
    levels: list[Level] = []
    for number, entry in enumerate(raw, start=1):
        p = ("tournament", "levels", str(number))
        before = len(c.problems)
        for key in entry:
            if key not in LEVEL_KEYS:
                c.problem(p + (key,), f"unknown key (expected one of: {', '.join(LEVEL_KEYS)})")
        for key in ("small_blind", "big_blind"):
            if key not in entry:
                c.problem(p + (key,), f"missing: level {number} needs its {key.replace('_', ' ')} (chips)")
        small = c.value(entry, p + ("small_blind",), int, "a positive number of chips", 0, lambda v: v > 0)
        big = c.value(entry, p + ("big_blind",), int, "a positive number of chips", 0, lambda v: v > 0)
        ante = c.value(entry, p + ("ante",), int, "chips, 0 or more", 0, lambda v: v >= 0)
        bb_ante = c.value(entry, p + ("big_blind_ante",), int, "chips, 0 or more", 0, lambda v: v >= 0)
        minutes = c.value(entry, p + ("minutes",), int, "minutes from 1 to 1440", None, lambda v: 1 <= v <= 1440)
        if len(c.problems) != before:
            continue
        if small > big:
            c.problem(p + ("small_blind",), f"level {number}: the small blind ({small}) is larger than the big "
                                            f"blind ({big})")
        if ante and bb_ante:
            c.problem(p + ("big_blind_ante",), f"level {number}: either an ante from every player or a big-blind "
                                               "ante, not both (set one of them to 0)")
        if levels and big < levels[-1].big_blind:
            c.problem(p + ("big_blind",), f"level {number}'s big blind ({big}) is lower than level {number - 1}'s "
                                          f"({levels[-1].big_blind}): the blinds go up by the schedule (DE 5)")
        levels.append(Level(small, big, ante, bb_ante, minutes))
    start = c.value(section, ("tournament", "start_level"), int, f"a level from 1 to {len(raw)}", 1,
                    lambda v: 1 <= v <= len(raw))
    return (tuple(levels), start) if len(levels) == len(raw) else ((), 1)


def _chip_settings(c: Checker, doc: dict, base: Path, decks: dict, zones: dict) -> ChipSettings | None:
    """[chips]: the chip registry file and the set in play. Without it, chip zones are not read."""
    section = c.table(doc, ("chips",), {"registry": "the chip registry file (rfid-table register-chips)",
                                        "active_set": "a chip set id"})
    if "chips" not in doc:
        return None
    registry_name = c.value(section, ("chips", "registry"), str, "a file path", None, bool)
    active_set = c.value(section, ("chips", "active_set"), str, "a chip set id", None, bool)
    for key in ("registry", "active_set"):
        if key not in section:
            c.problem(("chips", key), "missing (expected registry = \"FILE\" and active_set = \"ID\")")
    if not registry_name or not active_set:
        return None

    registry_path = Path(registry_name) if Path(registry_name).is_absolute() else base / registry_name
    try:
        registry = load_chip_registry(registry_path, decks=decks)
    except ConfigError as exc:
        for problem in exc.problems:
            c.problem(("chips", "registry"), problem.render(str(registry_path)))
        return None
    except OSError as exc:
        c.problem(("chips", "registry"), f"cannot read {registry_path}: {exc.strerror}")
        return None
    if active_set not in registry.sets:
        c.problem(("chips", "active_set"), f"no chip set {active_set!r} in {registry_path} "
                                           f"(sets: {', '.join(registry.sets) or 'none'})")
        return None
    if not any(Zone.parse(z).holds == "chips" for z in zones):
        c.problem(("chips",), "a chip set but no chip zone: add seatN.bets and pot zones to [zones]")
    others = {uid: set_id for set_id, chips in registry.sets.items() if set_id != active_set for uid in chips}
    return ChipSettings(str(registry_path), active_set, dict(registry.sets[active_set]), others)


def _tls_settings(c: Checker, m: dict, base: Path) -> dict[str, Any]:
    """The ``tls*`` keys of [mqtt]. Files are loaded here exactly as the MQTT client will load them, so a missing,
    unreadable or wrong file is reported by check-config instead of stopping the daemon at its first connection.
    A relative path is taken from the configuration file's directory."""
    files: dict[str, str | None] = {}
    for key, what in (("tls_ca_file", "certificate authority"), ("tls_cert_file", "client certificate"),
                      ("tls_key_file", "client key")):
        name = c.value(m, ("mqtt", key), str, f"the path of a PEM {what} file", None, bool)
        files[key] = None if name is None else _readable(c, ("mqtt", key), base / name)
    insecure = c.value(m, ("mqtt", "tls_insecure"), bool, "true or false", False)
    # A TLS file or tls_insecure = true means TLS; an explicit tls = false beside them is a mistake.
    tls = c.value(m, ("mqtt", "tls"), bool, "true or false", any(k in m for k in files) or insecure)
    if not tls:
        for key in [*files, "tls_insecure"]:
            if key in m and m[key] is not False and not any(p.key == f"mqtt.{key}" for p in c.problems):
                c.problem(("mqtt", key), "not used with tls = false (remove it, or set tls = true)")
        return {"tls": False}
    if files["tls_key_file"] and "tls_cert_file" not in m:
        c.problem(("mqtt", "tls_key_file"), "a client key needs its certificate: add tls_cert_file")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if files["tls_ca_file"]:
        try:
            context.load_verify_locations(files["tls_ca_file"])
        except ssl.SSLError as exc:
            c.problem(("mqtt", "tls_ca_file"), f"{files['tls_ca_file']} holds no PEM certificate ({exc.reason or exc})")
    if files["tls_cert_file"]:
        try:
            # An encrypted key would make OpenSSL ask for its passphrase on a terminal the daemon does not have.
            context.load_cert_chain(files["tls_cert_file"], files["tls_key_file"], password=lambda: b"")
        except ssl.SSLError as exc:
            c.problem(("mqtt", "tls_cert_file"), f"{files['tls_cert_file']} with "
                      f"{files['tls_key_file'] or 'no tls_key_file (the key must then be in the same file)'}: "
                      f"not a PEM certificate and its unencrypted private key ({exc.reason or exc})")
    return {"tls": True, **files, "tls_insecure": insecure}


def _readable(c: Checker, key: tuple[str, ...], path: Path) -> str | None:
    """The absolute path of a file the daemon must read, or None (reported) when it cannot. A FIFO or device
    is refused here: OpenSSL would block on it, or read it without end."""
    try:
        read_bounded(path)
    except FileNotFoundError:
        c.problem(key, f"{path} does not exist")
    except PermissionError:
        c.problem(key, f"{path} cannot be read: permission denied")
    except IsADirectoryError:
        c.problem(key, f"{path} is a directory (expected a file)")
    except UnreadableFile as exc:
        c.problem(key, f"{path} is {exc}")
    except OSError as exc:
        c.problem(key, f"{path} cannot be read: {exc.strerror}")
    else:
        return str(path.resolve())
    return None


def _schedule_link(c: Checker, r: dict, p: tuple, antennas: int) -> dict[str, Any]:
    """A reader of the table firmware: its schedule as the firmware has it (``dwell_ms``, each antenna's dwell,
    antenna 1 first) and its front ends (``front_ends``), so that the host can tell it which antennas to visit more
    often now (SET_SCHEDULE). Without ``dwell_ms`` the reader scans its own schedule and is told nothing."""
    link: dict[str, Any] = {}
    dwells = c.value(r, p + ("dwell_ms",), list, f"a list of {antennas} dwells in milliseconds", None)
    if "dwell_ms" in r:  # (not a list: reported by c.value, None)
        if dwells is not None and (len(dwells) != antennas or not all(type(d) is int and 1 <= d <= 65535 for d in dwells)):
            c.problem(p + ("dwell_ms",), f"expected {antennas} dwells (one per antenna, antenna 1 first) in "
                                         f"milliseconds from 1 to 65535, got {describe_value(dwells)}")
            dwells = None  # reported: no reader is made of it
        link["dwell_ms"] = dwells
    front_ends = c.value(r, p + ("front_ends",), list, "a list of antenna counts, one per front end", None)
    if "front_ends" in r:
        if front_ends is not None and (not all(type(n) is int and 1 <= n <= 64 for n in front_ends)
                                       or sum(front_ends) < antennas):
            c.problem(p + ("front_ends",), f"expected the antennas of each front end in order, {antennas} at least "
                                           f"in all, got {describe_value(front_ends)}")
            front_ends = None
        link["front_ends"] = front_ends
    return link


def _bought_reader_link(c: Checker, r: dict, p: tuple[str, ...], backend: str, antennas: int) -> dict[str, Any]:
    """The link of a reader one buys (``metratec``, ``feig``): its port (or a Metratec's network address), and the
    reader's channel of each of the table's antennas, checked by the reader's own protocol module."""
    protocol = importlib.import_module(f"firmware_bridge.{backend}")
    link: dict[str, Any] = {}
    networked = backend == "metratec"
    if "port" in r and "host" in r:
        c.problem(p + ("host",), "give either port (a USB or serial reader) or host (a reader on the network), not both")
    elif "port" not in r and not ("host" in r and networked):
        c.problem(p + ("port",), "missing (expected the reader's serial device, best a stable /dev/serial/by-id/... "
                                 "path" + (", or host for a reader on the network)" if networked else ")"))
    if "host" in r and not networked:
        return link  # reported as not used by this backend
    if "host" in r:
        link["host"] = c.value(r, p + ("host",), str, "a host name or address", None, bool)
        link["tcp_port"] = c.value(r, p + ("tcp_port",), int, "a TCP port from 1 to 65535", protocol.DEFAULT_TCP_PORT,
                                   lambda v: 1 <= v <= 65535)
    else:
        link["port"] = c.value(r, p + ("port",), str, "a serial device path", None, bool)
        link["baudrate"] = c.value(r, p + ("baudrate",), int, "a baud rate from 9600 to 12000000",
                                   protocol.DEFAULT_BAUDRATE, lambda v: 9600 <= v <= 12_000_000)
    if backend == "feig":
        link["bus_address"] = c.value(r, p + ("bus_address",), int, "a bus address from 0 to 255", 0xFF,
                                      lambda v: 0 <= v <= 255)
    written = c.value(r, p + ("channels",), list, "a list of the reader's channels, one per antenna", None)
    if written is None:
        try:
            link["channels"] = [str(channel) for channel in protocol.default_channels(antennas)] if antennas else None
        except ValueError as exc:
            c.problem(p + ("antennas",), str(exc))
            link["channels"] = None
        return link
    texts, parsed = [], []
    for index, text in enumerate(written, start=1):
        try:
            parsed.append(protocol.parse_channel(text if isinstance(text, str) else str(text)))
            texts.append(text if isinstance(text, str) else str(text))
        except ValueError as exc:
            c.problem(p + ("channels",), f"antenna {index}: {text!r}: {exc}")
    if antennas and len(written) != antennas:
        c.problem(p + ("channels",), f"{len(written)} channels for {antennas} antennas: give one per antenna")
    whole = len(parsed) == len(written) == antennas
    if len(set(parsed)) != len(parsed):
        c.problem(p + ("channels",), "a channel is given twice: each antenna needs its own")
        whole = False
    elif whole and hasattr(protocol, "check_channels"):  # what the reader's wiring allows (a multiplexer's place)
        try:
            protocol.check_channels(parsed)
        except ValueError as exc:
            c.problem(p + ("channels",), str(exc))
            whole = False
    link["channels"] = texts if whole else None
    return link


def _standards(c: Checker, r: dict, p: tuple[str, ...], antennas: int) -> tuple[str, ...]:
    """Each antenna's standard: the reader's ``standard`` (ISO 15693 unless said), and ``antenna_standards``
    (``{ 12 = "iso14443a" }``) for antennas that differ. Empty when every antenna reads ISO 15693."""
    expected = "iso15693 (ISO 15693 tags, UIDs starting E0) or iso14443a (ISO 14443A: NTAG, MIFARE Ultralight)"
    standard = c.value(r, p + ("standard",), str, expected, ISO15693, STANDARDS.__contains__)
    each = [standard] * antennas
    raw = r.get("antenna_standards")
    if raw is not None and not isinstance(raw, dict):
        c.problem(p + ("antenna_standards",), "expected a table of antenna = standard, e.g. { 13 = \"iso14443a\" }, "
                                              f"got {describe_value(raw)}")
    for key, value in (raw.items() if isinstance(raw, dict) else ()):
        kp = p + ("antenna_standards", key)
        if not key.isdigit() or not 1 <= int(key) <= max(antennas, 1):
            c.problem(kp, f"expected an antenna number from 1 to {antennas or 64}")
            continue
        chosen = c.value(raw, kp, str, expected, None, STANDARDS.__contains__)
        if chosen is not None and antennas:
            each[int(key) - 1] = chosen
    return tuple(each) if any(s != ISO15693 for s in each) else ()


def _pin_problem(value: Any, taken: dict[int, str]) -> str | None:
    """Why ``value`` cannot be a PN5180 line on the header (as [gpio] says it of its pins), or None."""
    expected = f"a BCM GPIO number from {HEADER_GPIO.start} to {HEADER_GPIO.stop - 1}"
    if isinstance(value, bool) or not isinstance(value, int):
        return f"expected {expected}, got {describe_value(value)}"
    if value in RESERVED_GPIO:
        return f"BCM {value} is reserved for {RESERVED_GPIO[value]} (expected {expected})"
    if value not in HEADER_GPIO:
        hint = f"; physical pin {value} is {PHYSICAL_PINS[value]} — this map uses BCM numbers" \
            if value in PHYSICAL_PINS else ""
        return f"BCM {value} is not a GPIO of the 40-pin header (expected {expected}{hint})"
    if value in taken:
        return f"BCM {value} is already used by {taken[value]} (expected another pin)"
    return None


def _pn5180_link(c: Checker, r: dict, p: tuple[str, ...], antennas: int, taken: dict[int, str]) -> dict[str, Any]:
    """A ``pn5180`` reader's wiring on the Pi: its SPI bus and clock, and per front end its chip select (a CE line of
    the bus, or a GPIO), BUSY, RST, switch select and release pins and antennas; the AGC limits. ``taken``: the
    header's pins used so far by pn5180 readers (this one's are added). A value that is wrong leaves None in the
    link, so the reader is not made."""
    name = p[-1]
    bus = c.value(r, p + ("spi_bus",), int, "an SPI bus of the 40-pin header: 0 (SPI0) or 1 (SPI1)", 0,
                  SPI_BUSES.__contains__)
    hz = c.value(r, p + ("spi_hz",), int, "an SPI clock from 100000 to 7000000 Hz (the PN5180 takes at most 7 MHz)",
                 DEFAULT_SPI_HZ, lambda v: 100_000 <= v <= 7_000_000)
    link: dict[str, Any] = {"spi_bus": bus, "spi_hz": hz, "frontends": None, "agc": list(DEFAULT_AGC)}
    agc = r.get("agc")
    if agc is not None:
        limits = ("open_below", "detuned_above", "short_above")
        if not isinstance(agc, dict):
            c.problem(p + ("agc",), f"expected {{ open_below = N, detuned_above = N, short_above = N }}, got "
                                    f"{describe_value(agc)}")
            link["agc"] = None
        else:
            for key in agc:
                if key not in limits:
                    c.problem(p + ("agc", key), f"unknown key (expected one of: {', '.join(limits)})")
            values = [c.value(agc, p + ("agc", key), int, "an AGC value from 0 to 1023", default,
                              lambda v: 0 <= v <= 1023) for key, default in zip(limits, DEFAULT_AGC)]
            if not values[0] < values[1] < values[2]:
                c.problem(p + ("agc",), f"expected open_below < detuned_above < short_above, got {values[0]}, "
                                        f"{values[1]}, {values[2]}")
                link["agc"] = None
            elif link["agc"] is not None:
                link["agc"] = values
    spi = SPI_BUSES[bus]
    bus_pins = {pin: f"reader {name!r} ({what})" for pin, what in spi.pins(bus).items()}
    for pin, what in bus_pins.items():
        taken.setdefault(pin, what)
    raw = r.get("frontends")
    if not isinstance(raw, list) or not raw or not all(isinstance(entry, dict) for entry in raw):
        c.problem(p + ("frontends",), "missing: one [[readers." + name + ".frontends]] table per PN5180 (cs or nss, "
                  "busy, rst, select, release, antennas)" if raw is None
                  else f"expected one [[readers.{name}.frontends]] table per PN5180, got {describe_value(raw)}")
        return link
    before = len(c.problems)
    frontends = []
    resets: dict[int, int] = {}  # a RST line may be shared by the reader's front ends: pin → the first's number
    for number, entry in enumerate(raw, start=1):
        q = p + ("frontends", str(number))
        for key in entry:
            if key not in FRONTEND_KEYS:
                c.problem(q + (key,), f"unknown key (expected one of: {', '.join(FRONTEND_KEYS)})")
        for key in ("busy", "rst", "select", "release", "antennas"):
            if key not in entry:
                c.problem(q + (key,), f"missing (expected {FRONTEND_KEYS[key]})")
        if ("cs" in entry) == ("nss" in entry):
            c.problem(q, "give either cs (the bus's chip select line: 0 for CE0, 1 for CE1) or nss (a GPIO as the "
                         "chip select), not " + ("both" if "cs" in entry else "neither"))
        fe: dict[str, Any] = {}
        if "cs" in entry:
            lines = ", ".join(f"{i} (CE{i}, BCM {pin})" for i, pin in enumerate(spi.chip_selects))
            fe["cs"] = c.value(entry, q + ("cs",), int, f"a chip select line of SPI{bus}: {lines}", None,
                               lambda v: 0 <= v < len(spi.chip_selects))
            owner = next((i for i, other in enumerate(frontends, start=1) if other.get("cs") == fe["cs"]), None)
            if fe["cs"] is not None and owner:
                c.problem(q + ("cs",), f"CE{fe['cs']} is already front end {owner}'s chip select")
        what = {"nss": "chip select (NSS)", "busy": "BUSY", "rst": "RST", "release": "switch release"}
        for key in ("nss", "busy", "rst", "release"):
            if key not in entry:
                continue
            value = entry[key]
            if key == "rst" and value in resets:
                fe[key] = value  # one reset line for several front ends: they start together
                continue
            problem = _pin_problem(value, taken)
            if problem:
                c.problem(q + (key,), problem)
                continue
            fe[key] = value
            taken[value] = f"reader {name!r} (front end {number}'s {what[key]})"
            if key == "rst":
                resets[value] = number
        select = entry.get("select")
        if "select" in entry:
            if not isinstance(select, list) or not 1 <= len(select) <= 3:
                c.problem(q + ("select",), "expected a list of 1 to 3 pins, the switch's select lines lowest bit "
                                           f"first (e.g. [5, 6, 12]), got {describe_value(select)}")
            else:
                pins = []
                for bit, value in enumerate(select):
                    problem = _pin_problem(value, taken)
                    if problem:
                        c.problem(q + ("select",), f"select line {bit}: {problem}")
                        continue
                    taken[value] = f"reader {name!r} (front end {number}'s switch select line {bit})"
                    pins.append(value)
                if len(pins) == len(select):
                    fe["select"] = pins
        lines_count = len(select) if isinstance(select, list) and 1 <= len(select) <= 3 else 3
        fe["antennas"] = c.value(entry, q + ("antennas",), int, f"antennas from 1 to {1 << lines_count} ("
                                 f"{lines_count} select line{'s' if lines_count > 1 else ''})", None,
                                 lambda v: 1 <= v <= 1 << lines_count)
        frontends.append(fe)
    wired = [FrontEndWiring.of(fe) for fe in frontends if all(fe.get(k) is not None for k in
                                                                ("busy", "rst", "select", "release", "antennas"))
             and (fe.get("cs") is not None or fe.get("nss") is not None)]
    if len(c.problems) == before:
        total = sum(fe.antennas for fe in wired)
        if antennas and total != antennas:
            c.problem(p + ("antennas",), f"{antennas} antennas, but the front ends have {total} "
                                         f"({' + '.join(str(fe.antennas) for fe in wired)})")
        elif any(fe.nss is not None for fe in wired) and gpio_chip_select(bus, wired) is None:
            c.problem(p + ("frontends",), f"a front end's chip select is a GPIO (nss), and every CE line of SPI{bus} "
                                          "has a front end: the GPIO-selected front ends' frames go through a CE line "
                                          "with nothing on it (use nss for every front end, or leave a CE free)")
        else:
            link["frontends"] = [{k: v for k, v in fe.items() if v is not None} for fe in frontends]
    return link


def _pn5180_pins(doc: dict) -> dict[int, str]:
    """The header's pins the pn5180 readers of ``doc`` use (their SPI bus and their lines), as the [gpio] check names
    them; read leniently (the readers' own check reports what is wrong)."""
    pins: dict[int, str] = {}
    readers = doc.get("readers")
    for name, r in (readers.items() if isinstance(readers, dict) else ()):
        if not isinstance(r, dict) or r.get("backend") != "pn5180":
            continue
        bus = r.get("spi_bus", 0)
        if bus in SPI_BUSES:
            pins.update({pin: f"reader {name!r} ({what})" for pin, what in SPI_BUSES[bus].pins(bus).items()})
        frontends = r.get("frontends")
        for number, fe in enumerate(frontends if isinstance(frontends, list) else (), start=1):
            if not isinstance(fe, dict):
                continue
            named = [(fe.get(key), what) for key, what in (("nss", "chip select (NSS)"), ("busy", "BUSY"),
                                                            ("rst", "RST"), ("release", "switch release"))]
            select = fe.get("select")
            named += [(pin, f"switch select line {bit}") for bit, pin in enumerate(select)] \
                if isinstance(select, list) else []
            for pin, what in named:
                if isinstance(pin, int) and not isinstance(pin, bool):
                    pins.setdefault(pin, f"reader {name!r} (front end {number}'s {what})")
    return pins


def _check_standards(c: Checker, readers: dict[str, ReaderSettings], zones: dict[str, tuple[str, int]],
                     deck: dict[str, str], chips: "ChipSettings | None") -> None:
    """The active deck's tags and the active chip set's must be of a standard the antennas of their zones read: an
    ISO 14443A deck on ISO 15693 antennas would never be seen."""
    for what, tags, holds, key in (("the active deck's cards", deck, ("cards", "piles"), ("table", "active_deck")),
                                   ("the active chip set's chips", chips.chips if chips else {}, ("chips",),
                                    ("chips", "active_set"))):
        carried = {uid_standard(uid) for uid in tags}
        if len(carried) > 1:
            c.problem(key, f"{what} carry both ISO 15693 and ISO 14443A tags, but an antenna reads one standard: "
                           "some of them would not be read where they lie (expected tags of one standard)")
            continue
        if not carried:
            continue
        wrong: dict[str, list[int]] = {}  # reader → antennas that read another standard
        for zone, (reader, antenna) in zones.items():
            if Zone.parse(zone).holds in holds and reader in readers \
                    and readers[reader].standard(antenna) not in carried:
                wrong.setdefault(reader, []).append(antenna)
        for reader, antennas in wrong.items():
            settings = readers[reader]
            read = sorted({settings.standard(a) for a in antennas})
            tagged = " and ".join(STANDARDS[s] for s in sorted(carried))
            fix = f"standard = \"{next(iter(carried))}\"" if len(carried) == 1 else "one standard for the deck"
            c.problem(("readers", reader, "standard"),
                      f"antenna{'s' if len(antennas) > 1 else ''} {_spans(antennas)} "
                      f"read{'' if len(antennas) > 1 else 's'} "
                      f"{' and '.join(STANDARDS[s] for s in read)}, but {what} carry {tagged} tags: they would never "
                      f"be read (expected {fix}, or antenna_standards for those antennas)")


def _spans(numbers: list[int]) -> str:
    """1, 2, 3, 5 → "1-3, 5"."""
    spans: list[list[int]] = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in spans)


def _check_stud_zones(c: Checker, zones: dict[str, tuple[str, int]], variant: str, seats: int, players: int) -> None:
    """The zones a stud game needs: each seat's up cards on an antenna of their own (``seatN.up``: the antenna says a
    card was dealt up), the burn and the muck; the board only where the deck can run short on seventh street (seven
    players or more: their 49 cards and five burns are more than 52), for the community card."""
    for seat in range(1, (seats or 0) + 1):
        up = Zone("up", seat)
        if up.name not in zones and not _reported(c, f"zones.{up.name}"):
            c.problem(("zones", up.seat_key), f"seat {seat} has no up-card zone: {variant} deals cards face up (add "
                                              f"{up.name} = {{ reader = \"NAME\", antenna = N }})")
    for required in ("burn", "muck"):
        if required not in zones and not _reported(c, f"zones.{required}"):
            c.problem(("zones", required), "missing: every table needs a burn and a muck zone")
    if players * 7 + 5 > len(FULL_DECK) and "board" not in zones and not _reported(c, "zones.board"):
        c.problem(("zones", "board"), f"missing: with {players} players the deck can run short on seventh street "
                                      f"({players} × 7 cards and 5 burns), and the community card is dealt on the "
                                      "board (add board = { reader = \"NAME\", antenna = N }, or set [game] "
                                      "max_players = 6)")


def _flatten_zones(node: dict, path: tuple[str, ...]):
    """Yield (key path, zone table); ``seat3.cards = {...}`` arrives from TOML as zones.seat3.cards."""
    for key, value in node.items():
        if isinstance(value, dict) and "reader" not in value and "antenna" not in value and Zone.nests_seat_zones(key):
            yield from _flatten_zones(value, path + (key,))
        else:
            yield path + (key,), value


def _reported(c: Checker, key: str) -> bool:
    # A zone whose entry was already reported as wrong should not be reported a second time as missing.
    return any(p.key == key or p.key.startswith(key + ".") for p in c.problems)
