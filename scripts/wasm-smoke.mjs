// Instantiate the built detector module in node and call it once: catches a module that a
// post-processing tool broke (e.g. an old wasm-opt mangling wasm-bindgen's externref table).
// Usage: node wasm-smoke.mjs GLUE.js MODULE.wasm
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [glue, wasm] = process.argv.slice(2);
const m = await import(pathToFileURL(glue).href);
m.initSync({ module: readFileSync(wasm) });
const h = m.sha256Hex(new TextEncoder().encode("abc"));
if (h !== "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") throw new Error("sha256 " + h);
console.log("ok", m.version());
