// Text of every page of a PDF as pdf.js (npm pdfjs-dist) reads it: one JSON array of strings on
// stdout. Items are joined as pdf.js reports them: an item's string, then a newline where pdf.js
// marks the end of a line (hasEOL). Usage: node pdfjs-text.mjs FILE.pdf
// NODE_PATH cannot resolve ES modules, so the module directory comes from PDFJS_DIR.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

// pdf.js prints its warnings with console.log; keep stdout for the JSON.
console.log = (...a) => console.error(...a);
const dir = process.env.PDFJS_DIR;
if (!dir) {
  console.error("set PDFJS_DIR to the pdfjs-dist package directory");
  process.exit(2);
}
const pdfjs = await import(pathToFileURL(path.join(dir, "legacy/build/pdf.mjs")).href);
const data = new Uint8Array(readFileSync(process.argv[2]));
const doc = await pdfjs.getDocument({ data, verbosity: 0, isEvalSupported: false }).promise;
const pages = [];
for (let n = 1; n <= doc.numPages; n++) {
  const page = await doc.getPage(n);
  const content = await page.getTextContent();
  pages.push(content.items.map((it) => (it.str ?? "") + (it.hasEOL ? "\n" : "")).join(""));
  page.cleanup();
}
process.stdout.write(JSON.stringify(pages));
await doc.destroy();
