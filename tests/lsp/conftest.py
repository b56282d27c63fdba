"""pytest-lsp fixtures: hpf-ls driven by a client with the capabilities of
VS Code or Neovim (pytest-lsp's recorded profiles).

The server is `$HPF_LS` (a relative path is taken from the repository root),
by default target/debug/hpf-ls from `cargo build -p hpf-ls`. A missing server
makes every test fail, never skip.
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import time
from dataclasses import dataclass, field

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
HPF_LS = ROOT / os.environ.get("HPF_LS", "target/debug/hpf-ls")

# pytest-lsp's client profiles (pytest_lsp/clients/*.json, latest version of each).
PROFILES = ["visual-studio-code", "neovim"]

# How long one request, notification wait or shutdown may take.
TIMEOUT = 15.0


def pytest_configure(config: pytest.Config) -> None:
    # Every warning is an error, first of all pytest-lsp's checks of the
    # server's answers against the client's capabilities
    # (pytest_lsp.checks.LspSpecificationWarning). pytest.ini says the same;
    # repeated here so that it holds however pytest is started.
    config.addinivalue_line("filterwarnings", "error")
    config.addinivalue_line("filterwarnings", "error::pytest_lsp.LspSpecificationWarning")


@pytest.fixture(scope="session", autouse=True)
def hpf_ls_binary() -> pathlib.Path:
    if not (HPF_LS.is_file() and os.access(HPF_LS, os.X_OK)):
        pytest.fail(
            f"hpf-ls server not found at {HPF_LS}: run `cargo build -p hpf-ls` or point HPF_LS at the binary",
            pytrace=False,
        )
    return HPF_LS


@dataclass
class Published:
    uri: str
    version: int | None
    diagnostics: list[types.Diagnostic]


@dataclass
class Session:
    """What the tests need besides the client: the initialize answer and every
    publishDiagnostics with its version (pytest-lsp keeps only the last
    diagnostics per URI, without the version)."""

    profile: str
    capabilities: types.ClientCapabilities
    initialize_result: types.InitializeResult | None = None
    published: list[Published] = field(default_factory=list)
    registrations: list[types.Registration] = field(default_factory=list)

    @property
    def encoding(self) -> str:
        offered = self.capabilities.general and self.capabilities.general.position_encodings
        return "utf-8" if offered and types.PositionEncodingKind.Utf8 in offered else "utf-16"


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    features = dict(DEFAULT_CLIENT_FEATURES)
    default_publish = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def publish_diagnostics(client: LanguageClient, params: types.PublishDiagnosticsParams):
        default_publish(client, params)
        session = getattr(client, "session", None)
        if session is not None:
            session.published.append(Published(params.uri, params.version, list(params.diagnostics)))

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish_diagnostics

    def register_capability(client: LanguageClient, params: types.RegistrationParams):
        # What VS Code and Neovim do: accept, and watch files if asked to.
        session = getattr(client, "session", None)
        if session is not None:
            session.registrations.extend(params.registrations)
        return None

    register_lsp_features(client, features)
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(register_capability)
    return client


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[str(HPF_LS)], client_factory=make_client),
    params=PROFILES,
    ids=PROFILES,
)
async def client(request, lsp_client: LanguageClient):
    capabilities = client_capabilities(request.param)
    session = Session(profile=request.param, capabilities=capabilities)
    lsp_client.session = session
    session.initialize_result = await asyncio.wait_for(
        lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities,
                root_uri=ROOT.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=ROOT.as_uri(), name="hpf-ls")],
            )
        ),
        TIMEOUT,
    )
    yield
    # Every test ends with shutdown + exit, unless it did so itself; the
    # server must then exit promptly with status 0.
    server = lsp_client._server
    if server is not None and server.returncode is None:
        started = time.monotonic()
        try:
            await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)
        finally:
            if server.returncode is None:
                server.kill()
                await server.wait()
                pytest.fail("hpf-ls did not exit after shutdown + exit")
        assert server.returncode == 0, f"hpf-ls exit status {server.returncode}"
        assert time.monotonic() - started < 5.0


@pytest.fixture
def session(client: LanguageClient) -> Session:
    return client.session
