/* The floor's overview (docs/overview.md): every table of the room from its retained
 * secure snapshot: its game, its level or blinds, its players, and a badge where something waits for the floor (the
 * snapshot's irregularities; red where the game stops). A tap opens the table in the floor's console.
 *
 * It logs in as a floor user from its address (username, password; prefix, broker as the console's), takes every
 * table's retained snapshot and status at each connection, and the game from each table's latest hand_history
 * (the snapshot does not carry it). Every message is checked with feed.js's checks before any of it is used.
 */
"use strict";

const query = new URLSearchParams(location.search);
const config = {
  broker: query.get("broker") ||
    `${location.protocol === "https:" ? "wss" : "ws"}://${location.hostname || "127.0.0.1"}:${location.port || 9001}/`,
  username: query.get("username") || undefined,
  password: query.get("password") || undefined,
  prefix: query.get("prefix") || "rfid-table",
};
const levels = config.prefix.split("/").length;
const state = { tables: {}, connected: false, connects: 0, dropped: {} };  // table id → {snapshot, status, game}
const warned = new Set();

function drop(topic, why) {
  state.dropped[why] = (state.dropped[why] || 0) + 1;
  if (!warned.has(why)) {
    warned.add(why);
    console.warn(`overview: ${topic}: dropped, it does not fit the table's schema (${why}); more are dropped silently`);
  }
}

const money = (v) => (typeof v === "number" ? v.toLocaleString("en-US") : "–");
function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function gameOf(history) {
  // "NL Holdem", "PL Omaha", from the hand's Open Hand History (as the table published it)
  const ohh = history.ohh_complete && history.ohh_complete.ohh;
  if (!isObject(ohh) || !isText(ohh.game_type, 40)) return null;
  const limit = isObject(ohh.bet_limit) && isText(ohh.bet_limit.bet_type, 10) ? `${ohh.bet_limit.bet_type} ` : "";
  return limit + ohh.game_type;
}

function draw() {
  const container = document.getElementById("tables");
  container.textContent = "";
  const ids = Object.keys(state.tables).filter((id) => state.tables[id].snapshot).sort();
  for (const id of ids) {
    const t = state.tables[id];
    const snap = t.snapshot;
    const items = snap.irregularities || [];
    const stop = items.some((it) => isObject(it) && it.severity === "stop");
    const card = el("a", "table" + (items.length ? " waits" : "") + (stop ? " stop" : "") +
                         (t.status === "offline" ? " offline" : ""));
    card.dataset.table = id;
    card.href = "index.html?" + new URLSearchParams({ table: id, prefix: config.prefix });
    const head = el("div", "head");
    head.append(el("span", "id", id));
    if (items.length) {
      head.append(el("span", "badge" + (stop ? " stop" : ""), `${items.length} wait${items.length > 1 ? "" : "s"} for the floor`));
    }
    if (t.status === "offline") head.append(el("span", "badge offline", "offline"));
    card.append(head);
    const l = snap.level;
    const level = l ? `Level ${l.level}: ${money(l.small_blind)}/${money(l.big_blind)}` +
      (l.ante ? `, ante ${money(l.ante)}` : "") : null;
    card.append(el("div", "line game", [t.game || "game not known yet", level].filter(Boolean).join(" · ")));
    card.append(el("div", "line hand", snap.hand ? `Hand ${snap.hand}, ${snap.phase === "waiting" ? "between hands"
      : snap.phase.replace(/_/g, " ")}` : "No hand yet"));
    const names = snap.seats.filter((s) => s.player).map((s) => `${s.seat} ${s.player.name}`);
    card.append(el("div", "players", names.length ? `${names.length} player${names.length > 1 ? "s" : ""}: ` +
      names.join(", ") : "No players seated"));
    container.append(card);
  }
  document.getElementById("empty").hidden = ids.length > 0;
  document.getElementById("status").textContent = state.connected ? `${ids.length} tables` : "reconnecting…";
}

function take(topic, payload) {
  const parts = topic.split("/");
  const id = parts[levels];
  if (!id || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) return;
  const rest = parts.slice(levels + 1).join("/");
  const table = state.tables[id] || (state.tables[id] = { snapshot: null, status: null, game: null });
  if (!payload.length) {  // a retained snapshot cleared: the table is gone
    if (rest === "secure/snapshot") table.snapshot = null;
    draw(); return;
  }
  const text = new TextDecoder().decode(payload);
  if (rest === "status") {
    if (text === "online" || text === "offline") table.status = text; else drop(topic, "status");
    draw(); return;
  }
  let body;
  try { body = JSON.parse(text); } catch (e) { drop(topic, "not JSON"); return; }
  if (rest === "secure/snapshot") {
    const problem = snapshotProblem(body) || (Array.isArray(body.irregularities) &&
      body.irregularities.map(itemProblem).find(Boolean)) || null;
    if (problem) { drop(topic, `snapshot: ${problem}`); return; }
    table.snapshot = body;
  } else if (rest === "secure/events") {
    if (eventProblem(body)) return;
    if (body.type === "hand_history") table.game = gameOf(body) || table.game;
    return draw();
  }
  draw();
}

function connect() {
  const client = mqtt.connect(config.broker, {
    protocolVersion: 5, username: config.username, password: config.password,
    clientId: `overview-${Math.random().toString(16).slice(2, 10)}`,
    clean: true, reconnectPeriod: 2000, connectTimeout: 10000, keepalive: 30,
  });
  const topics = ["status", "secure/snapshot", "secure/events"].map((t) => `${config.prefix}/+/${t}`);
  client.on("connect", () => {
    client.subscribe(topics, { qos: 1 }, (err) => {
      if (err) { console.warn("overview: subscribe:", err.message); return; }
      state.connected = true; state.connects += 1; draw();
    });
  });
  client.on("close", () => { state.connected = false; draw(); });
  client.on("error", (err) => console.warn("overview: broker:", err.message));
  client.on("message", (topic, payload) => {
    try { take(topic, payload); } catch (err) { drop(topic, `failed: ${err && err.message}`); }
  });
}

window.overlayState = state;  // (the name the pages' browser tests look for)
draw();
connect();
