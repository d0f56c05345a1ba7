"""The board model's ISO 15693 quiet state (sim/pn5180.py): a tag told to Stay Quiet answers no inventory for as
long as it is powered, and loses the state with its power: the field off, its antenna switched, or the tag taken
off the antenna. Driven frame by frame over the model's SPI, as the firmware drives it."""

from sim.pn5180 import BoardModel, PN5180Model, firmware_config

A, B, C = 0xE004_0000_0000_0001, 0xE004_0000_0000_0012, 0xE004_0000_0000_0023  # slots 0, 1 and 2 of a round


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def spi(chip, *data):
    chip.nss(0)
    chip.transfer(bytes(data), False)
    chip.nss(1)


def send(chip, clock, request: bytes):
    """One frame to the tags: the transceive cycle restarted (IDLE, then TRANSCEIVE), then SEND_DATA."""
    clock.t += 0.1  # long past the frame before
    spi(chip, 0x00, 0x00, 0, 0, 0, 0)  # SYSTEM_CONFIG: IDLE
    spi(chip, 0x00, 0x00, 3, 0, 0, 0)  # ... TRANSCEIVE
    spi(chip, 0x09, 0, *request)


def answering(chip, clock) -> set[int]:
    """The tags that answer a 16-slot inventory round (flags 0x06, no mask)."""
    send(chip, clock, bytes((0x06, 0x01, 0x00)))
    return {uid for uids in chip.slots.values() for uid in uids}


def stay_quiet(chip, clock, uid: int):
    send(chip, clock, bytes((0x22, 0x02)) + uid.to_bytes(8, "little"))  # addressed: the UID LSB first


def field_on(chip, clock):
    spi(chip, 0x11, 0x0D, 0x8D)  # LOAD_RF_CONFIG ISO 15693
    spi(chip, 0x16, 0)  # RF_ON
    clock.t += 0.01


def test_a_tag_told_to_stay_quiet_answers_no_round_until_it_loses_its_power():
    clock = Clock()
    tags = [A, B]
    chip = PN5180Model(lambda: tags, lambda: "ok", clock)
    field_on(chip, clock)
    assert answering(chip, clock) == {A, B}

    stay_quiet(chip, clock, A)
    assert chip.slots == {}  # nobody answers a Stay Quiet
    assert answering(chip, clock) == {B}
    assert answering(chip, clock) == {B}  # quiet while powered, round after round
    tags.append(C)  # a tag put down: it answers, the quiet one does not
    assert answering(chip, clock) == {B, C}
    stay_quiet(chip, clock, 0xE004_0000_0000_00FF)  # a tag that is not there: nothing changes
    assert answering(chip, clock) == {B, C}

    tags.remove(A)  # taken off the antenna and put back: powered anew, awake
    assert answering(chip, clock) == {B, C}
    tags.append(A)
    assert answering(chip, clock) == {A, B, C}

    stay_quiet(chip, clock, A)
    stay_quiet(chip, clock, B)
    assert answering(chip, clock) == {C}
    spi(chip, 0x17, 0)  # RF_OFF: every tag loses its power
    field_on(chip, clock)
    assert answering(chip, clock) == {A, B, C}


def test_switching_the_antenna_wakes_the_quiet_tags():
    config = firmware_config([2])
    fe = config["frontends"][0]

    class Table:
        def tags_on(self, reader, antenna):
            return [A, B] if antenna == 1 else []

    clock = Clock()
    board = BoardModel(config, Table(), "main", clock=clock)
    chip = board.chips[0]
    board.set_pin(fe["release"], 1)  # antenna 0 selected (select lines low)
    field_on(chip, clock)
    stay_quiet(chip, clock, A)
    assert answering(chip, clock) == {B}
    board.set_pin(fe["release"], 1)  # the same level again: nothing switched
    assert answering(chip, clock) == {B}
    board.set_pin(fe["release"], 0)  # everything detuned while the lines change ...
    board.set_pin(fe["release"], 1)  # ... and antenna 0 again: its tags were unpowered meanwhile
    assert answering(chip, clock) == {A, B}


def test_rf_noise_loses_answers_at_its_rate_and_a_lost_answer_leaves_the_tag_awake():
    clock = Clock()
    tags = [A, B, C]
    chip = PN5180Model(lambda: tags, lambda: "ok", clock, missed_answer=0.05, seed=3)
    field_on(chip, clock)
    answers = [answering(chip, clock) for _ in range(400)]
    lost = sum(3 - len(round_) for round_ in answers)
    assert 30 <= lost <= 90  # 5 % of 1,200 answers: 60
    stay_quiet(chip, clock, A)
    assert not any(A in answering(chip, clock) for _ in range(50))  # quiet is quiet, noise or not
