// Pure helpers of the extension (no `vscode` import, so that plain
// `node --test` can load them): finding the server, turning the `hpf`
// settings into what the server reads, reading a process count, and
// rendering the answers of `hpf.run` / `hpf.build`.

import * as fs from "fs";
import * as path from "path";

/** The section of the settings, for the client and the server alike. */
export const SECTION = "hpf";

/** VS Code language ids the server is started for. `fortran`,
 * `FortranFreeForm`, `FortranFixedForm` and `fortran_fixed-form` come from
 * Fortran extensions (Modern Fortran and its predecessors); `hpf` (`.hpf`
 * files) from this one. */
export const LANGUAGES: readonly string[] = [
  "fortran",
  "FortranFreeForm",
  "FortranFixedForm",
  "fortran_fixed-form",
  "hpf",
];

export const SERVER_NAME = "hpf-ls";

// ---------------------------------------------------------------------------
// The server's executable

export interface ServerPathInputs {
  /** `hpf.server.path`, as set (may be empty). */
  configured?: string | null;
  /** The `PATH` environment variable. */
  envPath?: string;
  /** `PATHEXT` on Windows. */
  envPathExt?: string;
  /** `process.platform`. */
  platform: string;
  /** Where the extension is installed (its `bin/` may hold a bundled server). */
  extensionPath: string;
  /** For a relative `hpf.server.path`. */
  workspaceFolder?: string;
  /** False in Restricted Mode: a `hpf.server.path` inside the workspace
   * (relative, or with `${workspaceFolder}`) is then refused. */
  workspaceTrusted?: boolean;
  /** For `~` in `hpf.server.path`. */
  home?: string;
  /** Whether a path names an executable file (injected for tests). */
  isExecutable?: (file: string) => boolean;
}

export type ServerPath =
  | { path: string; source: "setting" | "PATH" | "bundled" }
  | { error: string };

export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    if (process.platform === "win32") return true;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function pathApi(platform: string): typeof path.posix {
  return platform === "win32" ? path.win32 : path.posix;
}

/** Expands `~`, `${userHome}` and `${workspaceFolder}`, and makes a relative
 * path relative to the workspace folder. */
export function expandConfiguredPath(
  configured: string,
  platform: string,
  home?: string,
  workspaceFolder?: string,
): string {
  const p = pathApi(platform);
  let value = configured.trim();
  if (home) {
    value = value.replace(/\$\{userHome\}/g, home);
    if (value === "~") value = home;
    else if (value.startsWith("~/") || (platform === "win32" && value.startsWith("~\\"))) {
      value = p.join(home, value.slice(2));
    }
  }
  if (workspaceFolder) value = value.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  if (!p.isAbsolute(value) && workspaceFolder && /[\\/]/.test(value)) {
    // `./target/release/hpf-ls`, `target/release/hpf-ls`: from the workspace.
    // A bare name (`hpf-ls-dev`) is looked up on PATH.
    value = p.join(workspaceFolder, value);
  }
  return value;
}

/** `name` on `PATH` (with `PATHEXT` on Windows), or undefined. */
export function findOnPath(
  name: string,
  envPath: string | undefined,
  platform: string,
  isExecutable: (file: string) => boolean,
  envPathExt?: string,
): string | undefined {
  if (!envPath) return undefined;
  const p = pathApi(platform);
  const delimiter = platform === "win32" ? ";" : ":";
  const extensions =
    platform === "win32"
      ? ["", ...(envPathExt ?? ".COM;.EXE;.BAT;.CMD").split(";").filter((it) => it.length > 0)]
      : [""];
  for (const dir of envPath.split(delimiter)) {
    if (dir.length === 0) continue;
    for (const extension of extensions) {
      const candidate = p.join(dir, name + extension);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/** The executable of the bundled server inside the extension. */
export function bundledServerPath(extensionPath: string, platform: string): string {
  const p = pathApi(platform);
  return p.join(extensionPath, "bin", platform === "win32" ? `${SERVER_NAME}.exe` : SERVER_NAME);
}

/** Whether a configured path would be taken from the workspace folder. */
function namesWorkspacePath(configured: string, platform: string): boolean {
  if (configured.includes("${workspaceFolder}")) return true;
  if (configured.startsWith("~") || configured.includes("${userHome}")) return false;
  return !pathApi(platform).isAbsolute(configured) && /[\\/]/.test(configured);
}

/**
 * Which `hpf-ls` to start: `hpf.server.path` when set (a bare name is
 * looked up on PATH), else `hpf-ls` on `PATH`, else the bundled
 * `<extension>/bin/hpf-ls`.
 */
export function resolveServerPath(inputs: ServerPathInputs): ServerPath {
  const isExecutable = inputs.isExecutable ?? isExecutableFile;
  const p = pathApi(inputs.platform);
  const configured = (inputs.configured ?? "").trim();
  if (configured.length > 0) {
    if (inputs.workspaceTrusted === false && namesWorkspacePath(configured, inputs.platform)) {
      return {
        error:
          `hpf.server.path is "${configured}", a path in the workspace, which is not trusted (Restricted Mode): ` +
          "trust the workspace, or give an absolute path in your user settings.",
      };
    }
    const expanded = expandConfiguredPath(configured, inputs.platform, inputs.home, inputs.workspaceFolder);
    if (p.isAbsolute(expanded)) {
      if (isExecutable(expanded)) return { path: expanded, source: "setting" };
      return { error: `hpf.server.path is "${configured}", but ${expanded} is not an executable file.` };
    }
    const found = findOnPath(expanded, inputs.envPath, inputs.platform, isExecutable, inputs.envPathExt);
    if (found) return { path: found, source: "setting" };
    return { error: `hpf.server.path is "${configured}", which is not on PATH.` };
  }
  const onPath = findOnPath(SERVER_NAME, inputs.envPath, inputs.platform, isExecutable, inputs.envPathExt);
  if (onPath) return { path: onPath, source: "PATH" };
  const bundled = bundledServerPath(inputs.extensionPath, inputs.platform);
  if (isExecutable(bundled)) return { path: bundled, source: "bundled" };
  return {
    error:
      "hpf-ls was not found: set hpf.server.path, put hpf-ls on PATH " +
      "(cargo build --release -p hpf-ls gives target/release/hpf-ls), or use a build of the extension that bundles it.",
  };
}

// ---------------------------------------------------------------------------
// Settings

/** What the server reads (server/lsp/src/server/settings.rs). Unset
 * values are left out, so that the server keeps its defaults. */
export interface ServerSettings {
  form?: string;
  processors?: number;
  inlayHints: { loops: boolean; references: boolean };
  severity: Record<string, string>;
  mpi: {
    compiler?: string;
    launcher?: string;
    processes?: number;
    hostfile?: string;
    extraArgs: string[];
    /** Seconds for the compilation and for the run, each; 0: no limit. */
    timeoutSeconds?: number;
    /** Bytes of output kept from each; past it the processes are killed. */
    maxOutputBytes?: number;
  };
}

/** Reads one setting of the `hpf` section by its dotted key below the
 * section (`mpi.compiler`); `workspace.getConfiguration('hpf').get` is one. */
export type SettingReader = (key: string) => unknown;

export const FORMS: readonly string[] = ["free", "fixed", "fixed72", "fixed132"];
export const SEVERITIES: readonly string[] = ["error", "warning", "warn", "info", "information", "hint", "off", "none"];

/** A reader over a plain nested object (`{ mpi: { compiler: "x" } }`),
 * the shape of the `hpf` section in a `workspace/configuration` answer.
 * A flat dotted key (`{ "mpi.compiler": "x" }`) is found as well. */
export function objectReader(section: unknown): SettingReader {
  return (key: string) => {
    if (section === null || typeof section !== "object") return undefined;
    const record = section as Record<string, unknown>;
    if (key in record) return record[key];
    let current: unknown = section;
    for (const part of key.split(".")) {
      if (current === null || typeof current !== "object") return undefined;
      current = (current as Record<string, unknown>)[part];
    }
    return current;
  };
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value.trim().length > 0 ? value.trim() : undefined;
}

function positiveInteger(value: unknown, max: number): number | undefined {
  const number = typeof value === "string" && value.trim().length > 0 ? Number(value) : value;
  if (typeof number !== "number" || !Number.isInteger(number) || number < 1) return undefined;
  return Math.min(number, max);
}

/** A finite number >= 0 (a numeric string too), or undefined. */
function nonNegativeNumber(value: unknown, integer: boolean): number | undefined {
  const number = typeof value === "string" && value.trim().length > 0 ? Number(value) : value;
  if (typeof number !== "number" || !Number.isFinite(number) || number < 0) return undefined;
  if (integer && !Number.isInteger(number)) return undefined;
  return Math.min(number, Number.MAX_SAFE_INTEGER);
}

function isUnset(value: unknown): boolean {
  return value === undefined || value === null || value === "";
}

function boolean(value: unknown, fallback: boolean): boolean {
  return typeof value === "boolean" ? value : fallback;
}

export interface ConvertedSettings {
  settings: ServerSettings;
  /** Values left out because the server would reject them (and with them
   * every other setting). */
  problems: string[];
}

/**
 * The `hpf` settings as the server reads them (for `initializationOptions`
 * and the answers to `workspace/configuration`): `form: "auto"` and empty
 * strings are left out, numbers checked, severities checked.
 */
export function toServerSettings(read: SettingReader): ConvertedSettings {
  const problems: string[] = [];
  const settings: ServerSettings = {
    inlayHints: {
      loops: boolean(read("inlayHints.loops"), true),
      references: boolean(read("inlayHints.references"), true),
    },
    severity: {},
    mpi: { extraArgs: [] },
  };

  const form = nonEmptyString(read("form"));
  if (form !== undefined && form.toLowerCase() !== "auto") {
    if (FORMS.includes(form.toLowerCase())) settings.form = form.toLowerCase();
    else problems.push(`hpf.form: "${form}" is not one of auto, ${FORMS.join(", ")}`);
  }

  const processorsValue = read("processors");
  const processors = positiveInteger(processorsValue, Number.MAX_SAFE_INTEGER);
  if (processors !== undefined) settings.processors = processors;
  else if (processorsValue !== undefined && processorsValue !== null && processorsValue !== "") {
    problems.push(`hpf.processors: ${JSON.stringify(processorsValue)} is not a positive integer`);
  }

  const severity = read("severity");
  if (severity !== null && typeof severity === "object" && !Array.isArray(severity)) {
    for (const [code, level] of Object.entries(severity as Record<string, unknown>)) {
      if (!/^HPF\d{3}$/i.test(code)) {
        problems.push(`hpf.severity: "${code}" is not a diagnostic code (HPF001, HPF101, ...)`);
      } else if (typeof level !== "string" || !SEVERITIES.includes(level.toLowerCase())) {
        problems.push(`hpf.severity.${code}: ${JSON.stringify(level)} is not one of error, warning, info, hint, off`);
      } else {
        settings.severity[code.toUpperCase()] = level.toLowerCase();
      }
    }
  }

  const compiler = nonEmptyString(read("mpi.compiler"));
  if (compiler !== undefined) settings.mpi.compiler = compiler;
  const launcher = nonEmptyString(read("mpi.launcher"));
  if (launcher !== undefined) settings.mpi.launcher = launcher;
  const processesValue = read("mpi.processes");
  const processes = positiveInteger(processesValue, 4096);
  if (processes !== undefined) settings.mpi.processes = processes;
  else if (processesValue !== undefined && processesValue !== null && processesValue !== "") {
    problems.push(`hpf.mpi.processes: ${JSON.stringify(processesValue)} is not a positive integer`);
  }
  const hostfile = nonEmptyString(read("mpi.hostfile"));
  if (hostfile !== undefined) settings.mpi.hostfile = hostfile;
  const extraArgs = read("mpi.extraArgs");
  if (Array.isArray(extraArgs)) {
    settings.mpi.extraArgs = extraArgs.filter((it): it is string => typeof it === "string");
  }
  const timeoutValue = read("mpi.timeoutSeconds");
  const timeout = nonNegativeNumber(timeoutValue, false);
  if (timeout !== undefined) settings.mpi.timeoutSeconds = timeout;
  else if (!isUnset(timeoutValue)) {
    problems.push(`hpf.mpi.timeoutSeconds: ${JSON.stringify(timeoutValue)} is not a number of seconds >= 0`);
  }
  const maxOutputValue = read("mpi.maxOutputBytes");
  const maxOutput = nonNegativeNumber(maxOutputValue, true);
  if (maxOutput !== undefined) settings.mpi.maxOutputBytes = maxOutput;
  else if (!isUnset(maxOutputValue)) {
    problems.push(`hpf.mpi.maxOutputBytes: ${JSON.stringify(maxOutputValue)} is not a whole number of bytes >= 0`);
  }
  return { settings, problems };
}

/** The server's `initializationOptions`: the settings, and whether the
 * workspace is trusted. The server reads trust only here, once: restricted,
 * it offers no run lens and refuses `hpf.run` and `hpf.build`. */
export function initializationOptions(
  settings: ServerSettings,
  workspaceTrusted: boolean,
): { hpf: ServerSettings; workspaceTrusted: boolean } {
  return { hpf: settings, workspaceTrusted };
}

/** Why "HPF: Run program" and "HPF: Build" do nothing in Restricted Mode. */
export const RESTRICTED_MODE_MESSAGE =
  "HPF: building and running programs is disabled in Restricted Mode: hpf-ls starts no compiler, " +
  "launcher or program for a workspace you have not trusted.";

/** The `hpf` section of a `workspace/configuration` answer, converted; an
 * answer that is not an object (the section is unset) gives the defaults. */
export function convertConfigurationAnswer(answer: unknown): ServerSettings {
  return toServerSettings(objectReader(answer)).settings;
}

/** The environment of the server process: `HPF_LS_LOG` from
 * `hpf.server.logLevel` (unless the user's environment sets it). */
export function serverEnvironment(
  base: NodeJS.ProcessEnv,
  logLevel: unknown,
): NodeJS.ProcessEnv {
  const env = { ...base };
  const level = nonEmptyString(logLevel);
  if (env.HPF_LS_LOG === undefined && level !== undefined && level !== "info") {
    env.HPF_LS_LOG = `hpf_ls=${level}`;
  }
  return env;
}

// ---------------------------------------------------------------------------
// Commands

/** The process count typed in the input box: an error message, or undefined
 * when it is a whole number from 1 to 4096. */
export function validateProcessCount(text: string): string | undefined {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return "A whole number of processes, from 1 to 4096";
  const value = Number(trimmed);
  if (value < 1 || value > 4096) return "From 1 to 4096 processes";
  return undefined;
}

/** The process count a lens or a caller passed, or undefined. */
export function processCountArgument(value: unknown): number | undefined {
  return positiveInteger(value, 4096);
}

/** The answer of `hpf.run`: `{exitCode, stdout, stderr, processes}`; of
 * `hpf.build`: `{exitCode, notes}`. */
export interface RunResult {
  exitCode?: number;
  stdout?: string;
  stderr?: string;
  processes?: number;
  notes?: string[];
}

/** The program's output lines already shown, from the server's log
 * messages (LOG: stdout, WARNING: stderr) during the run. */
export interface Streamed {
  stdout: string[];
  stderr: string[];
}

function lines(text: unknown): string[] {
  if (typeof text !== "string" || text.length === 0) return [];
  return text.replace(/\n$/, "").split("\n");
}

/** The lines of `text` not yet shown: all of them, less those streamed when
 * they are its beginning (log messages may also come after the answer). */
function unshown(text: unknown, shown: string[]): string[] {
  const all = lines(text);
  const prefix = shown.length <= all.length && shown.every((line, index) => all[index] === line);
  return prefix ? all.slice(shown.length) : all;
}

/**
 * The lines that close a run or a build in the output channel: the
 * program's output not streamed yet, the backend's notes, the exit code.
 */
export function describeResult(
  kind: "run" | "build",
  result: unknown,
  streamed: Streamed = { stdout: [], stderr: [] },
): string[] {
  const out: string[] = [];
  if (result === null || typeof result !== "object") {
    out.push(`${kind === "run" ? "Run" : "Build"} finished: ${JSON.stringify(result)}`);
    return out;
  }
  const answer = result as RunResult;
  out.push(...unshown(answer.stdout, streamed.stdout));
  out.push(...unshown(answer.stderr, streamed.stderr));
  if (Array.isArray(answer.notes) && answer.notes.length > 0) {
    out.push("Notes of the MPI backend:");
    for (const note of answer.notes) out.push(`  ${String(note)}`);
  }
  if (kind === "build") {
    out.push(answer.exitCode === 0 || answer.exitCode === undefined ? "Built." : `Build exit code ${answer.exitCode}.`);
  } else {
    const on = typeof answer.processes === "number" ? ` on ${answer.processes} processes` : "";
    out.push(`Exit code ${answer.exitCode ?? "unknown"}${on}.`);
  }
  return out;
}

/** A file name for the virtual documents of a source file's answers:
 * `heat.f90` → `heat.f90.transfer.md`. */
export function derivedName(uriPath: string, suffix: string): string {
  const base = uriPath.split("/").filter((it) => it.length > 0).pop() ?? "untitled";
  return `${base}${suffix}`;
}
