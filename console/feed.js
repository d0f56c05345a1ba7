/* The checks of what the table's feeds send, shared by the floor's console (console.js) and the floor's overview of
 * every table (overview.js): each returns what does not fit, or null. Loaded before either page's script.
 */
"use strict";

// ---- what the feeds may send ------------------------------------------------------------------------------------
// The shapes of schemas/ (snapshot.secure, event.secure, reply, status), for the fields the page uses; fields it
// does not use may be anything. A message that does not fit is dropped before any of it is used.

const SEATS_MAX = 10;
const ITEMS_MAX = 200;
const TIME_MAX = 1e11;
const CARD = /^[2-9TJQKA][shdc]$/;
const SEAT_KEY = /^[1-9][0-9]*$/;

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isInt = (v, min, max = Number.MAX_SAFE_INTEGER) => Number.isSafeInteger(v) && v >= min && v <= max;
const isSeat = (v) => isInt(v, 1, SEATS_MAX);
const isChips = (v) => isInt(v, 0);
const isTime = (v) => typeof v === "number" && v >= 0 && v <= TIME_MAX;
const isText = (v, max) => typeof v === "string" && v.length >= 1 && v.length <= max;
const isCard = (v) => typeof v === "string" && CARD.test(v);
const isCards = (v, max = 52) => Array.isArray(v) && v.length <= max && v.every(isCard);
const isBoards = (v) => Array.isArray(v) && v.length <= 6 && v.every((b) => isCards(b, 5));
const isSeats = (v) => Array.isArray(v) && v.length <= SEATS_MAX && v.every(isSeat);
const isTexts = (v, count, max) => Array.isArray(v) && v.length <= count && v.every((x) => isText(x, max));
const absentOr = (check) => (v) => v === undefined || check(v);
const nullOr = (check) => (v) => v === null || check(v);
function isSeatMap(v, check) {
  if (!isObject(v)) return false;
  const entries = Object.entries(v);
  return entries.length <= SEATS_MAX && entries.every(([n, x]) => SEAT_KEY.test(n) && isSeat(Number(n)) && check(x));
}
const isPots = (v) => Array.isArray(v) && v.length <= SEATS_MAX && v.every((p) => isObject(p) && isChips(p.amount));
const isSeatState = (s) => isObject(s) && isSeat(s.seat) && isInt(s.cards, 0, 52) && typeof s.folded === "boolean" &&
  absentOr(nullOr((p) => isObject(p) && isText(p.name, 32)))(s.player) && absentOr(isCards)(s.hole_cards);
const isBetting = (b) => isObject(b) && isChips(b.pot) && isPots(b.pots) &&
  absentOr((m) => isSeatMap(m, isChips))(b.bets) && absentOr(nullOr((m) => isSeatMap(m, isChips)))(b.stacks) &&
  absentOr(isSeats)(b.all_in) && absentOr(nullOr(isSeat))(b.to_act) && absentOr(isChips)(b.current_bet) &&
  absentOr((s) => isText(s, 20))(b.street);
const isClock = (c) => isObject(c) && absentOr(nullOr(isSeat))(c.seat) && isText(c.phase, 20) &&
  absentOr(nullOr((r) => typeof r === "number" && r >= 0 && r <= 1e6))(c.remaining_s);
const isLevel = (l) => isObject(l) && isInt(l.level, 1) && isChips(l.small_blind) && isChips(l.big_blind) &&
  absentOr(isChips)(l.ante) && absentOr(isChips)(l.big_blind_ante) && absentOr(nullOr((n) => isInt(n, 1)))(l.next_hand);
const isConduct = (c) => isObject(c) && Array.isArray(c.seats) && c.seats.length <= SEATS_MAX && c.seats.every((s) =>
  isObject(s) && isSeat(s.seat) && absentOr(nullOr((p) => typeof p === "boolean"))(s.present) &&
  absentOr((b) => isTexts(b, 5, 20))(s.breach) && absentOr((x) => typeof x === "boolean")(s.left) &&
  absentOr((x) => typeof x === "boolean")(s.absent_at_deal));

function snapshotProblem(s) {
  if (!isObject(s)) return "not an object";
  if (!isInt(s.seq, 0)) return "seq";
  if (!isText(s.epoch, 200)) return "epoch";
  if (!nullOr((h) => isInt(h, 1))(s.hand)) return "hand";
  if (!isText(s.phase, 20)) return "phase";
  if (!(Array.isArray(s.seats) && s.seats.length <= SEATS_MAX && s.seats.every(isSeatState))) return "seats";
  if (!isCards(s.board, 5) || !absentOr(isBoards)(s.boards)) return "board";
  if (!absentOr(nullOr(isSeat))(s.button)) return "button";
  if (!absentOr(nullOr(isBetting))(s.betting)) return "betting";
  if (!absentOr(nullOr(isClock))(s.clock)) return "clock";
  if (!absentOr(nullOr(isLevel))(s.level)) return "level";
  if (!absentOr(nullOr(isConduct))(s.conduct)) return "conduct";
  if (!absentOr((d) => isText(d, 64))(s.deck)) return "deck";
  if (!absentOr((v) => typeof v === "boolean")(s.misdeal)) return "misdeal";
  if (!absentOr((list) => Array.isArray(list) && list.length <= ITEMS_MAX)(s.irregularities)) return "irregularities";
  return null;
}

function itemProblem(it) {
  // One entry of the snapshot's irregularities. Only `irregularity` is needed: what is missing gets a default.
  if (!isObject(it)) return "not an object";
  if (!isInt(it.irregularity, 1, 1e15)) return "irregularity";
  if (!absentOr(nullOr((h) => isInt(h, 1)))(it.hand)) return "hand";
  for (const field of ["code", "type", "ruling"]) if (!absentOr(nullOr((v) => isText(v, 64)))(it[field])) return field;
  if (!absentOr((v) => typeof v === "string" && v.length <= 20)(it.severity)) return "severity";
  if (!absentOr((v) => isText(v, 300))(it.ruling_text)) return "ruling_text";
  if (!absentOr(isSeats)(it.seats)) return "seats";
  if (!absentOr((v) => isTexts(v, 20, 300))(it.rules)) return "rules";
  if (!absentOr((v) => isTexts(v, 10, 64))(it.answers)) return "answers";
  if (!absentOr(nullOr((v) => isText(v, 120)))(it.lapses)) return "lapses";
  if (!absentOr(isCards)(it.candidates) || !absentOr(isCards)(it.cards)) return "cards";
  return null;
}

function eventProblem(e) {
  if (!isObject(e)) return "not an object";
  if (!isInt(e.seq, 1)) return "seq";
  if (!isText(e.type, 64)) return "type";
  if (!isTime(e.t)) return "t";
  if (!nullOr((h) => isInt(h, 1))(e.hand)) return "hand";
  if (!isText(e.epoch, 200)) return "epoch";
  if (e.irregularity !== undefined && e.irregularity !== null) {  // what the page reads of an event that settles one
    if (!isInt(e.irregularity, 1, 1e15)) return "irregularity";
    for (const field of ["decision", "result", "resolution", "reason", "by", "note"]) {
      if (!absentOr(nullOr((v) => isText(v, 300)))(e[field])) return field;
    }
  }
  return null;
}

function replyProblem(r) {
  if (!isObject(r)) return "not an object";
  if (typeof r.ok !== "boolean") return "ok";
  if (!nullOr((v) => isText(v, 64))(r.id)) return "id";
  if (r.ok) return absentOr(nullOr((s) => isInt(s, 1)))(r.seq) ? null : "seq";
  if (!isText(r.field, 200)) return "field";
  if (!isText(r.error, 2000)) return "error";
  return null;
}

