// The TextMate grammars, tokenized with vscode-textmate (VS Code's own
// tokenizer): the injection into stand-in Fortran grammars shaped like the
// Modern Fortran extension's (comments from `!`, fixed-form comments from
// C or * in column 1), and the `.hpf` grammar alone.

import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { before, describe, it } from "node:test";

import * as oniguruma from "vscode-oniguruma";
import * as textmate from "vscode-textmate";

const ROOT = path.resolve(__dirname, "..", "..");
const INJECTION = "hpf-directives.injection";

function readJson(file: string): any {
  return JSON.parse(fs.readFileSync(path.join(ROOT, file), "utf8"));
}

const manifest = readJson("package.json");

function grammarFile(scopeName: string): string {
  const entry = manifest.contributes.grammars.find((it: any) => it.scopeName === scopeName);
  assert.ok(entry, `package.json contributes ${scopeName}`);
  return entry.path;
}

/** Free form: comments from `!`, a few keywords. */
const FREE = {
  scopeName: "source.fortran.free",
  patterns: [
    { name: "comment.line.fortran", begin: "!", end: "(?=\\n)" },
    { name: "keyword.control.fortran", match: "(?i)\\b(program|do|end|real|integer)\\b" },
  ],
};

/** Fixed form, as Modern Fortran's: comments from C, * or ! in column 1. */
const FIXED = {
  scopeName: "source.fortran.fixed",
  patterns: [
    { name: "comment.line.fortran", begin: "^[cC\\*]", end: "\\n" },
    { name: "comment.line.fortran", begin: "^ *!", end: "\\n" },
    { include: "source.fortran.free" },
  ],
};

/** A grammar the selector does not name: only the comment injection applies. */
const OTHER = {
  scopeName: "source.other",
  patterns: [{ name: "comment.line.other", begin: "!", end: "(?=\\n)" }],
};

let registry: textmate.Registry;
let withoutFortran: textmate.Registry;

function makeRegistry(grammars: Record<string, object>): textmate.Registry {
  const onigLib = Promise.resolve({
    createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
    createOnigString: (text: string) => new oniguruma.OnigString(text),
  });
  const injectTo: string[] = manifest.contributes.grammars.find((it: any) => it.scopeName === INJECTION).injectTo;
  return new textmate.Registry({
    onigLib,
    loadGrammar: async (scopeName: string) => {
      const grammar = grammars[scopeName];
      if (grammar === undefined) return null;
      return textmate.parseRawGrammar(JSON.stringify(grammar), `${scopeName}.json`);
    },
    getInjections: (scopeName: string) =>
      injectTo.includes(scopeName) || scopeName === "source.other" ? [INJECTION] : undefined,
  });
}

interface Token {
  text: string;
  scopes: string[];
}

async function tokenize(scopeName: string, source: string, from = registry): Promise<Token[][]> {
  const grammar = await from.loadGrammar(scopeName);
  assert.ok(grammar, scopeName);
  let state = textmate.INITIAL;
  const lines: Token[][] = [];
  for (const line of source.split("\n")) {
    const result = grammar.tokenizeLine(line, state);
    lines.push(
      result.tokens.map((token) => ({ text: line.slice(token.startIndex, token.endIndex), scopes: token.scopes })),
    );
    state = result.ruleStack;
  }
  return lines;
}

/** The scopes of the token that is (or contains) `word` on the line. */
function scopesOf(line: Token[], word: string): string[] {
  const joined = line.map((it) => it.text).join("");
  const at = joined.indexOf(word);
  assert.ok(at >= 0, `${word} in ${joined}`);
  let offset = 0;
  for (const token of line) {
    if (at >= offset && at < offset + token.text.length) return token.scopes;
    offset += token.text.length;
  }
  throw new Error(`no token for ${word}`);
}

function has(scopes: string[], prefix: string): boolean {
  return scopes.some((it) => it === prefix || it.startsWith(`${prefix}.`));
}

before(async () => {
  const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const ours = {
    [INJECTION]: readJson(grammarFile(INJECTION)),
    "source.hpf": readJson(grammarFile("source.hpf")),
  };
  registry = makeRegistry({ ...ours, "source.fortran.free": FREE, "source.fortran.fixed": FIXED, "source.other": OTHER });
  withoutFortran = makeRegistry(ours);
});

describe("the injection grammar", () => {
  it("is contributed for the free, fixed and .hpf grammars", () => {
    const entry = manifest.contributes.grammars.find((it: any) => it.scopeName === INJECTION);
    assert.equal(entry.path, "./syntaxes/hpf-directives.injection.json");
    assert.deepEqual(entry.injectTo, ["source.fortran.free", "source.fortran.fixed", "source.hpf"]);
    const selector: string = readJson(entry.path).injectionSelector;
    for (const scope of ["source.fortran.free", "source.fortran.fixed", "source.hpf", "comment"]) {
      assert.match(selector, new RegExp(`L:${scope.replace(/\./g, "\\.")}\\b`));
    }
  });

  it("colours free-form directive lines: sentinel, directives, clauses, formats", async () => {
    const [line] = await tokenize("source.fortran.free", "!HPF$ DISTRIBUTE A(BLOCK, CYCLIC(2)) ONTO P");
    assert.ok(has(scopesOf(line, "!HPF$"), "keyword.control.directive.sentinel.hpf"));
    assert.ok(has(scopesOf(line, "DISTRIBUTE"), "keyword.control.directive.hpf"));
    assert.ok(has(scopesOf(line, "BLOCK"), "support.constant.distribution-format.hpf"));
    assert.ok(has(scopesOf(line, "CYCLIC"), "support.constant.distribution-format.hpf"));
    assert.ok(has(scopesOf(line, "ONTO"), "keyword.other.clause.hpf"));
    assert.ok(has(scopesOf(line, "2"), "constant.numeric.hpf"));
    for (const token of line) {
      assert.ok(has(token.scopes, "meta.directive.hpf"), token.text);
      assert.ok(!has(token.scopes, "comment"), `${token.text}: ${token.scopes}`);
    }
  });

  it("knows every directive keyword, in any case, indented", async () => {
    const directives = ["PROCESSORS", "TEMPLATE", "DISTRIBUTE", "REDISTRIBUTE", "ALIGN", "REALIGN", "DYNAMIC"];
    const more = ["INHERIT", "INDEPENDENT", "SHADOW"];
    const clauses = ["ON", "RESIDENT", "WITH", "ONTO", "NEW", "REDUCTION"];
    const lines = await tokenize(
      "source.fortran.free",
      [...directives, ...more, ...clauses].map((it) => `   !hpf$ ${it.toLowerCase()} x`).join("\n"),
    );
    lines.forEach((line, index) => {
      const word = [...directives, ...more, ...clauses][index].toLowerCase();
      const scope = index < directives.length + more.length ? "keyword.control.directive.hpf" : "keyword.other.clause.hpf";
      assert.ok(has(scopesOf(line, word), scope), `${word}: ${scopesOf(line, word)}`);
      assert.ok(!has(scopesOf(line, " x"), "keyword"), word);
    });
  });

  it("colours fixed-form sentinels in column 1: CHPF$, *HPF$, !HPF$", async () => {
    const lines = await tokenize(
      "source.fortran.fixed",
      ["CHPF$ PROCESSORS P(4)", "*HPF$ TEMPLATE T(16)", "!HPF$ ALIGN B(I) WITH T(I)", "chpf$ independent, new(x)"].join(
        "\n",
      ),
    );
    for (const [index, sentinel, keyword] of [
      [0, "CHPF$", "PROCESSORS"],
      [1, "*HPF$", "TEMPLATE"],
      [2, "!HPF$", "ALIGN"],
      [3, "chpf$", "independent"],
    ] as const) {
      assert.ok(has(scopesOf(lines[index], sentinel), "keyword.control.directive.sentinel.hpf"), sentinel);
      assert.ok(has(scopesOf(lines[index], keyword), "keyword.control.directive.hpf"), keyword);
      assert.ok(!has(scopesOf(lines[index], keyword), "comment"), keyword);
    }
    assert.ok(has(scopesOf(lines[3], "new"), "keyword.other.clause.hpf"));
  });

  it("leaves ordinary comments and code alone", async () => {
    const lines = await tokenize(
      "source.fortran.free",
      ["! distribute the work with a block layout", "program align", "x = 1 ! HPF$ not a sentinel"].join("\n"),
    );
    assert.ok(has(scopesOf(lines[0], "distribute"), "comment.line.fortran"));
    assert.ok(!has(scopesOf(lines[0], "distribute"), "keyword.control.directive.hpf"));
    assert.ok(!has(scopesOf(lines[0], "block"), "support.constant.distribution-format.hpf"));
    assert.ok(!has(scopesOf(lines[1], "align"), "keyword.control.directive.hpf"));
    assert.ok(!has(scopesOf(lines[2], "HPF$"), "keyword.control.directive.sentinel.hpf"));
    const fixed = await tokenize("source.fortran.fixed", "C     DISTRIBUTE THE WORK");
    assert.ok(!has(scopesOf(fixed[0], "DISTRIBUTE"), "keyword.control.directive.hpf"));
  });

  it("keeps a trailing comment a comment", async () => {
    const [line] = await tokenize("source.fortran.free", "!HPF$ DISTRIBUTE T(BLOCK(11)) ONTO P     ! 4*11 cells, BLOCK");
    assert.ok(has(scopesOf(line, "11)"), "constant.numeric.hpf"));
    assert.ok(has(scopesOf(line, "4*11"), "comment.line.exclamation.hpf"));
    assert.ok(!has(scopesOf(line, "cells, BLOCK"), "support.constant.distribution-format.hpf"));
  });

  it("colours a directive inside a comment another grammar opened", async () => {
    const [line] = await tokenize("source.other", "!HPF$ ALIGN B(I) WITH A(I+1)");
    assert.ok(has(scopesOf(line, "HPF$"), "keyword.control.directive.sentinel.hpf"));
    assert.ok(has(scopesOf(line, "ALIGN"), "keyword.control.directive.hpf"));
    assert.ok(has(scopesOf(line, "WITH"), "keyword.other.clause.hpf"));
    const [plain] = await tokenize("source.other", "! align with care");
    assert.ok(!has(scopesOf(plain, "align"), "keyword.control.directive.hpf"));
  });
});

describe("the .hpf grammar", () => {
  it("is the grammar of the hpf language, for .hpf files", () => {
    const language = manifest.contributes.languages.find((it: any) => it.id === "hpf");
    assert.ok(language.extensions.includes(".hpf"));
    const entry = manifest.contributes.grammars.find((it: any) => it.language === "hpf");
    assert.equal(entry.scopeName, "source.hpf");
  });

  it("colours directives and comments without a Fortran grammar installed", async () => {
    const lines = await tokenize(
      "source.hpf",
      ["program p", "!HPF$ PROCESSORS P(4)", "  ! a comment: align", "  x = 'BLOCK' // \"!HPF$\""].join("\n"),
      withoutFortran,
    );
    assert.ok(has(scopesOf(lines[1], "PROCESSORS"), "keyword.control.directive.hpf"));
    assert.ok(has(scopesOf(lines[2], "align"), "comment.line.exclamation.hpf"));
    assert.ok(!has(scopesOf(lines[2], "align"), "keyword.control.directive.hpf"));
    assert.ok(has(scopesOf(lines[3], "BLOCK"), "string.quoted.single.hpf"));
    assert.ok(has(scopesOf(lines[3], "!HPF$"), "string.quoted.double.hpf"));
  });

  it("uses the free-form Fortran grammar when there is one", async () => {
    const lines = await tokenize("source.hpf", ["program p", "!HPF$ TEMPLATE T(8)", "! note"].join("\n"));
    assert.ok(has(scopesOf(lines[0], "program"), "keyword.control.fortran"));
    assert.ok(has(scopesOf(lines[1], "TEMPLATE"), "keyword.control.directive.hpf"));
    assert.ok(has(scopesOf(lines[2], "note"), "comment.line.fortran"));
  });
});
