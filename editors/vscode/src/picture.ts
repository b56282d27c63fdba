// The "HPF: Show transfer pattern" panel's page: the server's answer to
// `hpf.explainLoop` ({text, svg, whatIf}) as HTML for a webview. Pure
// functions (no `vscode`), so that they are tested without an editor.

import MarkdownIt from "markdown-it";

/** Markdown as VS Code's own preview renders it (markdown-it), with raw
 * HTML escaped rather than passed through. */
const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });

/** The answer of `hpf.explainLoop`. */
export interface Explanation {
  text: string;
  svg: string;
  whatIf: string | null;
}

/** Whether a command's answer is an explanation. */
export function isExplanation(value: unknown): value is Explanation {
  if (typeof value !== "object" || value === null) return false;
  const it = value as Record<string, unknown>;
  return (
    typeof it.text === "string" &&
    typeof it.svg === "string" &&
    (it.whatIf === null || it.whatIf === undefined || typeof it.whatIf === "string")
  );
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** Only the server's own SVG document goes in: no scripts, no event handlers, no foreign objects. */
export function sanitizeSvg(svg: string): string {
  const start = svg.indexOf("<svg");
  if (start < 0) return "";
  return svg
    .slice(start)
    .replace(/<script[\s\S]*?<\/script>/gi, "")
    .replace(/<foreignObject[\s\S]*?<\/foreignObject>/gi, "")
    .replace(/\son[a-z]+\s*=\s*"[^"]*"/gi, "");
}

/** The what-if section (a sentence and a Markdown table) as HTML. */
export function whatIfHtml(whatIf: string): string {
  return markdown.render(whatIf);
}

/** How far a wide picture shrinks to fit the panel before it scrolls
 * instead: below half size its labels are no longer legible. */
export const SMALLEST_SCALE = 0.5;

/** The `width` the server gives its SVG, in pixels, or undefined. */
export function svgWidth(svg: string): number | undefined {
  const width = /<svg\b[^>]*?\swidth="(\d+(?:\.\d+)?)"/.exec(svg)?.[1];
  return width === undefined ? undefined : Number(width);
}

/** The page: the picture, scaled down to the panel's width, the what-if
 * table and the text picture, under a strict content policy. */
export function pictureHtml(explanation: Explanation, title: string, cspSource: string): string {
  const csp = `default-src 'none'; img-src ${cspSource} data:; style-src 'unsafe-inline' ${cspSource};`;
  const natural = svgWidth(explanation.svg);
  const smallest = natural === undefined ? "" : `min-width: ${Math.round(natural * SMALLEST_SCALE)}px;`;
  const whatIf = explanation.whatIf
    ? `<h2>What if the target were distributed otherwise</h2>\n<div class="what-if">${whatIfHtml(explanation.whatIf)}</div>`
    : "";
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${escapeHtml(title)}</title>
<style>
  body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 12px; }
  .picture { background: #ffffff; border-radius: 4px; padding: 4px; overflow-x: auto; }
  /* The SVG has a viewBox: narrower than its width, it shrinks, keeping its
     proportions, down to the smallest legible scale; then the picture scrolls. */
  .picture svg { display: block; max-width: 100%; height: auto; ${smallest} }
  .what-if table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
  .what-if th, .what-if td { padding: 2px 10px; border-bottom: 1px solid var(--vscode-panel-border, #8884); }
  .what-if th { text-align: left; }
  pre { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); overflow: auto; }
  h2 { font-size: 1.05em; }
</style>
</head>
<body>
<div class="picture">${sanitizeSvg(explanation.svg)}</div>
${whatIf}
<details><summary>As text</summary>
<pre class="text">${escapeHtml(explanation.text)}</pre>
</details>
</body>
</html>
`;
}

/** The page shown when the cursor is not in a loop the server can explain. */
export function messageHtml(message: string, cspSource: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline' ${cspSource};">
</head>
<body><p>${escapeHtml(message)}</p></body>
</html>
`;
}
