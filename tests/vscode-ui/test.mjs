// Drives VS Code (code-server, started by run.sh) in a headless Chromium
// through Playwright: the hpf-ls extension on tests/corpus/seed_fig6.f90.
// Each check fails the script (exit 1) when the behaviour is missing; the
// screenshots for the READMEs are written on the way.
//
// Environment (run.sh sets it): URL, WORKSPACE, VSUI_DIR (playwright-core is
// installed there), CHROMIUM, SCREENSHOTS, MPI (1: check "HPF: Run program"),
// EXPECTED_OUTPUT (the program's output), HEADED, RESTRICTED (1: the window
// is in Restricted Mode, an untrusted workspace: language features work, but
// there is no run lens and "HPF: Run program" is refused), PLANTED_MARKER
// (left by the server the restricted workspace's settings name, if started).

import { createRequire } from "node:module";
import * as fs from "node:fs";
import * as path from "node:path";

const env = (name, fallback) => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) {
    console.error(`test.mjs: ${name} is not set (run tests/vscode-ui/run.sh)`);
    process.exit(2);
  }
  return value;
};
const URL = env("URL");
const WORKSPACE = env("WORKSPACE");
const VSUI_DIR = env("VSUI_DIR", "/tmp/vsui");
const CHROMIUM = env("CHROMIUM", "/usr/bin/chromium");
const SCREENSHOTS = env("SCREENSHOTS");
const MPI = process.env.MPI === "1";
const EXPECTED_OUTPUT = process.env.EXPECTED_OUTPUT;
const RESTRICTED = process.env.RESTRICTED === "1";
const PLANTED_MARKER = process.env.PLANTED_MARKER;
const FILE = "seed_fig6.f90";

const { chromium } = createRequire(path.join(VSUI_DIR, "package.json"))("playwright-core");

const results = [];
let page;

class CheckFailed extends Error {}

function ensure(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

/** Polls `probe` until it returns a truthy value; fails with `what` after `timeout` ms. */
async function waitFor(what, probe, timeout = 20000, interval = 250) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await probe();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const detail = last instanceof Error ? `: ${last.message}` : "";
      throw new CheckFailed(`timed out after ${timeout / 1000} s waiting for ${what}${detail}`);
    }
    await page.waitForTimeout(interval);
  }
}

async function check(name, fn, { fatal = false } = {}) {
  const start = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`ok    ${name} (${((Date.now() - start) / 1000).toFixed(1)} s)`);
  } catch (error) {
    results.push({ name, ok: false });
    console.log(`FAIL  ${name}: ${error instanceof CheckFailed ? error.message : error.stack}`);
    if (page) {
      const file = path.join(process.env.FAILURE_DIR ?? path.dirname(WORKSPACE), `failure-${results.length}.png`);
      await page.screenshot({ path: file }).catch(() => undefined);
      console.log(`      screenshot: ${file}`);
      // What VS Code told the user (an extension that did not start, ...).
      const notes = await page
        .locator(".notification-list-item-message")
        .allInnerTexts()
        .catch(() => []);
      for (const note of notes) console.log(`      notification: ${note}`);
    }
    if (fatal) throw new Error(`cannot go on after: ${name}`);
  }
}

/** Writes docs/images/NAME (the top `height` pixels of the window). */
async function screenshot(name, height = 800, { movePointer = true } = {}) {
  if (movePointer) {
    // No tooltip from wherever the pointer was last.
    await parkPointer();
  }
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, name);
  await page.screenshot({ path: file, clip: { x: 0, y: 0, width: 1280, height } });
  console.log(`      wrote ${path.relative(process.cwd(), file) || file}`);
}

// --- The workbench ----------------------------------------------------------

const editorSelector = `.part.editor .editor-instance .monaco-editor[data-uri$="${FILE}"]`;

/** The text of the source editor's visible lines (with inlay hints). */
async function editorText() {
  const text = await page.locator(`${editorSelector} .view-lines`).first().innerText();
  return text.replace(/\u00a0/g, " ");
}

async function escape(times = 2) {
  for (let i = 0; i < times; i++) await page.keyboard.press("Escape");
}

async function focusEditor() {
  // Monaco takes the keyboard through its hidden textarea.
  await page.locator(`${editorSelector} textarea`).first().focus();
}

/** Moves the mouse pointer out of the way (to the window's title). */
async function parkPointer() {
  await page.mouse.move(640, 14);
  await page.waitForTimeout(200);
}

/** Hides the bottom panel (Problems, Output) when it is shown. */
async function hidePanel() {
  const panel = page.locator(".part.panel").first();
  if (await panel.isVisible()) {
    await page.keyboard.press("Control+j");
    await waitFor("the panel to hide", async () => !(await panel.isVisible()), 5000);
  }
}

/** Shows or hides the primary side bar (the Explorer). */
async function sideBar(visible) {
  const bar = page.locator(".part.sidebar").first();
  if ((await bar.isVisible()) !== visible) {
    await page.keyboard.press("Control+b");
    await waitFor(`the side bar to ${visible ? "show" : "hide"}`, async () => (await bar.isVisible()) === visible, 5000);
  }
}

/** Runs a command from the Command Palette by its title. */
async function runCommand(title) {
  await escape();
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible", timeout: 10000 });
  await input.fill(`>${title}`);
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
  await waitFor(`"${title}" in the Command Palette`, () => row.isVisible(), 10000);
  await row.click();
}

/** Puts the cursor at a 1-based line and column of the source editor. */
async function goTo(line, column) {
  await focusEditor();
  await page.keyboard.press("Control+g");
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible", timeout: 10000 });
  await input.fill(`:${line}:${column}`);
  await page.keyboard.press("Enter");
  await input.waitFor({ state: "hidden", timeout: 10000 });
}

/** The texts of the code lenses shown in the source editor. */
async function lensTexts() {
  return page.locator(`${editorSelector} .codelens-decoration`).allInnerTexts();
}

/** The status bar's problem counts: { errors, warnings }. */
async function problemCounts() {
  const label = await page.locator("#status\\.problems").first().getAttribute("aria-label");
  // "No Problems", "Warnings: 1", "Errors: 1, Warnings: 2"
  const number = (word) => Number((label ?? "").match(new RegExp(`${word}: (\\d+)`))?.[1] ?? 0);
  return { errors: number("Errors"), warnings: number("Warnings"), label };
}

// --- The checks -----------------------------------------------------------

async function main() {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: process.env.HEADED !== "1",
    args: ["--no-sandbox", "--disable-background-networking", "--disable-dev-shm-usage"],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
    page = await context.newPage();
    page.setDefaultTimeout(15000);
    page.on("pageerror", (error) => console.log(`      [page error] ${error.message.split("\n")[0]}`));

    await check(
      "the workbench loads and opens seed_fig6.f90 as an HPF document",
      async () => {
        await page.goto(URL, { waitUntil: "domcontentloaded", timeout: 60000 });
        await page.locator(".monaco-workbench").waitFor({ timeout: 60000 });
        const item = page.locator(`.explorer-folders-view .monaco-list-row[aria-label="${FILE}"]`).first();
        await waitFor(`${FILE} in the Explorer`, () => item.isVisible(), 60000);
        await item.click();
        await page.locator(editorSelector).waitFor({ timeout: 20000 });
        await waitFor("the ALIGN line in the editor", async () => (await editorText()).includes("ALIGN B(I) WITH A(I)"));
        // The language mode in the status bar: the extension's `hpf`.
        const mode = page.locator("#status\\.editor\\.mode").first();
        await waitFor('the language mode "HPF Fortran"', async () => (await mode.innerText()).includes("HPF Fortran"));
      },
      { fatal: true },
    );

    if (RESTRICTED) {
      await restrictedChecks();
      return;
    }

    await check(
      "the extension starts hpf-ls and the misalignment diagnostic (HPF101) appears",
      async () => {
        await waitFor(
          "a problem in the status bar",
          async () => {
            const it = await problemCounts();
            return it.errors + it.warnings > 0 ? it : undefined;
          },
          60000,
        );
        await page
          .locator(`${editorSelector} .squiggly-warning, ${editorSelector} .squiggly-error`)
          .first()
          .waitFor({ timeout: 10000 });
        await page.keyboard.press("Control+Shift+M");
        const problems = page.locator(".markers-panel");
        await waitFor("the Problems panel", () => problems.isVisible(), 10000);
        const text = await waitFor("HPF101 in the Problems panel", async () => {
          const it = await problems.innerText();
          return it.includes("HPF101") ? it : undefined;
        });
        ensure(text.includes("ALIGN B(I) WITH A(I+1)"), `the problem does not propose ALIGN B(I) WITH A(I+1):\n${text}`);
        // A trusted window offers to run the program (the restricted run checks it does not).
        await waitFor('the lens "▶ Run on 4 processes"', async () => (await lensTexts()).some((it) => it.includes("Run on 4 processes")));
        await goTo(13, 16);
        await page.waitForTimeout(300);
        await screenshot("vscode-diagnostic.png", 650);
      },
      { fatal: true },
    );

    await check("hover on the loop header shows the alignment triples", async () => {
      await hidePanel();
      await parkPointer(); // moving it later would close the hover
      await goTo(12, 9);
      await runCommand("Show or Focus Hover");
      const hover = page.locator(".monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover:not(.hidden) .hover-contents").first();
      const text = await waitFor("the hover", async () => {
        if (!(await hover.isVisible())) return undefined;
        const it = await hover.innerText();
        return it.includes("[2:16:1]") ? it : undefined;
      });
      ensure(text.includes("[1:15:1]"), `the hover lacks B's triple [1:15:1]:\n${text}`);
      ensure(text.includes("ALIGN B(I) WITH A(I+1)"), `the hover lacks the optimal ALIGN:\n${text}`);
      await screenshot("vscode-hover.png", 440, { movePointer: false });
      await escape();
    });

    await check("inlay hints show the loop's transfer pattern", async () => {
      await focusEditor();
      const text = await waitFor("the inlay hint '⇐ B shift+1: 3 elems, 3 msgs'", async () => {
        const it = await editorText();
        return it.includes("⇐ B shift+1: 3 elems, 3 msgs") ? it : undefined;
      });
      ensure(text.includes("msgs"), text);
      await goTo(12, 1);
      await screenshot("vscode-inlay.png", 440);
    });

    await check('"HPF: Show transfer pattern" opens the picture of the loop', async () => {
      await sideBar(false);
      await goTo(12, 9);
      await runCommand("HPF: Show transfer pattern");
      const tab = page.locator(".tabs-container .tab", { hasText: "Transfers: seed_fig6.f90:12" }).first();
      await waitFor('the panel "Transfers: seed_fig6.f90:12"', () => tab.isVisible(), 20000);
      // The webview's page is an iframe inside an iframe.
      const frame = await waitFor(
        "the picture (an SVG) in the webview",
        async () => {
          for (const it of page.frames()) {
            if ((await it.locator("svg").count().catch(() => 0)) > 0 && (await it.content()).includes("P(1)")) return it;
          }
          return undefined;
        },
        20000,
      );
      const body = await frame.locator("body").innerText();
      ensure(body.includes("B(4)") || (await frame.content()).includes("B(4)"), `the picture does not show the message of B(4):\n${body.slice(0, 2000)}`);
      // The picture fits the panel (it is wider than the panel here), in proportion.
      const fit = await frame.evaluate(() => {
        const svg = document.querySelector(".picture svg");
        const box = svg.getBoundingClientRect();
        const natural = Number(svg.getAttribute("width"));
        const [, , viewWidth, viewHeight] = svg.getAttribute("viewBox").split(/\s+/).map(Number);
        return { width: box.width, height: box.height, natural, ratio: viewWidth / viewHeight, panel: document.documentElement.clientWidth };
      });
      ensure(fit.width <= fit.panel && fit.width < fit.natural, `the picture is not scaled to the panel: ${JSON.stringify(fit)}`);
      ensure(Math.abs(fit.width / fit.height - fit.ratio) < 0.02 * fit.ratio, `the picture is distorted: ${JSON.stringify(fit)}`);
      // The what-if table is a table, not Markdown text.
      const rows = await frame.locator(".what-if table tr").count();
      ensure(rows >= 3, `the what-if section has ${rows} table rows`);
      ensure(!(await frame.locator(".what-if").innerText()).includes("|---"), "the what-if section shows raw Markdown");
      await page.waitForTimeout(500);
      await screenshot("vscode-transfer-panel.png");
      // Close the panel (the active editor group is the code's).
      await tab.hover();
      await tab.locator(".codicon-close, .action-label.codicon-close").first().click();
      await waitFor("the panel to close", async () => !(await tab.isVisible()), 10000);
      await sideBar(true);
    });

    await check("the quick fix rewrites the ALIGN to A(I+1) and the error goes away", async () => {
      await goTo(13, 16);
      await page.keyboard.press("Control+.");
      const menu = page.locator(".action-widget");
      await waitFor("the quick fix menu", () => menu.isVisible(), 15000);
      // Walk the menu with the keyboard to the fix that realigns B (the
      // menu's pointer block swallows mouse events while it opens).
      const focused = menu.locator(".monaco-list-row.focused");
      const rows = await waitFor("the rows of the quick fix menu", async () => (await menu.locator(".monaco-list-row.action").count()) || undefined, 15000);
      for (let i = 0; i <= rows && !((await focused.getAttribute("aria-label").catch(() => "")) ?? "").includes("A(I+1)"); i++) {
        await page.keyboard.press("ArrowDown");
        await page.waitForTimeout(100);
      }
      const title = (await focused.getAttribute("aria-label")) ?? "";
      ensure(title.includes("ALIGN B(I) WITH A(I+1)"), `no quick fix "... ALIGN B(I) WITH A(I+1) ..." in the menu:\n${await menu.innerText()}`);
      await page.waitForTimeout(300);
      await screenshot("vscode-quickfix.png", 440);
      await page.keyboard.press("Enter");
      await waitFor("ALIGN B(I) WITH A(I+1) in the editor", async () => (await editorText()).includes("ALIGN B(I) WITH A(I+1)"), 10000);
      const counts = await waitFor(
        "no more problems",
        async () => {
          const it = await problemCounts();
          return it.errors === 0 && it.warnings === 0 ? it : undefined;
        },
        20000,
      );
      ensure(counts.errors === 0, counts.label);
      // VS Code asks for inlay hints again a moment after the edit.
      await waitFor("the loop's inlay hint without messages", async () => !(await editorText()).includes("3 msgs"), 10000);
    });

    await check("the transfer panel follows the code as it changes", async () => {
      // The text of the webview frame that holds the picture ("" while there is none):
      // re-read every time, since an update may replace the frame's document.
      const pictureText = async () => {
        for (const it of page.frames()) {
          if ((await it.locator("svg").count().catch(() => 0)) === 0) continue;
          const text = await it.locator("body").innerText().catch(() => "");
          if (text.includes("P(1)")) return text;
        }
        return "";
      };
      await sideBar(false);
      await goTo(12, 9);
      await runCommand("HPF: Show transfer pattern");
      await waitFor("the picture of the fixed loop: total 0 elements", async () => (await pictureText()).includes("total: 0 elements in 0 messages") || undefined, 20000);
      // Undo the quick fix in the editor: the panel shows the messages again.
      await focusEditor();
      await page.keyboard.press("Control+z");
      await waitFor("ALIGN B(I) WITH A(I) back in the editor", async () => (await editorText()).includes("ALIGN B(I) WITH A(I)\n") || (await editorText()).match(/ALIGN B\(I\) WITH A\(I\)\s*$/m) !== null, 10000);
      await waitFor("the panel to show the 3 messages again", async () => (await pictureText()).includes("total: 3 elements in 3 messages") || undefined, 20000);
      const tab = page.locator(".tabs-container .tab", { hasText: "Transfers: seed_fig6.f90" }).first();
      await tab.hover();
      await tab.locator(".codicon-close, .action-label.codicon-close").first().click();
      await waitFor("the panel to close", async () => !(await tab.isVisible()), 10000);
      await sideBar(true);
    });

    if (MPI) {
      await check('"HPF: Run program" runs it under mpirun and shows the output', async () => {
        await focusEditor();
        await runCommand("HPF: Run program");
        const input = page.locator(".quick-input-widget input.input");
        await input.waitFor({ state: "visible", timeout: 10000 });
        await input.fill("2");
        await page.keyboard.press("Enter");
        // The output channel is a read-only editor in the bottom panel.
        const text = await waitFor(
          'the "HPF Run" output channel with the exit code',
          async () => {
            const texts = await page.locator(".part.panel .view-lines").allInnerTexts();
            return texts.map((it) => it.replace(/\u00a0/g, " ")).find((it) => /Exit code \d+/.test(it));
          },
          180000,
          500,
        );
        ensure(text.includes("Exit code 0 on 2 processes"), `the program did not exit with 0:\n${text}`);
        if (EXPECTED_OUTPUT) {
          const expected = fs.readFileSync(EXPECTED_OUTPUT, "utf8").trim().split("\n")[0];
          ensure(text.includes(expected.trim()), `the output lacks "${expected.trim()}":\n${text}`);
        }
        await screenshot("vscode-run.png", 640);
      });
    } else {
      console.log('skip  "HPF: Run program" (no mpirun and mpif90 on PATH)');
    }
  } finally {
    await browser.close();
  }
}

/** In Restricted Mode: the language features, but nothing that runs. */
async function restrictedChecks() {
  await check(
    "in Restricted Mode, the diagnostics and the hover work",
    async () => {
      await waitFor("the Restricted Mode indicator", () => page.locator(".statusbar-item", { hasText: "Restricted Mode" }).first().isVisible(), 20000);
      await waitFor(
        "a problem in the status bar",
        async () => {
          const it = await problemCounts();
          return it.errors + it.warnings > 0 ? it : undefined;
        },
        60000,
      );
      await parkPointer();
      await goTo(12, 9);
      await runCommand("Show or Focus Hover");
      const hover = page.locator(".monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover:not(.hidden) .hover-contents").first();
      await waitFor("the hover with the loop triple", async () => (await hover.isVisible()) && (await hover.innerText()).includes("[2:16:1]"));
      await escape();
    },
    { fatal: true },
  );

  await check("in Restricted Mode, no lens offers to run the program", async () => {
    // The server has answered (diagnostics are in); give VS Code time to ask for lenses.
    await focusEditor();
    await page.waitForTimeout(3000);
    const lenses = await lensTexts();
    ensure(!lenses.some((it) => it.includes("Run on")), `a run lens is shown: ${JSON.stringify(lenses)}`);
  });

  await check('in Restricted Mode, "HPF: Run program" is refused with the reason', async () => {
    await focusEditor();
    await runCommand("HPF: Run program");
    const note = page.locator(".notification-list-item-message", { hasText: "Restricted Mode" }).first();
    await waitFor("the notification that explains the refusal", () => note.isVisible(), 10000);
    const text = await note.innerText();
    ensure(text.includes("starts no compiler, launcher or program"), text);
    // It was refused, not asked: no input box for the number of processes.
    ensure(!(await page.locator(".quick-input-widget input.input").isVisible()), "the process count was asked for");
    await screenshot("vscode-restricted.png", 800, { movePointer: false });
  });

  await check("in Restricted Mode, the server the workspace's settings name was never started", async () => {
    ensure(PLANTED_MARKER && !fs.existsSync(PLANTED_MARKER), `${PLANTED_MARKER} exists: the workspace's hpf.server.path was used`);
  });

  await check("trusting the workspace restarts the server with the run lens", async () => {
    // Trusted, the workspace's settings apply: take its planted server out first.
    fs.rmSync(path.join(WORKSPACE, ".vscode", "settings.json"));
    await page.waitForTimeout(1500);
    await escape();
    await runCommand("Workspaces: Manage Workspace Trust");
    const trust = page.locator(".workspace-trust-editor .workspace-trust-buttons-row").getByRole("button", { name: "Trust", exact: true });
    await waitFor('the "Trust" button of the workspace trust editor', () => trust.isVisible(), 15000);
    await trust.click();
    await waitFor("Restricted Mode to end", async () => !(await page.locator(".statusbar-item", { hasText: "Restricted Mode" }).first().isVisible()), 15000);
    const tab = page.locator(".tabs-container .tab", { hasText: FILE }).first();
    await tab.click();
    await waitFor('the lens "▶ Run on 4 processes"', async () => (await lensTexts()).some((it) => it.includes("Run on 4 processes")), 30000);
  });
}

try {
  await main();
} catch (error) {
  if (!(error instanceof Error && error.message.startsWith("cannot go on"))) {
    results.push({ name: "the test script", ok: false });
    console.log(`FAIL  ${error.stack ?? error}`);
  } else {
    console.log(error.message);
  }
}
const passed = results.filter((it) => it.ok).length;
const failed = results.length - passed;
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
