// The pure helpers: finding the server, settings → what the server reads,
// process counts, run results. `node --test out/test/config.test.js`.

import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";

import {
  LANGUAGES,
  convertConfigurationAnswer,
  derivedName,
  describeResult,
  expandConfiguredPath,
  initializationOptions,
  objectReader,
  processCountArgument,
  resolveServerPath,
  serverEnvironment,
  toServerSettings,
  validateProcessCount,
} from "../config";

const EXTENSION_ROOT = path.resolve(__dirname, "..", "..");

function executables(...files: string[]): (file: string) => boolean {
  const set = new Set(files);
  return (file) => set.has(file);
}

describe("resolveServerPath", () => {
  const base = {
    platform: "linux",
    extensionPath: "/ext",
    envPath: "/usr/local/bin:/usr/bin",
    home: "/home/u",
    workspaceFolder: "/work/project",
  };

  it("takes hpf.server.path when it names an executable", () => {
    const resolved = resolveServerPath({
      ...base,
      configured: "/opt/hpf/hpf-ls",
      isExecutable: executables("/opt/hpf/hpf-ls", "/usr/bin/hpf-ls", "/ext/bin/hpf-ls"),
    });
    assert.deepEqual(resolved, { path: "/opt/hpf/hpf-ls", source: "setting" });
  });

  it("reports a hpf.server.path that is not there, without falling back", () => {
    const resolved = resolveServerPath({
      ...base,
      configured: "/opt/hpf/hpf-ls",
      isExecutable: executables("/usr/bin/hpf-ls"),
    });
    assert.ok("error" in resolved);
    assert.match(resolved.error, /\/opt\/hpf\/hpf-ls is not an executable file/);
  });

  it("expands ~ and makes a relative path relative to the workspace", () => {
    assert.deepEqual(
      resolveServerPath({ ...base, configured: "~/bin/hpf-ls", isExecutable: executables("/home/u/bin/hpf-ls") }),
      { path: "/home/u/bin/hpf-ls", source: "setting" },
    );
    assert.deepEqual(
      resolveServerPath({
        ...base,
        configured: "target/release/hpf-ls",
        isExecutable: executables("/work/project/target/release/hpf-ls"),
      }),
      { path: "/work/project/target/release/hpf-ls", source: "setting" },
    );
    assert.equal(
      expandConfiguredPath("${workspaceFolder}/target/debug/hpf-ls", "linux", "/home/u", "/w"),
      "/w/target/debug/hpf-ls",
    );
    assert.equal(expandConfiguredPath("  ${userHome}/x  ", "linux", "/home/u"), "/home/u/x");
  });

  it("looks a bare name in hpf.server.path up on PATH", () => {
    assert.deepEqual(
      resolveServerPath({ ...base, configured: "hpf-ls-dev", isExecutable: executables("/usr/bin/hpf-ls-dev") }),
      { path: "/usr/bin/hpf-ls-dev", source: "setting" },
    );
  });

  it("without the setting: PATH first, in PATH order", () => {
    assert.deepEqual(
      resolveServerPath({
        ...base,
        configured: "  ",
        isExecutable: executables("/usr/bin/hpf-ls", "/usr/local/bin/hpf-ls", "/ext/bin/hpf-ls"),
      }),
      { path: "/usr/local/bin/hpf-ls", source: "PATH" },
    );
  });

  it("then the binary bundled in the extension", () => {
    assert.deepEqual(resolveServerPath({ ...base, isExecutable: executables("/ext/bin/hpf-ls") }), {
      path: "/ext/bin/hpf-ls",
      source: "bundled",
    });
    assert.deepEqual(
      resolveServerPath({ ...base, envPath: undefined, configured: null, isExecutable: executables("/ext/bin/hpf-ls") }),
      { path: "/ext/bin/hpf-ls", source: "bundled" },
    );
  });

  it("says what to do when there is none", () => {
    const resolved = resolveServerPath({ ...base, isExecutable: executables() });
    assert.ok("error" in resolved);
    assert.match(resolved.error, /hpf\.server\.path/);
  });

  it("on Windows: ; in PATH, PATHEXT, hpf-ls.exe bundled", () => {
    const windows = {
      platform: "win32",
      extensionPath: "C:\\ext",
      envPath: "C:\\tools;C:\\cargo\\bin",
      envPathExt: ".COM;.EXE",
      home: "C:\\Users\\u",
    };
    assert.deepEqual(resolveServerPath({ ...windows, isExecutable: executables("C:\\cargo\\bin\\hpf-ls.EXE") }), {
      path: "C:\\cargo\\bin\\hpf-ls.EXE",
      source: "PATH",
    });
    assert.deepEqual(resolveServerPath({ ...windows, isExecutable: executables("C:\\ext\\bin\\hpf-ls.exe") }), {
      path: "C:\\ext\\bin\\hpf-ls.exe",
      source: "bundled",
    });
  });

  it("checks real files by default", () => {
    // This test file is not executable; node itself is.
    const resolved = resolveServerPath({ ...base, configured: __filename, envPath: "" });
    assert.ok("error" in resolved);
    const node = resolveServerPath({ ...base, configured: process.execPath, envPath: "" });
    assert.deepEqual(node, { path: process.execPath, source: "setting" });
  });
});

describe("workspace trust", () => {
  const base = {
    platform: "linux",
    extensionPath: "/ext",
    envPath: "/usr/bin",
    home: "/home/u",
    workspaceFolder: "/work/project",
    isExecutable: executables("/work/project/target/release/hpf-ls", "/home/u/bin/hpf-ls", "/opt/hpf-ls", "/usr/bin/hpf-ls"),
  };

  it("starts no server from inside an untrusted workspace", () => {
    for (const configured of ["target/release/hpf-ls", "./target/release/hpf-ls", "${workspaceFolder}/target/release/hpf-ls"]) {
      const trusted = resolveServerPath({ ...base, configured, workspaceTrusted: true });
      assert.deepEqual(trusted, { path: "/work/project/target/release/hpf-ls", source: "setting" }, configured);
      const restricted = resolveServerPath({ ...base, configured, workspaceTrusted: false });
      assert.ok("error" in restricted, configured);
      assert.match(restricted.error, /a path in the workspace, which is not trusted \(Restricted Mode\)/);
    }
  });

  it("still starts a server outside the workspace in Restricted Mode", () => {
    const restricted = { ...base, workspaceTrusted: false };
    assert.deepEqual(resolveServerPath({ ...restricted, configured: "/opt/hpf-ls" }), { path: "/opt/hpf-ls", source: "setting" });
    assert.deepEqual(resolveServerPath({ ...restricted, configured: "~/bin/hpf-ls" }), { path: "/home/u/bin/hpf-ls", source: "setting" });
    assert.deepEqual(resolveServerPath({ ...restricted, configured: "" }), { path: "/usr/bin/hpf-ls", source: "PATH" });
  });

  it("tells the server whether the workspace is trusted, beside the settings", () => {
    const settings = toServerSettings(objectReader({ mpi: { processes: 2 } })).settings;
    assert.deepEqual(initializationOptions(settings, false), { hpf: settings, workspaceTrusted: false });
    assert.deepEqual(initializationOptions(settings, true).workspaceTrusted, true);
  });

  it("declares limited support, with the settings that name executables taken from user settings only", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(EXTENSION_ROOT, "package.json"), "utf8"));
    const untrusted = manifest.capabilities.untrustedWorkspaces;
    assert.equal(untrusted.supported, "limited");
    for (const setting of ["hpf.server.path", "hpf.mpi.compiler", "hpf.mpi.launcher"]) {
      assert.ok(untrusted.restrictedConfigurations.includes(setting), setting);
    }
    const contributed = Object.keys(manifest.contributes.configuration.properties);
    for (const setting of untrusted.restrictedConfigurations) assert.ok(contributed.includes(setting), setting);
  });
});

describe("toServerSettings", () => {
  const DEFAULTS = { inlayHints: { loops: true, references: true }, severity: {}, mpi: { extraArgs: [] } };

  it("leaves unset values out, so that the server keeps its defaults", () => {
    assert.deepEqual(toServerSettings(() => undefined), { settings: DEFAULTS, problems: [] });
  });

  it("gives the defaults of package.json as the server's defaults", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(EXTENSION_ROOT, "package.json"), "utf8"));
    const properties: Record<string, { default?: unknown }> = manifest.contributes.configuration.properties;
    const defaults = (key: string) => properties[`hpf.${key}`]?.default;
    assert.deepEqual(toServerSettings(defaults), { settings: DEFAULTS, problems: [] });
  });

  it("converts every setting of the README's example", () => {
    const section = {
      form: "fixed",
      processors: 4,
      inlayHints: { loops: false, references: true },
      severity: { HPF101: "error", hpf104: "off" },
      mpi: {
        compiler: "mpif90",
        launcher: "mpirun",
        processes: 4,
        hostfile: "",
        extraArgs: ["-O2", 3],
        timeoutSeconds: 600,
        maxOutputBytes: 1048576,
      },
    };
    assert.deepEqual(toServerSettings(objectReader(section)), {
      settings: {
        form: "fixed",
        processors: 4,
        inlayHints: { loops: false, references: true },
        severity: { HPF101: "error", HPF104: "off" },
        mpi: {
          compiler: "mpif90",
          launcher: "mpirun",
          processes: 4,
          extraArgs: ["-O2"],
          timeoutSeconds: 600,
          maxOutputBytes: 1048576,
        },
      },
      problems: [],
    });
  });

  it("drops what the server would reject with every other setting", () => {
    const section = {
      form: "fixed99",
      processors: 0,
      severity: { HPF101: "loud", nonsense: "error", HPF102: "warn" },
      mpi: { processes: -1, timeoutSeconds: -5, maxOutputBytes: 1.5 },
    };
    const { settings, problems } = toServerSettings(objectReader(section));
    assert.deepEqual(settings, { ...DEFAULTS, severity: { HPF102: "warn" } });
    assert.equal(problems.length, 7, problems.join("\n"));
    assert.match(problems.join("\n"), /hpf\.mpi\.timeoutSeconds: -5/);
    assert.match(problems.join("\n"), /hpf\.mpi\.maxOutputBytes: 1\.5/);
    assert.match(problems.join("\n"), /hpf\.form: "fixed99"/);
  });

  it("takes form auto and empty strings as unset, and caps the processes", () => {
    const { settings } = toServerSettings(
      objectReader({ form: "auto", mpi: { compiler: " ", launcher: "", processes: 100000 } }),
    );
    assert.deepEqual(settings, { ...DEFAULTS, mpi: { extraArgs: [], processes: 4096 } });
    assert.equal(toServerSettings(objectReader({ form: "FIXED132" })).settings.form, "fixed132");
  });

  it("passes a timeout of 0 (no limit) and fractional seconds on", () => {
    const { settings, problems } = toServerSettings(objectReader({ mpi: { timeoutSeconds: 0, maxOutputBytes: "4096" } }));
    assert.deepEqual(settings.mpi, { extraArgs: [], timeoutSeconds: 0, maxOutputBytes: 4096 });
    assert.deepEqual(problems, []);
    assert.equal(toServerSettings(objectReader({ mpi: { timeoutSeconds: 2.5 } })).settings.mpi.timeoutSeconds, 2.5);
  });

  it("reads flat dotted keys as well as nested objects", () => {
    const reader = objectReader({ "mpi.compiler": "mpiifort", inlayHints: { loops: false } });
    assert.equal(reader("mpi.compiler"), "mpiifort");
    assert.equal(reader("inlayHints.loops"), false);
    assert.equal(reader("inlayHints.references"), undefined);
    assert.equal(objectReader(null)("form"), undefined);
  });
});

describe("convertConfigurationAnswer", () => {
  it("turns VS Code's raw section into the server's settings", () => {
    // What workspace.getConfiguration().get("hpf") gives: client-only keys
    // (server, trace) and `form: "auto"` included.
    const raw = {
      server: { path: "", logLevel: "info" },
      trace: { server: "off" },
      form: "auto",
      processors: null,
      inlayHints: { loops: true, references: false },
      severity: {},
      mpi: {
        compiler: "",
        launcher: "",
        processes: null,
        hostfile: "",
        extraArgs: [],
        timeoutSeconds: null,
        maxOutputBytes: null,
      },
    };
    assert.deepEqual(convertConfigurationAnswer(raw), {
      inlayHints: { loops: true, references: false },
      severity: {},
      mpi: { extraArgs: [] },
    });
  });

  it("gives the defaults for an unset section", () => {
    assert.deepEqual(convertConfigurationAnswer(null), {
      inlayHints: { loops: true, references: true },
      severity: {},
      mpi: { extraArgs: [] },
    });
  });
});

describe("serverEnvironment", () => {
  it("sets HPF_LS_LOG from hpf.server.logLevel unless the environment has it", () => {
    assert.equal(serverEnvironment({ PATH: "/bin" }, "debug").HPF_LS_LOG, "hpf_ls=debug");
    assert.equal(serverEnvironment({ PATH: "/bin" }, "info").HPF_LS_LOG, undefined);
    assert.equal(serverEnvironment({ HPF_LS_LOG: "trace" }, "debug").HPF_LS_LOG, "trace");
    assert.equal(serverEnvironment({ PATH: "/bin" }, undefined).PATH, "/bin");
  });
});

describe("process counts", () => {
  it("accepts whole numbers from 1 to 4096 in the input box", () => {
    assert.equal(validateProcessCount("4"), undefined);
    assert.equal(validateProcessCount(" 4096 "), undefined);
    for (const bad of ["", "0", "4097", "-2", "2.5", "four", "4 4"]) {
      assert.equal(typeof validateProcessCount(bad), "string", bad);
    }
  });

  it("takes a lens's argument when it is a positive integer", () => {
    assert.equal(processCountArgument(3), 3);
    assert.equal(processCountArgument("8"), 8);
    assert.equal(processCountArgument(9000), 4096);
    for (const bad of [undefined, null, 0, -1, 1.5, "x", {}]) assert.equal(processCountArgument(bad), undefined);
  });
});

describe("describeResult", () => {
  it("closes a streamed run with its exit code", () => {
    const result = { exitCode: 0, stdout: "a\nb\n", stderr: "", processes: 3 };
    assert.deepEqual(describeResult("run", result, { stdout: ["a", "b"], stderr: [] }), [
      "Exit code 0 on 3 processes.",
    ]);
  });

  it("shows the output of a run that was not streamed", () => {
    const result = { exitCode: 1, stdout: "a\nb\n", stderr: "oops\n", processes: 2 };
    assert.deepEqual(describeResult("run", result), ["a", "b", "oops", "Exit code 1 on 2 processes."]);
  });

  it("adds the lines that came after the answer, or all when the stream differs", () => {
    const result = { exitCode: 0, stdout: "a\nb\nc\n", stderr: "w1\nw2\n", processes: 2 };
    assert.deepEqual(describeResult("run", result, { stdout: ["a"], stderr: ["w1", "w2"] }), [
      "b",
      "c",
      "Exit code 0 on 2 processes.",
    ]);
    // A warning of the server's own among the WARNING messages.
    assert.deepEqual(describeResult("run", result, { stdout: ["a", "b", "c"], stderr: ["hpf-ls: x"] }), [
      "w1",
      "w2",
      "Exit code 0 on 2 processes.",
    ]);
  });

  it("shows a build's notes", () => {
    assert.deepEqual(describeResult("build", { exitCode: 0, notes: ["line 3 runs on rank 0"] }), [
      "Notes of the MPI backend:",
      "  line 3 runs on rank 0",
      "Built.",
    ]);
    assert.deepEqual(describeResult("build", { exitCode: 0, notes: [] }), ["Built."]);
    assert.deepEqual(describeResult("run", null), ["Run finished: null"]);
  });
});

describe("names", () => {
  it("derives virtual document names from the source file", () => {
    assert.equal(derivedName("/a/b/heat.f90", ".transfer.md"), "heat.f90.transfer.md");
    assert.equal(derivedName("Untitled-1", ""), "Untitled-1");
    assert.equal(derivedName("", ".md"), "untitled.md");
  });

  it("covers the Fortran language ids and .hpf's", () => {
    for (const id of ["fortran", "FortranFreeForm", "FortranFixedForm", "fortran_fixed-form", "hpf"]) {
      assert.ok(LANGUAGES.includes(id), id);
    }
  });
});
