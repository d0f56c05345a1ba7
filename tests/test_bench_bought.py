"""The bought readers' part of `rfid-table bench`: each kind's example table read through its emulators by the daemon's
pipeline, its passes beside the emulator's model, and dealt cards timed to a subscriber, no faster than the readers
can read them."""

from hal.zone_names import Zone
from rfid_table.devtools.bench_bought import measure_bought, report_lines


def test_each_kind_gives_its_passes_and_dealt_cards_at_the_subscriber(mqtt_settings):
    # A small table keeps the passes short: two cards on the first seat, a small pot.
    load = [(Zone("cards", 1).name, 2), ("pot", 4)]
    results = measure_bought(mqtt_settings, cards=2, load=load)

    assert set(results) == {"metratec", "feig", "reference"}
    for kind in ("metratec", "feig"):
        figures = results[kind]
        assert set(figures["readers"]) == ({"cards", "chips"} if kind == "metratec" else {"main"})
        for reader in figures["readers"].values():
            assert reader["passes"] >= 1 and 0 < reader["pass_p50_ms"] <= reader["pass_max_ms"]
            assert reader["model_pass_ms"] > 0
        assert figures["cards"] == 2 and figures["cards_missed"] == 0 and figures["irregular_cards"] == 0
        assert 0 < figures["card_min_ms"] <= figures["card_p50_ms"] <= figures["card_p99_ms"] <= figures["card_max_ms"]
        # A dealt card present after N reads is read N - 1 times more, a pass apart: no card comes sooner. The floor
        # is counted in measured passes, so a tenth is left for the stamps of their ends.
        reads = figures["present_after_cycles"]
        floor = (reads - 1) * figures["readers"][figures["card_reader"]]["pass_p50_ms"]
        assert figures["card_floor_ms"] == round(floor, 1) and figures["card_min_ms"] >= 0.9 * floor
        assert figures["card_p50_over_pass"] > 0
    assert results["reference"]["source"] == "docs/hardware.md, not measured in this run"
    text = "\n".join(report_lines(results))
    assert "reader cards, 13 antennas" in text and "reader main, 24 antennas" in text and "not measured" in text
