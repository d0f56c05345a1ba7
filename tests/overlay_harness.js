// Runs overlay/overlay.js in Node with a minimal DOM and no broker, feeds it events given as JSON on argv[2]
// (public mode, applied at once) and prints what it drew: the first board and each later board's cards.
"use strict";
const fs = require("fs");
const vm = require("vm");

function element(id) {
  return {
    id, children: [], className: "", dataset: {}, hidden: false, innerHTML: "", classList: { add() {}, toggle() {} },
    set textContent(v) { if (v === "") this.children = []; this._text = v; },
    get textContent() { return this._text || ""; },
    append(...els) { this.children.push(...els); },
    querySelector() { return element("inner"); },
  };
}
const elements = {};
const document = {
  getElementById: (id) => elements[id] || (elements[id] = element(id)),
  querySelector: (sel) => elements[sel] || (elements[sel] = element(sel)),
  createElement: () => element(null),
};
const client = { on() {}, subscribe() {} };
const context = {
  document, window: {}, console, setTimeout, clearTimeout, TextDecoder, URLSearchParams,
  location: { search: "?mode=public&table=t", protocol: "http:", hostname: "127.0.0.1", port: "9001" },
  mqtt: { connect: () => client },
};
vm.createContext(context);
vm.runInContext(fs.readFileSync(process.argv[2], "utf8"), context);
for (const event of JSON.parse(process.argv[3])) vm.runInContext(`receive(${JSON.stringify(event)})`, context);
const cards = (el) => el.children.map((c) => c.dataset.card);
const later = document.getElementById("later-boards").children.map((row) => [row.dataset.board, cards(row)]);
console.log(JSON.stringify({ board: cards(document.getElementById("board")), later }));
