# The reader's side of protocol v1 (docs/protocol.md): the link (framing, duplicate memory, heartbeats,
# STATUS), the commands, the antenna schedule and the inventory cycles over every front end, one of which may be
# parked on an antenna (PARK, 6.13): its field left on, the tags read there kept quiet.
import gc
import sys
import time

import wire
from pn5180 import AntennaFault, FrontEndError

FIRMWARE_VERSION = (1, 2, 1)
HEARTBEAT_MS = 500
STATUS_MS = 5000
FAULT_REPEAT_MS = 5000
DEFAULT_DWELL_MS = 25
TX_QUEUE_BYTES = 8192
# A parked stack that grows (a quiet round read new tags) is not read whole until this many quiet visits have read
# nothing new, up to a second period: a push is read to its end and seen still (the host waits for two such
# visits, [hal.chips] still_after_reads) before the stack is woken, and a chip taken away is gone from the reads
# all the same, a period later at most.
GROWING_VISITS = 2
FIELD_OFF_MS = 5  # a field reset: off this long, so the tags lose power and their quiet state (NXP's reader
# library, phhalHw.h: PHHAL_HW_FIELD_OFF_DEFAULT, 5 ms)
RSSI_NONE = wire.RSSI_NONE
TECHNOLOGIES = {"iso15693": 1, "iso14443a": 2}  # an antenna's standard (its module's name): tag_technologies bit
_standards = {}


def standard_module(name):
    """The module that reads an antenna's standard (iso15693.py or iso14443a.py), imported when first asked for:
    a reader that runs one standard keeps the other out of the Pico's heap."""
    module = _standards.get(name)
    if module is None:
        module = _standards[name] = __import__(name)
    return module


def log(message):
    # Only to stderr: stdout is the USB link. On the Pico stderr is the same port, so nothing is logged there.
    if sys.platform != "rp2":
        sys.stderr.write(message + "\n")


class Antenna:
    def __init__(self, number, frontend, index, standard="iso15693"):
        self.number = number
        self.frontend = frontend
        self.index = index  # position on its front end's switch
        self.standard = standard  # the tag standard its dwells run: "iso15693" or "iso14443a"
        self.state = None  # its standard's AntennaState, from its first dwell
        self.fault = None  # (code, detail) while faulted
        self.fault_reported_ms = 0


class FrontEnd:
    """One PN5180 and its antenna switch; scans one antenna at a time."""

    def __init__(self, chip, switch, limits):
        self.chip = chip
        self.switch = switch
        self.limits = limits  # AGC: (open below, detuned above, short above)
        self.queue = []  # (antenna, dwell_ms) still to scan in this pass
        self.job = None  # the generator scanning the current antenna
        self.antenna = None
        self.seen = None
        self.field_on = None  # the parked antenna whose field is left on between its visits (PARK, 6.13)


class Outputs:
    """LEDs and the buzzer: patterns run from the main loop (SET_OUTPUT, 6.3)."""

    PERIOD = {2: 1000, 3: 250}

    def __init__(self, leds, buzzer):
        self.pins = {(1, i): pin for i, pin in enumerate(leds)}
        if buzzer is not None:
            self.pins[(2, 0)] = buzzer
        self.running = {}  # (kind, index) -> (pattern, started_ms, duration_ms)
        self.levels = {}  # (kind, index) -> the level last driven

    def set(self, kind, index, pattern, duration_ms, now):
        if (kind, index) not in self.pins:
            return wire.UNSUPPORTED if not any(k == kind for k, _ in self.pins) else wire.INVALID_ARGUMENT
        if pattern == 4 and duration_ms == 0:
            duration_ms = 100
        self.running[(kind, index)] = (pattern, now, duration_ms)
        self.update(now)
        return wire.OK

    def update(self, now):
        for key, (pattern, started, duration) in list(self.running.items()):
            elapsed = time.ticks_diff(now, started)
            if duration and elapsed >= duration:
                pattern = 0
                del self.running[key]
            if pattern in (0, 1, 4):
                on = pattern != 0
            else:
                on = (elapsed % self.PERIOD.get(pattern, 1000)) < self.PERIOD.get(pattern, 1000) // 2
            level = 1 if on else 0
            if self.levels.get(key) != level:  # drive the pin only when it changes
                self.levels[key] = level
                self.pins[key].value(level)


class Reader:
    def __init__(self, port, frontends, antennas, serial, outputs, temperature=None, default_schedule=None,
                 reset=None):
        self.port = port
        self.frontends = frontends
        self.antennas = antennas  # wire number -> Antenna
        self.serial = serial
        self.outputs = outputs
        self.temperature = temperature  # callable: tenths of a degree, or None
        self.default_schedule = default_schedule or [(a.number, DEFAULT_DWELL_MS) for a in antennas]
        self.reset_board = reset
        self.counters = wire.RxCounters()
        self.frames = wire.FrameReader(self.counters)
        self.tx = bytearray()
        self.tx_dropped = 0
        self.seq = 0
        self.boot_ms = time.ticks_ms()
        self.last_command = None  # (seq, type, answer type, answer payload): duplicate memory (3.2)
        self.schedule = self.default_schedule
        self.parked = None  # the antenna PARK holds its front end on (6.13), or None
        self.full_every_ms = 0  # ... read whole this often
        self.cycle = 0
        self.pass_cycle = None  # the cycle being scanned, None between passes
        self.pass_requested = False
        self.requested_pending = False
        self.reset_pending = False
        self.alloc_mark = gc.mem_alloc()
        self.alloc_total = 0
        self.alloc_passes = 0
        now = self.boot_ms
        self.next_heartbeat = time.ticks_add(now, HEARTBEAT_MS)
        self.next_status = time.ticks_add(now, STATUS_MS)
        self.technologies = 0  # tag_technologies: the standards the antennas run
        for antenna in antennas:
            self.technologies |= TECHNOLOGIES[antenna.standard]
        self.capabilities = 0x02 | 0x10  # READ_COUNTS, SCHEDULE
        if self.technologies & TECHNOLOGIES["iso15693"]:
            self.capabilities |= 0x20  # PARK: ISO 15693's Stay Quiet
        if any(k == 1 for k, _ in outputs.pins):
            self.capabilities |= 0x04
        if (2, 0) in outputs.pins:
            self.capabilities |= 0x08
        self.tx.append(0)  # a lone delimiter ends any partial frame in the host's buffer (2.3)

    # ---- sending -----------------------------------------------------------------------------------

    def send(self, msg_type, payload):
        frame = wire.encode_frame(msg_type, self.seq, payload)
        self.seq = (self.seq + 1) & 0xFFFF  # every frame created takes a seq, even a dropped one (3.1)
        if len(self.tx) + len(frame) > TX_QUEUE_BYTES:
            self.tx_dropped += 1
            return
        self.tx.extend(frame)

    def uptime(self, now):
        return time.ticks_diff(now, self.boot_ms) & 0xFFFFFFFF

    # ---- receiving ---------------------------------------------------------------------------------

    def receive(self, data, now):
        for msg_type, seq, payload in self.frames.feed(data):
            if self.reset_pending:
                break  # nothing after RESET's ACK: the reboot forgets it anyway
            reason, fields = wire.parse_command(self.counters, msg_type, payload)
            if reason is not None:
                self.send(wire.NAK, wire.nak(seq, msg_type, reason))
                continue
            if msg_type == wire.IDENTIFY:
                self.last_command = None  # IDENTIFY always runs and clears the duplicate memory (3.2)
                self.send(wire.IDENTIFY_REPLY, wire.identify_reply(
                    FIRMWARE_VERSION, self.serial, len(self.antennas), self.technologies, self.capabilities))
                continue
            remembered = self.last_command
            if remembered is not None and remembered[0] == seq and remembered[1] == msg_type:
                self.send(remembered[2], remembered[3])  # a retransmission: answer again, do not run again
                continue
            result = self.execute(msg_type, fields, now)
            answer = wire.ack(seq, result)
            self.last_command = (seq, msg_type, wire.ACK, answer)
            self.send(wire.ACK, answer)
            if msg_type == wire.RESET and result == wire.OK:
                self.reset_pending = True

    def execute(self, msg_type, fields, now):
        if msg_type == wire.SET_SCHEDULE:
            for antenna, dwell in fields:
                if antenna >= len(self.antennas) or dwell == 0:
                    return wire.INVALID_ARGUMENT
            if self.pass_cycle is not None and not self.pass_requested:
                self.visit_now(self.schedule, fields)
            self.schedule = fields  # starts with the next pass (6.2)
            return wire.OK
        if msg_type == wire.SET_OUTPUT:
            return self.outputs.set(fields[0], fields[1], fields[2], fields[3], now)
        if msg_type == wire.PARK:
            number, every = fields
            if number == wire.NO_ANTENNA:
                self.park(None, 0)
                return wire.OK
            if number >= len(self.antennas) or every == 0 or self.antennas[number].standard != "iso15693":
                return wire.INVALID_ARGUMENT
            self.park(self.antennas[number], every)
            return wire.OK
        if msg_type == wire.REQUEST_INVENTORY:
            if self.requested_pending or (self.pass_cycle is not None and self.pass_requested):
                return wire.BUSY
            self.requested_pending = True
            return wire.OK
        return wire.OK  # RESET: acknowledged, then done by the main loop once the ACK has left

    # ---- the periodic messages -----------------------------------------------------------------------

    def timers(self, now):
        if time.ticks_diff(now, self.next_heartbeat) >= 0:
            self.send(wire.HEARTBEAT, wire.heartbeat(self.uptime(now)))
            self.next_heartbeat = _next_tick(self.next_heartbeat, HEARTBEAT_MS, now)
        if time.ticks_diff(now, self.next_status) >= 0:
            temperature = self.temperature() if self.temperature is not None else wire.TEMPERATURE_NONE
            self.send(wire.STATUS, wire.status(self.uptime(now), temperature, self.counters, self.tx_dropped))
            self.next_status = _next_tick(self.next_status, STATUS_MS, now)
        for antenna in self.antennas:
            if antenna.fault is not None and time.ticks_diff(now, antenna.fault_reported_ms) >= FAULT_REPEAT_MS:
                self.report_fault(antenna, now)
        self.outputs.update(now)

    def report_fault(self, antenna, now):
        code, detail = antenna.fault
        self.send(wire.ANTENNA_FAULT, wire.antenna_fault(antenna.number, code, detail))
        antenna.fault_reported_ms = now

    # ---- scanning ------------------------------------------------------------------------------------

    def start_pass(self):
        requested, self.requested_pending = self.requested_pending, False
        slots = [(a.number, DEFAULT_DWELL_MS) for a in self.antennas] if requested else self.schedule
        parked = self.parked
        if requested and parked is not None and parked.state is not None:
            parked.state.full_ms = None  # a host that asks for everything knows nothing: read it whole again
        if not slots and parked is None:
            return
        self.pass_cycle = self.cycle
        self.cycle = (self.cycle + 1) & 0xFFFFFFFF
        self.pass_requested = requested
        for frontend in self.frontends:
            frontend.queue = []
        for number, dwell in slots:
            antenna = self.antennas[number]
            if parked is None or antenna.frontend is not parked.frontend or requested:
                antenna.frontend.queue.append((antenna, dwell))
        if parked is not None and not parked.frontend.queue:
            parked.frontend.queue.append((parked, self.parked_dwell()))

    def parked_dwell(self):
        """A parked antenna's visit is bounded by its dwell in the schedule (a round that resolves many new tags)."""
        for number, dwell in self.schedule:
            if number == self.parked.number:
                return dwell
        return DEFAULT_DWELL_MS

    def park(self, antenna, every):
        """PARK (6.13): hold ``antenna``'s front end on it, from now, its field on between visits; None: the
        schedule again from the next pass (the front end's other antennas wait for it)."""
        old, self.parked, self.full_every_ms = self.parked, antenna, every
        if old is not None and old is not antenna:
            frontend = old.frontend
            if frontend.job is None and frontend.field_on is not None:
                self.field_off(frontend)  # (a visit under way switches it off as it ends)
        if antenna is not None and self.pass_cycle is not None and not self.pass_requested:
            frontend = antenna.frontend
            if frontend.job is not None and frontend.antenna is not antenna:
                # the dwell under way on another antenna is given up (the host holds what that antenna last
                # reported): the parked antenna is where tags are expected now
                frontend.job.close()
                frontend.job = None
            frontend.queue = [(antenna, self.parked_dwell())]

    def field_off(self, frontend):
        frontend.field_on = None
        try:
            frontend.chip.rf_off()
        except FrontEndError:
            pass
        frontend.switch.park()

    def visit_now(self, old, new):
        """1.1 (6.2): the antennas the new schedule lists more often than the old are visited in the pass under way
        too, next on their front end (a host asks for an antenna where it expects a tag now, not a pass later)."""
        before = {}
        for number, _dwell in old:
            before[number] = before.get(number, 0) + 1
        after = {}
        for number, dwell in new:
            after[number] = after.get(number, 0) + 1
            antenna = self.antennas[number]
            frontend = antenna.frontend
            if self.parked is not None and frontend is self.parked.frontend:
                continue  # a parked front end visits its antenna over and over already
            scanning = frontend.job is not None and frontend.antenna is antenna
            if after[number] == before.get(number, 0) + 1 and not scanning \
                    and not (frontend.queue and frontend.queue[0][0] is antenna):
                frontend.queue.insert(0, (antenna, dwell))

    def scan(self, now):
        """Advance every front end's scan a little; False when nothing is left to do in this pass."""
        if self.pass_cycle is None:
            self.start_pass()
            if self.pass_cycle is None:
                return False
        busy = False
        parked = self.parked
        if parked is not None and parked.frontend.job is None and not parked.frontend.queue \
                and not self.pass_requested and any(f.job is not None or f.queue for f in self.frontends):
            parked.frontend.queue.append((parked, self.parked_dwell()))  # again, while the others finish the pass
        for frontend in self.frontends:
            if frontend.job is None and frontend.queue:
                antenna, dwell = frontend.queue.pop(0)
                frontend.antenna = antenna
                frontend.seen = {}
                frontend.job = self.scan_antenna(frontend, antenna, time.ticks_add(now, dwell), frontend.seen)
            if frontend.job is None:
                continue
            busy = True
            try:
                next(frontend.job)
            except StopIteration as done:
                frontend.job = None
                self.finished(frontend.antenna, done.value, frontend.seen, time.ticks_ms())
        if not busy:
            self.end_pass()
        return busy

    def scan_antenna(self, frontend, antenna, deadline, seen):
        """A generator: one antenna's dwell. Its value: a fault (code, detail), or None when it was read (on a
        parked antenna: "quiet" when the round read only the tags new since its field came on)."""
        chip = frontend.chip
        # Each dwell loads the antenna's own RF configuration: its neighbours may run the other standard.
        standard = standard_module(antenna.standard)
        if not isinstance(antenna.state, standard.AntennaState):
            antenna.state = standard.AntennaState()
        parked = antenna is self.parked
        kept_on = False
        try:
            if frontend.field_on is not None and (frontend.field_on is not antenna or not parked):
                self.field_off(frontend)  # a parked antenna's field, left on: its tags lose their quiet state
            if not parked:
                state = antenna.state
                if getattr(state, "full_ms", None) is not None:  # parked until now: its quiet rounds are over
                    state.full_ms, state.pending, state.to_quiet = None, [], []
                frontend.switch.select(antenna.index)
                yield from standard.check_antenna(chip, frontend.limits)
                yield from standard.inventory(chip, antenna.state, deadline, seen)
                return None
            state = antenna.state
            # a whole reading under way (its collisions left for this visit) goes on; the next begins a period after,
            # or while a push is being read up to a second period after (GROWING_VISITS)
            period = self.full_every_ms * (2 if state.growing else 1)
            quiet = frontend.field_on is antenna and state.full_ms is not None \
                and (len(state.pending) > 0 or time.ticks_diff(time.ticks_ms(), state.full_ms) < period)
            if not quiet:  # read it whole: every tag awake again (the field off then on), the round answered by all
                if frontend.field_on is antenna:
                    self.field_off(frontend)
                    off_at = time.ticks_ms()
                    while time.ticks_diff(time.ticks_ms(), off_at) < FIELD_OFF_MS:
                        yield
                frontend.switch.select(antenna.index)
                yield from standard.check_antenna(chip, frontend.limits)
                frontend.field_on = antenna
                state.full_ms = time.ticks_ms()
                state.pending = []
                state.to_quiet = []  # (awake again anyway)
            # The tags the last visit read go quiet first (each visit reports what it read without waiting for
            # that): this round is answered by the tags put down since.
            for uid in state.to_quiet:
                yield from standard.stay_quiet(chip, uid)
            yield from standard.inventory(chip, state, deadline, seen, quiet)  # quiet: few answer, a slot first
            if state.pending:
                state.full_ms = time.ticks_ms()  # the period counts from the end of a whole reading
            state.to_quiet = list(seen)
            state.growing = GROWING_VISITS if quiet and seen else max(0, state.growing - 1) if quiet else 0
            kept_on = self.parked is antenna
            return "quiet" if quiet else None
        except AntennaFault as fault:
            return (fault.code, fault.detail)
        except FrontEndError as error:
            log("front end error on antenna %d: %s" % (antenna.number, error))
            return (1, 0)  # no answer from the front end: reported as OPEN on the antenna (7.4)
        finally:
            if not kept_on:
                frontend.field_on = None
                try:
                    chip.rf_off()
                except FrontEndError:
                    pass
                frontend.switch.park()

    def finished(self, antenna, fault, seen, now):
        quiet = fault == "quiet"
        if quiet:
            fault = None
        if fault is not None:
            if antenna.fault != fault:
                antenna.fault = fault
                self.report_fault(antenna, now)
            return  # a faulted antenna's contents are unknown: no INVENTORY (6.7)
        if antenna.fault is not None:
            antenna.fault = None
            self.send(wire.ANTENNA_FAULT, wire.antenna_fault(antenna.number, wire.CLEARED, 0))
        entries = [(uid, count, RSSI_NONE) for uid, count in seen.items()]
        flags = wire.REQUESTED if self.pass_requested else 0
        if quiet:  # the tags new since the field came on; those read before it still lie there (6.13)
            flags |= wire.QUIET
        if getattr(antenna.state, "pending", None):  # a stack read in turns: the rest at its next dwell (7.3)
            flags |= wire.UNRESOLVED
        # The pass's last antenna: every front end is done. Its last frame carries CYCLE_END (6.7).
        if not any(f.job is not None or f.queue for f in self.frontends):
            flags |= wire.CYCLE_END
        for payload in wire.inventory_payloads(antenna.number, self.pass_cycle, flags, entries):
            self.send(wire.INVENTORY, payload)

    def end_pass(self):
        self.pass_cycle = None
        # Memory per pass, for the bench (stderr of the unix port; nothing is written on the Pico): the heap
        # grows by what a pass allocates until a collection, which shows as a drop and is skipped.
        allocated = gc.mem_alloc()
        if allocated >= self.alloc_mark:
            self.alloc_total += allocated - self.alloc_mark
            self.alloc_passes += 1
        self.alloc_mark = allocated
        if self.cycle % 10 == 0 and self.alloc_passes:
            gc.collect()  # what stays alive, without the garbage of the passes since the last collection
            self.alloc_mark = gc.mem_alloc()
            log("memory: cycle %d heap live %d free %d allocated per pass %d" % (
                self.cycle, self.alloc_mark, gc.mem_free(), self.alloc_total // self.alloc_passes))

    # ---- the main loop -------------------------------------------------------------------------------

    def step(self):
        now = time.ticks_ms()
        scanning = False
        if not self.reset_pending:  # after RESET's ACK nothing new is read or sent: the ACK leaves, we reboot
            data = self.port.read()
            if data:
                self.receive(data, now)
        if not self.reset_pending:
            self.timers(now)
            scanning = self.scan(now)
        if self.tx:
            written = self.port.write(self.tx)
            if written:
                self.tx = self.tx[written:]
        if self.reset_pending and not self.tx:
            self.port.drain()
            if self.reset_board is not None:
                self.reset_board()
        return scanning

    def run(self):
        while True:
            if not self.step():
                self.port.wait(5)  # nothing to scan: sleep until the host writes or a timer is due


def _next_tick(scheduled, period, now):
    following = time.ticks_add(scheduled, period)
    return following if time.ticks_diff(following, now) > 0 else time.ticks_add(now, period)
