"""``--simulate`` for the registration tools (``rfid_table.ops.register``): the simulated field on the registration
antenna and the virtual technicians that place new tags on it. The command line hands :class:`SimulatedRegistration`
to the tools; the operator's tools themselves never import the simulator.
"""

from __future__ import annotations

import random

from sim.field import TableField

REGISTER_ZONE = "register"  # the registration antenna's zone in the simulated field


class SimulatedRegistration:
    """The simulated field a ``sim`` reader's registration antenna reads, and the technicians that place tags."""

    def __init__(self, reader: str, antenna: int):
        self.field = TableField({REGISTER_ZONE: (reader, antenna)})

    def deck_technician(self, rng: random.Random, pace_s: float, taken: set[str]) -> DeckTechnician:
        return DeckTechnician(self.field, rng, pace_s, taken)

    def stack_technician(self, rng: random.Random, pace_s: float, uids: list[str]) -> StackTechnician:
        return StackTechnician(self.field, rng, pace_s, uids)

    def chip_technician(self, rng: random.Random, pace_s: float, taken: set[str], count: int) -> ChipTechnician:
        return ChipTechnician(self.field, rng, pace_s, taken, count)


class DeckTechnician:
    """A virtual technician for ``--simulate``: puts a new card on the antenna each time the last one is taken."""

    def __init__(self, field: TableField, rng: random.Random, pace_s: float, taken: set[str]):
        self.field, self.rng, self.pace_s, self.taken = field, rng, pace_s, set(taken)
        self.placed = 0
        self.due: float | None = None

    def new_uid(self) -> str:
        while True:
            uid = f"E00401{self.rng.getrandbits(40):010X}"
            if uid not in self.taken:
                self.taken.add(uid)
                return uid

    def step(self, now: float, session) -> None:
        if session.done or len(session.uid_of) < self.placed:
            return
        if self.due is None:
            self.due = now + self.pace_s
        if now >= self.due:
            self.field.place(self.new_uid(), REGISTER_ZONE)
            self.placed += 1
            self.due = None


class StackTechnician:
    """The simulated technician of a registration from a list: the listed tags go down in handfuls."""

    def __init__(self, field: TableField, rng: random.Random, pace_s: float, uids: list[str]):
        self.field, self.rng, self.pace_s = field, rng, pace_s
        self.left = list(uids)
        rng.shuffle(self.left)
        self._next = 0.0

    def step(self, now: float, session) -> None:
        if now < self._next or not self.left:
            return
        self._next = now + self.pace_s
        handful, self.left = self.left[:13], self.left[13:]
        for uid in handful:
            self.field.place(uid, REGISTER_ZONE)


class ChipTechnician(DeckTechnician):
    """Puts new chips on the antenna in stacks of up to ``stack`` chips."""

    def __init__(self, field: TableField, rng: random.Random, pace_s: float, taken: set[str], count: int,
                 stack: int = 10):
        super().__init__(field, rng, pace_s, taken)
        self.count, self.stack = count, stack

    def step(self, now: float, session) -> None:
        if session.done or len(session.new) < self.placed or self.placed >= self.count:
            return
        if self.due is None:
            self.due = now + self.pace_s
        if now >= self.due:
            for _ in range(min(self.stack, self.count - self.placed)):
                self.field.place(self.new_uid(), REGISTER_ZONE)
                self.placed += 1
            self.due = None
