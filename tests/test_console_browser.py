"""The floor's console in a real browser: headless Chromium opens the copy of console/ that broker-setup installs, as
a local file with the card room broker's wss:// address (as a tablet must with Debian's Mosquitto 2.0.11,
docs/broker.md), and logs in as the card room's floor and dealer users. A real Mosquitto runs cardroom.conf with
broker-setup's users, ACL and certificate; `rfid-table sim` plays a table whose dealer makes errors, with its own
login. The pages are tapped (touch events at the element's place on the screen) and typed into as a floor person
does, sized as a 10" tablet (1280×800 landscape, 800×1280 portrait).

A floor user answers a waiting misdeal with one tap and the table's floor_ruling follows; the second floor tablet
sees the item go, with the reason. A dealer sees no floor-only command, and the broker refuses one sent anyway. A
refused command shows the field and the table's reason. The pages come back by themselves after a broker restart.
What a hostile feed sends is shown as text or dropped, one message at a time; a command added to the schema gets its
form; the demo's private broker serves the page with its login in the address. A screenshot of the floor's tablet
goes to $TEST_ARTIFACTS_DIR (default: test-output/ in the checkout): docs/console.png is that picture.

Chromium is driven as tests/browser.py does.
"""

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from browser import Chromium, needs_chromium
from conftest import ROOT, TABLE_10
from rfid_table.config.table import MqttSettings
from rfid_table.mqtt import make_client
from rfid_table.ops import broker_setup
from rfid_table.ops.broker import PrivateBroker, install_pages
from rfid_table.package_data import SCHEMA_DIR

pytestmark = needs_chromium

TABLE = "main-1"  # config/table-10.toml: no chips, so the simulated dealer also misdeals in ways the floor rules on
FAKE = "fake-1"  # a table whose feed the test writes itself
P = "rfid-table"
PASSWORDS = {f"table-{TABLE}": "table secret", f"table-{FAKE}": "fake secret", "floor-1": "floor one",
             "floor-2": "floor two", "floor-3": "floor three", "floor-test": "floor test", "dealer-1": "dealer one"}
NAMES = {1: "Anna Müller", 2: "Bo Li", 3: "Chris O'Neil"}
LANDSCAPE, PORTRAIT = (1280, 800), (800, 1280)
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS_DIR") or ROOT / "test-output")
SCHEMA = json.loads((SCHEMA_DIR / "command.schema.json").read_text())


def wait_until(condition, what, timeout_s: float = 20.0, every_s: float = 0.1):
    """``condition()`` once it is true; ``what`` (text, or a function giving it) says what did not come."""
    deadline = time.monotonic() + timeout_s
    while not (got := condition()):
        assert time.monotonic() < deadline, what() if callable(what) else what
        time.sleep(every_s)
    return got


class Tablet:
    """A console page in a tab of the shared Chromium, as big as a 10" tablet, with touch."""

    def __init__(self, browser: Chromium, url: str, size: tuple[int, int]):
        self.browser = browser
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        browser.tabs[self.session] = target
        browser.call("Emulation.setDeviceMetricsOverride", {"width": size[0], "height": size[1], "deviceScaleFactor": 1,
                                                            "mobile": False}, self.session)
        browser.call("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5}, self.session)
        browser.call("Page.enable", {}, self.session)
        browser.call("Page.navigate", {"url": url}, self.session)
        self.wait("!!window.consoleState", f"{url} did not load the console")

    def eval(self, expression: str):
        return self.browser.evaluate(self.session, expression)

    def eval_async(self, expression: str, timeout_s: float = 20):
        """An expression whose value is a promise: what it resolves to."""
        result = self.browser.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                        "returnByValue": True}, self.session, timeout_s=timeout_s)
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def wait(self, expression: str, what: str, timeout_s: float = 20.0):
        return wait_until(lambda: self.eval(expression),
                          lambda: f"{what}: {self.eval('document.body && document.body.innerText')}"[:3000], timeout_s)

    def tap(self, selector: str) -> None:
        """A finger on the element's middle: it must be on screen and on top there (a moment to settle if the live
        table has just moved it)."""
        x, y = wait_until(lambda: isinstance(place := self._place(selector), list) and place,
                          lambda: f"cannot tap {selector}: {self._place(selector)}", 2.0)
        self.browser.call("Page.bringToFront", {}, self.session)  # input goes to the tab in front
        self.browser.call("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]},
                          self.session)
        self.browser.call("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []}, self.session)

    def _place(self, selector: str) -> list | str:
        """Where the element's middle is on screen once scrolled into view, or why it cannot be tapped."""
        return self.eval(f"""(() => {{
          const e = document.querySelector({json.dumps(selector)});
          if (!e) return "no such element";
          e.scrollIntoView({{block: "center"}});
          const r = e.getBoundingClientRect();
          const x = r.left + r.width / 2, y = r.top + r.height / 2;
          const hit = document.elementFromPoint(x, y);
          return hit && e.contains(hit) ? [x, y] : `covered by ${{hit && hit.outerHTML.slice(0, 100)}}`;
        }})()""")

    def type(self, selector: str, text: str) -> None:
        """Tap into a text field, select what it holds and type over it."""
        self.tap(selector)
        self.eval(f"document.querySelector({json.dumps(selector)}).select()")
        self.browser.call("Input.insertText", {"text": text}, self.session)

    def text(self, selector: str) -> str | None:
        return self.eval(f"(document.querySelector({json.dumps(selector)}) || {{}}).textContent || null")

    def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.browser.screenshot(self.session, path)

    def close(self) -> None:
        self.browser.close_tab(self.session)


def page_url(room, table: str, **query: str) -> str:
    """broker-setup's copy of the console, as a local file, with the broker's wss:// address."""
    page = (room.directory / "overlay" / "console" / "index.html").as_uri()
    return page + "?" + "&".join(f"{k}={urllib.request.quote(v)}" for k, v in
                                 {"table": table, "broker": f"wss://127.0.0.1:{room.ws_port}/", **query}.items())


def login_query(user: str, role: str = "floor") -> dict[str, str]:
    return {"username": user, "password": PASSWORDS[user], "role": role}


class Observer:
    """The table's secure events and this user's replies, as the test's own floor user sees them."""

    def __init__(self, room):
        self.user = "floor-test"
        self.events: list[dict] = []
        self.replies: list[dict] = []
        self.online = threading.Event()
        self.cond = threading.Condition()
        self.client = make_client(MqttSettings(host="127.0.0.1", port=room.mqtt_port, username=self.user,
                                               password=PASSWORDS[self.user]), self.user)
        self.client.reconnect_delay_set(min_delay=1, max_delay=1)  # back within a second of the broker's restart
        base = f"{P}/{TABLE}"
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe(
            [(f"{base}/secure/events", 1), (f"{base}/status", 1), (f"{base}/replies/floor/{self.user}", 1)])
        self.client.on_message = self._message
        self.client.connect("127.0.0.1", room.mqtt_port)
        self.client.loop_start()

    def _message(self, client, userdata, message) -> None:
        if message.topic.endswith("/status"):
            if message.payload == b"online":
                self.online.set()
            return
        body = json.loads(message.payload)
        with self.cond:
            (self.replies if "/replies/" in message.topic else self.events).append(body)
            self.cond.notify_all()

    def wait_event(self, match, what: str, timeout_s: float = 20.0) -> dict:
        with self.cond:
            found = self.cond.wait_for(lambda: next((e for e in self.events if match(e)), None), timeout_s)
        assert found, f"{what}: {[e['type'] for e in self.events[-30:]]}"
        return found

    def command(self, body: dict) -> dict:
        """Send a command as the test's floor user; the reply."""
        self.client.publish(f"{P}/{TABLE}/commands/floor/{self.user}", json.dumps(body).encode(), qos=1)
        with self.cond:
            reply = self.cond.wait_for(lambda: next((r for r in self.replies if r["id"] == body["id"]), None), 20)
        assert reply, f"no reply to {body}"
        return reply

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture(scope="module")
def card_room():
    """The card room's broker (cardroom.conf) with the files broker-setup makes: two tables, floor users, a dealer
    of the first table, and the certificate of its TLS listeners."""
    # Not pytest's tmp_path: as root, mosquitto drops to the user 'mosquitto', who cannot enter that tree.
    work = Path(tempfile.mkdtemp(prefix="rfid-table-console-room-"))
    os.chmod(work, 0o755)
    try:
        directory = work / "cardroom"
        argv = ["--dir", str(directory), "--table", TABLE, "--table", FAKE, "--user", f"dealer:dealer-1:{TABLE}"]
        for user in PASSWORDS:
            if user.startswith("floor-"):
                argv += ["--user", f"floor:{user}"]
        for user, password in PASSWORDS.items():
            argv += ["--password", f"{user}={password}"]
        with redirect_stdout(io.StringIO()):
            assert broker_setup.main(argv) == 0
        with broker_setup.CardRoomBroker(directory) as room:
            yield room
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def browser(card_room, tmp_path_factory):
    """Chromium that accepts the card room broker's certificate, as a tablet that trusts its ca.crt does: that
    certificate's key is pinned (--ignore-certificate-errors-spki-list); any other certificate is still checked."""
    spki = subprocess.run(f"openssl x509 -in {card_room.directory / 'server.crt'} -noout -pubkey | openssl pkey "
                          "-pubin -outform der | openssl dgst -sha256 -binary | base64", shell=True, check=True,
                          capture_output=True, text=True).stdout.strip()
    running = Chromium(tmp_path_factory.mktemp("console-chromium"),
                       extra_args=(f"--ignore-certificate-errors-spki-list={spki}",))
    yield running
    running.close()


@pytest.fixture(scope="module")
def table(card_room, browser, tmp_path_factory):
    """The simulated table with its own login, playing on; the test's floor user names three players; three tablets
    follow it: floor-1 (landscape, logged in through the form), floor-2 (portrait) and the dealer (landscape)."""
    work = tmp_path_factory.mktemp("console")
    config = TABLE_10.read_text()
    for line, login in (('# username = "table-main-1"', f'username = "table-{TABLE}"'),
                        ('# password = "..."', f'password = "{PASSWORDS["table-" + TABLE]}"')):
        assert line in config
        config = config.replace(line, login)
    (work / "table.toml").write_text(config)
    observer = Observer(card_room)
    log = work / "sim.log"
    sim = subprocess.Popen(
        [sys.executable, "-m", "rfid_table.cli", "sim", "--config", str(work / "table.toml"), "--host", "127.0.0.1",
         "--port", str(card_room.mqtt_port), "--hands", "0", "--speed", "1", "--pace", "1", "--players", "3",
         "--link", "direct", "--seed", "26", "--dealer-errors", "1"],
        stdout=open(log, "wb"), stderr=subprocess.STDOUT)
    tablets = {}
    try:
        floor1 = tablets["floor-1"] = Tablet(browser, page_url(card_room, TABLE), LANDSCAPE)
        floor1.wait("!document.getElementById('login').hidden", "no login form")
        floor1.tap("#login input[name=role][value=floor]")
        floor1.type("#login input[name=username]", "floor-1")
        floor1.type("#login input[name=password]", PASSWORDS["floor-1"])
        floor1.tap("#login button[type=submit]")
        tablets["floor-2"] = Tablet(browser, page_url(card_room, TABLE, **login_query("floor-2")), PORTRAIT)
        tablets["dealer-1"] = Tablet(browser, page_url(card_room, TABLE, **login_query("dealer-1", "dealer")),
                                     LANDSCAPE)
        for tablet in tablets.values():
            tablet.wait("consoleState.connected", "the page did not connect")
        assert observer.online.wait(20), log.read_text()[-2000:]
        for seat, name in NAMES.items():
            assert observer.command({"id": f"name-{seat}", "command": "seat_player", "seat": seat, "name": name})["ok"]
        yield {"room": card_room, "observer": observer, "tablets": tablets, "log": log, "sim": sim}
    finally:
        for tablet in tablets.values():
            tablet.close()
        sim.terminate()
        sim.wait(10)
        observer.close()


def items_on(tablet: Tablet) -> list[dict]:
    """What the page shows waiting for the floor: per item, its irregularity, text and answer buttons."""
    return tablet.eval("""[...document.querySelectorAll('#items .item')].map(e => ({
        id: Number(e.dataset.irregularity), text: e.innerText,
        answers: [...e.querySelectorAll('button[data-answer]')].map(b => b.dataset.answer),
        ruling: (consoleState.items.get(Number(e.dataset.irregularity)) || {}).ruling}))""")


def next_waiting_misdeal(table, after: int = 0) -> dict:
    """The next misdeal that waits for the floor, once all three tablets show it: its id, and each tablet's item."""
    tablets = table["tablets"]

    def shown():
        seen = {name: {i["id"]: i for i in items_on(t) if i["ruling"] == "misdeal" and i["id"] > after}
                for name, t in tablets.items()}
        common = set.intersection(*(set(s) for s in seen.values()))
        return common and {"id": min(common), **{name: s[min(common)] for name, s in seen.items()}}

    return wait_until(shown, lambda: f"no misdeal waited for the floor: {table['log'].read_text()[-1500:]}", 90, 0.05)


@pytest.fixture(scope="module")
def waiting_misdeal(table):
    """The first misdeal that waits for the floor, as the three tablets show it; the floor's tablet is photographed
    then."""
    found = next_waiting_misdeal(table)
    shot = ARTIFACTS / "console.png"
    table["tablets"]["floor-1"].screenshot(shot)
    print(f"\nconsole screenshot: {shot}")
    return {**found, "shot": shot}


def test_a_floor_user_answers_a_waiting_misdeal_by_tapping_and_the_other_tablet_sees_it_go(table, waiting_misdeal):
    floor1, floor2 = table["tablets"]["floor-1"], table["tablets"]["floor-2"]
    observer = table["observer"]
    found, note = waiting_misdeal, "the card went to seat 2 first"
    for _ in range(3):  # (a ruling lapses when its hand ends: one that lapsed under the finger is not this test's)
        ident = found["id"]
        assert found["floor-1"]["answers"] == ["confirm", "override"] == found["floor-2"]["answers"]
        assert "Proposed ruling: misdeal" in found["floor-1"]["text"]
        assert f"Hand {observer_hand(observer, ident)}" in found["floor-1"]["text"]
        item = f'#items .item[data-irregularity="{ident}"]'
        floor1.type(f"{item} input.note", note)
        floor1.tap(f'{item} button[data-answer="confirm"]')
        ending = observer.wait_event(lambda e: e.get("irregularity") == ident and e["type"] in (
            "floor_ruling", "irregularity_resolved"), f"nothing settled #{ident}")
        if ending["type"] == "floor_ruling":
            break
        found = next_waiting_misdeal(table, after=ident)
    else:
        pytest.fail("every misdeal lapsed before the tap")
    assert (ending["decision"], ending["by"], ending["note"]) == ("confirmed", "floor/floor-1", note)
    # the table's reply came to the page: accepted, with the seq of the last event it caused (a misdeal may follow)
    assert floor1.wait(f"consoleState.replies.find(r => r.ok && r.seq >= {ending['seq']})", "no reply")
    # gone from both tablets, each saying why
    for tablet in (floor1, floor2):
        tablet.wait(f"!document.querySelector('{item}')", "the item stayed")
        gone = tablet.text(f'#settled [data-irregularity="{ident}"]')
        assert gone and "confirmed by floor/floor-1" in gone and note in gone, gone
    assert waiting_misdeal["shot"].stat().st_size > 20_000


def observer_hand(observer, ident: int) -> int:
    return observer.wait_event(lambda e: e["seq"] == ident, f"no event {ident}")["hand"]


def test_a_dealer_sees_no_floor_only_command_and_the_broker_refuses_one_sent_anyway(table, waiting_misdeal):
    dealer, floor1 = table["tablets"]["dealer-1"], table["tablets"]["floor-1"]
    observer = table["observer"]
    defs = {name: d for name, d in SCHEMA["$defs"].items() if "x-roles" in d}
    answers = {name for name, d in defs.items() if "irregularity" in d["properties"]}  # answered from the list
    offered = "[...document.querySelectorAll('#command-list button[data-command]')].map(b => b.dataset.command)"
    floor_only = {name for name, d in defs.items() if d["x-roles"] == ["floor"]} - answers
    assert {"seat_player", "clear_seat", "set_stacks", "select_deck", "set_level"} <= floor_only
    assert set(dealer.eval(offered)) == {name for name, d in defs.items() if "dealer" in d["x-roles"]} - answers
    assert set(floor1.eval(offered)) == set(defs) - answers
    # what waits shows on the dealer's tablet too, without an answer
    seen = waiting_misdeal["dealer-1"]
    assert seen["answers"] == [] and "The floor answers this." in seen["text"]
    assert "Proposed ruling: misdeal" in seen["text"]
    assert dealer.eval("document.querySelectorAll('#items input.note').length") == 0
    # Sent anyway with the dealer's login, on the floor's topic: the broker refuses it (PUBACK 0x87).
    refused = dealer.eval_async(f"""new Promise((resolve) => client.publish(
        "{P}/{TABLE}/commands/floor/dealer-1",
        JSON.stringify({{id: "anyway-1", command: "seat_player", seat: 5, name: "Eve Anyway"}}), {{qos: 1}},
        (err) => resolve(err ? err.code : 0)))""")
    assert refused == 135  # not authorised
    # and on the dealer's own topic: the table refuses it, and the page says so as the table does
    shown = dealer.eval_async("""new Promise((resolve) => send({command: "clear_seat", seat: 1},
        {show: (kind, text) => kind !== "wait" && resolve([kind, text]), busy() {}, invalid() {}}))""")
    assert shown[0] == "refused" and shown[1].startswith("Refused — role: 'dealer' may not send clear_seat"), shown
    # neither reached the table: a marker sent after both comes back, and nothing was seated or cleared before it
    assert observer.command({"id": "marker-1", "command": "floor_call", "note": "marker"})["ok"]
    observer.wait_event(lambda e: e["type"] == "floor_call" and e.get("note") == "marker", "no marker")
    assert not [e for e in observer.events if e["type"] == "player_seated" and e["name"] == "Eve Anyway"]
    assert not [e for e in observer.events if e["type"] == "seat_cleared"]
    assert dealer.text('#seats .seat[data-seat="1"] .name') == NAMES[1]
    # what the dealer may send, sent from its form: answered
    dealer.tap('#command-list button[data-command="ping"]')
    dealer.tap('.form[data-command="ping"] button[data-send="ping"]')
    assert dealer.wait("""(() => { const r = document.querySelector('.form[data-command="ping"] .reply');
                                   return r.classList.contains('ok') && r.textContent; })()""", "no answer to ping") \
        == "Accepted."


def test_a_refused_command_shows_its_field_and_the_tables_reason(table):
    floor2 = table["tablets"]["floor-2"]
    form = '.form[data-command="seat_player"]'
    reply = f"document.querySelector('{form} .reply')"
    floor2.tap('#command-list button[data-command="seat_player"]')
    floor2.tap(f'{form} [data-field="seat"] button[data-value="4"]')
    floor2.type(f'{form} [data-field="name"] input', "<b>Dana</b>")
    floor2.tap(f'{form} button[data-send="seat_player"]')
    text = floor2.wait(f"{reply}.classList.contains('refused') && {reply}.textContent", "no refusal shown")
    refusal = floor2.eval("consoleState.replies.find(r => !r.ok)")
    assert refusal["field"] == "name" and text == f"Refused — name: {refusal['error']}"
    assert floor2.eval(f"document.querySelector('{form} [data-field=\"name\"] input').classList.contains('invalid')")
    # put right, and sent again: accepted, and every tablet shows the player
    floor2.type(f'{form} [data-field="name"] input', "Dana Park")
    floor2.tap(f'{form} button[data-send="seat_player"]')
    assert floor2.wait(f"{reply}.classList.contains('ok') && {reply}.textContent", "not accepted").startswith(
        "Accepted (event ")
    for tablet in table["tablets"].values():
        tablet.wait("(document.querySelector('#seats .seat[data-seat=\"4\"] .name') || {}).textContent === "
                    "'Dana Park'", "the new player is not shown")
    # and a field left empty is asked for before anything is sent
    floor2.tap(f'{form} button[data-send="seat_player"]')
    assert floor2.eval(f"{reply}.textContent") == "Not sent — seat: required; name: required"


def test_a_misdeal_from_the_commands_asks_once_more(table):
    """A command that costs the hand when sent by mistake: the first tap asks, Cancel sends nothing."""
    floor1 = table["tablets"]["floor-1"]
    form = '.form[data-command="misdeal"]'
    sent = floor1.eval("consoleState.replies.length")
    floor1.tap('#command-list button[data-command="misdeal"]')
    floor1.tap(f'{form} button[data-send="misdeal"]')
    assert floor1.eval(f"!document.querySelector('{form} .confirming').hidden")
    assert "The hand is void" in floor1.text(f"{form} .confirming")
    floor1.tap(f'{form} .confirming button:not([data-confirm])')  # Cancel
    assert floor1.eval(f"document.querySelector('{form} .confirming').hidden && "
                       f"!document.querySelector('{form} .reply').textContent")
    assert floor1.eval("consoleState.replies.length") == sent
    floor1.tap('#command-list button[data-command="misdeal"]')  # closed again


def test_touch_targets_and_type_are_large_enough_on_a_tablet_either_way(table):
    for name in ("floor-1", "floor-2"):  # landscape, portrait
        tablet = table["tablets"][name]
        tablet.tap('#command-list button[data-command="set_stacks"]')  # the largest form open
        measured = tablet.eval("""(() => {
          const visible = (e) => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden';
          const small = [...document.querySelectorAll('button, input')].filter(visible).map(e => {
            const r = e.getBoundingClientRect();
            return {what: e.outerHTML.slice(0, 80), w: r.width, h: r.height};
          }).filter(r => r.w < 48 || r.h < 48);
          const size = (sel) => parseFloat(getComputedStyle(document.querySelector(sel)).fontSize);
          return {small, body: size('body'), button: size('#command-list button'),
                  overflow: document.documentElement.scrollWidth - innerWidth};
        })()""")
        tablet.tap('#command-list button[data-command="set_stacks"]')
        assert measured["small"] == [], name
        assert measured["body"] >= 18 and measured["button"] >= 18, measured
        assert measured["overflow"] <= 0, name  # nothing to scroll sideways


def test_the_pages_come_back_by_themselves_after_a_broker_restart(table):
    room, tablets = table["room"], table["tablets"]
    before = {name: t.eval("consoleState.snapshot.seq") for name, t in tablets.items()}
    room.stop()
    for tablet in tablets.values():
        tablet.wait("!consoleState.connected && document.getElementById('status').textContent === 'reconnecting…'",
                    "the page did not notice the broker was gone")
    room.start()
    for name, tablet in tablets.items():  # connected again, and the table's newer state with it
        tablet.wait(f"consoleState.connected && consoleState.connects >= 2 && "
                    f"consoleState.snapshot.seq > {before[name]}", "the page did not come back with the table", 40)
    floor1 = tablets["floor-1"]
    floor1.tap('#command-list button[data-command="ping"]')
    floor1.tap('.form[data-command="ping"] button[data-send="ping"]')
    assert floor1.wait("""(() => { const r = document.querySelector('.form[data-command="ping"] .reply');
                                   return r.classList.contains('ok') && r.textContent; })()""", "no answer to ping") \
        == "Accepted."
    assert table["sim"].poll() is None, table["log"].read_text()[-2000:]


def test_the_page_takes_only_what_fits_from_a_hostile_feed(card_room, browser):
    """Whoever may write a table's topics could send the page anything: markup is shown as text, what does not fit
    the schemas is dropped alone, and the next message is taken."""
    fake = make_client(MqttSettings(host="127.0.0.1", port=card_room.mqtt_port, username=f"table-{FAKE}",
                                    password=PASSWORDS[f"table-{FAKE}"]), f"table-{FAKE}")
    fake.connect("127.0.0.1", card_room.mqtt_port)
    fake.loop_start()
    base = f"{P}/{FAKE}"

    def publish(topic: str, body, retain: bool = False) -> None:
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        fake.publish(f"{base}/{topic}", payload, qos=1, retain=retain).wait_for_publish(10)

    markup = "<img src=x onerror=pwned=1>"  # (a name is at most 32 characters)
    snapshot = {"table": FAKE, "seq": 10, "t": 1000.0, "hand": 3, "phase": "preflop", "epoch": "e1", "board": [],
                "seats": [{"seat": 1, "cards": 2, "folded": False, "hole_cards": ["Ah", "Kd"],
                           "player": {"name": markup}},
                          {"seat": 2, "cards": 2, "folded": False, "hole_cards": ["2c", "2d"], "player": None}],
                "betting": None,
                "irregularities": [{"irregularity": 7, "hand": 3, "code": "card_out_of_sequence", "ruling": "misdeal"},
                                   {"irregularity": "8", "hand": 3},  # not a seq: this item alone is dropped
                                   {"irregularity": 9, "rules": [5]},  # a rule that is no text: dropped too
                                   {"irregularity": 6},  # nothing but its id: defaults
                                   {"irregularity": 5, "hand": 3, "code": "four_card_flop", "type": "irregular_card",
                                    "ruling": "floor_picks_burn", "answers": ["floor_pick", "override"],
                                    "candidates": ["Js", "Qs", "Ks", "As"], "lapses": "hand_end"}]}
    tablet = None
    try:
        publish("secure/snapshot", snapshot, retain=True)
        tablet = Tablet(browser, page_url(card_room, FAKE, **login_query("floor-3")), LANDSCAPE)
        tablet.wait("consoleState.connected && consoleState.snapshot", "no snapshot")
        for topic, body in [("secure/snapshot", b"{{{"), ("secure/snapshot", None),
                            ("secure/snapshot", {**snapshot, "seq": 11, "seats": "abc"}),
                            ("status", b"maybe"), ("secure/events", [1, 2]),
                            ("secure/events", {"seq": 10**15, "type": "floor_ruling", "t": 1.0, "hand": 3,
                                               "epoch": "e1", "irregularity": 6}),  # a stray seq: not placed
                            ("secure/events", {"seq": 11, "type": "floor_ruling", "t": 1.0, "hand": 3, "epoch": "e1",
                                               "irregularity": 7, "decision": {"x": 1}}),  # no text: dropped
                            ("replies/floor/floor-3", {"ok": "yes"}),
                            ("secure/events", {"seq": 12, "type": "floor_ruling", "t": 1.0, "hand": 3, "epoch": "e1",
                                               "irregularity": 7, "decision": "confirmed", "result": "misdeal",
                                               "by": f"floor/{markup}"})]:
            publish(topic, body)
        tablet.wait("!document.querySelector('#items .item[data-irregularity=\"7\"]')", "the ruling did not take #7")
        gone = tablet.text('#settled [data-irregularity="7"]')
        assert markup in gone  # as text
        assert tablet.eval("[...document.querySelectorAll('#items .item')].map(e => Number(e.dataset.irregularity))") \
            == [5, 6]  # oldest first (and the stray seq did not settle #6)
        assert "Proposed ruling: the floor decides" in tablet.text('#items .item[data-irregularity="6"]')
        assert tablet.eval("""[...document.querySelectorAll('#items .item[data-irregularity="5"] button')]
                              .map(b => b.dataset.card || b.dataset.answer)""") == ["Js", "Qs", "Ks", "As", "override"]
        assert tablet.text('#seats .seat[data-seat="1"] .name') == markup
        assert tablet.eval("document.querySelectorAll('img').length === 0 && typeof pwned === 'undefined'")
        dropped = tablet.eval("consoleState.dropped")
        for kind in ("secure/snapshot: snapshot", "secure/snapshot: message", "secure/snapshot: irregularity",
                     "status: status", "secure/events: event", "secure/events: floor_ruling",
                     "replies/floor/floor-3: reply"):
            assert dropped.get(f"{base}/{kind}"), (kind, dropped)
        assert tablet.eval("consoleState.resyncs") >= 1 and tablet.eval("consoleState.lastSeq") == 12
        # and the next snapshot that fits is drawn
        publish("secure/snapshot", {**snapshot, "seq": 13, "board": ["Qs", "Jh", "Tc"], "irregularities": []},
                retain=True)
        tablet.wait("[...document.querySelectorAll('#boards .card')].map(c => c.dataset.card).join() === 'Qs,Jh,Tc'",
                    "the next snapshot was not drawn")
        assert tablet.eval("document.querySelectorAll('#items .item').length") == 0
        assert tablet.eval("consoleState.connected") and tablet.text("#status") == "connected"
    finally:
        if tablet is not None:
            tablet.close()
        publish("secure/snapshot", b"", retain=True)
        fake.disconnect()
        fake.loop_stop()


def test_a_command_added_to_the_schema_gets_its_form_without_touching_the_page(table, card_room, browser, tmp_path):
    schema = json.loads(json.dumps(SCHEMA))
    schema["properties"]["command"]["enum"].append("floor_note")
    schema["allOf"].append({"if": {"required": ["command"], "properties": {"command": {"const": "floor_note"}}},
                            "then": {"$ref": "#/$defs/floor_note"}})
    schema["$defs"]["floor_note"] = {
        "title": "floor_note", "x-roles": ["floor"], "description": "Floor only: a note on a seat for the record.",
        "type": "object", "required": ["id", "command", "seat", "note"], "additionalProperties": False,
        "properties": {"id": {"$ref": "#/$defs/command_id"}, "command": {"const": "floor_note"},
                       "seat": {"$ref": "#/$defs/seat"}, "note": {"$ref": "#/$defs/note"},
                       "minutes": {"type": "integer", "minimum": 1}}}
    (tmp_path / "command.schema.json").write_text(json.dumps(schema))
    pages = install_pages(tmp_path / "pages", schema=tmp_path / "command.schema.json")
    url = (pages / "console" / "index.html").as_uri() + f"?table={TABLE}&broker=wss://127.0.0.1:{card_room.ws_port}/"
    tablet = Tablet(browser, url + "&" + "&".join(f"{k}={urllib.request.quote(v)}"
                                                  for k, v in login_query("floor-3").items()), PORTRAIT)
    try:
        tablet.wait("consoleState.connected && consoleState.snapshot", "no table")
        tablet.tap('#command-list button[data-command="floor_note"]')
        form = '.form[data-command="floor_note"]'
        assert tablet.eval(f"[...document.querySelectorAll('{form} [data-field]')].map(f => f.dataset.field)") == [
            "seat", "note", "minutes"]
        assert tablet.eval(f"document.querySelectorAll('{form} [data-field=\"seat\"] button').length") == 10
        assert "(optional)" in tablet.text(f'{form} [data-field="minutes"] .label')
        tablet.tap(f'{form} [data-field="seat"] button[data-value="2"]')
        tablet.type(f'{form} [data-field="note"] input', "asked for a table change")
        tablet.type(f'{form} [data-field="minutes"] input', "5")
        tablet.tap(f'{form} button[data-send="floor_note"]')
        # the table (whose schema has no such command) answers, and the page shows it where it was asked
        text = tablet.wait(f"(() => {{ const r = document.querySelector('{form} .reply'); "
                           "return r.classList.contains('refused') && r.textContent; })()", "no answer", 30)
        assert text.startswith("Refused — command: "), text
    finally:
        tablet.close()


def test_the_card_room_broker_serves_the_console_beside_the_overlay(card_room):
    """broker-setup installs the console where cardroom.conf's http_dir points, with what it loads: a broker that can
    serve pages over TLS (Mosquitto 2.0.22 or later, for a browser) needs no copy on the tablet."""
    import ssl  # noqa: PLC0415 (this test alone speaks TLS itself)

    trusted = ssl.create_default_context(cafile=str(card_room.directory / "ca.crt"))
    url = card_room.console_url(TABLE)
    assert url == f"https://127.0.0.1:{card_room.ws_port}/console/index.html?table={TABLE}"
    served = {}
    for name in ("console/index.html", "console/console.js", "console/command.schema.js", "vendor/mqtt.min.js"):
        with urllib.request.urlopen(f"https://127.0.0.1:{card_room.ws_port}/{name}", timeout=10,
                                    context=trusted) as got:
            assert got.status == 200, name
            served[name] = got.read()
    for name in ("index.html", "console.js"):
        assert served[f"console/{name}"] == (ROOT / "console" / name).read_bytes()
    script = served["console/command.schema.js"].decode()
    assert json.loads(script.split("window.rfidTableCommandSchema = ", 1)[1].rstrip().removesuffix(";")) == SCHEMA


def test_the_demo_broker_serves_the_console_with_its_login_in_the_address(browser):
    """The private broker's WebSocket listener (the demo's) serves the page over HTTP beside the overlay, with the
    overlay's MQTT.js and the command schema; the login in the address logs in, and leaves the address bar."""
    with PrivateBroker() as broker:
        url = broker.console_url("main-9", role="floor")
        assert url.startswith(f"http://127.0.0.1:{broker.ws_port}/console/index.html?")
        for name in ("console/index.html", "console/console.js", "console/command.schema.js", "vendor/mqtt.min.js",
                     "index.html"):
            with urllib.request.urlopen(f"http://127.0.0.1:{broker.ws_port}/{name}", timeout=10) as got:
                assert got.status == 200, name
        tablet = Tablet(browser, url, LANDSCAPE)
        try:
            tablet.wait("consoleState.connected", "the page did not connect")
            assert tablet.text("#who") == "main-9 · floor overlay"
            assert "password" not in tablet.eval("location.href")
            assert tablet.eval("document.querySelectorAll('#command-list button[data-command]').length") > 10
            assert tablet.text("#status") == "waiting for the table"
        finally:
            tablet.close()


def test_a_refused_login_asks_again_and_two_tablets_with_one_user_are_told(card_room, browser):
    """A wrong password: the broker refuses the login and the page asks for it again, rather than try forever. Two
    tablets with one user: the card room's broker lets in one device per user (the username is its client id), so
    each closes the other's connection as it comes back; both say so, and the one left alone settles."""
    tablets = []
    try:
        wrong = Tablet(browser, page_url(card_room, TABLE, username="floor-3", password="guess", role="floor"),
                       LANDSCAPE)
        tablets.append(wrong)
        error = wrong.wait("!document.getElementById('login').hidden && "
                           "document.getElementById('login-error').textContent", "the refusal was not shown")
        assert error.startswith("The broker refused the login of floor-3"), error
        assert wrong.eval("document.getElementById('main').hidden && consoleState.connects === 0")
        wrong.close()
        tablets.remove(wrong)
        for size in (LANDSCAPE, PORTRAIT):
            tablets.append(Tablet(browser, page_url(card_room, TABLE, **login_query("floor-3")), size))
        told = "!document.getElementById('problem').hidden && document.getElementById('problem').textContent"
        for tablet in tablets:
            assert "Is another device logged in as floor-3?" in tablet.wait(told, "the tablet did not say it", 40)
        tablets.pop().close()
        tablets[0].wait("document.getElementById('problem').hidden && consoleState.connected",
                        "the tablet left alone did not settle", 20)
    finally:
        for tablet in tablets:
            tablet.close()
