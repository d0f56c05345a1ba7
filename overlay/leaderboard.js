/* The room's leaderboard or ticker (docs/overlay.md, "The leaderboard"): the players of the room's retained
 * statistics (<stats prefix>/<room>/stats, published by `rfid-table room`: every player who played today), ranked by
 * their chip count (a tournament) or their net result (cash games), drawn for OBS.
 *
 * As the overlay: everything from the page's address, text nodes only, a message checked before any of it is used
 * (one that does not fit is dropped with one console warning), reconnects by itself.
 */
"use strict";

const query = new URLSearchParams(location.search);
const intIn = (text, min, max, fallback) => {
  const n = Number(text);
  return Number.isSafeInteger(n) && n >= min && n <= max ? n : fallback;
};
const config = {
  broker: query.get("broker") ||
    `${location.protocol === "https:" ? "wss" : "ws"}://${location.hostname || "127.0.0.1"}:${location.port || 9001}/`,
  username: query.get("username") || undefined,
  password: query.get("password") || undefined,
  room: query.get("room") || "+",  // without one, every room the user may read, together
  statsPrefix: query.get("stats_prefix") || "rfid-table-room",
  by: query.get("by") === "net" ? "net" : "chips",
  over: ["all", "day", "session"].includes(query.get("over")) ? query.get("over") : "day",  // (net only)
  top: intIn(query.get("top"), 1, 20, 10),
  view: query.get("view") === "ticker" ? "ticker" : "board",
};
config.title = query.get("title") || (config.by === "chips" ? "Chip counts" : "Results");
const topic = `${config.statsPrefix}/${config.room}/stats`;

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const absentOr = (check) => (v) => v === undefined || check(v);
const nullOr = (check) => (v) => v === null || check(v);
const isBlock = (b) => isObject(b) && absentOr(nullOr(Number.isSafeInteger))(b.net);
const isPlayer = (p) => isObject(p) && absentOr(nullOr((n) => typeof n === "string" && n.length <= 64))(p.name) &&
  absentOr(nullOr((c) => Number.isSafeInteger(c) && c >= 0))(p.chips) &&
  ["all", "day", "session"].every((over) => absentOr(isBlock)(p[over]));

function roomProblem(m) {
  if (!isObject(m)) return "not an object";
  if (typeof m.room !== "string") return "room";
  if (!isObject(m.players) || Object.keys(m.players).length > 100000) return "players";
  if (!Object.values(m.players).every(isPlayer)) return "a player";
  return null;
}

const state = { rooms: {}, connected: false, connects: 0, dropped: {} };  // rooms: room id → its players
const warned = new Set();

function drop(why) {
  state.dropped[why] = (state.dropped[why] || 0) + 1;
  if (!warned.has(why)) {
    warned.add(why);
    console.warn(`leaderboard: a message dropped, it does not fit the room's statistics (${why}); more like it ` +
                 "are dropped without a word");
  }
}

const money = (v) => Number(v).toLocaleString("en-US");

function ranked() {
  // Every player of the rooms taken, best first (ties by name), with a value: the top ones.
  const rows = [];
  for (const players of Object.values(state.rooms)) {
    for (const [id, p] of Object.entries(players)) {
      const value = config.by === "chips" ? p.chips : (p[config.over] || {}).net;
      if (value == null) continue;
      rows.push({ id, name: p.name || id, value });
    }
  }
  rows.sort((a, b) => b.value - a.value || a.name.localeCompare(b.name));
  return rows.slice(0, config.top);
}

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function valueElement(value) {
  if (config.by === "chips") return el("span", "value", money(value));
  return el("span", "value" + (value > 0 ? " up" : value < 0 ? " down" : ""), (value > 0 ? "+" : "") + money(value));
}

function draw() {
  const rows = ranked();
  const board = document.getElementById("board");
  const ticker = document.getElementById("ticker");
  board.hidden = config.view !== "board";
  ticker.hidden = config.view !== "ticker";
  if (config.view === "board") {
    board.querySelector("h1").textContent = config.title;
    const list = board.querySelector(".rows");
    list.textContent = "";
    rows.forEach((r, i) => {
      const row = el("div", "row");
      row.dataset.player = r.id;
      row.append(el("span", "rank", String(i + 1)), el("span", "name", r.name), valueElement(r.value));
      list.append(row);
    });
  } else {
    const line = ticker.querySelector(".line");
    line.textContent = "";
    line.append(el("span", "title", config.title));
    rows.forEach((r, i) => {
      const item = el("span", "item");
      item.dataset.player = r.id;
      item.append(el("span", "rank", `${i + 1}.`), el("span", "name", r.name), valueElement(r.value));
      line.append(item);
    });
    line.style.setProperty("--duration", `${Math.max(20, rows.length * 6)}s`);  // the same pace, however many
  }
  const status = document.getElementById("status");
  status.className = state.connected ? "ok" : "";
  status.textContent = state.connected ? "" : "reconnecting…";
}

function take(payload) {
  if (!payload.length) return;  // a retained copy cleared
  let body;
  try { body = JSON.parse(new TextDecoder().decode(payload)); } catch (e) { drop("not JSON"); return; }
  const problem = roomProblem(body);
  if (problem) { drop(problem); return; }
  state.rooms[body.room] = body.players;
  draw();
}

function connect() {
  const client = mqtt.connect(config.broker, {
    protocolVersion: 5, username: config.username, password: config.password,
    clientId: `leaderboard-${Math.random().toString(16).slice(2, 10)}`,
    clean: true, reconnectPeriod: 2000, connectTimeout: 10000, keepalive: 30,
  });
  client.on("connect", () => {
    client.subscribe(topic, { qos: 1 }, (err) => {
      if (err) { console.warn("leaderboard: subscribe:", err.message); return; }
      state.connected = true; state.connects += 1; draw();
    });
  });
  client.on("close", () => { state.connected = false; draw(); });
  client.on("error", (err) => console.warn("leaderboard: broker:", err.message));
  client.on("message", (t, payload) => {
    try { take(payload); } catch (err) { drop(`failed: ${err && err.message}`); }
  });
}

window.overlayState = state;  // (the name the overlay's browser tests look for)
window.leaderboardConfig = config;
draw();
connect();
