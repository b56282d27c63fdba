// The VS Code client of hpf-ls: starts the server for Fortran documents,
// passes the `hpf` settings on, and gives the server's commands
// (`hpf.run`, `hpf.build`, `hpf.explainLoop`, `hpf.showGenerated`)
// an editor UI. Diagnostics, hover, quick fixes, inlay hints, code lenses,
// completion, semantic tokens and the rest come from the server as they are.
//
// Workspace trust: in Restricted Mode the language features work, but
// nothing runs a compiler, a launcher or a program. The extension refuses
// "HPF: Run program" and "HPF: Build", and tells the server
// (`initializationOptions.workspaceTrusted`), which then offers no run lens
// and refuses `hpf.run`/`hpf.build`; the settings that name executables are
// read from user settings only (`restrictedConfigurations` in package.json).

import * as fs from "fs";
import * as os from "os";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  LogMessageNotification,
  MessageType,
  ResponseError,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  WorkDoneProgress,
} from "vscode-languageclient/node";

import {
  LANGUAGES,
  RESTRICTED_MODE_MESSAGE,
  SECTION,
  Streamed,
  bundledServerPath,
  convertConfigurationAnswer,
  derivedName,
  describeResult,
  initializationOptions,
  processCountArgument,
  resolveServerPath,
  serverEnvironment,
  toServerSettings,
  validateProcessCount,
} from "./config";
import { isExplanation, messageHtml, pictureHtml } from "./picture";

const CLIENT_ID = "hpf";
const CLIENT_NAME = "HPF Language Server";
/** Scheme of the read-only documents that show the server's answers. */
const VIRTUAL_SCHEME = "hpf-ls";

const SERVER_COMMAND = {
  transferPattern: "hpf.showTransferPattern",
  run: "hpf.run",
  build: "hpf.build",
  generated: "hpf.showGenerated",
  explainLoop: "hpf.explainLoop",
} as const;

let extensionContext: vscode.ExtensionContext;
let client: LanguageClient | undefined;
/** The start in progress, so that commands can wait for it. */
let starting: Promise<LanguageClient | undefined> | undefined;
let serverChannel: vscode.OutputChannel;
let runChannel: vscode.OutputChannel | undefined;
let virtualDocuments: VirtualDocuments;

/** The run or build under way: it takes the server's log messages. */
let activeRun: { append(message: string, type: MessageType): void } | undefined;

class VirtualDocuments implements vscode.TextDocumentContentProvider {
  private readonly contents = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  set(uri: vscode.Uri, content: string): void {
    this.contents.set(uri.toString(), content);
    this.changed.fire(uri);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? "";
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extensionContext = context;
  serverChannel = vscode.window.createOutputChannel(CLIENT_NAME);
  virtualDocuments = new VirtualDocuments();
  context.subscriptions.push(
    serverChannel,
    virtualDocuments,
    vscode.workspace.registerTextDocumentContentProvider(VIRTUAL_SCHEME, virtualDocuments),
    vscode.commands.registerCommand("hpf.runProgram", (uri?: unknown, processes?: unknown) =>
      runOrBuild("run", uri, processes),
    ),
    vscode.commands.registerCommand("hpf.buildProgram", (uri?: unknown) => runOrBuild("build", uri, undefined)),
    vscode.commands.registerCommand("hpf.transferPattern", showTransferPattern),
    vscode.commands.registerCommand("hpf.generatedSource", showGeneratedSource),
    vscode.commands.registerCommand("hpf.restartServer", restartServer),
    // Trusted now: the server may run programs, and workspace settings apply.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void restartServer()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(`${SECTION}.server`)) {
        void restartServer();
      } else if (event.affectsConfiguration(SECTION)) {
        reportSettingProblems();
      }
    }),
  );
  await vscode.commands.executeCommand("setContext", "hpf.languages", LANGUAGES);
  makeBundledServerExecutable(context);
  starting = startClient();
  await starting;
}

export async function deactivate(): Promise<void> {
  await stopClient();
}

// ---------------------------------------------------------------------------
// The client

/** A bundled binary may lose its executable bit in the .vsix. */
function makeBundledServerExecutable(context: vscode.ExtensionContext): void {
  if (process.platform === "win32") return;
  const bundled = bundledServerPath(context.extensionPath, process.platform);
  try {
    const mode = fs.statSync(bundled).mode;
    if ((mode & 0o111) === 0) fs.chmodSync(bundled, mode | 0o755);
  } catch {
    // Not bundled.
  }
}

function settingsNow(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

function reportSettingProblems(): void {
  const { problems } = toServerSettings((key) => settingsNow().get(key));
  for (const problem of problems) serverChannel.appendLine(`[settings] ignored: ${problem}`);
}

async function startClient(): Promise<LanguageClient | undefined> {
  const configuration = settingsNow();
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const resolved = resolveServerPath({
    configured: configuration.get<string>("server.path"),
    envPath: process.env.PATH,
    envPathExt: process.env.PATHEXT,
    platform: process.platform,
    extensionPath: extensionContext.extensionPath,
    workspaceFolder: folder?.scheme === "file" ? folder.fsPath : undefined,
    workspaceTrusted: vscode.workspace.isTrusted,
    home: os.homedir(),
  });
  if ("error" in resolved) {
    serverChannel.appendLine(resolved.error);
    void vscode.window.showErrorMessage(resolved.error, "Open Settings").then((choice) => {
      if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", `${SECTION}.server.path`);
      }
    });
    return undefined;
  }
  serverChannel.appendLine(`Starting ${resolved.path} (from ${resolved.source})`);

  const serverOptions: ServerOptions = {
    command: resolved.path,
    args: [],
    options: { env: serverEnvironment(process.env, configuration.get("server.logLevel")) },
  };
  const documentSelector = LANGUAGES.flatMap((language) => [
    { scheme: "file", language },
    { scheme: "untitled", language },
  ]);
  const clientOptions: LanguageClientOptions = {
    documentSelector,
    outputChannel: serverChannel,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    // Answers workspace/configuration for `hpf` (converted by the middleware
    // below) and tells the server when the section changes.
    synchronize: { configurationSection: SECTION },
    initializationOptions: () => {
      const { settings, problems } = toServerSettings((key) => settingsNow().get(key));
      for (const problem of problems) serverChannel.appendLine(`[settings] ignored: ${problem}`);
      return initializationOptions(settings, vscode.workspace.isTrusted);
    },
    middleware: {
      workspace: {
        // VS Code's raw section has client-only keys and `form: "auto"`; the
        // server gets the converted settings.
        configuration: async (params, token, next) => {
          const answers = await next(params, token);
          if (!Array.isArray(answers)) return answers;
          return answers.map((answer, index) =>
            params.items[index]?.section === SECTION ? convertConfigurationAnswer(answer) : answer,
          );
        },
        // Send an empty didChangeConfiguration: the server then asks for the
        // section with workspace/configuration, which the middleware above
        // converts (the raw section would be rejected for `form: "auto"`).
        didChangeConfiguration: async (_sections, next) => next(undefined),
      },
      // The server's "▶ Run on N processes" lens calls hpf.run: run it
      // through the same UI as "HPF: Run program".
      executeCommand: async (command, args, next) => {
        if (command === SERVER_COMMAND.run) return runOrBuild("run", args[0], args[1]);
        if (command === SERVER_COMMAND.build) return runOrBuild("build", args[0], undefined);
        return next(command, args);
      },
    },
  };

  const created = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
  // The default handler of window/logMessage, plus the run or build under
  // way, which shows the program's output (LOG: stdout, WARNING: stderr).
  created.onNotification(LogMessageNotification.type, (params) => {
    switch (params.type) {
      case MessageType.Error:
        created.error(params.message, undefined, false);
        break;
      case MessageType.Warning:
        created.warn(params.message, undefined, false);
        break;
      case MessageType.Info:
        created.info(params.message, undefined, false);
        break;
      case MessageType.Debug:
        created.debug(params.message, undefined, false);
        break;
      default:
        created.outputChannel.appendLine(params.message);
    }
    activeRun?.append(params.message, params.type);
  });
  client = created;
  try {
    await created.start();
  } catch (error) {
    serverChannel.appendLine(`hpf-ls did not start: ${errorMessage(error)}`);
    void vscode.window.showErrorMessage(`hpf-ls did not start: ${errorMessage(error)}`);
    return undefined;
  }
  return created;
}

async function stopClient(): Promise<void> {
  const current = client;
  client = undefined;
  if (current === undefined) return;
  try {
    // Stops the server (shutdown, exit) when it runs.
    await current.dispose(2000);
  } catch (error) {
    serverChannel.appendLine(`Stopping hpf-ls: ${errorMessage(error)}`);
  }
}

async function restartServer(): Promise<void> {
  const previous = starting;
  starting = (async () => {
    await previous?.catch(() => undefined);
    await stopClient();
    serverChannel.appendLine("Restarting hpf-ls");
    return startClient();
  })();
  await starting;
}

/** The running client, or undefined (with a message) when there is none. */
async function runningClient(): Promise<LanguageClient | undefined> {
  const current = await starting?.catch(() => undefined);
  if (current !== undefined && current === client && current.state === State.Running) return current;
  const choice = await vscode.window.showErrorMessage("hpf-ls is not running.", "Restart Server", "Show Log");
  if (choice === "Restart Server") await restartServer();
  else if (choice === "Show Log") serverChannel.show();
  return undefined;
}

// ---------------------------------------------------------------------------
// Commands

function errorMessage(error: unknown): string {
  if (error instanceof ResponseError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

function isFortranDocument(document: vscode.TextDocument): boolean {
  return LANGUAGES.includes(document.languageId);
}

/** The Fortran editor a command applies to: the active one. */
function fortranEditor(): vscode.TextEditor | undefined {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined || !isFortranDocument(editor.document)) {
    void vscode.window.showErrorMessage(
      `Open a Fortran file (language ${LANGUAGES.join(", ")}) in the editor first.`,
    );
    return undefined;
  }
  return editor;
}

function getRunChannel(): vscode.OutputChannel {
  if (runChannel === undefined) {
    runChannel = vscode.window.createOutputChannel("HPF Run");
    extensionContext.subscriptions.push(runChannel);
  }
  return runChannel;
}

function toUri(value: unknown): vscode.Uri | undefined {
  if (value instanceof vscode.Uri) return value;
  if (typeof value === "string" && value.length > 0) {
    try {
      return vscode.Uri.parse(value, true);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * `hpf.run` (kind "run") or `hpf.build` on a document's text, with a
 * cancellable progress notification; the output goes to "HPF Run".
 * `target`: the document (the active editor's when absent); `processes`:
 * asked for with an input box when absent.
 */
async function runOrBuild(kind: "run" | "build", target: unknown, processes: unknown): Promise<unknown> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showErrorMessage(RESTRICTED_MODE_MESSAGE, "Manage Workspace Trust").then((choice) => {
      if (choice === "Manage Workspace Trust") void vscode.commands.executeCommand("workbench.trust.manage");
    });
    return undefined;
  }
  if (activeRun !== undefined) {
    void vscode.window.showInformationMessage("An HPF build or run is already under way.");
    return undefined;
  }
  let uri = toUri(target);
  if (uri === undefined) {
    const editor = fortranEditor();
    if (editor === undefined) return undefined;
    uri = editor.document.uri;
  }
  let count: number | undefined;
  if (kind === "run") {
    count = processCountArgument(processes);
    if (count === undefined) {
      const fallback = processCountArgument(settingsNow().get("mpi.processes")) ?? 4;
      const typed = await vscode.window.showInputBox({
        title: "HPF: Run program",
        prompt: "Number of MPI processes",
        value: String(fallback),
        validateInput: validateProcessCount,
      });
      if (typed === undefined) return undefined;
      count = Number(typed.trim());
    }
  }
  const languageClient = await runningClient();
  if (languageClient === undefined) return undefined;

  const name = derivedName(uri.path, "");
  const channel = getRunChannel();
  channel.clear();
  channel.show(true);
  const what = kind === "run" ? `run ${name} on ${count} processes` : `build ${name}`;
  channel.appendLine(`[hpf-ls] ${what} (${new Date().toLocaleTimeString()})`);
  const streamed: Streamed = { stdout: [], stderr: [] };
  activeRun = {
    append(message, type) {
      if (type === MessageType.Log) streamed.stdout.push(message);
      else if (type === MessageType.Warning) streamed.stderr.push(message);
      channel.appendLine(message);
    },
  };
  const command = kind === "run" ? SERVER_COMMAND.run : SERVER_COMMAND.build;
  const args: unknown[] = [languageClient.code2ProtocolConverter.asUri(uri)];
  if (kind === "run") args.push(count);
  try {
    return await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: kind === "run" ? `HPF: running ${name} on ${count} processes` : `HPF: building ${name}`,
        cancellable: true,
      },
      async (progress, token) => {
        // The server reports "translating", "compiling", "running on N
        // processes" as $/progress on this token.
        const workDoneToken = `hpf-${kind}-${Date.now()}`;
        const subscription = languageClient.onProgress(WorkDoneProgress.type, workDoneToken, (value) => {
          if (value.kind !== "end" && value.message) progress.report({ message: value.message });
        });
        try {
          const result = await languageClient.sendRequest(
            ExecuteCommandRequest.type,
            { command, arguments: args, workDoneToken },
            token,
          );
          for (const line of describeResult(kind, result, streamed)) channel.appendLine(line);
          const exitCode = (result as { exitCode?: unknown } | null)?.exitCode;
          if (kind === "run" && typeof exitCode === "number" && exitCode !== 0) {
            void vscode.window.showWarningMessage(`HPF: ${name} exited with code ${exitCode}.`);
          }
          return result;
        } catch (error) {
          if (token.isCancellationRequested || error instanceof vscode.CancellationError) {
            channel.appendLine("Cancelled.");
            return undefined;
          }
          const message = errorMessage(error);
          channel.appendLine(message);
          const firstLine = message.split("\n")[0];
          void vscode.window.showErrorMessage(`HPF: ${firstLine}`, "Show Output").then((choice) => {
            if (choice === "Show Output") channel.show();
          });
          return undefined;
        } finally {
          subscription.dispose();
        }
      },
    );
  } finally {
    activeRun = undefined;
  }
}

/** The transfer-pattern panel: the picture of one loop, beside the code,
 * redrawn when its document changes, and following the cursor to other loops. */
interface PicturePanel {
  panel: vscode.WebviewPanel;
  /** Where the picture shown was asked for. */
  document: vscode.Uri;
  position: vscode.Position;
  timer?: NodeJS.Timeout;
}
let picturePanel: PicturePanel | undefined;

/** "HPF: Show transfer pattern": `hpf.explainLoop` at the cursor, drawn in a webview beside the editor. */
async function showTransferPattern(): Promise<void> {
  const editor = fortranEditor();
  if (editor === undefined) return;
  if (picturePanel === undefined) {
    const panel = vscode.window.createWebviewPanel(
      "hpf.transferPattern",
      "HPF transfer pattern",
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: false, retainContextWhenHidden: false },
    );
    const state: PicturePanel = { panel, document: editor.document.uri, position: editor.selection.active };
    picturePanel = state;
    const later = (document: vscode.Uri, position: vscode.Position) => {
      if (state.timer !== undefined) clearTimeout(state.timer);
      state.timer = setTimeout(() => void drawPicture(state, document, position, false), 300);
    };
    const subscriptions = [
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (event.document.uri.toString() === state.document.toString() && event.contentChanges.length > 0) {
          later(state.document, state.position);
        }
      }),
      vscode.window.onDidChangeTextEditorSelection((event) => {
        const document = event.textEditor.document;
        const position = event.selections[0]?.active;
        if (!isFortranDocument(document) || position === undefined) return;
        if (document.uri.toString() === state.document.toString() && position.line === state.position.line) return;
        later(document.uri, position);
      }),
    ];
    panel.onDidDispose(() => {
      if (state.timer !== undefined) clearTimeout(state.timer);
      for (const it of subscriptions) it.dispose();
      if (picturePanel === state) picturePanel = undefined;
    });
  } else {
    picturePanel.panel.reveal(vscode.ViewColumn.Beside, true);
  }
  await drawPicture(picturePanel, editor.document.uri, editor.selection.active, true);
}

/** Draws the loop at `position`. Asked for explicitly, a failure replaces the
 * picture with the reason; when following the cursor, the picture stays. */
async function drawPicture(
  state: PicturePanel,
  document: vscode.Uri,
  position: vscode.Position,
  explicit: boolean,
): Promise<void> {
  const webview = state.panel.webview;
  const languageClient = await runningClient();
  if (languageClient === undefined || picturePanel !== state) return;
  const name = derivedName(document.path, "");
  let answer: unknown;
  try {
    answer = await languageClient.sendRequest(ExecuteCommandRequest.type, {
      command: SERVER_COMMAND.explainLoop,
      arguments: [
        languageClient.code2ProtocolConverter.asUri(document),
        languageClient.code2ProtocolConverter.asPosition(position),
      ],
    });
  } catch (error) {
    if (explicit) {
      webview.html = messageHtml(`${name}, line ${position.line + 1}: ${errorMessage(error)}`, webview.cspSource);
    }
    return;
  }
  if (picturePanel !== state) return;
  if (!isExplanation(answer)) {
    if (explicit) webview.html = messageHtml(`${name}, line ${position.line + 1}: no loop to draw.`, webview.cspSource);
    return;
  }
  state.document = document;
  state.position = position;
  state.panel.title = `Transfers: ${name}:${position.line + 1}`;
  webview.html = pictureHtml(answer, `${name}, line ${position.line + 1}`, webview.cspSource);
}

/** `hpf.showGenerated`: the SPMD Fortran + MPI program of the active
 * document, read-only, beside it. */
async function showGeneratedSource(): Promise<void> {
  const editor = fortranEditor();
  if (editor === undefined) return;
  const languageClient = await runningClient();
  if (languageClient === undefined) return;
  let source: unknown;
  try {
    source = await languageClient.sendRequest(ExecuteCommandRequest.type, {
      command: SERVER_COMMAND.generated,
      arguments: [languageClient.code2ProtocolConverter.asUri(editor.document.uri)],
    });
  } catch (error) {
    const message = errorMessage(error);
    const channel = getRunChannel();
    channel.appendLine(message);
    void vscode.window.showErrorMessage(`HPF: ${message.split("\n")[0]}`, "Show Output").then((choice) => {
      if (choice === "Show Output") channel.show();
    });
    return;
  }
  if (typeof source !== "string") return;
  const name = derivedName(editor.document.uri.path, "").replace(/\.[^.]*$/, "");
  const uri = vscode.Uri.from({ scheme: VIRTUAL_SCHEME, path: `/${name}.spmd.f90` });
  virtualDocuments.set(uri, source);
  let document = await vscode.workspace.openTextDocument(uri);
  if (!isFortranDocument(document)) {
    // No Fortran extension claims .f90: the free-form `hpf` language.
    const known = await vscode.languages.getLanguages();
    const language = ["FortranFreeForm", "fortran", "hpf"].find((it) => known.includes(it));
    if (language !== undefined) document = await vscode.languages.setTextDocumentLanguage(document, language);
  }
  await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: true });
}
