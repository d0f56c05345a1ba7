/* The floor's console (docs/console.md): a tablet page for the floor and the dealer, on the table's MQTT feeds.
 *
 * It logs in as a floor or dealer user of the card room and shows, from the table's secure snapshot (retained, and
 * published again within a quarter of a second of every event): the seats with names, stacks, bets and cards, the
 * board, the pot, whose action, the clock; what waits for the floor, oldest first, with one tap to answer it; and
 * a form for every other command of the command schema (command.schema.js, written beside the page when rfid-table
 * installs it) that the role may send. Every command's reply is shown where it was asked.
 *
 * What waits for the floor is the snapshot's `irregularities`; an item goes at once when an event names it in its
 * `irregularity` (floor_ruling, irregularity_resolved, ...), whose reason the page shows, and the snapshot stays the
 * truth. The page reconnects by itself every 2 s, takes the retained snapshot again on every connection and on a
 * seq gap, and builds its DOM from text nodes only; every message is checked before any of it is used, and one
 * that does not fit is dropped alone (one console warning per topic and kind).
 */
"use strict";

const query = new URLSearchParams(location.search);
const ROLES = ["floor", "dealer"];
const SAVED_LOGIN = "rfid-table-console-login";  // sessionStorage: this tab's login, kept through a reload
const SAVED_CARDS = "rfid-table-console-cards";  // localStorage: hole cards hidden on this tablet
const RECONNECT_MS = 2000;
const NO_ANSWER_S = 10;  // a command unanswered this long says so (and still shows the answer if it comes)
const FORGET_PENDING_S = 600;
const WAKE_PROBE_S = 20;  // a page hidden this long checks its connection when shown again
const SETTLED_SHOWN = 6;
const NO_LONGER_WAITS = "no longer waits for the floor";
const SUITS = { s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" };
// Commands that cost a hand when sent by mistake: the page asks once more.
const CONFIRM = new Map([
  ["misdeal", "The hand is void: the bets go back and the cards are dealt again."],
  ["undo", "The latest betting input of the round is taken back."],
]);
const GROUPS = [
  ["The hand", ["misdeal", "undo", "declare", "run_it", "bomb_pot", "exposed_card", "new_hand"]],
  ["Seats", ["seat_player", "clear_seat", "set_stacks", "seats", "set_button"]],
  ["The clock", ["start_clock", "stop_clock", "time_bank", "floor_call"]],
  ["The table", ["select_deck", "set_level", "set_game", "ping"]],
];
const LABELS = {
  ping: "Ping the table", select_deck: "Select a deck", declare: "Declare", misdeal: "Misdeal",
  exposed_card: "Exposed card", set_button: "Set the button", seats: "Seats dealt in", set_stacks: "Stacks",
  new_hand: "New hand", undo: "Undo", floor_call: "Call the floor", start_clock: "Start the clock",
  stop_clock: "Stop the clock", time_bank: "Time bank", seat_player: "Seat a player", clear_seat: "Clear a seat",
  set_level: "Set the level", set_game: "Set the game", bomb_pot: "Bomb pot", run_it: "Run it 2 or 3 times", confirm: "Confirm",
  override: "Override", floor_pick: "Pick",
};
// What the table's codes say, where their words alone do not (docs/events.md)
const LAPSES = { hand_end: "when its hand ends", next_hand: "when the next hand begins",
                 next_hand_action: "at substantial action in a later hand",
                 never: "never: it waits until the floor answers" };
const RESOLUTIONS = { hand_ended: "lapsed: its hand ended", misdeal: "lapsed: the hand was void",
                      next_hand: "lapsed: the next hand began",
                      next_hand_action: "lapsed: substantial action in a later hand",
                      fixed: "put right: the short seats got their cards",
                      dead_hand: "substantial action came first: dead hand",
                      returned: "the missing card was read again" };
const rulingWords = (ruling) => (ruling === "floor_decides" ? "the floor decides" : words(ruling));
const FIELD_LABELS = { player_id: "Player id", stacks: "Stacks as counted", pots: "Pots (0: the main pot)",
                       seats: "Seats dealt in" };

const words = (code) => String(code).replace(/_/g, " ");
const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);
const labelOf = (name) => LABELS[name] || capital(words(name));
const money = (v) => (typeof v === "number" ? v.toLocaleString("en-US") : "–");
const $ = (id) => document.getElementById(id);

// What the feeds may send, and the checks of each message: feed.js, shared with the floor's overview page.

const warned = new Set();
function warnOnce(key, message) {
  if (warned.has(key)) return;
  warned.add(key);
  console.warn(message);
}

function drop(topic, kind, why) {
  const key = `${topic}: ${kind}`;
  state.dropped[key] = (state.dropped[key] || 0) + 1;
  warnOnce(key, `console: ${key} dropped, it does not fit the table's schema (${why}); ` +
                "more like it are dropped without a word (consoleState.dropped counts them)");
}

function failed(what, err) {
  // The last line of defence: what the checks let through but the page could not use costs that message alone.
  const key = `${what}: failed`;
  state.dropped[key] = (state.dropped[key] || 0) + 1;
  warnOnce(key, `console: ${what}: ${err && err.message}; the page goes on (said once)`);
}

// ---- the state ---------------------------------------------------------------------------------------------------

const state = {
  login: null,  // {broker, table, prefix, role, username, password}
  connected: false, connects: 0, resyncs: 0, tableStatus: null, stopped: null, warning: null,
  snapshot: null, receivedAt: 0, epoch: null, lastSeq: 0, resyncing: false,
  items: new Map(),  // irregularity → the item as the snapshot has it (defaults filled in)
  resolved: new Map(),  // irregularity → seq of the event that settled it
  settled: [],  // what went, newest first: {id, title, reason, note}
  stacks: {},  // seat → the last stack known (the snapshot has none between hands)
  showCards: true,
  replies: [],  // the latest replies, for a look from the developer tools and the tests
  dropped: {},
};
let topics = null;
let client = null;
let commands = [];  // from the schema: {name, roles, description, fields, def}
let schemaProblem = null;

// ---- the command schema ----------------------------------------------------------------------------------------

function readSchema(schema) {
  // The commands of command.schema.json with their fields, resolved. Throws with what is wrong.
  if (!isObject(schema) || !isObject(schema.$defs) || !isObject(schema.properties) ||
      !isObject(schema.properties.command) || !Array.isArray(schema.properties.command.enum)) {
    throw new Error("it is not the table's command schema");
  }
  const defs = schema.$defs;
  const resolve = (node, depth = 0) => {
    if (!isObject(node) || depth > 10) return {};
    if (typeof node.$ref !== "string") return node;
    const name = node.$ref.replace(/^#\/\$defs\//, "");
    const { $ref, ...rest } = node;
    return { ...resolve(defs[name], depth + 1), ...rest, ref: name };
  };
  const refs = new Map();  // command → its definition, as the schema's allOf names it
  for (const rule of Array.isArray(schema.allOf) ? schema.allOf : []) {
    const test = rule && rule.if && rule.if.properties && rule.if.properties.command;
    const name = test && test.const;
    if (typeof name === "string" && rule.then) refs.set(name, resolve(rule.then));
  }
  return schema.properties.command.enum.filter((name) => typeof name === "string").map((name) => {
    const def = refs.get(name) || resolve(defs[name]);
    const properties = isObject(def.properties) ? def.properties : {};
    const required = Array.isArray(def.required) ? def.required : [];
    const fields = Object.keys(properties).filter((f) => f !== "id" && f !== "command").map((f) => {
      const spec = resolve(properties[f]);
      return { name: f, spec, required: required.includes(f), kind: kindOf(f, spec, resolve) };
    });
    return { name, roles: Array.isArray(def["x-roles"]) ? def["x-roles"] : [],
             description: typeof def.description === "string" ? def.description : "", fields };
  });
}

function kindOf(name, spec, resolve) {
  // How a field is asked for: seat, seats, choice, choices, integer, text, stacks, list (numbers), json
  if (spec.ref === "seat" || (name === "seat" && spec.type === "integer")) return { type: "seat" };
  if (Array.isArray(spec.enum)) return { type: "choice", values: spec.enum };
  if (spec.type === "integer") return { type: "integer", min: spec.minimum, max: spec.maximum };
  if (spec.type === "string") return { type: "text", max: spec.maxLength };
  if (spec.type === "boolean") return { type: "choice", values: [true, false] };
  if (spec.type === "array") {
    const items = resolve(spec.items);
    if (items.ref === "seat") return { type: "seats" };
    if (items.type === "integer" && Number.isSafeInteger(items.minimum) && Number.isSafeInteger(items.maximum) &&
        items.maximum - items.minimum <= 20) {
      const values = [];
      for (let v = items.minimum; v <= items.maximum; v++) values.push(v);
      return { type: "choices", values };
    }
    if (items.type === "integer") return { type: "list" };
  }
  if (spec.type === "object" && isObject(spec.patternProperties)) {
    const values = Object.values(spec.patternProperties).map((v) => resolve(v));
    if (values.length === 1 && values[0].type === "integer") return { type: "stacks" };
  }
  return { type: "json" };
}

const mayIAsk = (name) => commands.some((c) => c.name === name && c.roles.includes(state.login.role));
const commandNamed = (name) => commands.find((c) => c.name === name);
// Commands that name an irregularity are answered from the list of what waits, not from a form.
const answersAnItem = (c) => c.fields.some((f) => f.name === "irregularity");

// ---- drawing -------------------------------------------------------------------------------------------------
// Elements and text nodes only, never markup: whatever a name or a rule holds is shown as text.

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

function button(text, className, onTap) {
  const b = el("button", className, text);
  b.type = "button";
  b.addEventListener("click", (event) => {
    event.preventDefault();
    try { onTap(event); } catch (err) { failed(`tap on ${text}`, err); }
  });
  return b;
}

function cardElement(card) {
  if (!card) return el("span", "card back");
  const e = el("span", "card" + (card[1] === "h" || card[1] === "d" ? " red" : ""));
  e.dataset.card = card;
  e.append(el("span", "r", card[0] === "T" ? "10" : card[0]), el("span", "s", SUITS[card[1]]));
  return e;
}

function seatName(n) {
  const snap = state.snapshot;
  const entry = snap && snap.seats.find((s) => s.seat === n);
  return entry && entry.player ? entry.player.name : null;
}

const seatWords = (seats) => seats.length === 0 ? "" : (seats.length === 1 ? "Seat " : "Seats ") +
  seats.map((n) => (seatName(n) ? `${n} (${seatName(n)})` : String(n))).join(", ");

function drawStatus() {
  const status = $("status");
  let text, kind;
  if (state.stopped) { text = "stopped"; kind = "bad"; }
  else if (!state.login) { text = "not logged in"; kind = ""; }
  else if (!state.connected) { text = state.connects ? "reconnecting…" : "connecting…"; kind = "warn"; }
  else if (state.tableStatus === "offline") { text = "table offline"; kind = "bad"; }
  else if (!state.snapshot) { text = "waiting for the table"; kind = "warn"; }
  else { text = "connected"; kind = "ok"; }
  status.textContent = text;
  status.className = "tag " + kind;
  const l = state.login;
  $("who").textContent = l ? `${l.table} · ${l.role} ${l.username}` : "";
  $("title").textContent = l ? labelOfRole(l.role) : "Floor console";
  $("logout").hidden = !l;
  $("cards-toggle").hidden = !l;
  $("cards-toggle").textContent = state.showCards ? "Hide cards" : "Show cards";
  for (const b of document.querySelectorAll("button.sends")) b.disabled = !state.connected || Boolean(b.dataset.busy);
}
const labelOfRole = (role) => (role === "dealer" ? "Dealer console" : "Floor console");

function drawTable() {
  const snap = state.snapshot;
  const info = $("info");
  info.textContent = "";
  const boards = $("boards");
  boards.textContent = "";
  const seatsEl = $("seats");
  seatsEl.textContent = "";
  $("pots").textContent = "";
  if (!snap) {
    info.append(el("span", "dim", state.connected ? `No snapshot of table ${state.login.table} yet.` : ""));
    return;
  }
  const betting = snap.betting || null;
  info.append(el("span", "hand", snap.hand ? `Hand ${snap.hand}` : "No hand yet"),
              el("span", "", snap.phase === "waiting" ? "between hands" : words(snap.phase)));
  if (snap.deck) info.append(el("span", "dim", `Deck ${snap.deck}`));
  if (snap.level) {
    const l = snap.level;
    info.append(el("span", "", `Level ${l.level}: ${money(l.small_blind)}/${money(l.big_blind)}` +
      (l.ante ? `, ante ${money(l.ante)}` : "") +
      (l.big_blind_ante ? `, big blind ante ${money(l.big_blind_ante)}` : "") +
      (l.next_hand ? ` (level ${l.next_hand} from the next hand)` : "")));
  }
  if (snap.misdeal) info.append(el("span", "badge bad", "misdeal: deal again"));
  if (betting && betting.to_act) {
    const who = seatName(betting.to_act);
    info.append(el("span", "", `To act: seat ${betting.to_act}` + (who ? ` (${who})` : "")));
  }
  const runs = snap.boards && snap.boards.length > 1 ? snap.boards : [snap.board];
  runs.forEach((cards, i) => {
    const row = el("div", "board");
    row.dataset.board = String(i + 1);
    cards.forEach((c) => row.append(cardElement(c)));
    if (!cards.length) row.append(el("span", "dim", "no board yet"));
    boards.append(row);
  });
  if (betting) {
    const pots = $("pots");
    pots.append(el("span", "", `Pot ${money(betting.pot)}`));
    betting.pots.slice(1).forEach((p, i) => pots.append(el("div", "side", `Side pot ${i + 1}: ${money(p.amount)}`)));
  }
  drawClock();
  const conduct = new Map((snap.conduct ? snap.conduct.seats : []).map((c) => [c.seat, c]));
  for (const entry of [...snap.seats].sort((a, b) => a.seat - b.seat)) {
    const n = entry.seat;
    const name = entry.player ? entry.player.name : null;
    const stack = betting && betting.stacks && betting.stacks[n] != null ? betting.stacks[n] : state.stacks[n];
    const bet = betting && betting.bets ? betting.bets[n] : undefined;
    const empty = !name && !entry.cards && stack === undefined;
    const toAct = betting && betting.to_act === n;
    const tile = el("div", "seat" + (empty ? " empty" : "") + (entry.folded ? " folded" : "") +
                           (toAct ? " to-act" : ""));
    tile.dataset.seat = String(n);
    const top = el("div", "top");
    top.append(el("span", "num", String(n)),
               el("span", "name" + (name ? "" : " dim"), name || (empty ? "empty" : "no name")));
    if (snap.button === n) top.append(el("span", "btn", "D"));
    tile.append(top);
    if (!empty) {
      if (stack !== undefined || bet) {  // (a table that does not read the chips knows neither)
        const moneyEl = el("div", "money");
        moneyEl.append(el("span", "stack", money(stack)));
        if (bet) moneyEl.append(el("span", "bet", `bet ${money(bet)}`));
        tile.append(moneyEl);
      }
      const cards = el("div", "cards");
      const hole = state.showCards && entry.hole_cards && entry.hole_cards.length ? entry.hole_cards : null;
      if (hole) hole.forEach((c) => cards.append(cardElement(c)));
      else for (let i = 0; i < Math.min(entry.cards, 7); i++) cards.append(cardElement(null));
      tile.append(cards);
    }
    const badges = el("div", "badges");
    if (toAct) badges.append(el("span", "badge", "to act"));
    if (betting && betting.all_in && betting.all_in.includes(n)) badges.append(el("span", "badge", "all in"));
    if (entry.folded && entry.cards) badges.append(el("span", "badge", "folded"));
    const c = conduct.get(n);
    if (c) {
      if (c.breach && c.breach.length) badges.append(el("span", "badge bad", c.breach.map(words).join(", ")));
      if (c.left) badges.append(el("span", "badge bad", "left the seat"));
      else if (c.absent_at_deal) badges.append(el("span", "badge bad", "absent at the deal"));
      else if (c.present === false && (name || entry.cards)) badges.append(el("span", "badge", "away"));
    }
    if (badges.childNodes.length) tile.append(badges);
    seatsEl.append(tile);
  }
}

function drawClock() {
  const snap = state.snapshot;
  const clock = $("clock");
  const c = snap && snap.clock;
  if (!c || !c.seat || c.phase === "idle") { clock.className = "off"; clock.textContent = "Clock"; return; }
  clock.className = c.phase;
  let text = `Clock: seat ${c.seat}` + (seatName(c.seat) ? ` (${seatName(c.seat)})` : "") + ` · ${words(c.phase)}`;
  if (typeof c.remaining_s === "number" && c.phase !== "expired") {
    const left = Math.max(0, c.remaining_s - (Date.now() / 1000 - state.receivedAt));
    text += ` · ${Math.ceil(left)} s`;
  }
  clock.textContent = text;
}

// ---- what waits for the floor -----------------------------------------------------------------------------------

const itemViews = new Map();  // irregularity → {el, key, note, info, answers, reply, busy}

function itemFacts(item) {
  const title = capital(words(item.code || item.type || "irregularity"));
  const kind = item.type && item.type !== "irregular_card" && item.type !== item.code ? words(item.type) : "";
  const lines = [];
  const where = [item.hand ? `Hand ${item.hand}` : null, seatWords(item.seats) || null].filter(Boolean).join(" · ");
  if (where) lines.push(["", where]);
  if (item.rules.length) lines.push(["Rule: ", item.rules.join(" · ")]);
  lines.push(["Proposed ruling: ", item.ruling_text || rulingWords(item.ruling || "floor_decides")]);
  if (item.lapses) lines.push(["Lapses unanswered: ", LAPSES[item.lapses] || words(item.lapses)]);
  return { title, kind, lines, stop: item.severity === "stop" };
}

function answersOf(item) {
  // The answers the item takes that this role may send (the schema says who may send what).
  const listed = item.answers && item.answers.length ? item.answers : ["confirm", "override"];
  return listed.filter((a) => mayIAsk(a));
}

function drawItems() {
  const container = $("items");
  for (const [id, view] of itemViews) {
    if (!state.items.has(id)) { view.el.remove(); itemViews.delete(id); }
  }
  let before = container.firstChild;
  for (const item of [...state.items.values()].sort((a, b) => a.irregularity - b.irregularity)) {
    const facts = itemFacts(item);
    const answers = answersOf(item);
    const key = JSON.stringify([facts, answers, item.candidates || item.cards || null]);
    let view = itemViews.get(item.irregularity);
    if (!view) {
      view = makeItemView(item);
      itemViews.set(item.irregularity, view);
    }
    if (view.key !== key) fillItemView(view, item, facts, answers);
    view.key = key;
    if (view.el !== before) container.insertBefore(view.el, before);
    before = view.el.nextSibling;
  }
  $("nothing").hidden = state.items.size > 0;
  $("waiting-count").textContent = state.items.size ? `(${state.items.size})` : "";
  drawSettled();
}

function makeItemView(item) {
  const view = { el: el("div", "item"), head: el("div", "what"), info: el("div", "info"), note: null,
                 answers: el("div", "answers"), reply: el("div", "reply"), key: null, busy: false };
  view.el.dataset.irregularity = String(item.irregularity);
  view.el.append(view.head, view.info);
  if (["confirm", "override"].some((a) => mayIAsk(a) && commandNamed(a).fields.some((f) => f.name === "note"))) {
    view.note = el("input", "note");
    view.note.type = "text";
    view.note.maxLength = 200;
    view.note.placeholder = "Note (optional)";
    view.el.append(view.note);
  }
  view.el.append(view.answers, view.reply);
  return view;
}

function fillItemView(view, item, facts, answers) {
  const id = item.irregularity;
  view.el.classList.toggle("stop", facts.stop);
  view.head.textContent = "";
  view.head.append(facts.title);
  if (facts.kind) view.head.append(el("span", "kind", facts.kind));
  view.info.textContent = "";
  for (const [label, text] of facts.lines) {
    const line = el("div", label === "Proposed ruling: " ? "ruling" : "");
    if (label) line.append(el("span", "dim", label));
    line.append(label === "Proposed ruling: " ? el("b", "", text) : text);
    view.info.append(line);
  }
  view.answers.textContent = "";
  if (view.note) view.note.hidden = !answers.some((a) => a === "confirm" || a === "override");
  if (!answers.length) {
    view.answers.append(el("div", "dim", "The floor answers this."));
    return;
  }
  const ruling = item.ruling_text || (item.ruling && item.ruling !== "floor_decides" ? words(item.ruling) : "");
  for (const answer of answers) {
    if (answer === "floor_pick") {
      const picks = el("div", "picks");
      const cards = item.candidates || item.cards || [];
      picks.append(el("span", "", cards.length ? "Pick the card:" : "Pick the card (the snapshot names none)"));
      for (const card of cards) {
        const b = button("", "sends pick" + (card[1] === "h" || card[1] === "d" ? " red" : ""),
                         () => answerItem(id, "floor_pick", { card }));
        b.dataset.answer = "floor_pick";
        b.dataset.card = card;
        b.append(el("span", "", (card[0] === "T" ? "10" : card[0]) + SUITS[card[1]]));
        picks.append(b);
      }
      view.answers.append(picks);
      continue;
    }
    const text = answer === "confirm" ? `Confirm${ruling ? `: ${ruling}` : ""}` :
      answer === "override" ? "Override: play on" : labelOf(answer);
    const b = button(text, "sends " + (answer === "confirm" ? "primary" : ""), () => answerItem(id, answer, {}));
    b.dataset.answer = answer;
    view.answers.append(b);
  }
  setItemBusy(view, view.busy);
}

function setItemBusy(view, busy) {
  view.busy = busy;
  for (const b of view.answers.querySelectorAll("button")) {
    b.dataset.busy = busy ? "1" : "";
    b.disabled = busy || !state.connected;
  }
}

function answerItem(id, command, extra) {
  const view = itemViews.get(id);
  const body = { command, irregularity: id, ...extra };
  const note = view && view.note && !view.note.hidden ? view.note.value.trim() : "";
  if (note && commandNamed(command).fields.some((f) => f.name === "note")) body.note = note;
  send(body, itemTarget(id));
}

function itemTarget(id) {
  // Where an answer's reply shows: on the item, or on its line among what went once it is gone.
  return {
    show(kind, text) {
      const view = itemViews.get(id);
      if (view) { setReply(view.reply, kind, text); return; }
      const gone = state.settled.find((s) => s.id === id);
      if (gone) { gone.note = { kind, text }; drawSettled(); return; }
      setReply($("notice"), kind, `#${id}: ${text}`);
    },
    busy(on) { const view = itemViews.get(id); if (view) setItemBusy(view, on); },
    invalid() {},
  };
}

function settle(id, reason) {
  // An item goes, for a reason the page shows among what went.
  const item = state.items.get(id);
  if (!item) return;
  state.items.delete(id);
  state.settled = state.settled.filter((s) => s.id !== id);
  state.settled.unshift({ id, title: itemFacts(item).title, reason, note: null,
                          at: new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) });
  state.settled.length = Math.min(state.settled.length, SETTLED_SHOWN);
}

function settledReason(e) {
  const by = e.by ? ` by ${e.by}` : "";
  if (e.type === "floor_ruling") {
    const did = { confirm: "confirmed", override: "overridden" }[e.decision] ||
      (e.decision ? words(e.decision) : "answered");
    return `${did}${by}` + (e.result && e.result !== "none" ? `: ${words(e.result)}` : "") +
      (e.note ? ` — “${e.note}”` : "");
  }
  if (e.type === "irregularity_resolved" && e.resolution) {
    return (RESOLUTIONS[e.resolution] || words(e.resolution)) + by;
  }
  if (e.type === "board_corrected") return `burn card picked${by}: the board is corrected`;
  const why = e.resolution || e.reason || e.result;
  return capital(words(e.type)) + (why ? `: ${words(why)}` : "") + by;
}

function drawSettled() {
  const list = $("settled");
  list.textContent = "";
  for (const s of state.settled) {
    const line = el("div", "gone");
    line.dataset.irregularity = String(s.id);
    line.append(el("span", "", `${s.at} `), el("b", "", s.title), ` — ${s.reason}`);
    if (s.note) line.append(el("div", "reply " + s.note.kind, s.note.text));
    list.append(line);
  }
}

// ---- forms, built from the schema --------------------------------------------------------------------------------

const seatWidgets = new Set();  // widgets whose buttons are the table's seats: redrawn when the seats change
let seatNumbers = [];

function tableSeats() {
  const snap = state.snapshot;
  return snap && snap.seats.length ? snap.seats.map((s) => s.seat).sort((a, b) => a - b)
    : Array.from({ length: SEATS_MAX }, (_, i) => i + 1);
}

function choiceWidget(values, multi, labelFor = String) {
  const box = el("div", "choices");
  let chosen = new Set();
  const draw = (list) => {
    box.textContent = "";
    chosen = new Set([...chosen].filter((v) => list.includes(v)));
    for (const v of list) {
      const b = button(labelFor(v), "", () => {
        if (chosen.has(v)) chosen.delete(v);
        else { if (!multi) chosen.clear(); chosen.add(v); }
        for (const other of box.children) other.setAttribute("aria-pressed", String(chosen.has(other.value0)));
      });
      b.value0 = v;
      b.dataset.value = String(v);
      b.setAttribute("aria-pressed", String(chosen.has(v)));
      box.append(b);
    }
  };
  draw(values);
  return {
    el: box, draw,
    get() {
      const list = [...chosen];
      if (!list.length) return { empty: true };
      return { value: multi ? list.sort((a, b) => a - b) : list[0] };
    },
    reset() { chosen.clear(); for (const b of box.children) b.setAttribute("aria-pressed", "false"); },
    mark(on) { box.classList.toggle("invalid", on); },
  };
}

function inputWidget(kind, name) {
  const input = el("input");
  if (kind.type === "integer") {
    input.type = "number";
    input.inputMode = "numeric";
    input.step = "1";
    if (Number.isSafeInteger(kind.min)) input.min = String(kind.min);
    if (Number.isSafeInteger(kind.max)) input.max = String(kind.max);
  } else {
    input.type = "text";
    if (Number.isSafeInteger(kind.max)) input.maxLength = kind.max;
    // a tablet's keyboard capitalises a player's name and a note as people write them, never an id
    input.autocapitalize = name === "name" ? "words" : name === "note" ? "sentences" : "none";
    input.spellcheck = false;
    if (kind.type === "list") input.placeholder = "numbers, separated by spaces";
    if (kind.type === "json") input.placeholder = "JSON";
  }
  return {
    el: input,
    get() {
      const raw = input.value.trim();
      if (!raw) return { empty: true };
      if (kind.type === "integer") {
        const n = /^-?[0-9]+$/.test(raw) ? Number(raw) : NaN;
        return Number.isSafeInteger(n) ? { value: n } : { problem: "a whole number" };
      }
      if (kind.type === "list") {
        const parts = raw.split(/[\s,]+/).filter(Boolean);
        const list = parts.map(Number);
        return parts.every((p) => /^[0-9]+$/.test(p)) ? { value: list } : { problem: "whole numbers" };
      }
      if (kind.type === "json") {
        try { return { value: JSON.parse(raw) }; } catch (e) { return { problem: "JSON" }; }
      }
      return { value: raw };
    },
    reset() { input.value = ""; },
    mark(on) { input.classList.toggle("invalid", on); },
  };
}

function stacksWidget() {
  // seat → chips: one number per seat of the table; only those filled in are sent
  const box = el("div", "stacks");
  const inputs = new Map();
  const draw = (list) => {
    const kept = new Map([...inputs].map(([n, i]) => [n, i.value]));
    box.textContent = "";
    inputs.clear();
    for (const n of list) {
      const label = el("label");
      const input = el("input");
      input.type = "number";
      input.inputMode = "numeric";
      input.min = "0";
      input.step = "1";
      input.dataset.seat = String(n);
      input.value = kept.get(n) || "";
      label.append(el("span", "", `Seat ${n}`), input);
      box.append(label);
      inputs.set(n, input);
    }
  };
  draw(tableSeats());
  return {
    el: box, draw,
    refresh() {  // the stacks known, as a hint in each empty field
      for (const [n, input] of inputs) input.placeholder = state.stacks[n] !== undefined ? money(state.stacks[n]) : "";
    },
    get() {
      const out = {};
      for (const [n, input] of inputs) {
        const raw = input.value.trim();
        if (!raw) continue;
        if (!/^[0-9]+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
          return { problem: `seat ${n}: a whole number` };
        }
        out[String(n)] = Number(raw);
      }
      return Object.keys(out).length ? { value: out } : { empty: true };
    },
    reset() { for (const input of inputs.values()) input.value = ""; },
    mark(on) { box.classList.toggle("invalid", on); },
  };
}

function widgetFor(field) {
  const kind = field.kind;
  let widget;
  if (kind.type === "seat" || kind.type === "seats") {
    widget = choiceWidget(tableSeats(), kind.type === "seats");
    seatWidgets.add(widget);
  } else if (kind.type === "choice" || kind.type === "choices") {
    widget = choiceWidget(kind.values, kind.type === "choices",
                          (v) => (typeof v === "boolean" ? (v ? "yes" : "no") : words(v)));
  } else if (kind.type === "stacks") {
    widget = stacksWidget();
    seatWidgets.add(widget);
  } else {
    widget = inputWidget(kind, field.name);
  }
  return widget;
}

const forms = new Map();  // command → {el, widgets, opener}
let openForm = null;

function buildCommands() {
  const list = $("command-list");
  const holder = $("command-forms");
  list.textContent = "";
  holder.textContent = "";
  forms.clear();
  seatWidgets.clear();
  openForm = null;
  if (schemaProblem) {
    list.append(el("div", "error", `No commands: ${schemaProblem}`));
    return;
  }
  const mine = commands.filter((c) => c.roles.includes(state.login.role) && !answersAnItem(c));
  if (!mine.length) { list.append(el("div", "dim", `The ${state.login.role} sends no command from here.`)); return; }
  const placed = new Set();
  const groups = GROUPS.map(([title, names]) => [title, names.map(commandNamed).filter((c) => c && mine.includes(c))]);
  groups.forEach(([, cs]) => cs.forEach((c) => placed.add(c)));
  groups.push(["More", mine.filter((c) => !placed.has(c))]);
  for (const [title, cs] of groups) {
    if (!cs.length) continue;
    const group = el("div", "group");
    const grid = el("div", "list");
    group.append(el("h3", "", title), grid);
    for (const c of cs) {
      const form = makeForm(c);
      forms.set(c.name, form);
      holder.append(form.el);
      const b = button(labelOf(c.name), "", () => toggleForm(c.name));
      b.dataset.command = c.name;
      form.opener = b;
      grid.append(b);
    }
    list.append(group);
  }
}

function toggleForm(name) {
  const form = forms.get(name);
  const opening = openForm !== form;
  if (openForm) { openForm.el.hidden = true; openForm.opener.classList.remove("open"); }
  openForm = opening ? form : null;
  if (!opening) return;
  form.el.hidden = false;
  form.opener.classList.add("open");
  for (const w of form.widgets.values()) if (w.refresh) w.refresh();
  form.el.scrollIntoView({ block: "nearest" });
}

function makeForm(c) {
  const box = el("div", "form");
  box.hidden = true;
  box.dataset.command = c.name;
  box.append(el("h3", "", labelOf(c.name)));
  if (c.description) box.append(el("div", "about", c.description));
  const widgets = new Map();
  for (const field of c.fields) {
    const wrap = el("div", "field");
    wrap.dataset.field = field.name;
    const label = el("div", "label", FIELD_LABELS[field.name] || capital(words(field.name)));
    if (!field.required) label.append(" ", el("span", "opt", "(optional)"));
    wrap.append(label);
    const widget = widgetFor(field);
    wrap.append(widget.el);
    const obvious = ["seat", "seats", "choice"].includes(field.kind.type);  // buttons say it themselves
    if (!obvious && typeof field.spec.description === "string") wrap.append(el("div", "hint", field.spec.description));
    widgets.set(field.name, widget);
    box.append(wrap);
  }
  const reply = el("div", "reply");
  const actions = el("div", "actions");
  const confirming = el("div", "confirming");
  confirming.hidden = true;
  const form = { el: box, widgets, opener: null };
  const target = {
    show(kind, text) { setReply(reply, kind, text); },
    busy(on) { sendButton.dataset.busy = on ? "1" : ""; sendButton.disabled = on || !state.connected; },
    invalid(field) { const w = widgets.get(field); if (w) w.mark(true); },
    done(ok) { if (ok) for (const w of widgets.values()) w.reset(); },
  };
  const go = () => {
    confirming.hidden = true;
    actions.hidden = false;
    for (const w of widgets.values()) w.mark(false);
    const body = { command: c.name };
    const problems = [];
    for (const field of c.fields) {
      const w = widgets.get(field.name);
      const got = w.get();
      if (got.problem) problems.push([field.name, got.problem]);
      else if (got.empty) { if (field.required) problems.push([field.name, "required"]); }
      else body[field.name] = got.value;
    }
    if (problems.length) {
      problems.forEach(([f]) => widgets.get(f).mark(true));
      setReply(reply, "refused", "Not sent — " + problems.map(([f, why]) => `${f}: ${why}`).join("; "));
      return;
    }
    send(body, target);
  };
  const sendButton = button(`Send: ${labelOf(c.name)}`, "sends primary", () => {
    if (!CONFIRM.has(c.name)) { go(); return; }
    actions.hidden = true;
    confirming.hidden = false;
  });
  sendButton.dataset.send = c.name;
  actions.append(sendButton, button("Close", "", () => toggleForm(c.name)));
  const yes = button(`Yes: ${labelOf(c.name).toLowerCase()}`, "sends danger", go);
  yes.dataset.confirm = c.name;
  const keep = el("div", "actions");
  keep.append(yes, button("Cancel", "", () => { confirming.hidden = true; actions.hidden = false; }));
  confirming.append(el("div", "", `${labelOf(c.name)}? ${CONFIRM.get(c.name) || ""}`), keep);
  box.append(actions, confirming, reply);
  return form;
}

function redrawSeatWidgets() {
  const list = tableSeats();
  if (JSON.stringify(list) === JSON.stringify(seatNumbers)) return;
  seatNumbers = list;
  for (const w of seatWidgets) w.draw(list);
}

// ---- sending, and the replies ---------------------------------------------------------------------------------------

const pending = new Map();  // command id → {target, command, sentAt, late}
const idPrefix = Math.random().toString(36).slice(2, 8);
let sentCount = 0;

function setReply(node, kind, text) {
  node.className = "reply " + kind;
  node.textContent = text;
}

function send(fields, target) {
  if (!client || !state.connected) {
    target.show("refused", "Not connected to the broker: nothing was sent.");
    return null;
  }
  const id = `${idPrefix}-${++sentCount}`;
  const body = { id, ...fields };
  pending.set(id, { target, command: fields.command, sentAt: Date.now() / 1000, late: false });
  target.busy(true);
  target.show("wait", "Sent; waiting for the table…");
  client.publish(topics.commands, JSON.stringify(body), { qos: 1 }, (err) => {
    if (!err || !pending.has(id)) return;
    pending.delete(id);
    target.busy(false);
    const why = err.message.replace(/^Publish error: /, "");
    target.show("refused", `The broker refused it (${why}): this login may not send ${fields.command} as ` +
                `${state.login.role} ${state.login.username}.`);
  });
  drawStatus();
  return id;
}

function fromReply(reply) {
  state.replies.unshift(reply);
  state.replies.length = Math.min(state.replies.length, 20);
  const asked = reply.id !== null ? pending.get(reply.id) : undefined;
  if (!asked) {
    // not this page's (another tab of the same user), or a command the table could not read an id from
    if (!reply.ok && reply.id === null) {
      setReply($("notice"), "refused", `The table refused a command — ${reply.field}: ${reply.error}`);
    }
    return;
  }
  pending.delete(reply.id);
  asked.target.busy(false);
  if (reply.ok) {
    asked.target.show("ok", reply.seq ? `Accepted (event ${reply.seq}).` : "Accepted.");
  } else {
    asked.target.show("refused", `Refused — ${reply.field}: ${reply.error}`);
    asked.target.invalid(reply.field);
  }
  if (asked.target.done) asked.target.done(reply.ok);
}

function checkPending() {
  const now = Date.now() / 1000;
  for (const [id, p] of pending) {
    if (now - p.sentAt > FORGET_PENDING_S) { pending.delete(id); p.target.busy(false); continue; }
    if (!p.late && now - p.sentAt > NO_ANSWER_S) {
      p.late = true;
      p.target.busy(false);
      p.target.show("wait", `No answer from the table after ${NO_ANSWER_S} s: is it online? An answer that comes ` +
                    "still shows here.");
    }
  }
}

function connectionLost() {
  for (const p of pending.values()) {
    if (p.lost) continue;
    p.lost = true;
    p.target.busy(false);
    p.target.show("wait", "The connection dropped before the table answered: look at the table before you send it " +
                  "again. An answer that comes still shows here.");
  }
}

// ---- the feeds in -----------------------------------------------------------------------------------------------

const SEQ_WINDOW = 1000;  // the overlay's seq rule (docs/overlay.md): one this far off is a stray, or we lost track
const farFrom = (held, seq) => seq > held + SEQ_WINDOW || seq < held - SEQ_WINDOW;
const RESYNC_EVERY_S = 1;
let resyncedAt = -Infinity;
let resyncTimer = null;

function resync(why) {
  // Take the retained snapshot again: subscribing anew makes the broker send it.
  state.resyncing = true;
  if (resyncTimer !== null) return;
  const waitMs = resyncedAt + RESYNC_EVERY_S * 1000 - Date.now();
  if (waitMs > 0) { resyncTimer = setTimeout(() => { resyncTimer = null; resync(why); }, waitMs); return; }
  resyncedAt = Date.now();
  console.info(`console: resynchronising (${why})`);
  state.resyncs += 1;
  const mine = client;
  if (mine && state.connected) mine.unsubscribe(topics.snapshot, () => mine.subscribe(topics.snapshot, { qos: 1 }));
}

function fromSnapshot(snap) {
  const renumbered = snap.epoch !== state.epoch || snap.seq < state.lastSeq - SEQ_WINDOW;
  if (state.snapshot && snap.seq < state.snapshot.seq && !renumbered && !state.resyncing) return;  // an older copy
  state.resyncing = false;
  if (snap.epoch !== state.epoch) { state.resolved.clear(); state.stacks = {}; }
  state.epoch = snap.epoch;
  state.lastSeq = renumbered ? snap.seq : Math.max(state.lastSeq, snap.seq);
  state.snapshot = snap;
  state.receivedAt = Date.now() / 1000;
  const stacks = snap.betting && snap.betting.stacks;
  if (stacks) for (const [n, v] of Object.entries(stacks)) state.stacks[n] = v;
  // what waits: the snapshot's list, less what an event newer than the snapshot settled
  const waiting = new Map();
  for (const raw of snap.irregularities || []) {
    const problem = itemProblem(raw);
    if (problem) { drop(topics.snapshot, "irregularity", problem); continue; }
    const settledAt = state.resolved.get(raw.irregularity);
    if (settledAt !== undefined && settledAt > snap.seq) continue;
    waiting.set(raw.irregularity, { ...raw, hand: raw.hand || null, code: raw.code || null, type: raw.type || null,
                                    severity: raw.severity || "", ruling: raw.ruling || null,
                                    seats: raw.seats || [], rules: raw.rules || [], lapses: raw.lapses || null });
  }
  for (const id of [...state.items.keys()]) if (!waiting.has(id)) settle(id, NO_LONGER_WAITS);
  state.items = waiting;
  for (const [id, seq] of state.resolved) if (seq < snap.seq - SEQ_WINDOW) state.resolved.delete(id);
  redrawSeatWidgets();
  drawTable();
  drawItems();
  drawStatus();
}

function fromEvent(e) {
  const held = e.epoch === state.epoch ? state.lastSeq : 0;
  if (farFrom(held, e.seq)) {
    resync(`seq ${e.seq}${e.epoch === state.epoch ? "" : " of another epoch"}, nowhere near ${held}: dropped`);
    return;
  }
  if (e.epoch !== state.epoch) { resync("a new epoch"); return; }  // its snapshot tells what waits
  if (state.lastSeq && e.seq > state.lastSeq + 1) resync(`seq ${state.lastSeq} then ${e.seq}`);
  state.lastSeq = Math.max(state.lastSeq, e.seq);
  if (typeof e.irregularity === "number") {
    state.resolved.set(e.irregularity, Math.max(e.seq, state.resolved.get(e.irregularity) || 0));
    const gone = state.settled.find((s) => s.id === e.irregularity && s.reason === NO_LONGER_WAITS);
    if (state.items.has(e.irregularity)) settle(e.irregularity, settledReason(e));
    else if (gone) gone.reason = settledReason(e);  // the snapshot came first: the event says why
    else return;
    drawItems();
  }
}

function take(topic, payload) {
  if (!payload.length) return;  // a retained copy cleared
  const text = new TextDecoder().decode(payload);
  if (topic === topics.status) {
    if (text !== "online" && text !== "offline") { drop(topic, "status", "neither online nor offline"); return; }
    state.tableStatus = text;
    drawStatus();
    return;
  }
  let body;
  try { body = JSON.parse(text); } catch (e) { drop(topic, "message", "not JSON"); return; }
  if (topic === topics.snapshot) {
    const problem = snapshotProblem(body);
    if (problem) { drop(topic, "snapshot", problem); return; }
    fromSnapshot(body);
  } else if (topic === topics.events) {
    const problem = eventProblem(body);
    if (problem) { drop(topic, isObject(body) && isText(body.type, 64) ? body.type : "event", problem); return; }
    fromEvent(body);
  } else if (topic === topics.replies) {
    const problem = replyProblem(body);
    if (problem) { drop(topic, "reply", problem); return; }
    fromReply(body);
  }
}

// ---- the connection ------------------------------------------------------------------------------------------------

const LOGIN_REFUSED = new Set([4, 5, 134, 135, 140]);  // MQTT 3.1.1 and 5 CONNACK codes: bad login, not authorised
const SESSION_TAKEN_OVER = 142;  // a broker's DISCONNECT: another client took the client id (the card room's: the user)
// A connection the broker closes this soon after it opened, this many times in a row: most likely another device with
// the same user, which the card room's broker lets in in this one's place (Mosquitto 2.0.11 closes the older
// connection without a word). The page says so, and goes on trying.
const QUICK_DROP_S = 5;
const QUICK_DROPS = 2;
let connectedAt = null;
let quickDrops = 0;

function topicsFor(l) {
  const base = `${l.prefix}/${l.table}`;
  return { snapshot: `${base}/secure/snapshot`, events: `${base}/secure/events`, status: `${base}/status`,
           replies: `${base}/replies/${l.role}/${l.username}`, commands: `${base}/commands/${l.role}/${l.username}` };
}

function connect() {
  const l = state.login;
  topics = topicsFor(l);
  const mine = mqtt.connect(l.broker, {
    protocolVersion: 5, username: l.username, password: l.password,
    clientId: `console-${Math.random().toString(16).slice(2, 10)}`,
    clean: true, reconnectPeriod: RECONNECT_MS, connectTimeout: 10000, keepalive: 30, resubscribe: false,
  });
  client = mine;
  const current = () => client === mine;  // a client ended by a logout changes nothing
  mine.on("connect", () => {
    if (!current()) return;
    // Every (re)connection subscribes again, and so gets the retained snapshot again: a resync.
    mine.subscribe([topics.snapshot, topics.events, topics.status, topics.replies], { qos: 1 }, (err) => {
      if (!current()) return;
      if (err) { console.warn("console: subscribe:", err.message); return; }
      state.connected = true;
      state.connects += 1;
      connectedAt = Date.now();
      drawStatus();
      drawTable();
      setTimeout(() => {  // a connection that lasts: whatever closed the ones before has stopped
        if (!current() || !mine.connected || Date.now() - connectedAt < QUICK_DROP_S * 1000) return;
        quickDrops = 0;
        if (state.warning) { state.warning = null; showSchemaProblem(); }
      }, QUICK_DROP_S * 1000 + 100);
    });
  });
  mine.on("close", () => {
    if (!current()) return;
    if (state.connected) {
      connectionLost();
      quickDrops = Date.now() - connectedAt < QUICK_DROP_S * 1000 ? quickDrops + 1 : 0;
      if (quickDrops >= QUICK_DROPS && !state.warning) {
        state.warning = `The broker keeps closing this tablet's connection moments after it opens. Is another device ` +
          `logged in as ${l.username}? The card room's broker lets one device in per user: give every tablet a ` +
          "user of its own.";
        showProblem(state.warning);
      }
    }
    state.connected = false;
    drawStatus();
  });
  mine.on("error", (err) => {
    if (!current()) return;
    if (!mine.connected && LOGIN_REFUSED.has(err.code)) {
      stop(`The broker refused the login of ${l.username}: ${err.message.replace(/^Connection refused: /, "")}. ` +
           "Check the user and the password.", true);
      return;
    }
    console.warn("console: broker:", err.message);
  });
  mine.on("disconnect", (packet) => {
    if (current() && packet && packet.reasonCode === SESSION_TAKEN_OVER) {
      stop(`Another device logged in as ${l.username}, and the broker let it take this tablet's place. Give every ` +
           "tablet a user of its own.", false);
    }
  });
  mine.on("message", (topic, payload) => {
    // An exception here would stop the client's delivery of every later message: none leaves this handler.
    try { take(topic, payload); } catch (err) { failed(topic, err); }
  });
}

function stop(reason, backToLogin) {
  // The page stops connecting: the login was refused, or another device took its place.
  if (client) client.end(true);
  client = null;
  state.connected = false;
  state.stopped = reason;
  connectionLost();
  if (backToLogin) {
    forgetLogin();
    showLogin(state.login, reason);
    state.login = null;
    state.stopped = null;
  } else {
    showProblem(reason, "Connect again", () => { state.stopped = null; showSchemaProblem(); connect(); drawStatus(); });
  }
  drawStatus();
}

let hiddenAt = null;
document.addEventListener("visibilitychange", () => {
  // A tablet that slept: the browser may have held the page's timers, and the connection may be dead without a word
  // yet. Back on screen after a while, it asks the broker for the snapshot again; no answer within 5 s, it
  // connects anew.
  if (document.hidden) { hiddenAt = Date.now(); return; }
  const slept = hiddenAt !== null && Date.now() - hiddenAt > WAKE_PROBE_S * 1000;
  hiddenAt = null;
  const mine = client;
  if (!slept || !mine || !state.connected) return;
  let answered = false;
  mine.unsubscribe(topics.snapshot, () => mine.subscribe(topics.snapshot, { qos: 1 }, () => { answered = true; }));
  setTimeout(() => {
    if (answered || client !== mine) return;
    console.info("console: no answer from the broker after the tablet slept: connecting anew");
    mine.end(true, () => { if (client === mine) mine.reconnect(); });
  }, 5000);
});

// ---- logging in and out ------------------------------------------------------------------------------------------

function storage(kind) {
  try { return window[kind] || null; } catch (e) { return null; }  // (a file page may have none)
}

function loginProblem(l) {
  if (!/^wss?:\/\/[^\s]+$/.test(l.broker)) return "The broker address starts with wss:// (or ws://).";
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(l.table)) return "A table id is 1 to 64 letters, digits, '-' and '_'.";
  if (!l.prefix || l.prefix.split("/").some((level) => !level || /[+#\s]/.test(level))) {
    return "A topic prefix has no empty level, no '+', '#' or spaces.";
  }
  if (!ROLES.includes(l.role)) return "Choose the role: floor or dealer.";
  if (!l.username || l.username.length > 128 || /[/+#\s\u0000-\u001f]/.test(l.username)) {
    return "The user is 1 to 128 characters, without '/', '+', '#' or spaces.";
  }
  if (!l.password) return "Enter the password.";
  return null;
}

function defaults() {
  const saved = savedLogin();
  const pick = (name, fallback) => query.get(name) || (saved && saved[name]) || fallback;
  return {
    broker: pick("broker", `${location.protocol === "https:" ? "wss" : "ws"}://${location.hostname || "127.0.0.1"}:` +
                           `${location.port || 9001}/`),
    table: pick("table", "main-1"), prefix: pick("prefix", "rfid-table"), role: pick("role", "floor"),
    username: pick("username", ""), password: "",
  };
}

function savedLogin() {
  try {
    const s = JSON.parse((storage("sessionStorage") && storage("sessionStorage").getItem(SAVED_LOGIN)) || "null");
    const fields = ["broker", "table", "prefix", "role", "username", "password"];
    return isObject(s) && fields.every((k) => typeof s[k] === "string") ? s : null;
  } catch (e) { return null; }
}

function forgetLogin() {
  const s = storage("sessionStorage");
  if (s) s.removeItem(SAVED_LOGIN);
}

function showLogin(values, error) {
  const form = $("login");
  const v = values || defaults();
  for (const name of ["broker", "table", "prefix", "username"]) form.elements[name].value = v[name] || "";
  form.elements.password.value = "";
  for (const radio of form.querySelectorAll("input[name=role]")) radio.checked = radio.value === v.role;
  $("login-error").hidden = !error;
  $("login-error").textContent = error || "";
  form.hidden = false;
  $("main").hidden = true;
  drawStatus();
}

function showProblem(text, action, onAction) {
  const box = $("problem");
  box.textContent = "";
  box.append(el("div", "", text));
  if (action) box.append(button(action, "primary", onAction));
  box.hidden = false;
}

function showSchemaProblem() {
  // the banner says what the page lacks, or goes
  if (schemaProblem) showProblem(capital(schemaProblem));
  else $("problem").hidden = true;
}

function logIn(l) {
  const problem = loginProblem(l);
  if (problem) { showLogin(l, problem); return; }
  state.login = l;
  state.stopped = null;
  const s = storage("sessionStorage");
  if (s) s.setItem(SAVED_LOGIN, JSON.stringify(l));
  $("login").hidden = true;
  $("main").hidden = false;
  showSchemaProblem();
  buildCommands();
  drawTable();
  drawItems();
  drawStatus();
  connect();
}

function logOut() {
  const l = state.login;
  if (client) client.end(true);
  client = null;
  forgetLogin();
  Object.assign(state, { login: null, connected: false, connects: 0, tableStatus: null, snapshot: null, epoch: null,
                         lastSeq: 0, stopped: null, warning: null, settled: [], stacks: {} });
  quickDrops = 0;
  showSchemaProblem();
  state.items = new Map();
  state.resolved = new Map();
  pending.clear();
  for (const view of itemViews.values()) view.el.remove();
  itemViews.clear();
  $("settled").textContent = "";
  setReply($("notice"), "", "");
  showLogin({ ...l, password: "" });
}

$("login").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = $("login");
  const role = form.querySelector("input[name=role]:checked");
  logIn({ broker: form.elements.broker.value.trim(), table: form.elements.table.value.trim(),
          prefix: form.elements.prefix.value.trim(), role: role ? role.value : "",
          username: form.elements.username.value.trim(), password: form.elements.password.value });
});
$("logout").addEventListener("click", logOut);
$("cards-toggle").addEventListener("click", () => {
  state.showCards = !state.showCards;
  const s = storage("localStorage");
  if (s) s.setItem(SAVED_CARDS, state.showCards ? "shown" : "hidden");
  drawStatus();
  drawTable();
});

setInterval(() => {
  try { drawClock(); checkPending(); } catch (err) { failed("timer", err); }
}, 1000);

// ---- start ------------------------------------------------------------------------------------------------------

window.consoleState = state;  // for the browser tests and for a look from the developer tools
(function start() {
  const cards = storage("localStorage");
  state.showCards = !(cards && cards.getItem(SAVED_CARDS) === "hidden");
  if (typeof mqtt === "undefined") {
    showProblem("MQTT.js did not load (../vendor/mqtt.min.js): open the copy of the console that rfid-table " +
                "installs (the broker's address, or broker-setup's overlay/console/index.html), not the one in the " +
                "source tree.");
    return;
  }
  try {
    commands = readSchema(window.rfidTableCommandSchema);
  } catch (err) {
    schemaProblem = `the command schema (command.schema.js beside the page) did not load: ${err.message}. Open the ` +
                    "copy of the console that rfid-table installs.";
    showSchemaProblem();
  }
  // A login in the address (the demo's) logs in at once; the password then leaves the address bar.
  if (query.get("username") && query.get("password")) {
    const login = { ...defaults(), username: query.get("username"), password: query.get("password") };
    try {
      const clean = new URL(location.href);
      clean.searchParams.delete("password");
      history.replaceState(null, "", clean.href);
    } catch (e) { /* a page that cannot rewrite its address keeps it */ }
    logIn(login);
    return;
  }
  const saved = savedLogin();
  if (saved) { logIn(saved); return; }
  showLogin(null, null);
})();
