// Runs overlay/overlay.js (argv[2]) in Node with a minimal DOM and no broker (overlay_dom.js), feeds it events given
// as JSON on argv[3] (public mode, applied at once) and prints what it drew: the first board and each later board's
// cards.
"use strict";
const vm = require("vm");
const { load } = require("./overlay_dom.js");

const { context, document } = load(process.argv[2], "mode=public&table=t");
for (const event of JSON.parse(process.argv[3])) vm.runInContext(`receive(${JSON.stringify(event)})`, context);
const cards = (el) => el.children.map((c) => c.dataset.card);
const later = document.getElementById("later-boards").children.map((row) => [row.dataset.board, cards(row)]);
console.log(JSON.stringify({ board: cards(document.getElementById("board")), later }));
