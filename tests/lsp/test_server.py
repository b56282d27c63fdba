"""End-to-end protocol tests of hpf-ls with pytest-lsp, once per client
profile (VS Code, Neovim). Answers are compared exactly; positions are
0-based and in the negotiated encoding (UTF-8 when the client offers it)."""

from __future__ import annotations

import asyncio
import json
import shutil
import time

import pytest
import pytest_asyncio
from lsprotocol import types as t
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient

from conftest import CORPUS, TIMEOUT, Session

pytestmark = pytest.mark.asyncio

SEED = CORPUS / "seed_fig6.f90"
SEED_FIXED = CORPUS / "seed_fig6.f"
NONASCII = CORPUS / "nonascii_scan.f90"

HPF101_MESSAGE = (
    "B is not aligned with the loop's home A: 3 element(s) move before the loop in 3 message(s); "
    "the optimal alignment is `ALIGN B(I) WITH A(I+1)`"
)
QUICK_FIX_TITLE = "Realign B: `ALIGN B(I) WITH A(I+1)` (3 fewer element moves in the file; misalignment warnings 1 → 0)"
B_HOVER = (
    "**REAL B(15)** (array)\n\n"
    "`B(15) -> A(i) triples [1:15:1]; (BLOCK) onto P(4)`\n\n"
    "final alignment target: `A(16)`\n"
    "declared by: `!HPF$ ALIGN B(I) WITH A(I)`\n\n"
    "owners:\n"
    "- P(1): B(1:4)\n"
    "- P(2): B(5:8)\n"
    "- P(3): B(9:12)\n"
    "- P(4): B(13:15)\n"
)
# On the reference B(I-1) in its loop: what the reference costs, then the array.
B_REFERENCE_HOVER = (
    "`B(I-1)` read in `DO I = 2, 16`\n\n"
    "- access range [1:15:1]\n"
    "- declared [1:15:1]\n"
    "- loop triple [2:16:1] (home `A(I)`)\n"
    "- optimal [2:16:1]\n\n"
    "Transfer before the loop: shift by +1, 3 element(s) in 3 message(s)\n"
    "- P(1) → P(2): 1 element(s)\n"
    "- P(2) → P(3): 1 element(s)\n"
    "- P(3) → P(4): 1 element(s)\n\n"
    "local with `ALIGN B(I) WITH A(I+1)`\n"
    "\n---\n\n" + B_HOVER
)
TRANSFER_TABLE = (
    "### Transfers of `DO I = 2, 16`\n\n"
    "**`B(I-1)`**: shift by +1 before the loop\n\n"
    "3 element(s) in 3 message(s)\n\n"
    "| from | to | elements |\n"
    "|---|---|---:|\n"
    "| P(1) | P(2) | 1 |\n"
    "| P(2) | P(3) | 1 |\n"
    "| P(3) | P(4) | 1 |\n\n"
    "optimal: `ALIGN B(I) WITH A(I+1)`\n\n"
)


# ---------------------------------------------------------------- helpers

CONVERTER = default_converter()


def plain(value):
    """`value` as the JSON it travels as (lsprotocol makes sequences tuples)."""
    return json.loads(json.dumps(CONVERTER.unstructure(value)))


def pos(line: int, character: int) -> t.Position:
    return t.Position(line=line, character=character)


def rng(line: int, start: int, end_line: int, end: int) -> t.Range:
    return t.Range(start=pos(line, start), end=pos(end_line, end))


def units(text: str, encoding: str) -> int:
    """The length of `text` in the encoding's code units."""
    return len(text.encode("utf-8")) if encoding == "utf-8" else len(text.encode("utf-16-le")) // 2


def offset_of(text: str, position: t.Position, encoding: str) -> int:
    """The str index of an LSP position (computed independently of the server)."""
    lines = text.splitlines(keepends=True)
    start = sum(len(it) for it in lines[: position.line])
    line = lines[position.line].rstrip("\r\n") if position.line < len(lines) else ""
    count = 0
    for index, char in enumerate(line):
        if count >= position.character:
            return start + index
        count += units(char, encoding)
    assert count == position.character, f"{position} is not on a character boundary"
    return start + len(line)


def apply_edits(text: str, edits, encoding: str) -> str:
    """Applies non-overlapping text edits (all computed on `text`)."""
    spans = sorted(
        ((offset_of(text, e.range.start, encoding), offset_of(text, e.range.end, encoding), e.new_text) for e in edits),
        reverse=True,
    )
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def edits_of(edit: t.WorkspaceEdit, uri: str) -> list[t.TextEdit]:
    """The text edits of a one-document workspace edit, in either form."""
    if edit.document_changes is not None:
        assert [it.text_document.uri for it in edit.document_changes] == [uri]
        return list(edit.document_changes[0].edits)
    assert edit.changes is not None and list(edit.changes) == [uri]
    return list(edit.changes[uri])


async def request(awaitable):
    return await asyncio.wait_for(awaitable, TIMEOUT)


async def published(session: Session, uri: str, version: int) -> list[t.Diagnostic]:
    """The diagnostics published for `uri` at `version` (waits for them)."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        for it in session.published:
            if it.uri == uri and it.version == version:
                return it.diagnostics
        await asyncio.sleep(0.01)
    raise AssertionError(f"no diagnostics for {uri} version {version}; got {session.published!r}")


async def open_document(client: LanguageClient, session: Session, uri: str, text: str) -> list[t.Diagnostic]:
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=uri, language_id="fortran", version=1, text=text)
        )
    )
    return await published(session, uri, 1)


async def change(
    client: LanguageClient, session: Session, uri: str, version: int, changes: list[tuple[t.Range, str]]
) -> list[t.Diagnostic]:
    """Sends incremental changes (applied in order) and waits for the diagnostics."""
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[t.TextDocumentContentChangePartial(range=r, text=s) for r, s in changes],
        )
    )
    return await published(session, uri, version)


async def progress_kinds(client: LanguageClient, token: str) -> list[str]:
    """The kinds of the $/progress notifications for `token`, once its end arrived."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        kinds = [type(it).__name__.removeprefix("WorkDoneProgress") for it in client.progress_reports[token]]
        if kinds and kinds[-1] == "End":
            return kinds
        await asyncio.sleep(0.01)
    raise AssertionError(f"no end of progress {token}: {client.progress_reports[token]!r}")


def decode_tokens(data: list[int]) -> list[tuple[int, int, int, int, int]]:
    """Absolute (line, character, length, type, modifiers) of relative semantic tokens."""
    assert len(data) % 5 == 0
    tokens, line, start = [], 0, 0
    for i in range(0, len(data), 5):
        delta_line, delta_start, length, kind, modifiers = data[i : i + 5]
        line += delta_line
        start = start + delta_start if delta_line == 0 else delta_start
        tokens.append((line, start, length, kind, modifiers))
    return tokens


def seed_hpf101(uri: str) -> t.Diagnostic:
    return t.Diagnostic(
        range=rng(12, 15, 12, 21),
        message=HPF101_MESSAGE,
        severity=t.DiagnosticSeverity.Warning,
        code="HPF101",
        source="hpf-ls",
        related_information=[
            t.DiagnosticRelatedInformation(location=t.Location(uri=uri, range=rng(11, 6, 11, 18)), message="the loop"),
            t.DiagnosticRelatedInformation(
                location=t.Location(uri=uri, range=rng(6, 0, 6, 26)), message="the ALIGN of B"
            ),
        ],
    )


@pytest_asyncio.fixture
async def seed(client: LanguageClient, session: Session) -> str:
    """seed_fig6.f90 opened at version 1; checks its diagnostics."""
    uri = SEED.as_uri()
    diagnostics = await open_document(client, session, uri, SEED.read_text())
    assert plain(diagnostics) == plain([seed_hpf101(uri)])
    return uri


# ---------------------------------------------------------------- tests


async def test_initialize(client: LanguageClient, session: Session):
    result = session.initialize_result
    assert result.server_info.name == "hpf-ls"
    capabilities = result.capabilities
    assert capabilities.position_encoding == session.encoding
    expected = "utf-8" if session.profile == "neovim" else "utf-16"  # Neovim 0.11 offers utf-8, VS Code 1.65 nothing
    assert capabilities.position_encoding == expected
    sync = capabilities.text_document_sync
    assert (sync.open_close, sync.change) == (True, t.TextDocumentSyncKind.Incremental)
    assert list(capabilities.execute_command_provider.commands) == [
        "hpf.showTransferPattern",
        "hpf.run",
        "hpf.build",
        "hpf.showGenerated",
        "hpf.explainLoop",
    ]
    assert list(capabilities.semantic_tokens_provider.legend.token_types) == [
        "keyword",
        "type",
        "namespace",
        "variable",
    ]
    assert capabilities.semantic_tokens_provider.full is True
    assert list(capabilities.code_action_provider.code_action_kinds) == [
        t.CodeActionKind.QuickFix,
        t.CodeActionKind.Source,
    ]
    for provider in [
        "hover_provider",
        "inlay_hint_provider",
        "document_symbol_provider",
        "definition_provider",
        "references_provider",
        "rename_provider",
        "folding_range_provider",
    ]:
        assert getattr(capabilities, provider) is True, provider


async def test_fortran_files_are_watched_when_the_client_can(client: LanguageClient, session: Session):
    workspace = session.capabilities.workspace
    watched = workspace and workspace.did_change_watched_files
    dynamic = bool(watched and watched.dynamic_registration)
    deadline = time.monotonic() + TIMEOUT
    while dynamic and not session.registrations and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    if not dynamic:
        await asyncio.sleep(0.5)
    watchers = [it for it in session.registrations if it.method == "workspace/didChangeWatchedFiles"]
    assert len(watchers) == (1 if dynamic else 0), session.registrations
    if dynamic:
        options = watchers[0].register_options
        glob = options["watchers"][0]["globPattern"]
        assert glob.startswith("**/*.{") and ",f90," in glob and ",F90," in glob, glob


async def test_diagnostics_on_open(client: LanguageClient, session: Session, seed: str):
    # The `seed` fixture compared the whole list; the versions are the document's.
    assert [it.version for it in session.published if it.uri == seed] == [1]
    assert plain(client.diagnostics[seed]) == plain([seed_hpf101(seed)])


async def test_hover_on_b(client: LanguageClient, seed: str):
    doc = t.TextDocumentIdentifier(uri=seed)
    for at, where, value in [
        (pos(12, 15), rng(12, 15, 12, 21), B_REFERENCE_HOVER),
        (pos(3, 18), rng(3, 18, 3, 19), B_HOVER),
    ]:
        hover = await request(client.text_document_hover_async(t.HoverParams(text_document=doc, position=at)))
        assert hover == t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=value), range=where)
    assert "[1:15:1]" in B_HOVER and "owners:" in B_HOVER and "[2:16:1]" in B_REFERENCE_HOVER
    # Whitespace between statements: nothing to say.
    assert (
        await request(client.text_document_hover_async(t.HoverParams(text_document=doc, position=pos(12, 2)))) is None
    )


async def test_quick_fix_then_incremental_change_clears_the_warning(
    client: LanguageClient, session: Session, seed: str
):
    text = SEED.read_text()
    warning = seed_hpf101(seed)
    actions = await request(
        client.text_document_code_action_async(
            t.CodeActionParams(
                text_document=t.TextDocumentIdentifier(uri=seed),
                range=warning.range,
                context=t.CodeActionContext(diagnostics=[warning], only=[t.CodeActionKind.QuickFix]),
            )
        )
    )
    assert len(actions) == 1
    fix = actions[0]
    assert (fix.title, fix.kind, fix.is_preferred) == (QUICK_FIX_TITLE, t.CodeActionKind.QuickFix, True)
    assert plain(fix.diagnostics) == plain([warning])
    if fix.edit.document_changes is not None:  # see test_workspace_edit_follows_the_client_capability
        assert fix.edit.document_changes[0].text_document.version == 1
    edits = edits_of(fix.edit, seed)
    assert edits == [t.TextEdit(range=rng(6, 22, 6, 26), new_text="A(I+1)")]
    fixed = apply_edits(text, edits, session.encoding)
    assert fixed.splitlines()[6] == "!HPF$ ALIGN B(I) WITH A(I+1)"
    assert fixed == text.replace("!HPF$ ALIGN B(I) WITH A(I)\n", "!HPF$ ALIGN B(I) WITH A(I+1)\n")

    # The editor applies the edit and sends it back as an incremental change.
    assert await change(client, session, seed, 2, [(edits[0].range, edits[0].new_text)]) == []
    hints = await request(
        client.text_document_inlay_hint_async(
            t.InlayHintParams(text_document=t.TextDocumentIdentifier(uri=seed), range=rng(0, 0, 16, 0))
        )
    )
    assert list(hints) == []
    actions = await request(
        client.text_document_code_action_async(
            t.CodeActionParams(
                text_document=t.TextDocumentIdentifier(uri=seed),
                range=warning.range,
                context=t.CodeActionContext(diagnostics=[], only=[t.CodeActionKind.QuickFix]),
            )
        )
    )
    assert list(actions) == []


async def source_actions(client: LanguageClient, uri: str, line: int) -> list[t.CodeAction]:
    """The source actions offered at the start of `line` (inside a unit)."""
    return list(
        await request(
            client.text_document_code_action_async(
                t.CodeActionParams(
                    text_document=t.TextDocumentIdentifier(uri=uri),
                    range=rng(line, 0, line, 0),
                    context=t.CodeActionContext(diagnostics=[], only=[t.CodeActionKind.Source]),
                )
            )
        )
    )


async def test_optimize_and_grow_template_source_actions(client: LanguageClient, session: Session, seed: str):
    # The seed: the whole-unit optimiser realigns B and the warning goes.
    text = SEED.read_text()
    optimize = [it for it in await source_actions(client, seed, 12) if it.title.startswith("Optimize all alignments")]
    assert [it.title for it in optimize] == [
        "Optimize all alignments in this unit (B): moved elements 3 → 0, messages 3 → 0"
    ]
    optimized = apply_edits(text, edits_of(optimize[0].edit, seed), session.encoding)
    assert "!HPF$ ALIGN B(I) WITH A(I+1)\n" in optimized

    # A template too small for the optimal alignment: the action grows it.
    uri = (CORPUS / "grow_in_editor.f90").as_uri()  # never on disk
    small = (
        "program grow\n  real :: a(16), b(16)\n!HPF$ PROCESSORS p(4)\n!HPF$ TEMPLATE t(16)\n"
        "!HPF$ DISTRIBUTE t(BLOCK) ONTO p\n!HPF$ ALIGN a(i) WITH t(i)\n!HPF$ ALIGN b(i) WITH t(i)\n"
        "  do i = 2, 16\n    a(i) = b(i-1)\n  end do\nend program grow\n"
    )
    assert [it.code for it in await open_document(client, session, uri, small)] == ["HPF101"]
    grow = [it for it in await source_actions(client, uri, 8) if it.title.startswith("Grow TEMPLATE")]
    assert [it.title for it in grow] == [
        "Grow TEMPLATE t(1:16) to t(1:17) and realign b: moved elements 3 → 0, messages 3 → 0"
    ]
    edits = edits_of(grow[0].edit, uri)
    grown = apply_edits(small, edits, session.encoding)
    assert "!HPF$ TEMPLATE t(17)\n" in grown and "!HPF$ ALIGN b(i) WITH t(i+1)\n" in grown
    # Applied as the editor would, the warning goes and nothing more is proposed.
    assert await change(client, session, uri, 2, [(it.range, it.new_text) for it in reversed(edits)]) == []
    assert [it.title for it in await source_actions(client, uri, 8) if it.title.startswith("Grow")] == []


async def test_workspace_edit_follows_the_client_capability(client: LanguageClient, session: Session, seed: str):
    """LSP 3.17: `documentChanges` only when the client declares
    workspace.workspaceEdit.documentChanges, `changes` otherwise."""
    supported = bool(
        session.capabilities.workspace
        and session.capabilities.workspace.workspace_edit
        and session.capabilities.workspace.workspace_edit.document_changes
    )
    edit = await request(
        client.text_document_rename_async(
            t.RenameParams(text_document=t.TextDocumentIdentifier(uri=seed), position=pos(12, 15), new_name="BB")
        )
    )
    if supported:
        assert edit.document_changes is not None and edit.changes is None
        assert edit.document_changes[0].text_document.version == 1
        return
    assert edit.document_changes is None
    assert edit.changes is not None and list(edit.changes) == [seed]


async def test_inlay_hints(client: LanguageClient, seed: str):
    hints = await request(
        client.text_document_inlay_hint_async(
            t.InlayHintParams(text_document=t.TextDocumentIdentifier(uri=seed), range=rng(0, 0, 16, 0))
        )
    )
    assert list(hints) == [
        t.InlayHint(
            position=pos(11, 18), label="  ⇐ B shift+1: 3 elems, 3 msgs", padding_left=False, padding_right=False
        ),
        t.InlayHint(position=pos(12, 21), label=" shift+1", padding_left=False, padding_right=False),
    ]
    # A range that holds only the first loop gets nothing.
    first = await request(
        client.text_document_inlay_hint_async(
            t.InlayHintParams(text_document=t.TextDocumentIdentifier(uri=seed), range=rng(7, 0, 10, 0))
        )
    )
    assert list(first) == []


async def test_document_symbols(client: LanguageClient, seed: str):
    symbols = await request(
        client.text_document_document_symbol_async(
            t.DocumentSymbolParams(text_document=t.TextDocumentIdentifier(uri=seed))
        )
    )

    def symbol(name, kind, full, selection, detail, children=None):
        return t.DocumentSymbol(
            name=name, kind=kind, range=full, selection_range=selection, detail=detail, children=children
        )

    assert plain(symbols) == plain(
        [
            symbol(
                "SEED",
                t.SymbolKind.Module,
                rng(2, 6, 16, 0),
                rng(2, 14, 2, 18),
                "program",
                [
                    symbol(
                        "A",
                        t.SymbolKind.Array,
                        rng(3, 11, 3, 12),
                        rng(3, 11, 3, 12),
                        "A(16) triples [1:16:1]; (BLOCK) onto P(4)",
                    ),
                    symbol(
                        "B",
                        t.SymbolKind.Array,
                        rng(3, 18, 3, 19),
                        rng(3, 18, 3, 19),
                        "B(15) -> A(i) triples [1:15:1]; (BLOCK) onto P(4)",
                    ),
                    symbol(
                        "P",
                        t.SymbolKind.Object,
                        rng(4, 17, 4, 18),
                        rng(4, 17, 4, 18),
                        "P(4); not distributed (replicated)",
                    ),
                    symbol("DO I = 1, 15", t.SymbolKind.Event, rng(7, 6, 9, 12), rng(7, 6, 7, 18), "do"),
                    symbol("DO I = 2, 16", t.SymbolKind.Event, rng(11, 6, 13, 12), rng(11, 6, 11, 18), "do"),
                ],
            )
        ]
    )


async def test_definition_of_b_at_its_use(client: LanguageClient, seed: str):
    doc = t.TextDocumentIdentifier(uri=seed)
    declaration = t.Location(uri=seed, range=rng(3, 18, 3, 19))
    # From the use in the loop, from the ALIGN directive, from the declaration itself.
    for at in [pos(12, 15), pos(6, 12), pos(3, 18)]:
        assert (
            await request(client.text_document_definition_async(t.DefinitionParams(text_document=doc, position=at)))
            == declaration
        )


async def test_references_include_directives(client: LanguageClient, seed: str):
    doc = t.TextDocumentIdentifier(uri=seed)
    declaration = t.Location(uri=seed, range=rng(3, 18, 3, 19))
    others = [
        t.Location(uri=seed, range=rng(6, 12, 6, 13)),  # !HPF$ ALIGN B(I) WITH A(I)
        t.Location(uri=seed, range=rng(8, 8, 8, 9)),
        t.Location(uri=seed, range=rng(12, 15, 12, 16)),
    ]
    with_declaration = await request(
        client.text_document_references_async(
            t.ReferenceParams(
                text_document=doc, position=pos(12, 15), context=t.ReferenceContext(include_declaration=True)
            )
        )
    )
    assert list(with_declaration) == [declaration, *others]
    without = await request(
        client.text_document_references_async(
            t.ReferenceParams(
                text_document=doc, position=pos(6, 12), context=t.ReferenceContext(include_declaration=False)
            )
        )
    )
    assert list(without) == others
    # A is named in the DISTRIBUTE and in the ALIGN's target.
    a_refs = await request(
        client.text_document_references_async(
            t.ReferenceParams(
                text_document=doc, position=pos(5, 17), context=t.ReferenceContext(include_declaration=True)
            )
        )
    )
    assert [(it.range.start.line, it.range.start.character) for it in a_refs] == [
        (3, 11),
        (5, 17),
        (6, 22),
        (10, 6),
        (12, 8),
        (14, 23),
    ]


async def test_rename_touches_code_and_directives(client: LanguageClient, session: Session, seed: str):
    text = SEED.read_text()
    edit = await request(
        client.text_document_rename_async(
            t.RenameParams(text_document=t.TextDocumentIdentifier(uri=seed), position=pos(12, 15), new_name="BB")
        )
    )
    edits = edits_of(edit, seed)
    assert edits == [
        t.TextEdit(range=rng(3, 18, 3, 19), new_text="BB"),
        t.TextEdit(range=rng(6, 12, 6, 13), new_text="BB"),
        t.TextEdit(range=rng(8, 8, 8, 9), new_text="BB"),
        t.TextEdit(range=rng(12, 15, 12, 16), new_text="BB"),
    ]
    renamed = apply_edits(text, edits, session.encoding)
    lines = renamed.splitlines()
    assert [lines[3], lines[6], lines[8], lines[12]] == [
        "      REAL A(16), BB(15)",
        "!HPF$ ALIGN BB(I) WITH A(I)",
        "        BB(I) = REAL(10 * I)",
        "        A(I) = BB(I-1)",
    ]
    # The editor sends the edits as incremental changes, last first so that
    # each range is still valid: the warning now names BB.
    diagnostics = await change(client, session, seed, 2, [(e.range, e.new_text) for e in reversed(edits)])
    expected = seed_hpf101(seed)
    expected.range = rng(12, 15, 12, 22)
    expected.message = HPF101_MESSAGE.replace("B is", "BB is").replace("ALIGN B(I)", "ALIGN BB(I)")
    expected.related_information[1].location.range = rng(6, 0, 6, 27)
    expected.related_information[1].message = "the ALIGN of BB"
    assert plain(diagnostics) == plain([expected])
    # Renaming to something that is not a name is refused.
    with pytest.raises(JsonRpcInvalidParams):
        await request(
            client.text_document_rename_async(
                t.RenameParams(text_document=t.TextDocumentIdentifier(uri=seed), position=pos(12, 15), new_name="1X")
            )
        )


async def test_completion_in_distribute(client: LanguageClient, session: Session, seed: str):
    # Line 6 (0-based 5) becomes a half-typed `!HPF$ DISTRIBUTE A(`.
    line = "!HPF$ DISTRIBUTE A("
    await change(client, session, seed, 2, [(rng(5, 0, 5, 32), line)])
    result = await request(
        client.text_document_completion_async(
            t.CompletionParams(
                text_document=t.TextDocumentIdentifier(uri=seed),
                position=pos(5, len(line)),
                context=t.CompletionContext(
                    trigger_kind=t.CompletionTriggerKind.TriggerCharacter, trigger_character="("
                ),
            )
        )
    )
    items = result.items if isinstance(result, t.CompletionList) else result
    formats = [it.label for it in items if it.kind == t.CompletionItemKind.EnumMember]
    assert formats == ["BLOCK", "CYCLIC", "BLOCK(", "CYCLIC(", "*"]
    assert all(it.detail == "distribution format" for it in items if it.kind == t.CompletionItemKind.EnumMember)
    assert [(it.label, it.kind) for it in items if it.kind != t.CompletionItemKind.EnumMember] == [
        ("WITH", t.CompletionItemKind.Keyword),
        ("ONTO", t.CompletionItemKind.Keyword),
        ("NEW", t.CompletionItemKind.Keyword),
        ("REDUCTION", t.CompletionItemKind.Keyword),
        ("HOME", t.CompletionItemKind.Keyword),
        ("RESIDENT", t.CompletionItemKind.Keyword),
        ("BEGIN", t.CompletionItemKind.Keyword),
        ("A", t.CompletionItemKind.Variable),
        ("B", t.CompletionItemKind.Variable),
        ("P", t.CompletionItemKind.Module),
    ]
    # After the sentinel alone: the directive keywords.
    keywords = await request(
        client.text_document_completion_async(
            t.CompletionParams(text_document=t.TextDocumentIdentifier(uri=seed), position=pos(4, 6))
        )
    )
    labels = [it.label for it in (keywords.items if isinstance(keywords, t.CompletionList) else keywords)]
    assert {"PROCESSORS", "TEMPLATE", "DISTRIBUTE", "ALIGN", "INDEPENDENT"} <= set(labels)


async def test_semantic_tokens(client: LanguageClient, session: Session, seed: str):
    result = await request(
        client.text_document_semantic_tokens_full_async(
            t.SemanticTokensParams(text_document=t.TextDocumentIdentifier(uri=seed))
        )
    )
    assert result.data and len(result.data) % 5 == 0
    assert all(isinstance(it, int) and it >= 0 for it in result.data)
    legend = session.initialize_result.capabilities.semantic_tokens_provider.legend.token_types
    lines = SEED.read_text().splitlines()
    tokens = []
    previous = (-1, -1)
    for line, start, length, kind, modifiers in decode_tokens(result.data):
        assert (line, start) > previous and length > 0 and modifiers == 0  # sorted, not overlapping
        previous = (line, start + length - 1)
        tokens.append((line, start, lines[line][start : start + length], legend[kind]))
    # Every directive keyword and clause, every array, the processor arrangement.
    assert tokens == [
        (3, 11, "A", "variable"),
        (3, 18, "B", "variable"),
        (4, 6, "PROCESSORS", "keyword"),
        (4, 17, "P", "namespace"),
        (5, 6, "DISTRIBUTE", "keyword"),
        (5, 17, "A", "variable"),
        (5, 19, "BLOCK", "keyword"),
        (5, 26, "ONTO", "keyword"),
        (5, 31, "P", "namespace"),
        (6, 6, "ALIGN", "keyword"),
        (6, 12, "B", "variable"),
        (6, 17, "WITH", "keyword"),
        (6, 22, "A", "variable"),
        (8, 8, "B", "variable"),
        (10, 6, "A", "variable"),
        (12, 8, "A", "variable"),
        (12, 15, "B", "variable"),
        (14, 23, "A", "variable"),
    ]


async def test_show_transfer_pattern(client: LanguageClient, seed: str):
    async def show(line, character):
        return await request(
            client.workspace_execute_command_async(
                t.ExecuteCommandParams(
                    command="hpf.showTransferPattern", arguments=[seed, {"line": line, "character": character}]
                )
            )
        )

    # On the loop header and inside the loop body: the same table.
    assert await show(11, 8) == TRANSFER_TABLE
    assert await show(12, 15) == TRANSFER_TABLE
    assert "| P(1) | P(2) | 1 |" in TRANSFER_TABLE
    assert await show(7, 6) == (
        "### Transfers of `DO I = 1, 15`\n\nNothing moves: every access is aligned with the loop's home.\n"
    )
    with pytest.raises(JsonRpcInvalidParams, match="there is no loop at this position"):
        await show(0, 0)
    with pytest.raises(JsonRpcInvalidParams, match=r"takes \[uri, position\]"):
        await request(
            client.workspace_execute_command_async(
                t.ExecuteCommandParams(command="hpf.showTransferPattern", arguments=[seed])
            )
        )


async def test_run_with_a_missing_compiler_is_an_error(client: LanguageClient, seed: str):
    client.workspace_did_change_configuration(
        t.DidChangeConfigurationParams(settings={"hpf": {"mpi": {"compiler": "/nonexistent/mpif90"}}})
    )
    with pytest.raises(JsonRpcInternalError, match="/nonexistent/mpif90"):
        await request(
            client.workspace_execute_command_async(t.ExecuteCommandParams(command="hpf.run", arguments=[seed, 2]))
        )


async def test_run_of_a_program_the_backend_refuses_is_an_error(client: LanguageClient, session: Session):
    uri = (CORPUS / "refused_2d.f90").as_uri()  # never on disk: the editor's text is what runs
    # A block size known only at run time: valid HPF that the backend does not lower.
    text = SEED.read_text().replace("DISTRIBUTE A(BLOCK) ONTO P", "DISTRIBUTE A(CYCLIC(NB)) ONTO P")
    await open_document(client, session, uri, text)
    token = "hpf-run-refused"
    client.progress_reports[token] = []  # a client-made token (pytest-lsp only knows server-made ones)
    params = t.ExecuteCommandParams(command="hpf.run", arguments=[uri, 2], work_done_token=token)
    with pytest.raises(JsonRpcInternalError, match="the MPI backend cannot lower this program") as error:
        await request(client.workspace_execute_command_async(params))
    assert "\n6:" in str(error.value), "the refusal names the DISTRIBUTE line"
    # The progress the request began is ended on the error path too.
    assert await progress_kinds(client, token) == ["Begin", "End"]


async def test_run_seed(client: LanguageClient, seed: str):
    """With an MPI toolchain (mpif90 and mpirun on PATH, as .ci/run installs)
    the program runs and prints what the sequential program prints; without
    one, hpf.run answers an error. Ordered reductions: the output must be the
    sequential program's, byte for byte."""
    client.workspace_did_change_configuration(
        t.DidChangeConfigurationParams(settings={"hpf": {"mpi": {"orderedReductions": True}}})
    )
    token = "hpf-run-test"
    client.progress_reports[token] = []  # a client-made token (pytest-lsp only knows server-made ones)
    params = t.ExecuteCommandParams(command="hpf.run", arguments=[seed, 2], work_done_token=token)
    if shutil.which("mpif90") and shutil.which("mpirun"):
        result = await asyncio.wait_for(client.workspace_execute_command_async(params), 120)
        expected = (CORPUS / "expected" / "seed_fig6.f90.out").read_text()
        assert result == {"exitCode": 0, "processes": 2, "stdout": expected, "stderr": ""}
        assert await progress_kinds(client, token) == ["Begin", "Report", "Report", "End"]
        assert [it.message for it in client.log_messages if it.type == t.MessageType.Log] == expected.splitlines()
    else:
        with pytest.raises(JsonRpcInternalError, match="mpif90"):
            await asyncio.wait_for(client.workspace_execute_command_async(params), 120)


async def test_unopened_document_gets_null(client: LanguageClient, seed: str):
    uri = (CORPUS / "not_opened.f90").as_uri()
    doc = t.TextDocumentIdentifier(uri=uri)
    at = pos(0, 0)
    assert await request(client.text_document_hover_async(t.HoverParams(text_document=doc, position=at))) is None
    assert (
        await request(client.text_document_definition_async(t.DefinitionParams(text_document=doc, position=at))) is None
    )
    assert (
        await request(
            client.text_document_references_async(
                t.ReferenceParams(text_document=doc, position=at, context=t.ReferenceContext(include_declaration=True))
            )
        )
        is None
    )
    assert (
        await request(client.text_document_rename_async(t.RenameParams(text_document=doc, position=at, new_name="X")))
        is None
    )
    assert (
        await request(client.text_document_completion_async(t.CompletionParams(text_document=doc, position=at))) is None
    )
    assert await request(client.text_document_document_symbol_async(t.DocumentSymbolParams(text_document=doc))) is None
    assert (
        await request(client.text_document_semantic_tokens_full_async(t.SemanticTokensParams(text_document=doc)))
        is None
    )
    assert (
        await request(
            client.text_document_inlay_hint_async(t.InlayHintParams(text_document=doc, range=rng(0, 0, 10, 0)))
        )
        is None
    )
    assert await request(client.text_document_folding_range_async(t.FoldingRangeParams(text_document=doc))) is None
    assert (
        await request(
            client.text_document_code_action_async(
                t.CodeActionParams(
                    text_document=doc, range=rng(0, 0, 0, 0), context=t.CodeActionContext(diagnostics=[])
                )
            )
        )
        is None
    )
    with pytest.raises(JsonRpcInvalidParams, match="is not open"):
        await request(
            client.workspace_execute_command_async(
                t.ExecuteCommandParams(command="hpf.showTransferPattern", arguments=[uri, {"line": 0, "character": 0}])
            )
        )
    # A change to a document that is not open is ignored (and logged).
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text="PROGRAM X\nEND\n")],
        )
    )
    # The server is still there and still knows the open document.
    hover = await request(
        client.text_document_hover_async(
            t.HoverParams(text_document=t.TextDocumentIdentifier(uri=seed), position=pos(12, 15))
        )
    )
    assert hover.contents.value == B_REFERENCE_HOVER
    assert client._server.returncode is None


async def test_shutdown_and_exit_end_the_process_promptly(client: LanguageClient, seed: str):
    server = client._server
    started = time.monotonic()
    assert await request(client.shutdown_async(None)) is None
    client.exit(None)
    await asyncio.wait_for(server.wait(), 5)
    assert server.returncode == 0
    assert time.monotonic() - started < 2.0


async def test_fixed_form_positions(client: LanguageClient, session: Session):
    """seed_fig6.f: the fixed-form twin. Same answers at the same positions;
    columns 73-80 (sequence numbers) are ignored."""
    uri = SEED_FIXED.as_uri()
    text = SEED_FIXED.read_text()
    assert plain(await open_document(client, session, uri, text)) == plain([seed_hpf101(uri)])
    doc = t.TextDocumentIdentifier(uri=uri)
    hover = await request(client.text_document_hover_async(t.HoverParams(text_document=doc, position=pos(12, 15))))
    assert hover == t.Hover(
        contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=B_REFERENCE_HOVER), range=rng(12, 15, 12, 21)
    )
    definition = await request(
        client.text_document_definition_async(t.DefinitionParams(text_document=doc, position=pos(12, 15)))
    )
    assert definition == t.Location(uri=uri, range=rng(3, 18, 3, 19))
    # Sequence numbers after column 72 on the loop body line: still the same
    # one warning (in free form this would be a syntax error).
    line = text.splitlines()[12]
    padded = " " * (72 - len(line)) + "SEED0130"
    diagnostics = await change(client, session, uri, 2, [(rng(12, len(line), 12, len(line)), padded)])
    assert plain(diagnostics) == plain([seed_hpf101(uri)])
    hints = await request(
        client.text_document_inlay_hint_async(t.InlayHintParams(text_document=doc, range=rng(0, 0, 16, 0)))
    )
    assert [(h.position.line, h.position.character, h.label) for h in hints] == [
        (11, 18, "  ⇐ B shift+1: 3 elems, 3 msgs"),
        (12, 21, " shift+1"),
    ]
    # The quick fix keeps the fixed-form directive line.
    actions = await request(
        client.text_document_code_action_async(
            t.CodeActionParams(
                text_document=doc,
                range=rng(12, 15, 12, 21),
                context=t.CodeActionContext(diagnostics=[], only=[t.CodeActionKind.QuickFix]),
            )
        )
    )
    assert [edits_of(it.edit, uri) for it in actions] == [[t.TextEdit(range=rng(6, 22, 6, 26), new_text="A(I+1)")]]


async def test_non_ascii_positions(client: LanguageClient, session: Session):
    """nonascii_scan.f90: UTF-8 comments after code and directives. Positions
    after them count code units of the negotiated encoding."""
    uri = NONASCII.as_uri()
    text = NONASCII.read_text(encoding="utf-8")
    lines = text.splitlines()
    loop = lines[15]
    assert loop == "  do while (k < n)              ! 倍々に進む"
    end = units(loop, session.encoding)
    assert end == {"utf-8": 49, "utf-16": 39}[session.encoding]
    diagnostics = await open_document(client, session, uri, text)
    do_while = [d for d in diagnostics if d.message.startswith("loop not analysed: DO WHILE")]
    assert [(d.code, d.severity, d.range) for d in do_while] == [
        ("HPF104", t.DiagnosticSeverity.Hint, rng(15, 2, 15, end))
    ]

    # Insert after the Japanese comment: the header's range grows by 3.
    diagnostics = await change(client, session, uri, 2, [(rng(15, end, 15, end), " ok")])
    assert [d.range for d in diagnostics if d.message.startswith("loop not analysed")] == [rng(15, 2, 15, end + 3)]
    # Replace just the Japanese text (both ends after non-ASCII or at its start).
    start = units("  do while (k < n)              ! ", session.encoding)
    diagnostics = await change(
        client, session, uri, 3, [(rng(15, start, 15, start + units("倍々に進む", session.encoding)), "x")]
    )
    assert [d.range for d in diagnostics if d.message.startswith("loop not analysed")] == [rng(15, 2, 15, start + 4)]

    # Names before the comments of directive lines: hover and references.
    doc = t.TextDocumentIdentifier(uri=uri)
    hover = await request(client.text_document_hover_async(t.HoverParams(text_document=doc, position=pos(9, 17))))
    assert hover.range == rng(9, 17, 9, 18) and hover.contents.value.startswith("**INTEGER a(32)** (array)")
    refs = await request(
        client.text_document_references_async(
            t.ReferenceParams(
                text_document=doc, position=pos(10, 12), context=t.ReferenceContext(include_declaration=True)
            )
        )
    )
    assert [(r.range.start.line, r.range.start.character, r.range.end.character) for r in refs] == [
        (6, 19, 20),
        (10, 12, 13),
        (16, 4, 5),
        (17, 4, 5),
        (18, 8, 9),
    ]
    # The semantic tokens of the directive lines stop at their comments.
    tokens = await request(client.text_document_semantic_tokens_full_async(t.SemanticTokensParams(text_document=doc)))
    on_directives = [
        (line, start, length) for line, start, length, _, _ in decode_tokens(tokens.data) if 8 <= line <= 10
    ]
    assert on_directives == [
        (8, 6, 10),  # PROCESSORS
        (8, 17, 1),  # P
        (9, 6, 10),  # DISTRIBUTE
        (9, 17, 1),  # A
        (9, 19, 5),  # BLOCK
        (9, 26, 4),  # ONTO
        (9, 31, 1),  # P
        (10, 6, 5),  # ALIGN
        (10, 12, 1),  # B
        (10, 17, 4),  # WITH
        (10, 22, 1),  # A
    ]
