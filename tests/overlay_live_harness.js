// Runs overlay/overlay.js in Node with a minimal DOM and no broker, as ?mode=live&table=<argv[3]>: hands it the
// messages given as JSON on stdin ([topic, payload text] pairs, as the broker delivered them) and prints each
// seat's cards as the page holds them, and its hand.
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
const window = {};
const context = {
  document, window, console, setTimeout, clearTimeout, TextDecoder, TextEncoder, URLSearchParams,
  location: { search: `?mode=live&table=${process.argv[3]}`, protocol: "http:", hostname: "127.0.0.1", port: "9001" },
  mqtt: { connect: () => client },
};
vm.createContext(context);
vm.runInContext(fs.readFileSync(process.argv[2], "utf8"), context);
const take = vm.runInContext("take", context);
for (const [topic, text] of JSON.parse(fs.readFileSync(0, "utf8"))) take(topic, new TextEncoder().encode(text));
const state = window.overlayState;
const seats = Object.fromEntries(Object.entries(state.seats).map(([n, s]) => [n, s.cards]));
console.log(JSON.stringify({ hand: state.hand, seats }));
