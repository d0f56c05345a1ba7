"""A command from the floor or the dealer console as the controller takes it: validated before it gets here (by
``rfid_table.service.commands`` against the schema), made a ``Command`` once, and dispatched by its name from a table of
handlers (``GameController`` for the chips, the clock, the levels and the seats; ``TableController`` for the cards).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

COMMON = ("command", "role", "user", "note", "id")  # what every command carries; the rest are its own fields


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
