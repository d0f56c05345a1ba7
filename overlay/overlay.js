/* The broadcast overlay (docs/overlay.md): the table from rfid-table's MQTT feeds, drawn for OBS.
 *
 * Delayed mode (default): the hand from <prefix>/<table>/delayed/events — the secure events, hole cards and equity
 * included, released by the table after the broadcast delay — played back at the pace it was dealt (a hand released
 * at once is spread out again by the events' own times). Public mode (?mode=public): the live public snapshot and
 * public/events, without hole cards or equity, for a stream without delay. Live mode (?mode=live): public mode on
 * live/events, which shows the hands the table's reveal policy shows ([broadcast] reveal), when it shows them.
 * Both take names, stacks and seats from the retained public snapshot, take it again on a seq gap, drop events
 * already seen, and reconnect by themselves. Delayed mode also takes the retained delayed/hand (what the table has
 * released of the hand being played back) on every connection and on a seq gap, and merges the events it missed:
 * after an outage, or opened during a playback, it still shows the hand whole, to its result.
 *
 * Whatever a feed sends, the page builds its DOM from text nodes only, checks every payload's shape before using
 * any of it (a message that does not fit is dropped, with one console warning per topic and kind), and takes a seq
 * nowhere near its own for a sign to resynchronise, not for the table's new numbering (docs/overlay.md).
 */
"use strict";

const query = new URLSearchParams(location.search);
const config = {
  broker: query.get("broker") ||
    `${location.protocol === "https:" ? "wss" : "ws"}://${location.hostname || "127.0.0.1"}:${location.port || 9001}/`,
  table: query.get("table") || "main-1",
  prefix: query.get("prefix") || "rfid-table",
  username: query.get("username") || undefined,
  password: query.get("password") || undefined,
  // live mode is public mode with the hands the reveal policy shows (live/events): everything else as public mode
  mode: ["public", "live"].includes(query.get("mode")) ? "public" : "delayed",
  live: query.get("mode") === "live",
  // how much faster than the wall clock the table's time runs: a simulated table's --speed (the playback follows
  // the events' table times)
  speed: Number(query.get("speed")) > 0 ? Number(query.get("speed")) : 1,
  // the players' statistics the room service publishes (docs/overlay.md): which ones (stats=vpip,pfr,af), over
  // what (stats_over=all, day or session), from which room (room=ID; any room's statistics of this table without)
  stats: (query.get("stats") || "").split(",").map((s) => s.trim().toLowerCase()).filter(Boolean),
  statsOver: ["all", "day", "session"].includes(query.get("stats_over")) ? query.get("stats_over") : "all",
  statsPrefix: query.get("stats_prefix") || "rfid-table-room",
  room: query.get("room") || "+",
};
const base = `${config.prefix}/${config.table}`;
const topics = {
  snapshot: `${base}/public/snapshot`,
  events: config.live ? `${base}/live/events` : config.mode === "public" ? `${base}/public/events` : `${base}/delayed/events`,
  hand: config.mode === "public" ? null : `${base}/delayed/hand`,
  status: `${base}/status`,
  stats: `${config.statsPrefix}/${config.room}/tables/${config.table}/stats`,
};
const isStatsTopic = (topic) => topic.startsWith(`${config.statsPrefix}/`) &&
  topic.endsWith(`/tables/${config.table}/stats`) && topic.split("/").length === config.statsPrefix.split("/").length + 4;
const SUITS = { s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" };

// ---- what the feeds may send ------------------------------------------------------------------------------------
// The shapes of schemas/ (snapshot.public, event.public/secure, hand.delayed, status), for the fields the page uses;
// fields it does not use may be anything. A message that does not fit is dropped before any of it is used.

const SEATS_MAX = 10;  // a table has 2 to 10 seats ([table] seats): no larger seat number, map or list is real
const HAND_EVENTS_MAX = 2000;  // delayed/hand holds at most 1000 events (the table's limit); more is no table's
const TIME_MAX = 1e11;  // table times are Unix seconds: a larger t is no table's, and would overflow the arithmetic
const CARD = /^[2-9TJQKA][shdc]$/;
// a stud hand's streets (card_dealt's street, the snapshot's phase) and how the page names them
const STUD_STREETS = new Map([["third", "3rd street"], ["fourth", "4th street"], ["fifth", "5th street"],
                              ["sixth", "6th street"], ["seventh", "7th street"]]);
const SEAT_KEY = /^[1-9][0-9]*$/;

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isInt = (v, min, max = Number.MAX_SAFE_INTEGER) => Number.isSafeInteger(v) && v >= min && v <= max;
const isSeat = (v) => isInt(v, 1, SEATS_MAX);
const isChips = (v) => isInt(v, 0);
const isTime = (v) => typeof v === "number" && v >= 0 && v <= TIME_MAX;  // (NaN fails both)
const isShare = (v) => typeof v === "number" && v >= 0 && v <= 1;
const isName = (v) => typeof v === "string" && v.length >= 1 && v.length <= 32;
const isEpoch = (v) => typeof v === "string" && v.length >= 1;
const isCard = (v) => typeof v === "string" && CARD.test(v);
const isCards = (v, max = 52) => Array.isArray(v) && v.length <= max && v.every(isCard);
const isBoards = (v) => Array.isArray(v) && v.length <= 6 && v.every((b) => isCards(b, 5));
const isStreet = (v) => typeof v === "string" && STUD_STREETS.has(v);
const isSeats = (v) => Array.isArray(v) && v.length <= SEATS_MAX && v.every(isSeat);
const absentOr = (check) => (v) => v === undefined || check(v);
const nullOr = (check) => (v) => v === null || check(v);
function isSeatMap(v, check) {  // seat number (as JSON has it: a string) → check(value)
  if (!isObject(v)) return false;
  const entries = Object.entries(v);
  return entries.length <= SEATS_MAX && entries.every(([n, x]) => SEAT_KEY.test(n) && isSeat(Number(n)) && check(x));
}
const isChipsBySeat = (v) => isSeatMap(v, isChips);
const isCardsBySeat = (v) => isSeatMap(v, (c) => isCards(c));
const isPots = (v) => Array.isArray(v) && v.length <= SEATS_MAX && v.every((p) => isObject(p) && isChips(p.amount));
// a hi-lo showdown's pot is split in halves, the high half first (docs/events.md, showdown)
const isHalf = (h) => isObject(h) && (h.side === "high" || h.side === "low") && isChipsBySeat(h.shares);
const isHalves = (halves) => Array.isArray(halves) && halves.length <= 2 && halves.every(isHalf);
// (a pot divided between boards, runs or a double board, has its halves per board)
const isShowdownPots = (v) => isPots(v) && v.every((p) => absentOr(isHalves)(p.halves) &&
  absentOr((boards) => Array.isArray(boards) && boards.length <= 6 &&
    boards.every((b) => isObject(b) && absentOr(isHalves)(b.halves)))(p.boards));

// Per event type the page draws from, the fields it reads (a Map: a type named like an Object property is none).
const EVENT_FIELDS = new Map(Object.entries({
  hand_started: (e) => e.hand !== null && absentOr((g) => typeof g === "string")(e.game),
  card_dealt: (e) => isSeat(e.seat) && isInt(e.count, 0, 52) && absentOr(isCard)(e.card) &&
    absentOr((v) => typeof v === "boolean")(e.up) && absentOr(isStreet)(e.street),
  bring_in: (e) => isSeat(e.seat),
  board_card: (e) => isCard(e.card) && isInt(e.position, 1, 5) && absentOr((n) => isInt(n, 2, 6))(e.board_number),
  board_corrected: (e) => isCards(e.board, 5),
  fold: (e) => isSeat(e.seat) && absentOr(isCards)(e.cards),
  betting_started: (e) => isSeat(e.button) && absentOr(nullOr(isChipsBySeat))(e.stacks),
  stacks_set: (e) => isChipsBySeat(e.stacks),
  action: (e) => isSeat(e.seat) && typeof e.action === "string" && isChips(e.to) && isChips(e.added) &&
    absentOr((v) => typeof v === "boolean")(e.all_in) && absentOr(isChips)(e.pot) && absentOr(nullOr(isSeat))(e.next),
  action_undone: (e) => absentOr(isChips)(e.pot) && absentOr(nullOr(isSeat))(e.next),
  pots: (e) => isPots(e.pots) && isChips(e.total) && absentOr(isChipsBySeat)(e.returned),
  showdown: (e) => e.hand !== null && absentOr(isChipsBySeat)(e.payouts) && absentOr(isShowdownPots)(e.pots) &&
    absentOr(nullOr(isChipsBySeat))(e.finishing_stacks) && absentOr(isCardsBySeat)(e.hands),
  hand_ended: (e) => absentOr((b) => isCards(b, 5))(e.board) && absentOr(isBoards)(e.boards) &&
    absentOr(isCardsBySeat)(e.hole_cards) && absentOr(isSeats)(e.live_seats),
  equity: (e) => absentOr((hands) => Array.isArray(hands) && hands.length <= SEATS_MAX && hands.every((h) =>
    isObject(h) && isSeat(h.seat) && isShare(h.win) && isShare(h.tie) && absentOr(isCards)(h.outs) &&
    absentOr(isShare)(h.low_win)))(e.hands),
  player_seated: (e) => isSeat(e.seat) && isName(e.name),
  seat_cleared: (e) => isSeat(e.seat),
}));

function winnerWords(payouts, pots) {
  // "Anna wins 300", each winner of the showdown; in a hi-lo game each says which half it won, so that both halves
  // of a split pot show ("Anna wins 150 (high) · Bo wins 150 (low)"), and a hand without a low says so.
  const sides = {};  // seat → what it won of each side, over every pot
  // a pot's halves, or each of its boards' halves where it was divided between boards (runs, a double board)
  const split = (pots || []).flatMap((pot) => pot.halves ? [pot.halves]
    : (pot.boards || []).filter((b) => b.halves).map((b) => b.halves));
  for (const half of split.flat()) {
    for (const [n, v] of Object.entries(half.shares)) {
      sides[n] = sides[n] || { high: 0, low: 0 };
      sides[n][half.side] += v;
    }
  }
  const money = (v) => v.toLocaleString("en-US");
  const lowOnly = ([n]) => (sides[n] && !sides[n].high ? 1 : 0);  // the high half's winners first
  const words = Object.entries(payouts).sort((a, b) => lowOnly(a) - lowOnly(b)).map(([n, v]) => {
    const won = sides[n];
    const part = !won ? "" : won.high && won.low ? ` (high ${money(won.high)}, low ${money(won.low)})`
      : won.low ? " (low)" : " (high)";
    return `${seat(n).name || "Seat " + n} wins ${money(v)}${part}`;
  });
  if (split.length && !split.some((halves) => halves.some((h) => h.side === "low"))) words.push("no low");
  return words;
}

function eventProblem(e) {
  // What does not fit in an event (public or secure), or null. Every event has the common fields.
  if (!isObject(e)) return "not an object";
  if (!isInt(e.seq, 1)) return "seq";
  if (typeof e.type !== "string") return "type";
  if (!isTime(e.t)) return "t";
  if (!nullOr((h) => isInt(h, 1))(e.hand)) return "hand";
  if (!isEpoch(e.epoch)) return "epoch";
  if (!absentOr((r) => r === true)(e.replay)) return "replay";
  const fields = EVENT_FIELDS.get(e.type);
  return fields && !fields(e) ? "its fields" : null;
}

const isSeatState = (s) => isObject(s) && isSeat(s.seat) && isInt(s.cards, 0, 52) && typeof s.folded === "boolean" &&
  absentOr(nullOr((p) => isObject(p) && isName(p.name)))(s.player) && absentOr((c) => isCards(c, 7))(s.up_cards);
const isBetting = (b) => isObject(b) && isChips(b.pot) && isPots(b.pots) && absentOr(isChipsBySeat)(b.bets) &&
  absentOr(nullOr(isChipsBySeat))(b.stacks) && absentOr(isSeats)(b.all_in) && absentOr(nullOr(isSeat))(b.to_act);

function snapshotProblem(s) {
  if (!isObject(s)) return "not an object";
  if (!isInt(s.seq, 0)) return "seq";
  if (!isEpoch(s.epoch)) return "epoch";
  if (!nullOr((h) => isInt(h, 1))(s.hand)) return "hand";
  if (typeof s.phase !== "string") return "phase";
  if (!(Array.isArray(s.seats) && s.seats.length <= SEATS_MAX && s.seats.every(isSeatState))) return "seats";
  if (!isCards(s.board, 5) || !absentOr(isBoards)(s.boards)) return "board";
  if (!absentOr(nullOr(isSeat))(s.button)) return "button";
  if (!absentOr(nullOr(isBetting))(s.betting)) return "betting";
  if (!absentOr(nullOr((g) => typeof g === "string"))(s.game)) return "game";
  return null;
}

function delayedHandProblem(m) {
  if (!isObject(m)) return "not an object";
  if (!isEpoch(m.epoch)) return "epoch";
  if (!isInt(m.seq, 0)) return "seq";
  if (!absentOr(nullOr(isTime))(m.released) || !absentOr(nullOr(isTime))(m.released_before)) return "released";
  if (!Array.isArray(m.events) || m.events.length > HAND_EVENTS_MAX) return "events";
  return null;
}

// <stats prefix>/<room>/tables/<table>/stats (docs/room.md): per seat its player's statistics, over all time, the
// day and the latest session.
const isCount = (v) => v === null || isInt(v, 0);
const isPct = (v) => v === null || (typeof v === "number" && v >= 0 && v <= 100);
const isStatBlock = (b) => isObject(b) && absentOr(isCount)(b.hands) && absentOr(isPct)(b.vpip_pct) &&
  absentOr(isPct)(b.pfr_pct) && absentOr(isPct)(b.wtsd_pct) && absentOr(isPct)(b.wsd_pct) &&
  absentOr(nullOr((v) => typeof v === "number" && v >= 0 && v < 1e6))(b.aggression_factor) &&
  absentOr(nullOr(Number.isSafeInteger))(b.net);
const isSeatStats = (s) => isObject(s) && isSeat(s.seat) && typeof s.name === "string" && s.name.length <= 64 &&
  ["all", "day", "session"].every((over) => absentOr(isStatBlock)(s[over])) && absentOr(nullOr(isChips))(s.chips);

function statsProblem(m) {
  if (!isObject(m)) return "not an object";
  if (!isEpoch(m.epoch)) return "epoch";
  if (!nullOr((h) => isInt(h, 1))(m.hand)) return "hand";
  if (!Array.isArray(m.seats) || m.seats.length > SEATS_MAX || !m.seats.every(isSeatStats)) return "seats";
  return null;
}

// Each statistic the page can show: its label and its value in words (stats=...).
const STATS = new Map(Object.entries({
  hands: ["HANDS", (s) => (s.hands == null ? "–" : money(s.hands))],
  vpip: ["VPIP", (s) => percent(s.vpip_pct)],
  pfr: ["PFR", (s) => percent(s.pfr_pct)],
  af: ["AF", (s) => (s.aggression_factor == null ? "–" : s.aggression_factor.toFixed(1))],
  wtsd: ["WTSD", (s) => percent(s.wtsd_pct)],
  wsd: ["W$SD", (s) => percent(s.wsd_pct)],
  net: ["NET", (s) => (s.net == null ? "–" : (s.net > 0 ? "+" : "") + money(s.net))],
  chips: ["CHIPS", (s, seatStats) => money(seatStats.chips)],
}));
const percent = (v) => (v == null ? "–" : `${Math.round(v)}%`);

const warned = new Set();  // what the console was told once
function warnOnce(key, message) {
  if (warned.has(key)) return;
  warned.add(key);
  console.warn(message);
}

function drop(topic, kind, why) {
  const key = `${topic}: ${kind}`;
  state.dropped[key] = (state.dropped[key] || 0) + 1;
  warnOnce(key, `overlay: ${key} dropped, it does not fit the table's schema (${why}); ` +
                "more like it are dropped without a word (overlayState.dropped counts them)");
}

function failed(what, err) {
  // The last line of defence: what the checks let through but the page could not use costs that message alone.
  const key = `${what}: failed`;
  state.dropped[key] = (state.dropped[key] || 0) + 1;
  warnOnce(key, `overlay: ${what}: ${err && err.message}; the page goes on (said once)`);
}

// ---- the state drawn --------------------------------------------------------------------------------------------

const state = {
  epoch: null, lastSeq: 0, hand: null, button: null, board: [], pot: 0, pots: [], toAct: null,
  later: {},  // board number (2, 3) → its cards by position: a later run's board, a double board's second
  game: null,  // the hand's game as hand_started or the snapshot names it (stud, stud8, razz, nlhe ...)
  street: null, bringIn: null,  // a stud hand: the street dealt (third ... seventh), the seat that brings it in
  seats: {},  // seat number → {name, stack, bet, cards: [...], up: [...], count, folded, allIn, equity, won}
  winner: null, winnerHand: null, tableStatus: null, connected: false, resyncs: 0, connects: 0,
  betting: false, result: false, voided: false,  // this hand: chips read, its showdown seen, a misdeal
  incomplete: false,  // delayed mode: events of this hand are gone for good (missed, and no longer in delayed/hand)
  dropped: {},  // "topic: kind" → messages dropped that did not fit their schema
  stats: null,  // the room's statistics message shown (delayed mode: once the hand it follows is played back)
};
let pendingStats = null;  // one received that the playback has not reached yet
const RESULT_PAUSE_S = 4;  // delayed mode: the result stays this long before the next hand plays back
const RESULT_WAIT_S = 180;  // ... and the playback waits at most this long for a hand's late showdown
const HOLE_WAIT_S = 5;  // ... and at most this long at missed events for delayed/hand to bring them

function seat(n) {
  const key = String(n);
  if (!state.seats[key]) {
    state.seats[key] = { name: null, stack: null, bet: 0, cards: [], up: [], count: 0, folded: false, allIn: false,
                         equity: null, won: null, lastAction: null };
  }
  return state.seats[key];
}

function laterBoards(boards) {
  // a snapshot's or hand_ended's boards (run by run, the first is the board) as board number → cards
  const out = {};
  (boards || []).slice(1).forEach((cards, i) => { out[i + 2] = cards.slice(); });
  return out;
}

function newHand(hand) {
  state.hand = hand;
  state.board = []; state.later = {}; state.pot = 0; state.pots = []; state.toAct = null; state.winner = null;
  state.betting = false; state.result = false; state.voided = false; state.incomplete = false;
  state.street = null; state.bringIn = null;
  for (const s of Object.values(state.seats)) {
    Object.assign(s, { bet: 0, cards: [], up: [], count: 0, folded: false, allIn: false, equity: null, won: null,
                       lastAction: null });
  }
}

let resyncing = false;  // a seq gap was seen: the next snapshot replaces the picture, even an older one

// The seq rule. An event comes one seq after the one before, give or take a few missed or sent twice. One more than
// SEQ_WINDOW away from the newest seq the page holds of its epoch, ahead or behind (from another epoch: past
// SEQ_WINDOW, a new numbering starting at 1), is not placed: a stray message, or the page lost track (a long outage).
// The page drops it and resynchronises: the snapshot (public mode) or delayed/hand (delayed mode) gives the seq it goes
// on from, and replaces one it holds that is more than SEQ_WINDOW ahead (that one came from a stray message). So an
// absurd seq never becomes the page's own, to make it drop the table's real events as seen.
const SEQ_WINDOW = 1000;
const farFrom = (held, seq) => seq > held + SEQ_WINDOW || seq < held - SEQ_WINDOW;

function fromSnapshot(snap) {
  // The public snapshot: the seats' names, stacks and bets. In public mode the whole table (unless the events
  // already went past it: it is published after them); in delayed mode only what is not the hand being played
  // back (names; stacks until the delayed hand gives its own).
  const betting = snap.betting || null;
  if (config.mode === "public") {
    const renumbered = snap.epoch !== state.epoch || snap.seq < state.lastSeq - SEQ_WINDOW;  // (the seq rule)
    if (snap.seq < state.lastSeq && !resyncing && !renumbered) {
      for (const entry of snap.seats) seat(entry.seat).name = entry.player ? entry.player.name : null;
      return;
    }
    resyncing = false;
    state.epoch = snap.epoch; state.lastSeq = snap.seq;
  }
  for (const entry of snap.seats) {
    const s = seat(entry.seat);
    s.name = entry.player ? entry.player.name : null;
    if (config.mode === "public" || state.hand === null) {
      if (betting && betting.stacks && betting.stacks[entry.seat] != null) s.stack = betting.stacks[entry.seat];
    }
    if (config.mode === "public") {
      s.count = entry.cards; s.folded = entry.folded;
      if (entry.up_cards) {  // a stud hand's up cards are public: the page shows them at once
        s.up = entry.up_cards.slice();
        const known = snap.hand === state.hand ? s.cards : [];
        s.cards = known.concat(s.up.filter((c) => !known.includes(c)));
      }
      s.bet = betting && betting.bets ? (betting.bets[entry.seat] || 0) : 0;
      s.allIn = !!(betting && betting.all_in && betting.all_in.includes(entry.seat));
    }
  }
  if (config.mode === "public") {
    if (snap.hand !== state.hand) { state.winner = null; state.bringIn = null; }
    state.street = STUD_STREETS.has(snap.phase) ? snap.phase : null;
    if (typeof snap.game === "string") state.game = snap.game;
    state.hand = snap.hand; state.board = snap.board; state.button = snap.button;
    state.later = laterBoards(snap.boards);
    state.pot = betting ? betting.pot : 0; state.pots = betting ? betting.pots || [] : [];
    state.toAct = betting ? betting.to_act : null;
    if (snap.phase === "waiting") state.toAct = null;
  }
}

function apply(ev) {
  const p = ev;
  switch (ev.type) {
    case "hand_started": newHand(ev.hand); if (p.game) state.game = p.game; break;
    case "card_dealt": {
      const s = seat(p.seat); s.count = p.count;
      if (p.card && !s.cards.includes(p.card)) s.cards.push(p.card);
      if (p.up && p.card && !s.up.includes(p.card)) s.up.push(p.card);  // a stud up card (public)
      if (p.street) state.street = p.street;
      break;
    }
    case "bring_in": state.bringIn = p.seat; break;
    case "board_card":
      if (p.board_number) {  // a later run's or the second board's card: the first board stays as it is
        const later = state.later[p.board_number] || (state.later[p.board_number] = []);
        later[p.position - 1] = p.card;
      } else {
        state.board[p.position - 1] = p.card; state.board = state.board.filter(Boolean);
      }
      break;
    case "board_corrected": if (p.board) state.board = p.board; break;
    case "fold": seat(p.seat).folded = true; seat(p.seat).equity = null; if (p.cards) seat(p.seat).cards = p.cards; break;
    case "misdeal": state.voided = true; state.toAct = null; break;
    case "betting_started":
      state.betting = true; state.button = p.button;
      if (p.stacks) for (const [n, v] of Object.entries(p.stacks)) seat(n).stack = v;
      break;
    case "stacks_set": for (const [n, v] of Object.entries(p.stacks)) seat(n).stack = v; break;
    case "action": {
      const s = seat(p.seat);
      s.lastAction = actionWords(p);
      if (p.action === "fold") { s.folded = true; s.equity = null; } else {
        s.bet = p.to; if (s.stack != null) s.stack -= p.added; s.allIn = !!p.all_in;
      }
      state.pot = p.pot; state.toAct = p.next;
      break;
    }
    case "action_undone": state.pot = p.pot; state.toAct = p.next; break;
    case "pots":
      state.pots = p.pots; state.pot = p.total;
      for (const s of Object.values(state.seats)) { s.bet = 0; s.lastAction = null; }  // the next round's
      for (const [n, v] of Object.entries(p.returned || {})) { const s = seat(n); if (s.stack != null) s.stack += v; }
      break;
    case "showdown": {
      // The table ends a hand when the next one's first card arrives, so a showdown may come after the next
      // hand_started: then it is the last hand's result (stacks and a banner naming the hand), not this one's.
      const current = p.hand === state.hand;
      const payouts = p.payouts || {};
      if (p.finishing_stacks) for (const [n, v] of Object.entries(p.finishing_stacks)) seat(n).stack = v;
      if (current) {
        state.toAct = null; state.result = true;
        for (const [n, v] of Object.entries(payouts)) seat(n).won = v;
        if (p.hands) for (const [n, cards] of Object.entries(p.hands)) seat(n).cards = cards;
      }
      const names = winnerWords(payouts, p.pots);
      state.winner = names.length ? (current ? "" : `Hand ${p.hand}: `) + names.join(" · ") : null;
      state.winnerHand = p.hand;
      break;
    }
    case "hand_ended":
      state.toAct = null;
      if (p.board) state.board = p.board;
      if (p.boards) state.later = laterBoards(p.boards);
      if (p.hole_cards) for (const [n, cards] of Object.entries(p.hole_cards)) seat(n).cards = cards;
      if (!state.winner && p.live_seats && p.live_seats.length === 1) {
        const n = p.live_seats[0];
        state.winner = `${seat(n).name || "Seat " + n} wins`;
        seat(n).won = seat(n).won || true;
      }
      break;
    case "equity":
      if (p.hands) for (const h of p.hands) seat(h.seat).equity = h;
      break;
    case "player_seated": seat(p.seat).name = p.name; break;
    case "seat_cleared": seat(p.seat).name = null; break;
  }
  if (p.revealed && p.hand === state.hand) {  // (live mode) the hands the reveal policy shows, of this hand
    for (const [n, cards] of Object.entries(p.revealed)) seat(n).cards = cards;
  }
}

// ---- events in: dedup, gaps, playback ---------------------------------------------------------------------------

let client = null;
// Delayed mode: state.lastSeq is the newest seq received, playedSeq the newest played back; the queue holds the
// events received and not played yet, in seq order.
let queue = [];
let playedSeq = 0;
let seen = new Set();  // delayed mode: the seqs received (queued or played), to drop a copy...
let forgotten = 0;     // ... and those below this, forgotten to keep the set small
const isSeen = (seq) => seq < forgotten || seen.has(seq);
function remember(seq) {
  seen.add(seq);
  if (seen.size > 5000 && playedSeq - 1000 > forgotten) {
    forgotten = playedSeq - 1000;
    for (const old of seen) if (old < forgotten) seen.delete(old);
  }
}
let offset = null;    // wall seconds minus table seconds of the playback
let timer = null;
let holeSince = null;  // wall time the playback reached missed events (delayed/hand may bring them)

const RESYNC_EVERY_S = 1;  // at most one resubscription a second, whatever comes (and so one set of retained copies)
let resyncedAt = -Infinity;  // wall time (ms) of the last one
let resyncTimer = null;

function resync(why) {
  // Take the retained snapshot (and delayed/hand) again: subscribing anew makes the broker send them.
  resyncing = true;
  if (resyncTimer !== null) return;  // one is due already
  const waitMs = resyncedAt + RESYNC_EVERY_S * 1000 - Date.now();
  if (waitMs > 0) { resyncTimer = setTimeout(() => { resyncTimer = null; resync(why); }, waitMs); return; }
  resyncedAt = Date.now();
  console.info(`overlay: resynchronising (${why})`);
  state.resyncs += 1;
  if (client && client.connected) {
    const again = topics.hand ? [topics.snapshot, topics.hand] : [topics.snapshot];
    client.unsubscribe(again, () => client.subscribe(again, { qos: 1 }));
  }
}

function newEpoch(epoch) {
  // another numbering of seq (a new journal): what was queued of the old one is dropped
  state.epoch = epoch; state.lastSeq = 0; playedSeq = 0; queue = []; holeSince = null; seen = new Set(); forgotten = 0;
}

function receive(ev) {
  if (ev.replay && config.mode === "public") return;  // a live display skips the table's late backlog
  const held = ev.epoch === state.epoch ? state.lastSeq : 0;
  if (farFrom(held, ev.seq)) {  // (the seq rule)
    resync(`seq ${ev.seq}${ev.epoch === state.epoch ? "" : " of another epoch"}, nowhere near ${held}: dropped`);
    return;
  }
  if (config.mode === "public") {
    if (ev.epoch !== state.epoch) { state.epoch = ev.epoch; state.lastSeq = 0; }
    if (ev.seq <= state.lastSeq) return;  // seen already (at-least-once delivery)
    if (state.lastSeq && ev.seq > state.lastSeq + 1) resync(`seq ${state.lastSeq} then ${ev.seq}`);
    state.lastSeq = ev.seq;
    apply(ev); draw(); return;
  }
  if (ev.epoch !== state.epoch) newEpoch(ev.epoch);
  if (isSeen(ev.seq)) return;  // seen already (at-least-once delivery, and delayed/hand)
  remember(ev.seq);
  if (state.lastSeq && ev.seq > state.lastSeq + 1) resync(`seq ${state.lastSeq} then ${ev.seq}`);
  state.lastSeq = Math.max(state.lastSeq, ev.seq);
  const now = Date.now() / 1000;
  if (offset === null || (!queue.length && due(ev) < now - 2)) offset = now - ev.t / config.speed;
  enqueue([ev]);
  pump();
}

function enqueue(events) {
  queue = queue.concat(events);
  queue.sort((a, b) => a.seq - b.seq);
}

function fromDelayedHand(msg) {
  // delayed/hand: the events the table has released of the hand being played back and of the one before. Those not
  // seen yet join the queue; all of them are past the broadcast delay, so none shows a hole card early. (Events
  // missed that it no longer holds stay missed: the playback waits HOLE_WAIT_S for them, then plays on.)
  // An event in it that does not fit is dropped alone, as on delayed/events.
  let events = msg.events.filter((e) => {
    const problem = eventProblem(e) || (e.epoch === msg.epoch ? null : "epoch");
    if (problem) drop(topics.hand, "event", problem);
    return !problem;
  }).sort((a, b) => a.seq - b.seq).filter((e, i, all) => i === 0 || e.seq !== all[i - 1].seq);
  if (!events.length) return;
  const newest = events[events.length - 1].seq;
  if (msg.epoch !== state.epoch || newest < state.lastSeq - SEQ_WINDOW) newEpoch(msg.epoch);  // (the seq rule)
  state.lastSeq = Math.max(state.lastSeq, newest);
  const now = Date.now() / 1000;
  const starts = events.filter((e) => e.type === "hand_started");
  let start = starts[starts.length - 1] || events[0];  // the newest hand
  let beforeOffset = null;
  if (!playedSeq) {
    // A page just opened: the newest hand, or the one before while a page there since its release still plays it
    const before = starts.length > 1 && events[0] === starts[0] ? starts[0] : null;
    beforeOffset = before ? offsetStillOnHandBefore(events, before, start, msg, now) : null;
    if (beforeOffset !== null) start = before;
    events = events.filter((e) => e.seq >= start.seq);
  }
  const missing = events.filter((e) => !isSeen(e.seq));
  if (!missing.length) return;
  missing.forEach((e) => remember(e.seq));
  // A page away at this hand's start but still playing the hand before keeps its pace: this one follows that result.
  const stillPlaying = playedSeq > 0 && queue.some((e) => e.seq < start.seq);
  if (missing.includes(start) && !stillPlaying) {
    // The first sight of this hand (a page opened late, or one away at its start): join its playback where a page
    // that was there since the release is, by the room's clock (released is the table's stamp); without a stamp,
    // show what was released at once.
    const last = events[events.length - 1];
    const since = typeof msg.released === "number" ? Math.max(0, now - msg.released) : Infinity;
    offset = beforeOffset !== null ? beforeOffset
      : Math.max(now - since - start.t / config.speed, now - last.t / config.speed);
  }
  enqueue(missing);
  pump();
}

function offsetStillOnHandBefore(events, before, newest, msg, now) {
  // Would a page there since the hand before the newest was released still be playing it back? It plays that hand
  // at the pace it was dealt from its release, shows the result RESULT_PAUSE_S, then the newest hand at the same
  // pace; from the newest hand's release instead when it had played everything before that (receive). A hand
  // released whole when it ends (release = "hand") often is. Returns that page's offset, or null.
  if (typeof msg.released_before !== "number" || typeof msg.released !== "number") return null;
  // (the release stamps are table time: a simulation faster than real time has them ahead of the wall clock)
  const beforeOffset = Math.min(now, msg.released_before) - before.t / config.speed;
  const at = (e) => e.t / config.speed + beforeOffset;
  const hand = events.filter((e) => e.hand === before.hand);
  const showdown = hand.find((e) => e.type === "showdown");
  const lastAt = at(hand[hand.length - 1]);
  if (lastAt <= Math.min(now, msg.released)) return null;  // it had: the newest hand began at its release
  const newestAt = Math.max(at(newest), showdown ? at(showdown) + RESULT_PAUSE_S : lastAt);
  return now < newestAt ? beforeOffset : null;
}

let heldSince = null;  // wall time the playback began waiting for a hand's late showdown
const LEAD_MAX_S = 300;  // the longest the playback waits for the next event (a pause in the hand as dealt)
let resultShownAt = null;  // wall time the hand played back showed its result
const due = (ev) => ev.t / config.speed + offset;  // when an event is played back (wall seconds)

function pump() {
  clearTimeout(timer);
  const now = Date.now() / 1000;
  let changed = false;
  let waitS = null;  // how long until the playback looks again (null: when the next event is due)
  while (queue.length) {
    const head = queue[0];
    if (due(head) > now + LEAD_MAX_S) {
      // No pause within a hand is this long: a stray time, or a table clock that jumped. Play on from here rather
      // than hold the playback (every event queued is past the broadcast delay already).
      warnOnce("playback: far ahead", `overlay: seq ${head.seq} was due ${Math.round(due(head) - now)} s from now; ` +
               "played from now on (said once)");
      offset = now - head.t / config.speed;
    }
    // A page that has played nothing yet and whose first event is one of a hand but not its start joined in the
    // middle of it (its subscription came after the hand's first events): delayed/hand brings the start, as it
    // brings a gap's. One outside any hand (a player seated before the first deal) misses nothing: it plays.
    const joinedMidHand = !playedSeq && head.type !== "hand_started" && head.hand != null;
    if ((joinedMidHand || playedSeq && head.seq > playedSeq + 1) && due(head) <= now) {
      // Missed events before one that is due: delayed/hand brings them (a gap resyncs); wait a moment for it, then
      // play on without them (and give up waiting for this hand's late showdown: it may be among them).
      if (holeSince === null) holeSince = now;
      if (now - holeSince < HOLE_WAIT_S) { waitS = 0.25; break; }
      console.info(`overlay: seq ${playedSeq + 1} to ${head.seq - 1} did not come; played back without them`);
      state.incomplete = true;
    }
    holeSince = null;
    if (head.type === "hand_started" && state.hand !== null && head.hand !== state.hand &&
        state.betting && !state.result && !state.voided && !state.incomplete) {
      // The hand played back is over, and its showdown comes after the next hand's first events (it is released
      // with that hand): play it first, show the result a moment, then the next hand from its start.
      const late = queue.filter((e) => e.hand === state.hand);
      if (!late.some((e) => e.type === "showdown") && (heldSince === null || now - heldSince < RESULT_WAIT_S)) {
        if (heldSince === null) heldSince = now;
        waitS = 0.5;
        break;
      }
      heldSince = null;
      queue = queue.filter((e) => e.hand !== state.hand);
      late.forEach(apply);
      for (const e of late) playedSeq = Math.max(playedSeq, e.seq);
      state.result = true;
      offset = now + RESULT_PAUSE_S - head.t / config.speed;
      resultShownAt = null;
      changed = true;
      continue;
    }
    if (head.type === "hand_started" && head.hand !== state.hand && resultShownAt !== null &&
        due(head) < resultShownAt + RESULT_PAUSE_S) {
      // The next hand was dealt moments after this one's result (a quick dealer): the result stays on screen
      // RESULT_PAUSE_S first. Later, never earlier, so no hole card goes out before the delay.
      offset = resultShownAt + RESULT_PAUSE_S - head.t / config.speed;
      resultShownAt = null;
    }
    if (due(head) > now) break;
    const played = queue.shift();
    playedSeq = Math.max(playedSeq, played.seq);
    apply(played);
    if (played.type === "showdown" && played.hand === state.hand) resultShownAt = now;
    changed = true;
  }
  if (changed) draw();
  if (waitS !== null) timer = setTimeout(pumpSafely, waitS * 1000);
  else if (queue.length) timer = setTimeout(pumpSafely, Math.max(10, (due(queue[0]) - now) * 1000));
}

function pumpSafely() {
  try { pump(); } catch (err) { failed("playback", err); }
}

// ---- words: the last action, the made hand ----------------------------------------------------------------

function actionWords(p) {
  // "RAISE 2,500" (to 2,500 in this round), "CALL 2,500", "ALL IN", "CHECK", "FOLD"
  if (p.all_in || p.action === "all_in") return "ALL IN";
  const kind = p.action.replace(/_/g, " ").toUpperCase().slice(0, 16);
  return ["fold", "check"].includes(p.action) || !p.to ? kind : `${kind} ${money(p.to)}`;
}

const RANKS = "23456789TJQKA";
const RANK_WORDS = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "jack", "queen", "king",
                    "ace"];
const plural = (r) => RANK_WORDS[r] + (r === 4 ? "es" : "s");  // sixes

function score(five) {
  // [category (0 high card ... 8 straight flush), the ranks that order hands of the category]
  const ranks = five.map((c) => RANKS.indexOf(c[0])).sort((a, b) => b - a);
  const flush = five.every((c) => c[1] === five[0][1]);
  const counts = new Map();
  ranks.forEach((r) => counts.set(r, (counts.get(r) || 0) + 1));
  const groups = [...counts.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0]);
  const order = groups.map(([r]) => r);
  let high = null;  // a straight's highest card (the wheel's is the five)
  if (groups.length === 5 && ranks[0] - ranks[4] === 4) high = ranks[0];
  else if (groups.length === 5 && ranks[0] === 12 && ranks[1] === 3) high = 3;
  if (high !== null && flush) return [8, high];
  if (groups[0][1] === 4) return [7, ...order];
  if (groups[0][1] === 3 && groups[1][1] === 2) return [6, ...order];
  if (flush) return [5, ...ranks];
  if (high !== null) return [4, high];
  if (groups[0][1] === 3) return [3, ...order];
  if (groups[0][1] === 2 && groups[1][1] === 2) return [2, ...order];
  if (groups[0][1] === 2) return [1, ...order];
  return [0, ...ranks];
}

function handWords([category, a, b]) {
  switch (category) {
    case 8: return a === 12 ? "Royal flush" : `Straight flush, ${RANK_WORDS[a]} high`;
    case 7: return `Four of a kind, ${plural(a)}`;
    case 6: return `Full house, ${plural(a)} full of ${plural(b)}`;
    case 5: return `Flush, ${RANK_WORDS[a]} high`;
    case 4: return `Straight, ${RANK_WORDS[a]} high`;
    case 3: return `Three of a kind, ${plural(a)}`;
    case 2: return `Two pair, ${plural(a)} and ${plural(b)}`;
    case 1: return `Pair of ${plural(a)}`;
    default: return `High card, ${RANK_WORDS[a]}`;
  }
}

function choose(list, k) {
  if (k === 0) return [[]];
  return list.flatMap((x, i) => choose(list.slice(i + 1), k - 1).map((rest) => [x, ...rest]));
}

const LOW_RANKS = "A23456789TJQK";

function lowWords(cards, eightOrBetter) {
  // "7-5-4-3-A low": the best five different ranks from the ace up; null without five (or, eight or better, with
  // one above the eight)
  const ranks = [...new Set(cards.map((c) => LOW_RANKS.indexOf(c[0])))].sort((a, b) => a - b).slice(0, 5);
  if (ranks.length < 5 || (eightOrBetter && ranks[4] > 7)) return null;
  return `${ranks.reverse().map((r) => LOW_RANKS[r]).join("-")} low`;
}

function studHand(cards) {
  // A stud hand's name at the showdown: razz its low, stud8 its high hand and its low (if it made one), stud its
  // high hand (the game: hand_started's, or the public snapshot's).
  if (state.game === "razz") return lowWords(cards, false);
  const high = madeHand(cards, []);
  const low = state.game === "stud8" ? lowWords(cards, true) : null;
  return low ? `${high} · ${low}` : high;
}

function madeHand(hole, board) {
  // The best five cards' name: Omaha's (four hole cards or more) with exactly two of the hole cards and three of the
  // board, Hold'em's with any five. Null with fewer than five cards.
  const fives = hole.length >= 4 && board.length >= 3
    ? choose(hole, 2).flatMap((h) => choose(board, 3).map((b) => h.concat(b))) : choose(hole.concat(board), 5);
  let best = null;
  for (const five of fives) {
    const s = score(five);
    const i = best ? s.findIndex((v, j) => v !== best[j]) : 0;
    if (!best || (i >= 0 && s[i] > best[i])) best = s;
  }
  return best && handWords(best);
}

// ---- drawing -------------------------------------------------------------------------------------------------
// Elements and text nodes only, never markup: whatever a name or a card holds is shown as text.

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function cardElement(card) {
  if (!card) return el("div", "card back");
  const e = el("div", "card" + (card[1] === "h" || card[1] === "d" ? " red" : ""));
  e.dataset.card = card;
  e.append(el("span", "r", card[0] === "T" ? "10" : card[0]), el("span", "s", SUITS[card[1]]));
  return e;
}

const money = (v) => (v == null ? "–" : Number(v).toLocaleString("en-US"));
const pct = (v) => `${(v * 100).toFixed(1)}%`;
const width = (share) => `${Number.isFinite(share) ? Math.min(100, Math.max(0, share * 100)) : 0}%`;

function studCards(s, faces) {
  // A stud seat's cards as dealt: every face where the feed gives them all (delayed mode, a hand the reveal policy
  // shows), the down cards marked; else its up cards between the backs of its down cards (the first two, the last).
  if (faces && s.cards.length >= s.count) {
    return s.cards.map((c) => {
      const e = cardElement(c);
      if (!s.up.includes(c)) e.classList.add("down");
      return e;
    });
  }
  const downs = Math.max(0, s.count - s.up.length);
  const first = Math.min(2, downs);
  return [...Array(first).fill(null), ...s.up, ...Array(downs - first).fill(null)].map(cardElement);
}

const SEATS_PER_COLUMN = 5;  // more seats than this: two columns, at the left and the right edge (index.html)

function statsOf(n, name) {
  // The seat's line of statistics, if the room's message has the player seated there now (by name).
  const entry = state.stats && config.stats.length ? state.stats.seats.find((e) => e.seat === n && e.name === name) : null;
  if (!entry) return null;
  const over = entry[config.statsOver] || {};
  const line = el("div", "stats");
  for (const key of config.stats) {
    const stat = STATS.get(key);
    if (!stat) continue;  // (named in the address, unknown: said once at the start)
    const item = el("span", "stat", `${stat[0]} ${stat[1](over, entry)}`);
    item.dataset.stat = key;
    line.append(item);
  }
  return line;
}

function releaseStats() {
  // Delayed mode: the statistics after a hand count its result, so they wait until the playback has shown it.
  const m = pendingStats;
  if (!m) return;
  const reached = m.hand === null || (m.epoch === state.epoch && state.hand !== null &&
    (state.hand > m.hand || (state.hand === m.hand && state.result)));
  if (config.mode === "public" || reached) { state.stats = m; pendingStats = null; }
}

function draw() {
  releaseStats();
  const seatsEl = document.getElementById("seats");
  seatsEl.textContent = "";
  const shown = Object.entries(state.seats)
    .filter(([, s]) => s.name || s.count || s.cards.length)
    .sort(([a], [b]) => Number(a) - Number(b));
  const columns = [el("div", "column left"), el("div", "column right")];
  const left = shown.length > SEATS_PER_COLUMN ? Math.ceil(shown.length / 2) : shown.length;
  for (const [i, [n, s]] of shown.entries()) {
    const seatEl = el("div", "seat" + (s.folded ? " folded" : "") + (Number(n) === state.toAct ? " to-act" : "") +
      (s.won ? " winner" : ""));
    seatEl.dataset.seat = n;
    const name = el("div", "name");
    name.append(el("span", "num", n), el("span", "player", s.name || `Seat ${n}`));
    if (Number(n) === state.button && !state.street) name.append(el("span", "button", "D"));  // (stud: no button)
    if (Number(n) === state.bringIn && state.street === "third") name.append(el("span", "bring-in", "BRING-IN"));
    const moneyEl = el("div", "money");
    moneyEl.append(el("span", "stack", money(s.stack)));
    if (s.bet) moneyEl.append(el("span", "bet", `bet ${money(s.bet)}`));
    if (s.allIn && s.lastAction !== "ALL IN") moneyEl.append(el("span", "bet", "all in"));
    if (s.lastAction) moneyEl.append(el("span", "last-action", s.lastAction));
    const faces = (config.mode === "delayed" || config.live) && s.cards.length;
    const cards = el("div", "cards" + (Math.max(s.count, faces ? s.cards.length : 0) > 4 ? " many" : ""));
    if (state.street) studCards(s, faces).forEach((c) => cards.append(c));
    else if (faces) s.cards.forEach((c) => cards.append(cardElement(c)));
    else for (let i = 0; i < s.count; i++) cards.append(cardElement(null));
    seatEl.append(name, cards, moneyEl);
    // the result's line: what the seat won, and the name of the hand it showed down
    const made = !state.result || s.folded ? null
      : state.street && s.cards.length + state.board.length >= 5 ? studHand(s.cards.concat(state.board))
        : s.cards.length >= 2 && state.board.length >= 3 ? madeHand(s.cards, state.board) : null;
    if (typeof s.won === "number" || made) {
      const result = el("div", "result");
      if (typeof s.won === "number") result.append(el("span", "won", `+${money(s.won)}`));
      if (made) result.append(el("span", "made", made));
      seatEl.append(result);
    }
    const numbers = statsOf(Number(n), s.name);
    if (numbers) seatEl.append(numbers);
    if (config.mode === "delayed" && s.equity && !s.folded) {
      const bar = el("div", "bar");
      const win = el("div", "w");
      const tie = el("div", "t");
      win.style.width = width(s.equity.win);
      tie.style.width = width(s.equity.tie);
      bar.append(win, tie);
      const share = el("span", "pct", pct(s.equity.win));
      if (s.equity.tie >= 0.001) share.append(" ", el("small", "", `tie ${pct(s.equity.tie)}`));
      // a hi-lo game: the low half's share after the high half's
      if (typeof s.equity.low_win === "number") share.append(" ", el("small", "low", `low ${pct(s.equity.low_win)}`));
      const eq = el("div", "equity");
      eq.append(bar, share);
      if (s.equity.outs) eq.append(el("span", "outs", `${s.equity.outs.length} outs`));
      seatEl.append(eq);
    }
    columns[i < left ? 0 : 1].append(seatEl);
  }
  seatsEl.append(...columns);
  const board = document.getElementById("board");
  board.textContent = "";
  state.board.forEach((c) => board.append(cardElement(c)));
  const laterEl = document.getElementById("later-boards");
  laterEl.textContent = "";
  for (const [number, cards] of Object.entries(state.later)) {
    const row = el("div", "later-board");
    row.dataset.board = number;
    // the cards a later run shares with the first are the first board's
    Array.from({ length: cards.length }, (_, i) => cards[i] || state.board[i]).filter(Boolean)
      .forEach((c) => row.append(cardElement(c)));
    laterEl.append(row);
  }
  document.querySelector("#pot .amount").textContent = money(state.pot);
  const side = document.getElementById("side-pots");
  side.textContent = "";
  if (state.pots.length > 1) {
    state.pots.slice(1).forEach((p, i) => {
      const row = el("div", "side-pot");
      row.append(el("span", "label", `Side pot ${i + 1}`), money(p.amount));
      side.append(row);
    });
  }
  document.getElementById("hand").textContent = state.hand ? `Hand ${state.hand}` : "";
  document.getElementById("street").textContent = state.street ? STUD_STREETS.get(state.street) : "";
  const winner = document.getElementById("winner");
  winner.hidden = !state.winner;
  winner.textContent = "";
  if (state.winner) winner.append(el("span", "", state.winner));  // (clamped to three lines: index.html)
  const status = document.getElementById("status");
  const ok = state.connected && state.tableStatus !== "offline";
  status.className = ok ? "ok" : "";
  status.textContent = !state.connected ? "reconnecting…" : state.tableStatus === "offline" ? "table offline" : "";
}

// ---- the connection -------------------------------------------------------------------------------------------

function take(topic, payload) {
  // One message: checked, then used; what does not fit is dropped (drop) and changes nothing.
  if (!payload.length) return;  // a retained copy cleared
  const text = new TextDecoder().decode(payload);
  if (topic === topics.status) {
    if (text !== "online" && text !== "offline") { drop(topic, "status", "neither online nor offline"); return; }
    state.tableStatus = text; draw(); return;
  }
  let body;
  try { body = JSON.parse(text); } catch (e) { drop(topic, "message", "not JSON"); return; }
  if (topic === topics.snapshot) {
    const problem = snapshotProblem(body);
    if (problem) { drop(topic, "snapshot", problem); return; }
    fromSnapshot(body); draw();
  } else if (topic === topics.hand) {
    const problem = delayedHandProblem(body);
    if (problem) { drop(topic, "delayed hand", problem); return; }
    fromDelayedHand(body);
  } else if (isStatsTopic(topic)) {
    const problem = statsProblem(body);
    if (problem) { drop(topic, "statistics", problem); return; }
    pendingStats = body; draw();
  } else if (topic === topics.events && config.live) {
    // live/events: the public event, and beside it the hands the reveal policy shows (applied with the event)
    const problem = !isObject(body) ? "not an object" : !absentOr(isCardsBySeat)(body.revealed) ? "revealed"
      : eventProblem(body.event);
    if (problem) { drop(topic, "live event", problem); return; }
    receive(body.revealed ? { ...body.event, revealed: body.revealed } : body.event);
  } else if (topic === topics.events) {
    const problem = eventProblem(body);
    if (problem) { drop(topic, EVENT_FIELDS.has(body && body.type) ? body.type : "event", problem); return; }
    receive(body);
  }
}

function connect() {
  client = mqtt.connect(config.broker, {
    protocolVersion: 5, username: config.username, password: config.password,
    clientId: `overlay-${Math.random().toString(16).slice(2, 10)}`,
    clean: true, reconnectPeriod: 2000, connectTimeout: 10000, keepalive: 30,
  });
  client.on("connect", () => {
    // Every (re)connection subscribes again, and so gets the retained snapshot (and delayed/hand) again: a resync.
    // delayed/hand before the events: the broker sends it at the subscription, so it comes before any live event.
    // Connected once the broker has the subscription: from then on nothing the table sends passes the page by.
    client.subscribe([topics.snapshot, ...(topics.hand ? [topics.hand] : []), topics.events, topics.status,
                      ...(config.stats.length ? [topics.stats] : [])],
                     { qos: 1 }, (err) => {
                       if (err) { console.warn("overlay: subscribe:", err.message); return; }
                       state.connected = true; state.connects += 1; draw();
                     });
  });
  client.on("close", () => { state.connected = false; draw(); });
  client.on("error", (err) => console.warn("overlay: broker:", err.message));
  client.on("message", (topic, payload) => {
    // An exception here would stop the client's delivery of every later message: none leaves this handler.
    try { take(topic, payload); } catch (err) { failed(topic, err); }
  });
}

for (const key of config.stats) {
  if (!STATS.has(key)) console.warn(`overlay: stats=${key} is none of ${[...STATS.keys()].join(", ")}: not shown`);
}
window.overlayState = state;  // for the browser test and for a look from the developer tools
window.overlayConfig = config;
draw();
connect();
