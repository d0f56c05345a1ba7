"""The room's configuration file (ROOM.toml): checked like a table's, every problem with its line.

```toml
[room]
id = "main-room"            # the shared subscription's group, and the statistics' topics
time_zone = "Europe/Vienna"  # the day of the daily statistics
feed = "secure"             # "secure" (a floor user) or "delayed" (an overlay user: after the broadcast delay)

[mqtt]
host = "localhost"
topic_prefix = "rfid-table"  # the tables' prefix

[database]
dsn = "host=localhost dbname=cardroom user=room"
```
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from rfid_table.config.checker import Checker, ConfigError, parse_toml, read_config_text
from rfid_table.config.table import MqttSettings

ROOM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # a topic level and a share name: no '/', '+' or '#'
FEEDS = ("secure", "delayed")


@dataclass(frozen=True)
class RoomConfig:
    room_id: str
    time_zone: str
    feed: str
    mqtt: MqttSettings
    session_expiry_s: int  # how long the broker keeps an instance's queue while it is away
    receive_maximum: int  # messages the broker sends before this instance acknowledges them
    dsn: str
    retry_max_s: float  # the longest wait between two attempts to reach the database
    stats_prefix: str  # statistics go to <stats_prefix>/<room id>/...
    publish_stats: bool

    @property
    def share_group(self) -> str:
        return f"rfid-table-room-{self.room_id}"

    @property
    def subscription(self) -> str:
        """Every table's events, shared between this room's instances."""
        return f"$share/{self.share_group}/{self.mqtt.topic_prefix}/+/{self.feed}/events"

    def table_stats_topic(self, table_id: str) -> str:
        return f"{self.stats_prefix}/{self.room_id}/tables/{table_id}/stats"

    @property
    def room_stats_topic(self) -> str:
        return f"{self.stats_prefix}/{self.room_id}/stats"

    def client_id(self) -> str:
        """The default client id: one per room and host, so each machine's instance keeps a session of its own."""
        return self.mqtt.client_id or f"rfid-table-room-{self.room_id}-{socket.gethostname()}"


def load_room_config(path: str | Path) -> RoomConfig:
    """Read and check a room's file; raise :class:`ConfigError` with every problem and its line."""
    path = str(path)
    text = read_config_text(path)
    doc = parse_toml(path, text)
    c = Checker(text)
    top = {"room": "the room", "mqtt": "the broker", "database": "the PostgreSQL database",
           "statistics": "the published statistics"}
    for key in doc:
        if key not in top:
            c.problem((key,), f"unknown key (expected one of: {', '.join(top)})")
    room = c.table(doc, ("room",), {"id": "a room id", "time_zone": "an IANA time zone", "feed": "secure or delayed"},
                   ("id",))
    room_id = c.value(room, ("room", "id"), str, "letters, digits, '-' or '_' (it is an MQTT topic level)", "room",
                      ROOM_ID.fullmatch)
    time_zone = c.value(room, ("room", "time_zone"), str, "an IANA time zone such as 'Europe/Vienna' or 'UTC'", "UTC",
                        _is_zone)
    feed = c.value(room, ("room", "feed"), str, "'secure' (a floor user reads it) or 'delayed' (an overlay user, "
                                                "after the broadcast delay)", "secure", FEEDS.__contains__)

    m = c.table(doc, ("mqtt",), {"host": "a host name", "port": "1 to 65535", "topic_prefix": "the tables' prefix",
                                 "client_id": "a client id", "username": "a user name", "password": "a password",
                                 "keepalive": "seconds", "reconnect_max_s": "seconds",
                                 "session_expiry_s": "seconds", "receive_maximum": "messages",
                                 "tls_ca_file": "a file"})
    no_wildcards = lambda v: v and not any(ch in v for ch in "+#/")  # noqa: E731
    ca_file = c.value(m, ("mqtt", "tls_ca_file"), str, "a PEM file", None)
    if ca_file is not None:
        ca_path = Path(ca_file) if Path(ca_file).is_absolute() else Path(path).parent / ca_file
        if not ca_path.is_file():
            c.problem(("mqtt", "tls_ca_file"), f"no file at {ca_path}")
        ca_file = str(ca_path)
    mqtt = MqttSettings(
        host=c.value(m, ("mqtt", "host"), str, "a host name", "localhost", bool),
        port=c.value(m, ("mqtt", "port"), int, "a port from 1 to 65535", 1883, lambda v: 1 <= v <= 65535),
        topic_prefix=c.value(m, ("mqtt", "topic_prefix"), str, "a topic prefix without '+' or '#'", "rfid-table",
                             lambda v: v and not any(ch in v for ch in "+#")),
        client_id=c.value(m, ("mqtt", "client_id"), str, "a client id without '+', '#' or '/'", None, no_wildcards),
        username=c.value(m, ("mqtt", "username"), str, "a user name without '+', '#' or '/'", None, no_wildcards),
        password=c.value(m, ("mqtt", "password"), str, "a password", None),
        keepalive=c.value(m, ("mqtt", "keepalive"), int, "seconds from 5 to 3600", 30, lambda v: 5 <= v <= 3600),
        reconnect_max_s=c.value(m, ("mqtt", "reconnect_max_s"), int, "seconds from 1 to 300", 10,
                                lambda v: 1 <= v <= 300),
        tls=ca_file is not None, tls_ca_file=ca_file)
    session_expiry_s = c.value(m, ("mqtt", "session_expiry_s"), int, "seconds from 60 to 2592000 (30 days)", 86_400,
                               lambda v: 60 <= v <= 2_592_000)
    receive_maximum = c.value(m, ("mqtt", "receive_maximum"), int, "messages from 1 to 65535", 1000,
                              lambda v: 1 <= v <= 65_535)

    d = c.table(doc, ("database",), {"dsn": "a libpq connection string", "retry_max_s": "seconds"}, ("dsn",))
    dsn = c.value(d, ("database", "dsn"), str, "a libpq connection string such as 'host=localhost dbname=cardroom "
                                                "user=room'", "", bool)
    retry_max_s = c.value(d, ("database", "retry_max_s"), (int, float), "seconds from 1 to 300", 30,
                          lambda v: 1 <= v <= 300)

    s = c.table(doc, ("statistics",), {"publish": "true or false", "topic_prefix": "a topic prefix"})
    publish = c.value(s, ("statistics", "publish"), bool, "true or false", True)
    stats_prefix = c.value(s, ("statistics", "topic_prefix"), str, "a topic prefix without '+' or '#'",
                           "rfid-table-room", lambda v: v and not any(ch in v for ch in "+#"))
    if c.problems:
        raise ConfigError(path, c.problems)
    return RoomConfig(room_id, time_zone, feed, mqtt, session_expiry_s, receive_maximum, dsn, float(retry_max_s),
                      stats_prefix, publish)


def _is_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True
