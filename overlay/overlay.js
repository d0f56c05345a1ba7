/* The broadcast overlay (docs/overlay.md): the table from rfid-table's MQTT feeds, drawn for OBS.
 *
 * Delayed mode (default): the hand from <prefix>/<table>/delayed/events — the secure events, hole cards and equity
 * included, released by the table after the broadcast delay — played back at the pace it was dealt (a hand released
 * at once is spread out again by the events' own times). Public mode (?mode=public): the live public snapshot and
 * public/events, without hole cards or equity, for a stream without delay.
 * Both take names, stacks and seats from the retained public snapshot, take it again on a seq gap, drop events
 * already seen, and reconnect by themselves. Delayed mode also takes the retained delayed/hand (what the table has
 * released of the hand being played back) on every connection and on a seq gap, and merges the events it missed:
 * after an outage, or opened during a playback, it still shows the hand whole, to its result.
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
  mode: query.get("mode") === "public" ? "public" : "delayed",
  // how much faster than the wall clock the table's time runs: a simulated table's --speed (the playback follows
  // the events' table times)
  speed: Number(query.get("speed")) > 0 ? Number(query.get("speed")) : 1,
};
const base = `${config.prefix}/${config.table}`;
const topics = {
  snapshot: `${base}/public/snapshot`,
  events: config.mode === "public" ? `${base}/public/events` : `${base}/delayed/events`,
  hand: config.mode === "public" ? null : `${base}/delayed/hand`,
  status: `${base}/status`,
};
const SUITS = { s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" };

// ---- the state drawn --------------------------------------------------------------------------------------------

const state = {
  epoch: null, lastSeq: 0, hand: null, button: null, board: [], pot: 0, pots: [], toAct: null,
  later: {},  // board number (2, 3) → its cards by position: a later run's board, a double board's second
  seats: {},  // seat number → {name, stack, bet, cards: [...], count, folded, allIn, equity, won}
  winner: null, winnerHand: null, tableStatus: null, connected: false, resyncs: 0, connects: 0,
  betting: false, result: false, voided: false,  // this hand: chips read, its showdown seen, a misdeal
  incomplete: false,  // delayed mode: events of this hand are gone for good (missed, and no longer in delayed/hand)
};
const RESULT_PAUSE_S = 4;  // delayed mode: the result stays this long before the next hand plays back
const RESULT_WAIT_S = 180;  // ... and the playback waits at most this long for a hand's late showdown
const HOLE_WAIT_S = 5;  // ... and at most this long at missed events for delayed/hand to bring them

function seat(n) {
  const key = String(n);
  if (!state.seats[key]) {
    state.seats[key] = { name: null, stack: null, bet: 0, cards: [], count: 0, folded: false, allIn: false,
                         equity: null, won: null };
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
  for (const s of Object.values(state.seats)) {
    Object.assign(s, { bet: 0, cards: [], count: 0, folded: false, allIn: false, equity: null, won: null });
  }
}

let resyncing = false;  // a seq gap was seen: the next snapshot replaces the picture, even an older one

function fromSnapshot(snap) {
  // The public snapshot: the seats' names, stacks and bets. In public mode the whole table (unless the events
  // already went past it: it is published after them); in delayed mode only what is not the hand being played
  // back (names; stacks until the delayed hand gives its own).
  const betting = snap.betting || null;
  if (config.mode === "public") {
    if (snap.epoch !== state.epoch) { state.epoch = snap.epoch; state.lastSeq = 0; }
    if ((snap.seq || 0) < state.lastSeq && !resyncing) {
      for (const entry of snap.seats || []) seat(entry.seat).name = entry.player ? entry.player.name : null;
      return;
    }
    resyncing = false;
    state.lastSeq = snap.seq || 0;
  }
  for (const entry of snap.seats || []) {
    const s = seat(entry.seat);
    s.name = entry.player ? entry.player.name : null;
    if (config.mode === "public" || state.hand === null) {
      if (betting && betting.stacks && betting.stacks[entry.seat] != null) s.stack = betting.stacks[entry.seat];
    }
    if (config.mode === "public") {
      s.count = entry.cards; s.folded = entry.folded;
      s.bet = betting && betting.bets ? (betting.bets[entry.seat] || 0) : 0;
      s.allIn = !!(betting && betting.all_in && betting.all_in.includes(entry.seat));
    }
  }
  if (config.mode === "public") {
    if (snap.hand !== state.hand) state.winner = null;
    state.hand = snap.hand; state.board = snap.board || []; state.button = snap.button;
    state.later = laterBoards(snap.boards);
    state.pot = betting ? betting.pot : 0; state.pots = betting ? betting.pots || [] : [];
    state.toAct = betting ? betting.to_act : null;
    if (snap.phase === "waiting") state.toAct = null;
  }
}

function apply(ev) {
  const p = ev;
  switch (ev.type) {
    case "hand_started": newHand(ev.hand); break;
    case "card_dealt": {
      const s = seat(p.seat); s.count = p.count;
      if (p.card && !s.cards.includes(p.card)) s.cards.push(p.card);
      break;
    }
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
      if (p.action === "fold") { s.folded = true; s.equity = null; } else {
        s.bet = p.to; if (s.stack != null) s.stack -= p.added; s.allIn = !!p.all_in;
      }
      state.pot = p.pot; state.toAct = p.next;
      break;
    }
    case "action_undone": state.pot = p.pot; state.toAct = p.next; break;
    case "pots":
      state.pots = p.pots; state.pot = p.total;
      for (const s of Object.values(state.seats)) s.bet = 0;
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
      const names = Object.entries(payouts).map(([n, v]) => `${seat(n).name || "Seat " + n} wins ${v.toLocaleString("en-US")}`);
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

function resync(why) {
  // Take the retained snapshot (and delayed/hand) again: subscribing anew makes the broker send them.
  console.info(`overlay: resynchronising (${why})`);
  resyncing = true;
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
  queue.push(...events);
  queue.sort((a, b) => a.seq - b.seq);
}

function fromDelayedHand(msg) {
  // delayed/hand: the events the table has released of the hand being played back and of the one before. Those not
  // seen yet join the queue; all of them are past the broadcast delay, so none shows a hole card early. (Events
  // missed that it no longer holds stay missed: the playback waits HOLE_WAIT_S for them, then plays on.)
  let events = msg.events || [];
  if (!events.length) return;
  if (msg.epoch !== state.epoch) newEpoch(msg.epoch);
  state.lastSeq = Math.max(state.lastSeq, msg.seq);
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
let resultShownAt = null;  // wall time the hand played back showed its result
const due = (ev) => ev.t / config.speed + offset;  // when an event is played back (wall seconds)

function pump() {
  clearTimeout(timer);
  const now = Date.now() / 1000;
  let changed = false;
  let waitS = null;  // how long until the playback looks again (null: when the next event is due)
  while (queue.length) {
    const head = queue[0];
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
      playedSeq = Math.max(playedSeq, ...late.map((e) => e.seq));
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
  if (waitS !== null) timer = setTimeout(pump, waitS * 1000);
  else if (queue.length) timer = setTimeout(pump, Math.max(10, (due(queue[0]) - now) * 1000));
}

// ---- drawing -------------------------------------------------------------------------------------------------

function cardElement(card) {
  const el = document.createElement("div");
  if (!card) { el.className = "card back"; return el; }
  el.className = "card" + ("hd".includes(card[1]) ? " red" : "");
  el.dataset.card = card;
  el.innerHTML = `<span class="r">${card[0] === "T" ? "10" : card[0]}</span><span class="s">${SUITS[card[1]]}</span>`;
  return el;
}

const money = (v) => (v == null ? "–" : Number(v).toLocaleString("en-US"));
const pct = (v) => `${(v * 100).toFixed(1)}%`;

function draw() {
  const seatsEl = document.getElementById("seats");
  seatsEl.textContent = "";
  const shown = Object.entries(state.seats)
    .filter(([, s]) => s.name || s.count || s.cards.length)
    .sort(([a], [b]) => Number(a) - Number(b));
  for (const [n, s] of shown) {
    const el = document.createElement("div");
    el.className = "seat" + (s.folded ? " folded" : "") + (Number(n) === state.toAct ? " to-act" : "") +
      (s.won ? " winner" : "");
    el.dataset.seat = n;
    const name = document.createElement("div");
    name.className = "name";
    name.innerHTML = `<span class="num">${n}</span><span class="player"></span>`;
    name.querySelector(".player").textContent = s.name || `Seat ${n}`;  // text, never markup
    if (Number(n) === state.button) name.insertAdjacentHTML("beforeend", '<span class="button">D</span>');
    const moneyEl = document.createElement("div");
    moneyEl.className = "money";
    moneyEl.innerHTML = `<span class="stack">${money(s.stack)}</span>` +
      (s.bet ? `<span class="bet">bet ${money(s.bet)}</span>` : "") + (s.allIn ? '<span class="bet">all in</span>' : "");
    const cards = document.createElement("div");
    cards.className = "cards";
    if (config.mode === "delayed" && s.cards.length) s.cards.forEach((c) => cards.append(cardElement(c)));
    else for (let i = 0; i < s.count; i++) cards.append(cardElement(null));
    el.append(name, cards, moneyEl);
    if (typeof s.won === "number") {
      const won = document.createElement("div");
      won.className = "won"; won.textContent = `+${money(s.won)}`;
      el.append(won);
    }
    if (config.mode === "delayed" && s.equity && !s.folded) {
      const eq = document.createElement("div");
      eq.className = "equity";
      eq.innerHTML = `<div class="bar"><div class="w" style="width:${s.equity.win * 100}%"></div>` +
        `<div class="t" style="width:${s.equity.tie * 100}%"></div></div>` +
        `<span class="pct">${pct(s.equity.win)}${s.equity.tie >= 0.001 ? ` <small>tie ${pct(s.equity.tie)}</small>` : ""}</span>` +
        (s.equity.outs ? `<span class="outs">${s.equity.outs.length} outs</span>` : "");
      el.append(eq);
    }
    seatsEl.append(el);
  }
  const board = document.getElementById("board");
  board.textContent = "";
  state.board.forEach((c) => board.append(cardElement(c)));
  const laterEl = document.getElementById("later-boards");
  laterEl.textContent = "";
  for (const [number, cards] of Object.entries(state.later)) {
    const row = document.createElement("div");
    row.className = "later-board";
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
      const row = document.createElement("div");
      row.className = "side-pot";
      row.innerHTML = `<span class="label">Side pot ${i + 1}</span>${money(p.amount)}`;
      side.append(row);
    });
  }
  document.getElementById("hand").textContent = state.hand ? `Hand ${state.hand}` : "";
  const winner = document.getElementById("winner");
  winner.hidden = !state.winner;
  winner.textContent = state.winner || "";
  const status = document.getElementById("status");
  const ok = state.connected && state.tableStatus !== "offline";
  status.className = ok ? "ok" : "";
  status.textContent = !state.connected ? "reconnecting…" : state.tableStatus === "offline" ? "table offline" : "";
}

// ---- the connection -------------------------------------------------------------------------------------------

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
    client.subscribe([topics.snapshot, ...(topics.hand ? [topics.hand] : []), topics.events, topics.status],
                     { qos: 1 }, (err) => {
                       if (err) { console.warn("overlay: subscribe:", err.message); return; }
                       state.connected = true; state.connects += 1; draw();
                     });
  });
  client.on("close", () => { state.connected = false; draw(); });
  client.on("error", (err) => console.warn("overlay: broker:", err.message));
  client.on("message", (topic, payload) => {
    const text = new TextDecoder().decode(payload);
    if (topic === topics.status) { state.tableStatus = text; draw(); return; }
    let body;
    try { body = JSON.parse(text); } catch (e) { console.warn(`overlay: ${topic}: not JSON`); return; }
    if (topic === topics.snapshot) { fromSnapshot(body); draw(); } else if (topic === topics.hand) fromDelayedHand(body);
    else receive(body);
  });
}

window.overlayState = state;  // for the browser test and for a look from the developer tools
window.overlayConfig = config;
draw();
connect();
