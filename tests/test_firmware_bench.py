"""The reader figures of `rfid-table bench` come from the firmware on the modelled PN5180, and say what they mean."""

from micropython_runtime import requires_micropython
from rfid_table.devtools.bench_reader import CARD, CHIP, measure_dwell, measure_memory, report_lines


@requires_micropython
def test_a_bigger_stack_takes_longer_and_is_still_read_whole_and_the_firmware_fits_the_picos_heap():
    cards = measure_dwell(CARD, 2, dwells=3)
    stack = measure_dwell(CHIP, 20, dwells=3)
    assert cards["read_whole"] and stack["read_whole"]
    # ISO 15693 air time: one 16-slot round for two cards, several rounds of collisions for twenty chips.
    assert 10 < cards["air_ms"] < 30 and stack["air_ms"] > 4 * cards["air_ms"]
    # The firmware can only be slower than the air (the two are sampled over slightly different windows).
    assert stack["ms"] >= 0.8 * stack["air_ms"]
    memory = measure_memory(passes=12)
    assert memory["heap_live_max_kb"] < memory["heap_kb"] / 2
    lines = report_lines({"dwell": {"2 cards": cards}, "table": {}, "arrival": {}, "memory": memory})
    assert "2 cards" in lines[1] and "air" in lines[1]
