"""The physical table: which tagged objects lie in which zone, and so on which reader antenna."""

from collections import defaultdict


class TableField:
    def __init__(self, antenna_of_zone: dict[str, tuple[str, int]]):
        self._antenna_of_zone = dict(antenna_of_zone)
        self._zone_of_tag: dict[str, str] = {}
        self._tags_on: dict[tuple[str, int], list[str]] = defaultdict(list)
        self.version = 0  # counts changes, so a reader can tell the table has not moved since its last look
        self._changed_at: dict[tuple[str, int], int] = {}  # (reader, antenna) → the version that last changed it

    def place(self, uid: str, zone: str) -> None:
        """Put a tag on a zone (moving it from wherever it was)."""
        self.remove(uid)
        self.version += 1
        self._zone_of_tag[uid] = zone
        antenna = self._antenna_of_zone[zone]
        self._tags_on[antenna].append(uid)
        self._changed_at[antenna] = self.version

    def remove(self, uid: str) -> None:
        """Take a tag off the table (into the dealer's hands, the shuffler, a pocket)."""
        zone = self._zone_of_tag.pop(uid, None)
        if zone is not None:
            self.version += 1
            antenna = self._antenna_of_zone[zone]
            self._tags_on[antenna].remove(uid)
            self._changed_at[antenna] = self.version

    def clear(self) -> None:
        for uid in list(self._zone_of_tag):
            self.remove(uid)

    def zone_of(self, uid: str) -> str | None:
        return self._zone_of_tag.get(uid)

    def tags_in(self, zone: str) -> list[str]:
        return list(self._tags_on[self._antenna_of_zone[zone]])

    def tags_on(self, reader: str, antenna: int) -> list[str]:
        return self._tags_on.get((reader, antenna), [])

    def changed_at(self, reader: str, antenna: int) -> int:
        """The ``version`` at which the tags on this antenna last changed (0: never)."""
        return self._changed_at.get((reader, antenna), 0)

    def changed_since(self, reader: str, version: int) -> list[int]:
        """The antennas of ``reader`` whose tags changed after ``version``."""
        return [antenna for (r, antenna), changed in self._changed_at.items() if changed > version and r == reader]
