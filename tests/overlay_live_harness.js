// Runs overlay/overlay.js (argv[2]) in Node with a minimal DOM and no broker (overlay_dom.js), as
// ?mode=live&table=<argv[3]>: hands it the messages given as JSON on stdin ([topic, payload text] pairs, as the
// broker delivered them) and prints each seat's cards as the page holds them, and its hand.
"use strict";
const fs = require("fs");
const vm = require("vm");
const { load } = require("./overlay_dom.js");

const { context, window } = load(process.argv[2], `mode=live&table=${process.argv[3]}`);
const take = vm.runInContext("take", context);
for (const [topic, text] of JSON.parse(fs.readFileSync(0, "utf8"))) take(topic, new TextEncoder().encode(text));
const state = window.overlayState;
const seats = Object.fromEntries(Object.entries(state.seats).map(([n, s]) => [n, s.cards]));
console.log(JSON.stringify({ hand: state.hand, seats }));
