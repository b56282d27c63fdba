#!/usr/bin/env node
// Checks a packaged .vsix (default: hpf-ls.vsix): the files VS Code needs
// are in it (manifest, main script, grammars, language configuration, the
// runtime dependencies), no sources or tests are, and the main script loads
// from the unpacked package with a stand-in `vscode` module (so every
// require resolves inside the .vsix) and exports activate/deactivate.
// It also checks that the packaged package.json contributes every setting
// the server documents (the `hpf` example in the "The language server"
// section of the repository's README.md, or the README given with
// --readme), and that the extension's own README documents every setting
// it contributes.
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

/** Removes `//` comments outside strings from JSONC text. */
function stripComments(text) {
  let out = "";
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      out += char;
      if (char === "\\") out += text[++index] ?? "";
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
      out += char;
    } else if (char === "/" && text[index + 1] === "/") {
      while (index < text.length && text[index] !== "\n") index++;
      out += "\n";
    } else {
      out += char;
    }
  }
  return out;
}

/**
 * The settings the server's README documents: the JSONC example with an
 * `"hpf"` member in the README's "The language server" section, as a
 * nested object (`{ form: ..., mpi: { timeoutSeconds: ... } }`).
 */
function documentedServerSettings(readmeFile) {
  const readme = fs.readFileSync(readmeFile, "utf8");
  const blocks = [...readme.matchAll(/```jsonc?\n([\s\S]*?)```/g)].map((it) => it[1]);
  const block = blocks.find((it) => /"hpf"\s*:\s*\{/.test(it));
  assert.ok(block, `${readmeFile}: no \`\`\`jsonc block with the "hpf" settings`);
  let parsed;
  try {
    parsed = JSON.parse(stripComments(block).replace(/,(\s*[}\]])/g, "$1"));
  } catch (error) {
    assert.fail(`${readmeFile}: the "hpf" settings example is not JSON with comments: ${error.message}`);
  }
  assert.ok(parsed.hpf && typeof parsed.hpf === "object", `${readmeFile}: the example has no "hpf" object`);
  return parsed.hpf;
}

/**
 * The documented settings (dotted, `hpf.mpi.timeoutSeconds`) that the
 * manifest does not contribute. An object is a setting of its own when the
 * manifest contributes it (`hpf.severity`, a map of codes), else a group
 * whose members are checked one by one.
 */
function missingSettings(documented, contributed, prefix = "hpf") {
  const missing = [];
  for (const [key, value] of Object.entries(documented)) {
    const name = `${prefix}.${key}`;
    if (contributed.has(name)) continue;
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      missing.push(...missingSettings(value, contributed, name));
    } else {
      missing.push(name);
    }
  }
  return missing;
}

function checkSettings(manifest, extensionReadme, readmeFile) {
  const properties = manifest.contributes?.configuration?.properties ?? {};
  const contributed = new Set(Object.keys(properties));
  const missing = missingSettings(documentedServerSettings(readmeFile), contributed);
  assert.deepEqual(
    missing,
    [],
    `package.json does not contribute settings that ${path.relative(process.cwd(), readmeFile)} documents: ${missing.join(", ")}`,
  );
  for (const [name, schema] of Object.entries(properties)) {
    assert.ok(schema.description || schema.markdownDescription, `${name} has no description`);
  }
  const undocumented = [...contributed].filter((name) => !extensionReadme.includes(`\`${name}\``));
  assert.deepEqual(undocumented, [], `the extension's README does not document: ${undocumented.join(", ")}`);
  return contributed.size;
}

function main() {
  const args = process.argv.slice(2);
  const readmeAt = args.indexOf("--readme");
  const readmeFile = path.resolve(
    readmeAt >= 0 ? args.splice(readmeAt, 2)[1] : path.join(__dirname, "..", "..", "..", "README.md"),
  );
  const file = path.resolve(args[0] ?? "hpf-ls.vsix");
  const entries = readZip(file);
  const names = [...entries.keys()];
  const has = (name) => entries.has(name);
  const text = (name) => entries.get(name)().toString("utf8");

  for (const name of ["extension.vsixmanifest", "extension/package.json", "extension/readme.md"]) {
    assert.ok(has(name), `${name} in ${file}`);
  }
  const manifest = JSON.parse(text("extension/package.json"));
  const settingCount = checkSettings(manifest, text("extension/readme.md"), readmeFile);
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
  console.log(
    `${path.basename(file)}: ${names.length} files; package.json, out/extension.js, grammars, dependencies present; ` +
      `${settingCount} settings, every one the server's README documents among them; loads.`,
  );
}

main();
