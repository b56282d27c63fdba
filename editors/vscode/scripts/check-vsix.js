#!/usr/bin/env node
// Checks a packaged .vsix (default: hpf-ls.vsix): the files VS Code needs
// are in it (manifest, main script, grammars, language configuration, the
// runtime dependencies), no sources or tests are, and the main script loads
// from the unpacked package with a stand-in `vscode` module (so every
// require resolves inside the .vsix) and exports activate/deactivate.
// Plain Node.js: reads the zip itself (no unzip needed).
"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");
const Module = require("node:module");
const os = require("node:os");
const path = require("node:path");
const zlib = require("node:zlib");

function readZip(file) {
  const data = fs.readFileSync(file);
  let end = data.length - 22;
  while (end >= 0 && data.readUInt32LE(end) !== 0x06054b50) end--;
  assert.ok(end >= 0, `${file} is not a zip file`);
  const count = data.readUInt16LE(end + 10);
  let at = data.readUInt32LE(end + 16);
  const entries = new Map();
  for (let index = 0; index < count; index++) {
    assert.equal(data.readUInt32LE(at), 0x02014b50, "central directory entry");
    const method = data.readUInt16LE(at + 10);
    const compressedSize = data.readUInt32LE(at + 20);
    const nameLength = data.readUInt16LE(at + 28);
    const extraLength = data.readUInt16LE(at + 30);
    const commentLength = data.readUInt16LE(at + 32);
    const local = data.readUInt32LE(at + 42);
    const name = data.toString("utf8", at + 46, at + 46 + nameLength);
    entries.set(name, () => {
      assert.equal(data.readUInt32LE(local), 0x04034b50, `local header of ${name}`);
      const start = local + 30 + data.readUInt16LE(local + 26) + data.readUInt16LE(local + 28);
      const raw = data.subarray(start, start + compressedSize);
      if (method === 0) return raw;
      assert.equal(method, 8, `${name}: compression method ${method}`);
      return zlib.inflateRawSync(raw);
    });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

function main() {
  const file = path.resolve(process.argv[2] ?? "hpf-ls.vsix");
  const entries = readZip(file);
  const names = [...entries.keys()];
  const has = (name) => entries.has(name);
  const text = (name) => entries.get(name)().toString("utf8");

  for (const name of ["extension.vsixmanifest", "extension/package.json", "extension/readme.md"]) {
    assert.ok(has(name), `${name} in ${file}`);
  }
  const manifest = JSON.parse(text("extension/package.json"));
  const inExtension = (relative) => `extension/${path.posix.normalize(relative).replace(/^\.\//, "")}`;
  assert.ok(has(inExtension(manifest.main)), `main ${manifest.main}`);
  assert.equal(inExtension(manifest.main), "extension/out/extension.js");
  for (const grammar of manifest.contributes.grammars) {
    assert.ok(has(inExtension(grammar.path)), `grammar ${grammar.path}`);
    const parsed = JSON.parse(text(inExtension(grammar.path)));
    assert.equal(parsed.scopeName, grammar.scopeName, grammar.path);
  }
  assert.ok(has("extension/syntaxes/hpf-directives.injection.json"));
  for (const language of manifest.contributes.languages) {
    if (language.configuration) {
      assert.ok(has(inExtension(language.configuration)), `language configuration ${language.configuration}`);
      JSON.parse(text(inExtension(language.configuration)));
    }
  }
  for (const dependency of Object.keys(manifest.dependencies ?? {})) {
    assert.ok(has(`extension/node_modules/${dependency}/package.json`), `dependency ${dependency}`);
  }
  const unwanted = names.filter(
    (name) =>
      name.startsWith("extension/src/") ||
      name.startsWith("extension/out/test/") ||
      name.startsWith("extension/node_modules/typescript/") ||
      name.startsWith("extension/node_modules/@vscode/vsce") ||
      name.endsWith(".vsix"),
  );
  assert.deepEqual(unwanted, [], "sources, tests and dev dependencies stay out");

  // Unpack and load the main script with a stand-in `vscode`.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hpf-vsix-"));
  try {
    for (const name of names) {
      if (name.endsWith("/")) continue;
      const target = path.join(dir, name);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, entries.get(name)());
    }
    const stub = (label) =>
      new Proxy(function () {}, {
        get: (_target, property) => (property === "prototype" ? {} : stub(`${label}.${String(property)}`)),
        construct: () => ({}),
        apply: () => undefined,
      });
    const load = Module._load;
    Module._load = function (request, parent, isMain) {
      if (request === "vscode") return stub("vscode");
      return load.call(this, request, parent, isMain);
    };
    const main = path.join(dir, "extension", "out", "extension.js");
    let loaded;
    try {
      loaded = require(main);
    } finally {
      Module._load = load;
    }
    assert.equal(typeof loaded.activate, "function", "exports activate");
    assert.equal(typeof loaded.deactivate, "function", "exports deactivate");
    // Every module it loaded came from the unpacked .vsix (or Node itself).
    const outside = Object.keys(require.cache).filter(
      (it) => it !== __filename && !it.startsWith(dir) && !it.startsWith("node:"),
    );
    assert.deepEqual(outside, [], "modules loaded from outside the .vsix");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`${path.basename(file)}: ${names.length} files; package.json, out/extension.js, grammars, dependencies present; loads.`);
}

main();
