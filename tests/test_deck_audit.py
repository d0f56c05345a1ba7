"""The deck audit over the hands a simulated dealer deals: a deck with a card taken out is reported, a full one not."""

from controller.deck_audit import DeckAudit
from controller.table import TableController, TableSetup
from hal.zones import ZoneTracker
from hal.readers import SimulatedReader
from sim.dealer import DealerSettings, SimDealer
from sim.field import TableField
from sim.replay import card_uid, table_zones
from controller.cards import FULL_DECK


DECK = {card_uid(i): card for i, card in enumerate(FULL_DECK)}


def audit_of(registered: dict[str, str], hands: int, window: int) -> list[dict]:
    """Hands dealt from the whole deck; the table knows the ``registered`` tags."""
    zones = table_zones()
    field = TableField(zones)
    controller = TableController(TableSetup("audit", 10, registered, decks={"A": registered}, deck_id="A"))
    dealer = SimDealer(field, DECK, DealerSettings(list(range(1, 7))), seed=11)
    reader = SimulatedReader("main", max(a for _, a in zones.values()), field)
    tracker = ZoneTracker({a: z for z, a in zones.items()})
    audit = DeckAudit(window)
    reports, t = [], 0.0
    for move in dealer.hands(hands):
        steps = max(1, round(move.delay_s / 0.05))
        for _ in range(steps):
            t += 0.05
            events = [e for c in reader.poll(t) for z in tracker.feed(c) for e in controller.handle(z)]
            events += controller.tick(t)
            reports += [r for e in events if (r := audit.card_event(e.type, e.public, e.secret))]
        move.apply()
    for _ in range(60):
        t += 0.05
        events = [e for c in reader.poll(t) for z in tracker.feed(c) for e in controller.handle(z)]
        events += controller.tick(t)
        reports += [r for e in events if (r := audit.card_event(e.type, e.public, e.secret))]
    return reports


def test_a_card_missing_from_the_deck_is_reported_after_the_window():
    assert audit_of(DECK, hands=20, window=20) == []
    short = {uid: card for uid, card in DECK.items() if card != "Qh"}  # the queen of hearts' tag reads no more
    reports = audit_of(short, hands=20, window=20)
    assert len(reports) == 1 and reports[0]["missing"] == ["Qh"] and reports[0]["distinct_cards"] == 51 and reports[0]["audit_hands"] == 20
    assert reports[0]["ruling"] == "new_deck" and reports[0]["rules"] == ["PP Irregularities 10"]


def test_a_card_that_went_missing_during_a_hand_is_missing_from_the_deck():
    """Two hands show the whole deck between them; a hole card pocketed in the first (card_missing, then the hand's
    hand_audit) was seen, but it is gone from the deck: the window's audit names it."""
    from hal.events import ZoneEvent

    def window(pocket: str | None) -> list[dict]:
        controller = TableController(TableSetup("audit", 10, DECK, decks={"A": DECK}, deck_id="A", button=10,
                                                players=tuple(range(1, 11))))
        uid = {card: tag for tag, card in DECK.items()}
        audit = DeckAudit(2)
        reports: list[dict] = []
        t = 1000.0

        def feed(events) -> None:
            reports.extend(r for e in events if (r := audit.card_event(e.type, e.public, e.secret)))

        def zone_event(kind: str, zone: str, card: str) -> None:
            nonlocal t
            t += 0.1
            feed(controller.handle(ZoneEvent(kind, zone, uid[card], t)))

        def wait(seconds: float) -> None:
            nonlocal t
            for _ in range(int(seconds * 10)):
                t += 0.1
                feed(controller.tick(t))

        for button, cards in ((10, FULL_DECK[:26]), (1, FULL_DECK[26:])):  # 20 hole cards, burn, flop, burn, turn
            hole = {}
            for i, card in enumerate(cards[:20]):
                hole[card] = f"seat{(button + i) % 10 + 1}.cards"
                zone_event("arrived", hole[card], card)
            place = {**hole}
            for card, zone in zip(cards[20:], ("burn", "board", "board", "board")):
                place[card] = zone
                zone_event("arrived", zone, card)
            if pocket in hole:
                zone_event("left", place.pop(pocket), pocket)
                wait(11.0)
            for card, zone in zip(cards[24:], ("burn", "board")):
                place[card] = zone
                zone_event("arrived", zone, card)
            for card, zone in place.items():  # the dealer gathers the cards
                zone_event("left", zone, card)
            wait(2.0)
        assert controller.hand == 2
        return reports

    assert window(None) == []
    [report] = window("Kd")
    assert report["missing"] == ["Kd"] and report["distinct_cards"] == 51
