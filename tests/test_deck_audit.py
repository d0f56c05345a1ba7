"""The deck audit over the hands a simulated dealer deals: a deck with a card taken out is reported, a full one not."""

from controller.cards import FULL_DECK
from controller.deck_audit import DeckAudit
from controller.outbox import Outbox
from controller.table import TableController, TableSetup
from hal.zones import DebounceSettings
from sim.dealer import DealerSettings, SimDealer
from sim.replay import card_uid, table_zones
from sim.table_driver import TableDriver

DECK = {card_uid(i): card for i, card in enumerate(FULL_DECK)}


def audits(window: int, events) -> list[dict]:
    """The bodies of the deck_audit events an audit of ``window`` hands emits over ``events``."""
    audit = DeckAudit(Outbox(), window)
    for event in events:
        audit.card_event(event)
    return [e.public for e in audit.out.take()]


def audit_of(registered: dict[str, str], hands: int, window: int) -> list[dict]:
    """Hands dealt from the whole deck; the table knows the ``registered`` tags."""
    controller = TableController(TableSetup("audit", 10, registered, decks={"A": registered}, deck_id="A"))
    table = TableDriver(controller, table_zones())
    dealer = SimDealer(table.field, DECK, DealerSettings(list(range(1, 7))), seed=11)
    for move in dealer.hands(hands):
        for _ in range(max(1, round(move.delay_s / table.cycle_s))):
            table.cycle()
        move.apply()
    table.run(3.0)
    return audits(window, table.events)


def test_a_card_missing_from_the_deck_is_reported_after_the_window():
    assert audit_of(DECK, hands=20, window=20) == []
    short = {uid: card for uid, card in DECK.items() if card != "Qh"}  # the queen of hearts' tag reads no more
    reports = audit_of(short, hands=20, window=20)
    assert len(reports) == 1 and reports[0]["missing"] == ["Qh"] and reports[0]["distinct_cards"] == 51 and reports[0]["audit_hands"] == 20
    assert reports[0]["ruling"] == "new_deck" and reports[0]["rules"] == ["PP Irregularities 10"]


def test_a_card_that_went_missing_during_a_hand_is_missing_from_the_deck():
    """Two hands show the whole deck between them; a hole card pocketed in the first (card_missing, then the hand's
    hand_audit) was seen, but it is gone from the deck: the window's audit names it."""

    def window(pocket: str | None) -> list[dict]:
        controller = TableController(TableSetup("audit", 10, DECK, decks={"A": DECK}, deck_id="A", button=10,
                                                players=tuple(range(1, 11))))
        # each move read in the reader pass that follows it, 0.1 s after the last
        table = TableDriver(controller, table_zones(), debounce=DebounceSettings(1, 0.0), cycle_s=0.1,
                            start_t=1000.0, deck=DECK)
        for button, cards in ((10, FULL_DECK[:26]), (1, FULL_DECK[26:])):  # 20 hole cards, burn, flop, burn, turn
            hole = {}
            for i, card in enumerate(cards[:20]):
                hole[card] = f"seat{(button + i) % 10 + 1}.cards"
                table.put(card, hole[card])
            place = {**hole}
            for card, zone in zip(cards[20:], ("burn", "board", "board", "board")):
                place[card] = zone
                table.put(card, zone)
            if pocket in hole:
                place.pop(pocket)
                table.take(pocket)
                table.run(11.0)
            for card, zone in zip(cards[24:], ("burn", "board")):
                place[card] = zone
                table.put(card, zone)
            for card in place:  # the dealer gathers the cards
                table.take(card)
            table.run(2.0)
        assert controller.hand == 2
        return audits(2, table.events)

    assert window(None) == []
    [report] = window("Kd")
    assert report["missing"] == ["Kd"] and report["distinct_cards"] == 51
