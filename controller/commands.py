"""A command from the floor or the dealer console as the controller takes it: validated before it gets here (by
``rfid_table.service.commands`` against the schema), made a ``Command`` once, then checked and applied.

Checked, then applied (as pokerkit's ``verify``/``can`` before its action): every command has one ``Handler``, whose
``check`` says, without changing anything, whether the table's state allows it (a ``Refusal``, or None), and whose
``apply`` carries it out and cannot refuse. A refused command leaves no trace: no event, no number, no time, nothing
queued for the floor (the outbox raises if a check emits, ``controller.outbox``), so the journal, which keeps only
what was applied, replays to the same table.

Each part says which commands it owns and how they are checked and applied (``TableController.handlers``: the cards;
``ChipBetting.handlers``: the stacks, the declarations and undo; ``GameController``: the clock, the levels, the
game of a mixed game (``set_game``: ``controller.rotation``), the seats, the bomb pot and what concerns more than one
part — ``run_it``, ``confirm``, ``override``); the table makes one ``CommandTable`` of them, and a command is found
there by one lookup. A command no part of the table owns is refused
as not available.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Mapping

if TYPE_CHECKING:
    from controller.domain import DomainEvent
    from controller.outbox import Outbox

COMMON = ("command", "role", "user", "note", "id")  # what every command carries; the rest are its own fields
NOT_AVAILABLE = "not available on this table"


@dataclass(frozen=True)
class Command:
    name: str
    role: str
    user: str
    note: str | None = None  # the sender's note, kept with the events it causes
    fields: Mapping[str, Any] = field(default_factory=dict)  # the command's own fields (seat, amount, card...)

    @classmethod
    def of(cls, body: Mapping[str, Any] | Command) -> Command:
        """The command a validated body (``{"command": "set_button", "role": ..., "user": ..., "seat": 3}``) is."""
        if isinstance(body, Command):
            return body
        return cls(body["command"], body["role"], body["user"], body.get("note") or None,
                   {key: value for key, value in body.items() if key not in COMMON})

    @property
    def by(self) -> str:
        """Who sent it, as the events name them: ``role/user``."""
        return f"{self.role}/{self.user}"

    def signed(self) -> dict[str, str]:
        """``by`` as an event's field."""
        return {"by": self.by}

    def noted(self) -> dict[str, str]:
        """The note as an event's field, if there is one."""
        return {"note": self.note} if self.note else {}

    def __getitem__(self, key: str) -> Any:
        return self.fields[key]

    def __contains__(self, key: str) -> bool:
        return key in self.fields

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)


class Refusal(str):
    """Why the table refuses a command in its current state, for people: the text of the reply's ``error`` (its
    ``field`` is ``command``, schemas/reply.schema.json). The controller's one refusal: a part that refuses says it
    with this, from a check, before anything changed."""

    __slots__ = ()


Check = Callable[["Command", float], "Refusal | None"]  # whether the state allows it; changes nothing
Apply = Callable[["Command", float], "list[DomainEvent]"]  # carry it out (it was checked); its events, in order


def allowed(command: Command, t: float) -> None:
    """The check of a command every state of the table allows."""
    return None


@dataclass(frozen=True)
class Handler:
    check: Check
    apply: Apply


def unavailable(reason: str) -> Handler:
    """A command this table takes in no state, with why (rather than the plain "not available")."""
    return Handler(partial(_refuse, reason), _never)


# (module functions and partials rather than closures: the controller is pickled with its handlers)
def _refuse(reason: str, command: Command, t: float) -> Refusal:
    return Refusal(reason)


def _never(command: Command, t: float) -> list[DomainEvent]:
    raise AssertionError(f"{command.name} is always refused")


class CommandTable:
    """The commands one table takes, each from the part that owns it. Two parts owning the same command is a mistake
    of the table's make-up, found when it is built."""

    def __init__(self, out: Outbox, *owners: Mapping[str, Handler]):
        self.out = out
        self._handlers: dict[str, Handler] = {}
        for handlers in owners:
            for name, handler in handlers.items():
                if name in self._handlers:
                    raise ValueError(f"the command {name} has two owners")
                self._handlers[name] = handler

    def names(self) -> list[str]:
        return sorted(self._handlers)

    def check(self, command: Command, t: float) -> Refusal | None:
        """Why ``command`` is refused now, or None; nothing changes either way."""
        handler = self._handlers.get(command.name)
        if handler is None:
            refusal: Refusal | None = Refusal(f"{command.name} is {NOT_AVAILABLE}")
        else:
            with self.out.checking():
                refusal = handler.check(command, t)
        return None if refusal is None else self.out.refused(refusal)

    def apply(self, command: Command, t: float) -> list[DomainEvent]:
        """Carry out a command :meth:`check` allowed, at table time ``t``; its events."""
        self.out.begin(t)
        return self._handlers[command.name].apply(command, t)
