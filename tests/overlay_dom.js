// overlay/overlay.js run in Node with a minimal DOM and no broker, for the overlay harnesses: `load(script, search)`
// runs the page's script as the page would with `?<search>` and gives back its context and its document.
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

function load(script, search) {
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
    location: { search: `?${search}`, protocol: "http:", hostname: "127.0.0.1", port: "9001" },
    mqtt: { connect: () => client },
  };
  vm.createContext(context);
  vm.runInContext(fs.readFileSync(script, "utf8"), context);
  return { context, document, window };
}

module.exports = { load };
