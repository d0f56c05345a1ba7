"""The felt part of `rfid-table bench`: a hand on the full 10-seat table read by the reader firmware on the modelled
PN5180 boards, each card, bet, fold and the pot timed from the felt to a subscriber, and never faster than the air
time and the table's settle time allow."""

from micropython_runtime import requires_micropython

from rfid_table.devtools.bench_felt import BET_CHIPS, KINDS, measure_felt, report_lines

pytestmark = requires_micropython


def test_one_hand_gives_every_figure_at_or_above_its_floor(mqtt_settings):
    # A light table keeps the passes short: four stand-in chips in the pot.
    results = measure_felt(mqtt_settings, hands=1, load=[("pot", 4)])

    assert set(results["readers"]) == {"main", "chips"}
    for reader in results["readers"].values():
        # a pass is never shorter than its radio time
        assert reader["passes"] >= 3 and 0 < reader["air_pass_ms"] <= reader["pass_p50_ms"]
    # a push is handed on once its zone reads unchanged twice, then the house's settle_ms is the whole window
    assert results["present_after_cycles"] == 2
    assert results["still_after_reads"] == 2 and results["settle_ms"] == 500
    # the cards reader parked on the next seat: a card's least is one round, far below a pass, and never beaten
    assert results["park_cards"] and results["card"]["floor_ms"] < results["readers"]["main"]["air_pass_ms"] / 5
    assert results["card"]["min_ms"] >= results["card"]["floor_ms"]
    # every push read whole: one bet each, no string bet
    assert all(results[kind]["read_short"] == 0 for kind in BET_CHIPS)
    assert "string_bet" not in results["bet_ruling_codes"]
    assert results["card"]["count"] + results["card"]["missed"] == 20 and results["card"]["count"] >= 18
    assert results["muck"]["count"] + results["muck"]["missed"] == 8 and results["muck"]["count"] >= 6
    for kind in BET_CHIPS:
        assert results[kind]["count"] + results[kind]["missed"] == 1
    for kind in KINDS:
        figure = results[kind]
        if figure["count"]:
            assert figure["min_ms"] <= figure["p50_ms"] <= figure["p99_ms"] <= figure["max_ms"]
    # chips a settle time without a move after the parked reader read them: never sooner than the air of that read
    # and the settle window (twenty chips' answers alone are 4.6 ms of air each)
    assert results["bet_20"]["floor_ms"] >= results["settle_ms"] + 20 * 4.5
    assert all(results[kind]["min_ms"] >= results[kind]["floor_ms"] >= results["settle_ms"] for kind in BET_CHIPS
               if results[kind]["count"])
    assert results["hands_not_ended"] == 0
    text = "\n".join(report_lines(results))
    assert "reader main" in text and "bet_20" in text and "floor" in text
