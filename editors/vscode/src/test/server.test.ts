// The extension's requests against the real server, over stdio with the
// same JSON-RPC library the client uses: initializationOptions and
// workspace/configuration answers as the extension builds them, the
// commands' arguments and answers, and hpf.run's progress and streamed
// output on a client-made workDoneToken.
//
// The server: $HPF_LS_PATH, else target/debug/hpf-ls or target/release/hpf-ls
// of this repository (cargo build -p hpf-ls). Without one the test is
// skipped, except under CI (CI set), where it fails. hpf.run needs mpif90.

import * as assert from "node:assert/strict";
import { spawn, spawnSync, ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";

import {
  ConfigurationRequest,
  DidChangeConfigurationNotification,
  DidOpenTextDocumentNotification,
  ExecuteCommandRequest,
  InitializeRequest,
  InitializedNotification,
  InlayHintRequest,
  LogMessageNotification,
  LogMessageParams,
  MessageType,
  ProtocolConnection,
  ResponseError,
  ShowMessageNotification,
  ShowMessageParams,
  StreamMessageReader,
  StreamMessageWriter,
  WorkDoneProgress,
  WorkDoneProgressBegin,
  WorkDoneProgressEnd,
  WorkDoneProgressReport,
  createProtocolConnection,
} from "vscode-languageserver-protocol/node";

import { SECTION, convertConfigurationAnswer, objectReader, toServerSettings } from "../config";
import { isExplanation, pictureHtml } from "../picture";

const ROOT = path.resolve(__dirname, "..", "..");
const REPOSITORY = path.resolve(ROOT, "..", "..");
const SEED_FILE = path.join(REPOSITORY, "tests", "corpus", "seed_fig6.f90");
const TIMEOUT = 120_000;

function findServer(): string | undefined {
  const candidates = [
    process.env.HPF_LS_PATH,
    path.join(REPOSITORY, "target", "debug", "hpf-ls"),
    path.join(REPOSITORY, "target", "release", "hpf-ls"),
  ];
  return candidates.find((it): it is string => it !== undefined && it.length > 0 && fs.existsSync(it));
}

const server = findServer();
const skip =
  server === undefined && !process.env.CI
    ? "no hpf-ls (cargo build -p hpf-ls, or set HPF_LS_PATH)"
    : false;
const hasMpi = spawnSync("mpif90", ["--version"], { stdio: "ignore" }).status === 0;

/** The position of the last occurrence (the first B(I-1) is in a comment). */
function positionOf(text: string, needle: string): { line: number; character: number } {
  const offset = text.lastIndexOf(needle);
  assert.ok(offset >= 0, needle);
  const before = text.slice(0, offset).split("\n");
  return { line: before.length - 1, character: before[before.length - 1].length };
}

describe("the extension's requests against hpf-ls", { skip, timeout: TIMEOUT }, () => {
  let child: ChildProcess;
  let connection: ProtocolConnection;
  /** The `hpf` section as VS Code would answer it (raw, before conversion). */
  let rawSection: Record<string, unknown>;
  const shown: ShowMessageParams[] = [];
  const logged: LogMessageParams[] = [];
  const seed = fs.readFileSync(SEED_FILE, "utf8");
  const uri = pathToFileURL(SEED_FILE).toString();

  before(async () => {
    assert.ok(server, "hpf-ls is built (cargo build -p hpf-ls, or set HPF_LS_PATH)");
    child = spawn(server, [], { stdio: ["pipe", "pipe", "ignore"] });
    connection = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    rawSection = {
      server: { path: "", logLevel: "info" },
      trace: { server: "off" },
      form: "auto",
      processors: null,
      inlayHints: { loops: true, references: true },
      severity: { HPF104: "off" },
      mpi: { compiler: "", launcher: "", processes: null, hostfile: "", extraArgs: [] },
    };
    // The extension's middleware: the `hpf` section converted.
    connection.onRequest(ConfigurationRequest.type, (params) =>
      params.items.map((item) => (item.section === SECTION ? convertConfigurationAnswer(rawSection) : null)),
    );
    connection.onNotification(ShowMessageNotification.type, (params) => void shown.push(params));
    connection.onNotification(LogMessageNotification.type, (params) => void logged.push(params));
    connection.listen();
    const initializationOptions = toServerSettings(objectReader(rawSection)).settings;
    const result = await connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: null,
      capabilities: {
        workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: true } },
        window: { workDoneProgress: true },
        textDocument: { hover: { contentFormat: ["markdown", "plaintext"] } },
      },
      initializationOptions,
    });
    assert.equal(result.serverInfo?.name, "hpf-ls");
    const commands = result.capabilities.executeCommandProvider?.commands ?? [];
    for (const command of ["hpf.showTransferPattern", "hpf.run", "hpf.build", "hpf.showGenerated", "hpf.explainLoop"]) {
      assert.ok(commands.includes(command), command);
    }
    await connection.sendNotification(InitializedNotification.type, {});
    await connection.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: "FortranFixedForm", version: 1, text: seed },
    });
  });

  after(() => {
    connection?.dispose();
    child?.kill();
  });

  async function inlayHints(): Promise<number> {
    const end = positionOf(seed, "END PROGRAM");
    const hints = await connection.sendRequest(InlayHintRequest.type, {
      textDocument: { uri },
      range: { start: { line: 0, character: 0 }, end: { line: end.line + 1, character: 0 } },
    });
    return hints?.length ?? 0;
  }

  /** Waits until `check` holds (the server applies settings asynchronously). */
  async function eventually(check: () => Promise<boolean>): Promise<void> {
    for (let attempt = 0; attempt < 100; attempt++) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.fail("timed out");
  }

  it("accepts the converted settings where it rejects VS Code's raw section", async () => {
    await eventually(async () => (await inlayHints()) > 0);
    assert.deepEqual(
      shown.filter((it) => /invalid settings/.test(it.message)),
      [],
      "initializationOptions and the configuration answer are accepted",
    );
    // The reason for the middleware: the raw section, pushed as is.
    await connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { hpf: rawSection } });
    await eventually(async () => shown.some((it) => /invalid settings ignored: form `auto`/.test(it.message)));
  });

  it("pulls the section on an empty didChangeConfiguration (what the middleware sends)", async () => {
    rawSection = { ...rawSection, inlayHints: { loops: false, references: false } };
    await connection.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
    await eventually(async () => (await inlayHints()) === 0);
    rawSection = { ...rawSection, inlayHints: { loops: true, references: true } };
    await connection.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
    await eventually(async () => (await inlayHints()) > 0);
  });

  it("answers hpf.showTransferPattern [uri, position] with a Markdown table", async () => {
    const table = await connection.sendRequest(ExecuteCommandRequest.type, {
      command: "hpf.showTransferPattern",
      arguments: [uri, positionOf(seed, "B(I-1)")],
    });
    assert.equal(typeof table, "string");
    assert.match(table as string, /\| P\(1\) \| P\(2\) \| 1 \|/);
    await assert.rejects(
      connection.sendRequest(ExecuteCommandRequest.type, {
        command: "hpf.showTransferPattern",
        arguments: [uri, { line: 0, character: 0 }],
      }),
      (error: unknown) => error instanceof ResponseError && /no loop/.test(error.message),
    );
  });

  it("answers hpf.explainLoop [uri, position] with the picture the panel shows", async () => {
    const answer = await connection.sendRequest(ExecuteCommandRequest.type, {
      command: "hpf.explainLoop",
      arguments: [uri, positionOf(seed, "B(I-1)")],
    });
    assert.ok(isExplanation(answer), JSON.stringify(answer));
    assert.match(answer.svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.equal((answer.svg.match(/<g class="message"/g) ?? []).length, 3);
    assert.match(answer.text, /P\(3\) -> P\(4\) {2}B: 1 element \(B\(12\)\)/);
    assert.match(answer.whatIf ?? "", /\(CYCLIC\) on 4/);
    const html = pictureHtml(answer, "seed", "vscode-resource:");
    assert.ok(html.includes('data-from="3" data-to="4"'));
    await assert.rejects(
      connection.sendRequest(ExecuteCommandRequest.type, {
        command: "hpf.explainLoop",
        arguments: [uri, { line: 0, character: 0 }],
      }),
      (error: unknown) => error instanceof ResponseError && /no loop/.test(error.message),
    );
  });

  it("answers hpf.showGenerated [uri] with the SPMD source", async () => {
    const source = await connection.sendRequest(ExecuteCommandRequest.type, {
      command: "hpf.showGenerated",
      arguments: [uri],
    });
    assert.match(source as string, /use hpf_runtime/);
  });

  it("refuses hpf.run without a document, with a message", async () => {
    await assert.rejects(
      connection.sendRequest(ExecuteCommandRequest.type, { command: "hpf.run", arguments: ["not a uri"] }),
      (error: unknown) => error instanceof ResponseError && error.message.length > 0,
    );
  });

  it(
    "runs hpf.run [uri, n] with progress on the client's token and the output as log messages",
    { skip: !hasMpi && !process.env.CI ? "no mpif90" : false },
    async () => {
      const workDoneToken = "hpf-run-test";
      const progress: (WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd)[] = [];
      const subscription = connection.onProgress(WorkDoneProgress.type, workDoneToken, (value) => {
        progress.push(value);
      });
      logged.length = 0;
      const result = (await connection.sendRequest(ExecuteCommandRequest.type, {
        command: "hpf.run",
        arguments: [uri, 3],
        workDoneToken,
      })) as { exitCode: number; stdout: string; processes: number };
      // The server's notifications and its answer travel separately: the
      // "end" may come just after the answer.
      for (let attempt = 0; attempt < 100 && progress[progress.length - 1]?.kind !== "end"; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      subscription.dispose();
      const expected = fs.readFileSync(path.join(REPOSITORY, "tests", "corpus", "expected", "seed_fig6.f90.out"), "utf8");
      assert.equal(result.exitCode, 0, JSON.stringify(result));
      assert.equal(result.processes, 3);
      assert.equal(result.stdout, expected);
      const streamed = logged.filter((it) => it.type === MessageType.Log).map((it) => `${it.message}\n`);
      assert.equal(streamed.join(""), expected, "stdout streamed line by line before the answer");
      assert.equal(progress[0]?.kind, "begin");
      assert.equal(progress[progress.length - 1]?.kind, "end");
      assert.ok(
        progress.some((it) => it.kind === "report" && /running on 3 processes/.test(it.message ?? "")),
        JSON.stringify(progress),
      );
    },
  );
});
