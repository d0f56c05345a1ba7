"""Set up the card room's Mosquitto: users, passwords, ACL and TLS files for config/mosquitto/cardroom.conf.

    rfid-table broker-setup --dir /etc/mosquitto/cardroom [--prefix rfid-table]
        [--table ID ...] [--user ROLE:NAME[:TABLE,...] ...] [--room ROOM.toml ...] [--password NAME=SECRET ...]
        [--remove-table ID ...] [--remove-user NAME ...]
        [--tls] [--tls-host NAME ...] [--tls-ip ADDRESS ...] [--tls-renew] [--install-conf PATH]
        [--bridge-to HOST:PORT --bridge-user NAME [--bridge-password SECRET] [--bridge-cafile CA] | --remove-bridge]

The directory keeps ``cardroom.json`` (the tables and users, without passwords). Every run merges its
arguments into that file and regenerates ``acl``. Users that already exist keep their password unless one is
given with ``--password``. New users without one get a generated password, printed once and stored nowhere.
``passwd`` is maintained with ``mosquitto_passwd``, which reads the password from a pipe, so it never appears on
a command line. The TLS listener and the overlays' WebSocket listener (wss://) need a server certificate: while
``server.crt`` or ``server.key`` is missing, every run makes a private CA (if missing) and a server certificate with
the ``openssl`` command. A certificate of your own put at those paths is left as it is.

Roles (``<P>`` is the topic prefix, ``<T>`` a table id, ``<U>`` the username):

=========  ===========================================================  ==========================================
role       reads                                                        writes
=========  ===========================================================  ==========================================
table      its own ``<P>/<T>/``: status, public, secure, delayed, live, the same, except commands
           replies, commands
floor      every table's status, public, secure, delayed, live, replies ``<P>/+/commands/floor/<U>/#``
dealer     its tables' status, public, secure, replies                  ``<P>/<T>/commands/dealer/<U>/#``
overlay    every table's status, public, delayed, live; the rooms'      nothing
           statistics
public     every table's status, public; the rooms' statistics          nothing
room       every table's secure or delayed (its room file's ``feed``)   its room's statistics, ``<S>/<R>/#``
bridge     nothing                                                      its tables' status, public and secure
=========  ===========================================================  ==========================================

A ``bridge`` user is a room's broker at a central one (``--user bridge:ROOM:TABLE,...`` there). The room's own
broker gets the bridge with ``--bridge-to``: ``bridge.conf`` (a Mosquitto bridge over TLS forwarding every table's
``status``, ``public/#`` and ``secure/#`` with QoS 1, in a persistent session), which ``--install-conf`` installs
beside ``cardroom.conf``.

A table's user is ``table-<T>``, made with ``--table``. A room service's user is the ``[mqtt] username`` of its room
file, made with ``--room ROOM.toml``: the file's ``feed``, room id ``<R>`` and statistics prefix ``<S>`` give its
rights, and every floor, overlay and public user may read that room's statistics (of its tables). Floor, overlay and public users see every table, or only
the tables listed after a second colon. Dealers need that list. A command's topic names the role and the user
that sent it, and the ACL enforces this, so a table knows which console a command came from.
"""

import argparse
import grp
import ipaddress
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from rfid_table.ops.broker import CONSOLE_PAGE, BrokerError, PrivateBroker, find_mosquitto, free_port, install_pages
from rfid_table.ops.broker import find_mosquitto_passwd as mosquitto_passwd_command
from rfid_table.package_data import MOSQUITTO_DIR
from rfid_table.config.table import TABLE_ID

CARDROOM_CONF = MOSQUITTO_DIR / "cardroom.conf"
DEFAULT_DIR = Path("/etc/mosquitto/cardroom")
SHIPPED_DIR = "/etc/mosquitto/cardroom"  # the directory cardroom.conf names
MANIFEST = "cardroom.json"
PASSWD = "passwd"
ACL = "acl"
CA_CERT, CA_KEY, SERVER_CERT, SERVER_KEY = "ca.crt", "ca.key", "server.crt", "server.key"
BRIDGE_CONF, BRIDGE_CA = "bridge.conf", "bridge-ca.crt"
INSTALLED_BRIDGE_CONF = "cardroom_bridge.conf"  # beside cardroom.conf in conf.d/, read after it (alphabetical)
BRIDGED = ("status", "public/#", "secure/#")  # what a room's broker forwards of each table to the central one

ROLES = ("table", "floor", "dealer", "overlay", "public", "bridge", "room")
USER_ROLES = ROLES[1:6]  # table users come from --table, room users from --room
STATS_READERS = ("floor", "overlay", "public")  # who reads the rooms' statistics
TABLE_USER_PREFIX = "table-"
USERNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")

EX_USAGE = 2


class SetupError(ValueError):
    """A refused argument or a failed step, with a message meant for the person running the command."""


# ---- names -------------------------------------------------------------------------------------------------------

def _bad_characters(value: str) -> str | None:
    """Why ``value`` cannot become part of an MQTT topic, a password file line or an ACL line, if it cannot."""
    if any(ch in value for ch in "+#"):
        return "contains an MQTT wildcard ('+' or '#'), which in a topic would match other tables' or users' topics"
    if "/" in value:
        return "contains '/', the MQTT topic level separator"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        return "contains a control character"
    if any(ch.isspace() for ch in value):
        return "contains white space"
    if ":" in value:
        return "contains ':', the field separator of mosquitto's password file"
    return None


def check_username(name: str) -> str:
    if not name:
        raise SetupError("username is empty")
    why = _bad_characters(name)
    if why:
        raise SetupError(f"username {name!r} refused: it {why}")
    if not USERNAME.match(name):
        raise SetupError(f"username {name!r} refused: use letters, digits, '.', '_' and '-' (not first), at most "
                         "100 characters")
    return name


def check_table_id(table_id: str) -> str:
    why = _bad_characters(table_id) if table_id else "is empty"
    if why or not TABLE_ID.match(table_id):
        raise SetupError(f"table id {table_id!r} refused: it {why or 'has other characters'}; a table id is 1 to "
                         "64 letters, digits, '-' and '_' (as in the table configuration)")
    return table_id


def check_prefix(prefix: str) -> str:
    for level in prefix.split("/"):  # a prefix may have several levels ('casino/poker'), none empty
        why = _bad_characters(level) if level else "has an empty topic level"
        if why:
            raise SetupError(f"topic prefix {prefix!r} refused: it {why}")
    if prefix.startswith("$"):
        raise SetupError(f"topic prefix {prefix!r} refused: topics starting with '$' are the broker's")
    return prefix


def table_user(table_id: str) -> str:
    return TABLE_USER_PREFIX + table_id


# ---- the manifest ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RoomGrant:
    """What a room service reads and writes, from its room file (docs/room.md)."""
    room_id: str
    feed: str  # "secure" or "delayed": the tables' events it stores
    stats_prefix: str  # it publishes under <stats_prefix>/<room_id>/

    @property
    def stats_root(self) -> str:
        return f"{self.stats_prefix}/{self.room_id}"


@dataclass(frozen=True)
class Bridge:
    """This room's broker forwards its tables to a central broker (a Mosquitto bridge)."""
    address: str  # host:port of the central broker's TLS listener
    username: str  # this room's bridge user there (and its client id)
    cafile: bool  # the central broker's CA is bridge-ca.crt in the directory (else the system's CAs)


@dataclass(frozen=True)
class User:
    name: str
    role: str
    tables: tuple[str, ...] | None = None  # None: every table (floor, overlay, public, room)
    room: RoomGrant | None = None  # a room service's user only


@dataclass
class CardRoom:
    prefix: str = "rfid-table"
    tables: list[str] = field(default_factory=list)
    users: dict[str, User] = field(default_factory=dict)  # role users; table users follow from ``tables``
    bridge: Bridge | None = None

    @classmethod
    def load(cls, path: Path) -> "CardRoom":
        data = json.loads(path.read_text())
        room = cls(prefix=check_prefix(data["prefix"]), tables=[check_table_id(t) for t in data["tables"]])
        for u in data["users"]:
            grant = RoomGrant(**u["room"]) if u.get("room") else None
            room.add_user(User(u["name"], u["role"], tuple(u["tables"]) if u.get("tables") is not None else None,
                               grant))
        if data.get("bridge"):
            room.bridge = Bridge(**data["bridge"])
        return room

    def dump(self) -> str:
        users = [{"name": u.name, "role": u.role, "tables": list(u.tables) if u.tables is not None else None,
                  **({"room": {"room_id": u.room.room_id, "feed": u.room.feed, "stats_prefix": u.room.stats_prefix}}
                     if u.room else {})}
                 for u in sorted(self.users.values(), key=lambda u: (ROLES.index(u.role), u.name))]
        bridge = {"bridge": self.bridge.__dict__} if self.bridge else {}
        return json.dumps({"prefix": self.prefix, "tables": self.tables, "users": users, **bridge}, indent=2) + "\n"

    def add_table(self, table_id: str) -> None:
        check_table_id(table_id)
        if table_id not in self.tables:
            self.tables.append(table_id)

    def add_user(self, user: User) -> None:
        check_username(user.name)
        if user.role == "room" and user.room is None:
            raise SetupError(f"user {user.name!r}: a room service's user is made from its room file, with "
                             "--room ROOM.toml (its [mqtt] username, feed and room id)")
        if user.role not in ROLES[1:]:
            raise SetupError(f"user {user.name!r}: unknown role {user.role!r}; roles: {', '.join(USER_ROLES)} "
                             "(table users are made by --table, room users by --room)")
        if user.name.startswith(TABLE_USER_PREFIX):
            raise SetupError(f"username {user.name!r} refused: names starting with {TABLE_USER_PREFIX!r} are the "
                             "tables' own users")
        if user.role == "dealer" and not user.tables:
            raise SetupError(f"dealer {user.name!r}: name the dealer's table(s), as dealer:{user.name}:TABLE")
        for t in user.tables or ():
            check_table_id(t)
        self.users[user.name] = user

    def all_users(self) -> list[User]:
        return [User(table_user(t), "table", (t,)) for t in self.tables] + list(self.users.values())

    def validate(self) -> None:
        for user in self.users.values():
            unknown = [t for t in user.tables or () if t not in self.tables]
            if unknown:
                raise SetupError(f"user {user.name!r} names table(s) {', '.join(unknown)} that are not set up: add "
                                 "them with --table")


def room_user_from_file(path: Path, prefix: str) -> User:
    """The user of the room service that runs with the room file at ``path``, for a card room whose tables publish
    under ``prefix``."""
    from rfid_table.config.checker import ConfigError  # noqa: PLC0415
    from rfid_table.room.config import load_room_config  # noqa: PLC0415

    try:
        config = load_room_config(path)
    except ConfigError as exc:
        raise SetupError("--room: " + "; ".join(problem.render(exc.path) for problem in exc.problems)) \
            from None
    except OSError as exc:
        raise SetupError(f"--room {path}: {exc.strerror or exc}") from None
    if not config.mqtt.username:
        raise SetupError(f"--room {path}: the room file has no [mqtt] username, which the card room's broker needs "
                         "(each instance of a room its own)")
    if config.mqtt.topic_prefix != prefix:
        raise SetupError(f"--room {path}: the room reads the tables under {config.mqtt.topic_prefix!r}, the card "
                         f"room's tables publish under {prefix!r}: set [mqtt] topic_prefix or --prefix")
    check_prefix(config.stats_prefix)
    return User(config.mqtt.username, "room", None, RoomGrant(config.room_id, config.feed, config.stats_prefix))


def parse_user_spec(spec: str) -> User:
    """``ROLE:NAME`` or ``ROLE:NAME:TABLE[,TABLE...]``."""
    parts = spec.split(":")
    if len(parts) not in (2, 3) or not parts[0] or not parts[1]:
        raise SetupError(f"--user {spec!r}: expected ROLE:NAME or ROLE:NAME:TABLE[,TABLE...]")
    tables = tuple(t.strip() for t in parts[2].split(",")) if len(parts) == 3 else None
    return User(parts[1], parts[0], tables)


# ---- the ACL -----------------------------------------------------------------------------------------------------

def acl_rules(user: User, prefix: str, stats_roots: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(access, topic filter) pairs for one user, in the words of mosquitto's acl_file. ``stats_roots``: where the
    card room's room services publish statistics (``<stats prefix>/<room id>``)."""
    every = "+"
    if user.role == "room":
        assert user.room is not None
        return [("read", f"{prefix}/+/{user.room.feed}/#"), ("write", f"{user.room.stats_root}/#")]
    if user.role == "table":
        (t,) = user.tables
        base = f"{prefix}/{t}"
        return ([("readwrite", f"{base}/status")]
                + [("readwrite", f"{base}/{branch}/#")
                   for branch in ("public", "secure", "delayed", "live", "replies")]
                + [("read", f"{base}/commands/#")])
    tables = user.tables or (every,)
    if user.role == "bridge":  # a room's broker, forwarding its tables here
        return [("write", f"{prefix}/{t}/{branch}") for t in tables for branch in BRIDGED]
    # live/: the public events with the hole cards the table's reveal policy shows (docs/mqtt.md, "The live feed"):
    # the broadcast's, not the public's
    branches = {"floor": ("public", "secure", "delayed", "live", "replies"), "dealer": ("public", "secure", "replies"),
                "overlay": ("public", "delayed", "live"), "public": ("public",)}[user.role]
    rules = []
    for t in tables:
        rules.append(("read", f"{prefix}/{t}/status"))
        rules += [("read", f"{prefix}/{t}/{branch}/#") for branch in branches]
        if user.role in ("floor", "dealer"):
            rules.append(("write", f"{prefix}/{t}/commands/{user.role}/{user.name}/#"))
        if user.role in STATS_READERS:
            rules += [("read", f"{root}/tables/{t}/stats") for root in stats_roots]
    if user.role in STATS_READERS and user.tables is None:  # the room's players, every table's
        rules += [("read", f"{root}/stats") for root in stats_roots]
    return rules


def render_acl(room: CardRoom) -> str:
    lines = [
        "# Mosquitto ACL for the card room, generated by `rfid-table broker-setup` from cardroom.json.",
        "# Do not edit: run the command again (it keeps passwords), or edit cardroom.json and run it without",
        "# arguments. Then reload mosquitto (systemctl reload mosquitto).",
        "#",
        "# Every rule belongs to one user. There are no `pattern` lines, so no username or client id is ever",
        "# substituted into a topic. Anything not granted here is denied. `read` is checked when a message is",
        "# delivered: subscribing to '#' succeeds, but only readable messages arrive.",
        f"# Topic prefix: {room.prefix}",
    ]
    stats_roots = tuple(dict.fromkeys(u.room.stats_root for u in room.all_users() if u.room))
    for user in room.all_users():
        scope = ", ".join(user.tables) if user.tables else "every table"
        if user.room:
            scope = f"room {user.room.room_id}, the {user.room.feed} feed"
        lines += ["", f"# {user.role} ({scope})", f"user {user.name}"]
        lines += [f"topic {access} {topic}" for access, topic in acl_rules(user, room.prefix, stats_roots)]
    return "\n".join(lines) + "\n"


# ---- the bridge to a central broker -------------------------------------------------------------------------------

def check_address(address: str) -> str:
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535 or any(c.isspace() for c in address):
        raise SetupError(f"--bridge-to {address!r}: expected HOST:PORT, the central broker's TLS listener "
                         "(e.g. central.example.org:8883)")
    return address


def render_bridge(room: CardRoom, directory: Path, password: str) -> str:
    """The Mosquitto bridge section (mosquitto.conf(5), "Configuring Bridges") for ``room.bridge``."""
    bridge = room.bridge
    assert bridge is not None
    ca = (f"bridge_cafile {directory / BRIDGE_CA}" if bridge.cafile else
          "bridge_capath /etc/ssl/certs")
    return "\n".join([
        "# The bridge of this room's broker to the central one, generated by `rfid-table broker-setup --bridge-to`.",
        "# Do not edit: run the command again. Mosquitto reads bridges at its start only: restart it after a change.",
        f"connection {bridge.username}",
        f"address {bridge.address}",
        # Every table's feeds, QoS 1, as they are (table ids are unique across the rooms a central broker joins).
        *[f"topic {room.prefix}/+/{branch} out 1" for branch in BRIDGED],
        # The central broker knows this room by its user (use_username_as_clientid): one bridge per room.
        f"remote_clientid {bridge.username}",
        f"remote_username {bridge.username}",
        f"remote_password {password}",
        f"local_clientid bridge-{bridge.username}",
        # A persistent session at both ends: while the central broker is away, this broker queues what the bridge
        # has to forward (up to max_queued_messages and max_queued_bytes, which Mosquitto 2.0 applies per client,
        # the bridge included: cardroom.conf), and forwards it when the bridge is back.
        "cleansession false",
        "bridge_protocol_version mqttv311",
        "try_private true",
        "notifications true",
        "notifications_local_only true",  # the bridge's state on this broker only: the central ACL grants no $SYS
        "keepalive_interval 30",
        "restart_timeout 2 30",  # back off from 2 s to 30 s while the central broker is away
        ca,
        "bridge_tls_version tlsv1.2",
        "bridge_insecure false",
    ]) + "\n"


def bridge_password(path: Path) -> str | None:
    """The password of an existing bridge.conf, which a run without --bridge-password keeps."""
    if not path.exists():
        return None
    for line in path.read_text().splitlines():
        if line.startswith("remote_password "):
            return line.split(" ", 1)[1]
    return None


# ---- files and permissions ---------------------------------------------------------------------------------------

def _mosquitto_group() -> int | None:
    """The broker's group when we run as root (mosquitto drops root to the user 'mosquitto' and must still read
    the password file, the ACL and the server key). None otherwise: then the files are the caller's alone."""
    if os.geteuid() != 0:
        return None
    try:
        return grp.getgrnam("mosquitto").gr_gid
    except KeyError:
        return None


def _protect(path: Path, mode: int, broker_reads: bool = True) -> None:
    gid = _mosquitto_group() if broker_reads else None
    if gid is not None:
        os.chown(path, 0, gid)
        os.chmod(path, mode)
    else:
        os.chmod(path, mode & 0o700 if broker_reads else mode)


def _write(path: Path, text: str, mode: int = 0o640) -> None:
    tmp = path.with_name(path.name + ".new")
    tmp.write_text(text)
    _protect(tmp, mode)
    os.replace(tmp, path)


def find_mosquitto_passwd() -> str:
    try:
        return mosquitto_passwd_command()
    except BrokerError as exc:
        raise SetupError(str(exc)) from None


def password_users(passwd: Path) -> set[str]:
    if not passwd.exists():
        return set()
    return {line.split(":", 1)[0] for line in passwd.read_text().splitlines() if ":" in line}


def set_password(passwd: Path, username: str, password: str) -> None:
    """Add or change a user with mosquitto_passwd, handing it the password through a pipe (it asks twice)."""
    check_username(username)
    if not password or any(ch in password for ch in "\r\n\0"):
        raise SetupError(f"password for {username!r} refused: it must be non-empty and on one line")
    if not passwd.exists():
        passwd.touch()
        _protect(passwd, 0o640)
    done = subprocess.run([find_mosquitto_passwd(), str(passwd), username], input=f"{password}\n{password}\n",
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise SetupError(f"mosquitto_passwd failed for {username!r}: {(done.stderr or done.stdout).strip()}")


def delete_user(passwd: Path, username: str) -> None:
    done = subprocess.run([find_mosquitto_passwd(), "-D", str(passwd), username], capture_output=True, text=True,
                          timeout=30)
    if done.returncode != 0:
        raise SetupError(f"mosquitto_passwd -D failed for {username!r}: {(done.stderr or done.stdout).strip()}")


def generate_password() -> str:
    return secrets.token_urlsafe(18)  # 144 bits, letters, digits, '-' and '_'


# ---- TLS ---------------------------------------------------------------------------------------------------------

def _openssl(*args: str, cwd: Path) -> None:
    openssl = shutil.which("openssl")
    if not openssl:
        raise SetupError("the openssl command is needed to make the broker's TLS certificate: run "
                         "'sudo apt-get install openssl', or put your own certificate and key at server.crt and "
                         "server.key")
    done = subprocess.run([openssl, *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise SetupError(f"openssl {args[0]} failed: {done.stderr.strip()}")


def default_tls_names() -> tuple[list[str], list[str]]:
    host = socket.gethostname()
    hosts = [h for h in dict.fromkeys([host, f"{host.split('.')[0]}.local", "localhost"]) if h]
    return hosts, ["127.0.0.1", "::1"]


def make_tls(directory: Path, hosts: list[str], ips: list[str], days: int = 825, renew: bool = False) -> list[str]:
    """A private CA (kept, so clients keep trusting it) and a server certificate for ``hosts`` and ``ips``.
    Returns the files written."""
    for ip in ips:
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            raise SetupError(f"--tls-ip {ip!r} is not an IP address") from None
    for host in hosts:
        if not re.match(r"^[A-Za-z0-9*]([A-Za-z0-9.-]*[A-Za-z0-9])?$", host):
            raise SetupError(f"--tls-host {host!r} is not a host name")
    written = []
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    if not (directory / CA_CERT).exists() or not (directory / CA_KEY).exists():
        _openssl("req", "-x509", "-new", *ec, "-keyout", CA_KEY, "-out", CA_CERT, "-days", "3650",
                 "-subj", f"/CN=rfid-table card room CA {secrets.token_hex(4)}",
                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                 cwd=directory)
        written += [CA_CERT, CA_KEY]
    _protect(directory / CA_KEY, 0o600, broker_reads=False)  # signs certificates: root only, never copied
    _protect(directory / CA_CERT, 0o644, broker_reads=False)
    if renew or not (directory / SERVER_CERT).exists() or not (directory / SERVER_KEY).exists():
        san = ",".join([f"DNS:{h}" for h in hosts] + [f"IP:{ip}" for ip in ips])
        with tempfile.TemporaryDirectory() as scratch:
            csr, ext = Path(scratch) / "server.csr", Path(scratch) / "server.ext"
            ext.write_text(f"subjectAltName={san}\nbasicConstraints=CA:FALSE\n"
                           "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n")
            _openssl("req", "-new", *ec, "-keyout", SERVER_KEY + ".new", "-out", str(csr),
                     "-subj", f"/CN={(hosts or ips)[0]}", cwd=directory)
            _openssl("x509", "-req", "-in", str(csr), "-CA", CA_CERT, "-CAkey", CA_KEY,
                     "-set_serial", "0x" + secrets.token_hex(16), "-days", str(days), "-sha256",
                     "-extfile", str(ext), "-out", SERVER_CERT + ".new", cwd=directory)
        for name, mode in ((SERVER_KEY, 0o640), (SERVER_CERT, 0o644)):
            _protect(directory / (name + ".new"), mode)
            os.replace(directory / (name + ".new"), directory / name)
        written += [SERVER_CERT, SERVER_KEY]
    return written


# ---- the configuration file --------------------------------------------------------------------------------------

def rewrite_conf(text: str, directory: Path | str, ports: dict[int, int] | None = None) -> str:
    """cardroom.conf with its file directory and, optionally, listener ports replaced (``{1883: 41234, ...}``)."""
    text = text.replace(SHIPPED_DIR + "/", str(directory).rstrip("/") + "/")
    for shipped, port in (ports or {}).items():
        text, count = re.subn(rf"(?m)^listener\s+{shipped}\b", f"listener {port}", text)
        if count != 1:
            raise SetupError(f"cardroom.conf: expected one 'listener {shipped}' line")
    return text


# ---- putting it together -----------------------------------------------------------------------------------------

@dataclass
class Result:
    directory: Path
    room: CardRoom
    generated: dict[str, str]  # username → password, for new users without a given one
    changed: list[str]  # usernames whose password was set
    removed: list[str]
    tls_files: list[str]


def setup(directory: Path, *, prefix: str | None = None, tables: list[str] = (), users: list[User] = (),
          rooms: list[Path] = (), passwords: dict[str, str] | None = None, remove_tables: list[str] = (), remove_users: list[str] = (),
          tls: bool = False, tls_hosts: list[str] | None = None, tls_ips: list[str] | None = None,
          tls_renew: bool = False, bridge_to: str | None = None, bridge_user: str | None = None,
          bridge_password_given: str | None = None, bridge_cafile: Path | None = None,
          remove_bridge: bool = False) -> Result:
    """Merge the changes into ``directory``'s cardroom.json, then bring passwd, acl and TLS files in line."""
    passwords = dict(passwords or {})
    manifest = directory / MANIFEST
    room = CardRoom.load(manifest) if manifest.exists() else CardRoom()
    # Everything is checked before anything is written.
    if prefix is not None:
        room.prefix = check_prefix(prefix)
    for t in tables:
        room.add_table(t)
    for u in users:
        room.add_user(u)
    for path in rooms:
        room.add_user(room_user_from_file(Path(path), room.prefix))
    for t in remove_tables:
        if t not in room.tables:
            raise SetupError(f"--remove-table {t!r}: no such table")
        room.tables.remove(t)
    for name in remove_users:
        if name not in room.users:
            raise SetupError(f"--remove-user {name!r}: no such user" + (" (remove a table with --remove-table)"
                                                                        if name.startswith(TABLE_USER_PREFIX) else ""))
        del room.users[name]
    if remove_bridge:
        room.bridge = None
    elif bridge_to or bridge_user or bridge_password_given or bridge_cafile:
        if not (bridge_to or room.bridge) or not (bridge_user or room.bridge):
            raise SetupError("a bridge needs --bridge-to HOST:PORT and --bridge-user NAME (the room's user at the "
                             "central broker)")
        if bridge_cafile is not None and not Path(bridge_cafile).is_file():
            raise SetupError(f"--bridge-cafile {bridge_cafile}: no such file")
        room.bridge = Bridge(check_address(bridge_to) if bridge_to else room.bridge.address,
                             check_username(bridge_user) if bridge_user else room.bridge.username,
                             bridge_cafile is not None or bool(room.bridge and room.bridge.cafile))
    secret = bridge_password_given or bridge_password(directory / BRIDGE_CONF)
    if room.bridge and (not secret or any(ch in secret for ch in "\r\n\0 #")):
        raise SetupError("the bridge needs --bridge-password SECRET: the password of the room's user at the central "
                         "broker, on one line, without spaces or '#'")
    room.validate()
    wanted = {u.name for u in room.all_users()}
    for name, password in passwords.items():
        if name not in wanted:
            raise SetupError(f"--password for {name!r}: no such user")
        if not password or any(ch in password for ch in "\r\n\0"):
            raise SetupError(f"password for {name!r} refused: it must be non-empty and on one line")
    find_mosquitto_passwd()

    directory.mkdir(parents=True, exist_ok=True)
    gid = _mosquitto_group()
    if gid is not None:
        os.chown(directory, 0, gid)
    os.chmod(directory, 0o750 if gid is not None else 0o700)
    passwd = directory / PASSWD
    existing = password_users(passwd)
    generated, changed = {}, []
    for name in sorted(wanted):
        if name in passwords:
            set_password(passwd, name, passwords[name])
            changed.append(name)
        elif name not in existing:
            generated[name] = generate_password()
            set_password(passwd, name, generated[name])
            changed.append(name)
    removed = sorted(existing - wanted)
    for name in removed:
        delete_user(passwd, name)
    if not passwd.exists():
        passwd.touch()
    _protect(passwd, 0o640)
    _write(directory / ACL, render_acl(room))
    if bridge_cafile is not None:
        _write(directory / BRIDGE_CA, Path(bridge_cafile).read_text(), 0o644)
    if room.bridge:
        _write(directory / BRIDGE_CONF, render_bridge(room, directory, secret))  # (a password: the broker's only)
    else:
        (directory / BRIDGE_CONF).unlink(missing_ok=True)
    _write(manifest, room.dump())
    tls_files = []
    # Both TLS listeners (MQTT on 8883, the overlays' wss:// on 9001) need the certificate: Mosquitto does not
    # start without it. One of your own, already in place, is kept.
    if tls or tls_renew or not ((directory / SERVER_CERT).exists() and (directory / SERVER_KEY).exists()):
        hosts, ips = default_tls_names()
        tls_files = make_tls(directory, list(dict.fromkeys([*(tls_hosts or []), *hosts])),
                             list(dict.fromkeys([*(tls_ips or []), *ips])), renew=tls_renew)
    install_overlay(directory)
    return Result(directory, room, generated, changed, removed, tls_files)


def install_overlay(directory: Path) -> Path:
    """The overlay page, and the floor's console in its console/, into ``directory``/overlay, which cardroom.conf's
    WebSocket listener serves (http_dir): replaced as a whole, so an upgrade leaves no stale file behind. Public
    files, readable by mosquitto."""
    target = directory / "overlay"
    staging = directory / ".overlay-new"
    shutil.rmtree(staging, ignore_errors=True)
    install_pages(staging)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target


def describe(result: Result) -> str:
    out = [f"{result.directory}: {len(result.room.tables)} table(s), {len(result.room.all_users())} user(s), "
           f"topic prefix {result.room.prefix!r}"]
    for user in result.room.all_users():
        scope = ", ".join(user.tables) if user.tables else "every table"
        if user.room:
            scope = f"room {user.room.room_id}: the {user.room.feed} feed, writes {user.room.stats_root}/#"
        note = ""
        if user.name in result.generated:
            note = f"  password: {result.generated[user.name]}"
        elif user.name in result.changed:
            note = "  password set"
        out.append(f"  {user.name:<24} {user.role:<8} {scope}{note}")
    for name in result.removed:
        out.append(f"  {name:<24} removed")
    if result.room.bridge:
        out.append(f"  bridge to {result.room.bridge.address} as {result.room.bridge.username}: "
                   f"{result.directory / BRIDGE_CONF} (restart mosquitto to apply)")
    if result.generated:
        out.append("The generated passwords above are shown this once and stored nowhere: hand them out now.")
    for name in result.tls_files:
        out.append(f"  wrote {result.directory / name}")
    out.append(f"  overlay page in {result.directory / 'overlay'}, for wss://BROKER:9001/ (docs/overlay.md); a "
               "broadcast machine must trust the broker's certificate (docs/broker.md, \"Overlays over TLS\")")
    out.append(f"  floor's console in {result.directory / 'overlay' / CONSOLE_PAGE}, for floor and dealer users "
               "(docs/console.md)")
    out.append(f"  the room's leaderboard in {result.directory / 'overlay' / 'leaderboard.html'} (docs/overlay.md), "
               f"the floor's overview of every table in {result.directory / 'overlay' / 'console' / 'overview.html'} "
               "(docs/overview.md)")
    out.append("Apply: sudo systemctl reload mosquitto (restart it the first time, after installing cardroom.conf)")
    return "\n".join(out)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rfid-table broker-setup",
        description="Create or update the card room broker's password file, ACL and TLS certificate "
                    "(for config/mosquitto/cardroom.conf). See docs/broker.md.")
    # Required: a run without it would write into the system's Mosquitto directory unasked.
    p.add_argument("--dir", type=Path, required=True,
                   help=f"the files' directory (the card room's broker: {DEFAULT_DIR}, which cardroom.conf names)")
    p.add_argument("--prefix", help="the tables' MQTT topic prefix (default rfid-table, or what was set before)")
    p.add_argument("--table", action="append", default=[], metavar="ID", help="add a table and its user table-ID")
    p.add_argument("--user", action="append", default=[], metavar="ROLE:NAME[:TABLE,...]",
                   help=f"add a user; roles: {', '.join(USER_ROLES)}; dealers need their table(s)")
    p.add_argument("--room", action="append", default=[], type=Path, metavar="ROOM.toml",
                   help="add the user of a room service (rfid-table room) from its room file: its [mqtt] username "
                        "reads the tables' feed the file names and writes the room's statistics (docs/room.md)")
    p.add_argument("--password", action="append", default=[], metavar="NAME=SECRET",
                   help="set a user's password (otherwise new users get a generated one, printed once)")
    p.add_argument("--remove-table", action="append", default=[], metavar="ID")
    p.add_argument("--remove-user", action="append", default=[], metavar="NAME")
    p.add_argument("--tls", action="store_true",
                   help="make a private CA if missing, even beside a certificate of your own (a missing server "
                        "certificate is always made)")
    p.add_argument("--tls-host", action="append", default=[], metavar="NAME",
                   help="a DNS name clients use for the broker (this host's name, <name>.local and localhost "
                        "are added)")
    p.add_argument("--tls-ip", action="append", default=[], metavar="ADDRESS",
                   help="an IP address clients use for the broker (127.0.0.1 and ::1 are added)")
    p.add_argument("--tls-renew", action="store_true", help="make a new server certificate (the CA is kept)")
    p.add_argument("--bridge-to", metavar="HOST:PORT",
                   help="bridge this room's broker to a central one, at its TLS listener (docs/broker.md)")
    p.add_argument("--bridge-user", metavar="NAME", help="the room's bridge user at the central broker")
    p.add_argument("--bridge-password", metavar="SECRET", help="its password (kept from the last run if not given)")
    p.add_argument("--bridge-cafile", type=Path, metavar="CA",
                   help="the central broker's CA certificate (copied here; without it the system's CAs)")
    p.add_argument("--remove-bridge", action="store_true", help="remove the bridge")
    p.add_argument("--install-conf", type=Path, metavar="PATH",
                   help="also write cardroom.conf, pointing at --dir, to PATH "
                        "(e.g. /etc/mosquitto/conf.d/cardroom.conf)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        users = [parse_user_spec(spec) for spec in args.user]
        passwords = {}
        for item in args.password:
            name, sep, secret = item.partition("=")
            if not sep:
                raise SetupError(f"--password {name!r}: expected NAME=SECRET")
            passwords[name] = secret
        result = setup(args.dir, prefix=args.prefix, tables=args.table, users=users, rooms=args.room,
                       passwords=passwords,
                       remove_tables=args.remove_table, remove_users=args.remove_user, tls=args.tls,
                       tls_hosts=args.tls_host, tls_ips=args.tls_ip, tls_renew=args.tls_renew,
                       bridge_to=args.bridge_to, bridge_user=args.bridge_user,
                       bridge_password_given=args.bridge_password, bridge_cafile=args.bridge_cafile,
                       remove_bridge=args.remove_bridge)
        if args.install_conf:
            args.install_conf.write_text(rewrite_conf(CARDROOM_CONF.read_text(), args.dir))
            os.chmod(args.install_conf, 0o644)
            installed_bridge = args.install_conf.with_name(INSTALLED_BRIDGE_CONF)
            if result.room.bridge:
                _write(installed_bridge, (args.dir / BRIDGE_CONF).read_text())
            else:
                installed_bridge.unlink(missing_ok=True)
    except SetupError as exc:
        print(f"rfid-table broker-setup: {exc}", file=sys.stderr)
        return EX_USAGE
    except OSError as exc:
        print(f"rfid-table broker-setup: {exc}", file=sys.stderr)
        return 1
    print(describe(result))
    if args.install_conf:
        print(f"  wrote {args.install_conf}")
    return 0


# ---- a card-room broker for tests and trials ---------------------------------------------------------------------

class CardRoomBroker(PrivateBroker):
    """Runs the shipped cardroom.conf on free ports, with its files from ``directory`` (made by :func:`setup`),
    included from a main file laid out like Debian's /etc/mosquitto/mosquitto.conf."""

    LISTENERS = (1883, 8883, 9001)

    def __init__(self, directory: Path, conf: Path = CARDROOM_CONF):
        self.directory = Path(directory)
        self.conf = conf
        self.host = "127.0.0.1"
        self.ports = {shipped: free_port() for shipped in self.LISTENERS}
        self._dir = tempfile.TemporaryDirectory(prefix="rfid-table-cardroom-")
        self.log_path = Path(self._dir.name) / "mosquitto.log"
        self._proc: subprocess.Popen | None = None

    @property
    def mqtt_port(self) -> int:
        return self.ports[1883]

    @property
    def tls_port(self) -> int:
        return self.ports[8883]

    @property
    def ws_port(self) -> int:
        return self.ports[9001]

    def overlay_url(self, table: str, **query: str) -> str:
        """The overlay page on the WebSocket listener, over TLS; the overlay user's login goes in ``query``."""
        return f"https://{self.host}:{self.ws_port}/index.html?" + urlencode({"table": table, **query})

    def console_url(self, table: str, **query: str) -> str:
        """The floor's console on the WebSocket listener, over TLS; a floor or dealer user logs in on the page (or
        ``username``, ``password`` and ``role`` in ``query``)."""
        return f"https://{self.host}:{self.ws_port}/{CONSOLE_PAGE}?" + urlencode({"table": table, **query})

    def start(self, timeout_s: float = 10.0) -> "CardRoomBroker":
        work = Path(self._dir.name)
        os.chmod(work, 0o755)  # mosquitto drops root privileges and must still read its files
        (work / "conf.d").mkdir(exist_ok=True)  # (started again after a stop: the same ports and files)
        data = work / "data"
        data.mkdir(exist_ok=True)
        if os.geteuid() == 0:
            try:
                shutil.chown(data, "mosquitto", "mosquitto")
            except (LookupError, OSError):
                os.chmod(data, 0o777)
        (work / "conf.d" / "cardroom.conf").write_text(rewrite_conf(self.conf.read_text(), self.directory,
                                                                    self.ports))
        bridge = self.directory / BRIDGE_CONF
        if bridge.exists():  # as --install-conf puts it beside cardroom.conf
            shutil.copyfile(bridge, work / "conf.d" / INSTALLED_BRIDGE_CONF)
        main = work / "mosquitto.conf"
        main.write_text(f"persistence true\npersistence_location {data}/\nlog_dest stderr\n"
                        f"include_dir {work / 'conf.d'}\n")
        log = open(self.log_path, "wb")
        self._proc = subprocess.Popen([find_mosquitto(), "-c", str(main)], stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + timeout_s
        waiting = set(self.ports.values())
        while waiting and time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise BrokerError(f"mosquitto exited at start: {self.log()[-2000:]}")
            for port in list(waiting):
                try:
                    socket.create_connection((self.host, port), timeout=0.2).close()
                    waiting.discard(port)
                except OSError:
                    pass
            if waiting:
                time.sleep(0.05)
        if waiting:
            self.stop()
            raise BrokerError(f"mosquitto did not listen on ports {sorted(waiting)} within {timeout_s} s")
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def reload(self) -> None:
        """What ``systemctl reload mosquitto`` does: re-read the password file and the ACL."""
        self._proc.send_signal(signal.SIGHUP)



if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
