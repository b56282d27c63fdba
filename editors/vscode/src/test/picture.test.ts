// The transfer-pattern panel's page, from an answer shaped like the server's.

import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import { escapeHtml, isExplanation, messageHtml, pictureHtml, sanitizeSvg, svgWidth, whatIfHtml } from "../picture";

const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><g class="message" data-from="1" data-to="2"><text>P(1)→P(2) B(4): 1 element</text></g></svg>\n';

// Shaped like analysis::whatif::render_table's output.
const WHAT_IF = [
  "What if A were distributed otherwise (this loop):",
  "",
  "| distribution                 |     elements | messages |",
  "|------------------------------|-------------:|---------:|",
  "| (BLOCK) <on> 4 current       |            3 |        3 |",
  "| (CYCLIC) on 4                |           15 |        4 |",
  "",
].join("\n");

describe("the transfer pattern panel", () => {
  it("recognises hpf.explainLoop's answer", () => {
    assert.ok(isExplanation({ text: "t", svg: SVG, whatIf: null }));
    assert.ok(isExplanation({ text: "t", svg: SVG, whatIf: "| a |" }));
    assert.ok(!isExplanation("a string"));
    assert.ok(!isExplanation({ text: "t" }));
    assert.ok(!isExplanation(null));
  });

  it("puts the SVG inline, the table and the text escaped, under a content policy without scripts", () => {
    const html = pictureHtml({ text: "P(1) -> P(2)  B: 1 element (B(4))", svg: SVG, whatIf: WHAT_IF }, "seed.f90", "vscode-resource:");
    assert.ok(html.includes('<g class="message" data-from="1" data-to="2">'));
    assert.ok(html.includes("P(1) -&gt; P(2)  B: 1 element (B(4))"));
    assert.ok(html.includes("<td>(BLOCK) &lt;on&gt; 4 current</td>"));
    // Scaled down to the panel's width, in proportion (the SVG has a viewBox).
    assert.match(html, /\.picture svg \{[^}]*max-width: 100%;[^}]*height: auto;/);
    assert.match(html, /Content-Security-Policy" content="default-src 'none';/);
    assert.ok(!/script-src/.test(html));
  });

  it("shrinks a wide picture down to half its width, then scrolls", () => {
    const wide = '<svg xmlns="http://www.w3.org/2000/svg" width="3001" height="200" viewBox="0 0 3001 200"></svg>';
    assert.equal(svgWidth(wide), 3001);
    assert.equal(svgWidth("<svg viewBox='0 0 1 1'></svg>"), undefined);
    const html = pictureHtml({ text: "t", svg: wide, whatIf: null }, "x", "src");
    assert.match(html, /\.picture svg \{[^}]*max-width: 100%;[^}]*min-width: 1501px;/);
    assert.match(html, /\.picture \{[^}]*overflow-x: auto;/);
  });

  it("renders the what-if table as a table, numbers right-aligned", () => {
    const html = whatIfHtml(WHAT_IF);
    assert.match(html, /^<p>What if A were distributed otherwise \(this loop\):<\/p>/);
    assert.equal((html.match(/<tr>/g) ?? []).length, 3);
    assert.ok(html.includes('<th style="text-align:right">elements</th>'), html);
    assert.ok(html.includes('<td style="text-align:right">15</td>'), html);
    assert.ok(!html.includes("|"), html);
  });

  it("leaves the what-if section out when there is no table", () => {
    const html = pictureHtml({ text: "t", svg: SVG, whatIf: null }, "x", "src");
    assert.ok(!html.includes("What if"));
  });

  it("strips scripts and handlers from an SVG", () => {
    const svg = sanitizeSvg('<?xml version="1.0"?><svg onload="x()"><script>alert(1)</script><rect onclick="y()"/></svg>');
    assert.equal(svg, "<svg><rect/></svg>");
    assert.equal(sanitizeSvg("no picture"), "");
  });

  it("escapes messages", () => {
    assert.equal(escapeHtml('<a href="x">&'), "&lt;a href=&quot;x&quot;&gt;&amp;");
    assert.ok(messageHtml("no loop <here>", "src").includes("no loop &lt;here&gt;"));
  });
});
