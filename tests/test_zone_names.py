"""Zone names, parsed in one place (hal/zone_names.py)."""

from hal.zone_names import Zone


def test_seat_and_fixed_zones_parse_to_kind_and_seat():
    assert Zone.parse("seat3.cards") == Zone("cards", 3) and Zone.parse("seat10.bets") == ("bets", 10)
    assert Zone.parse("board") == Zone("board", None)
    assert Zone.parse("seat01.cards") == Zone("seat01.cards", None)  # a leading zero is no seat number
    assert [Zone.parse(n).name for n in ("seat3.stack", "pot")] == ["seat3.stack", "pot"]


def test_place_and_what_a_zone_is_read_for():
    assert [Zone.parse(n).place for n in ("seat2.cards", "seat2.bets", "board", "muck")] == [
        "seat", "bets", "board", "muck"]
    assert {n: Zone.parse(n).holds for n in ("seat1.cards", "board", "burn", "exposed", "muck", "pot",
                                              "seat1.bets", "seat1.stack")} == {
        "seat1.cards": "cards", "board": "cards", "burn": "cards", "exposed": "cards", "muck": "piles",
        "pot": "chips", "seat1.bets": "chips", "seat1.stack": "chips"}


def test_known_zones_of_a_table():
    assert Zone.parse("seat6.cards").known(6) and not Zone.parse("seat7.cards").known(6)
    assert Zone.parse("seat10.bets").known() and not Zone.parse("seat11.bets").known()
    assert not Zone.parse("seat1.hand").known() and not Zone.parse("rail").known()
    assert Zone.parse("exposed").known(2)


def test_the_toml_table_a_seat_zone_nests_under():
    # seat3.cards = {...} in [zones] arrives from TOML as zones → seat3 → cards
    assert Zone.parse("seat3.cards").seat_key == "seat3" and Zone.parse("pot").seat_key is None
    assert Zone.nests_seat_zones("seat3") and Zone.nests_seat_zones("seat01")  # refused later, zone by zone
    assert not Zone.nests_seat_zones("board")
