//! A document analysed chunk by chunk (`syntax::chunks`): one top-level
//! program unit each, and in a host unit with CONTAINS (a module, a main
//! program, ...) one for its part up to CONTAINS and one for each procedure
//! after it. A chunk is parsed, lowered and analysed as a file of its own,
//! with positions relative to the chunk's start; a procedure is analysed
//! inside its host's chunk (the host's text, the procedure's, a closing
//! END: [`Context`]), so that it sees its host's templates, arrays and
//! mappings as the whole text does, and what the analysis finds in the
//! host's text is the host chunk's.
//!
//! An edit inside one unit or procedure reparses and reanalyses that chunk
//! only: the chunks before and after it keep their analysis (their text is
//! the same, and their positions, relative to their start, did not move),
//! and so do their converted diagnostics (`publish_frame`), as long as their
//! first line did not move either. An edit of a host's part up to CONTAINS
//! reanalyses the procedures that mention a name it changed
//! ([`syntax::host_spec`]); the others keep their analysis, moved onto the
//! new host text (`Chunk::rebased`: what they stored is shared behind
//! `Arc`, only diagnostics pointing into the host are copied). A unit USEs the modules the other chunks
//! define as it USEs those of other files (`ExternalFile`); a chunk is
//! analysed again when a module it looked up changed.
//!
//! What may involve several units (references to and renaming of module
//! variables, quick fixes of module arrays, building and running the
//! program) asks the analysis of the whole text (`Analysed::whole`),
//! computed on first use.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use analysis::model::{ExternalFile, ModuleResolver};
use analysis::{FileAnalysis, ModelConfig};
use ropey::Rope;
use syntax::{SourceForm, TextRange};
use tree_sitter::Tree;

use super::settings::Settings;

/// Trees are kept for the next edit of the chunks an analysis computed,
/// when it computed at most this many (an edit, not an open).
const KEEP_TREES_UP_TO: usize = 4;

/// Full analyses kept per document beyond those of the chunks just
/// computed: the others are dropped and made again from the chunk's text
/// when asked (a few milliseconds for a unit). At 100k lines all of them
/// took 250 MB.
const KEEP_ANALYSES: usize = 32;

/// One chunk of a document, analysed. What every edit and whole-document
/// request needs is kept (diagnostics, semantic tokens, symbols, folds:
/// [`Stored`], which it derefs to); the full analysis only while it is in
/// use (see [`Chunk::analysis`]).
pub struct Chunk {
    /// Its text as the user wrote it (shared with its rebased chunks).
    pub text: Arc<str>,
    /// Positions relative to the chunk's start, as in the full analysis.
    /// Shared (`Arc`) with the chunks made from it when its host's text
    /// changes ([`Chunk::rebased`]), which copy it only when one points into the host.
    pub diagnostics: Arc<Vec<syntax::Diagnostic>>,
    /// What its analysis left that a move onto a new host text keeps: one
    /// `Arc` (thousands of chunks per host edit; one count each, not fifteen).
    stored: Arc<Stored>,
    /// The full analysis, while kept.
    full: Mutex<Option<Arc<FileAnalysis>>>,
    /// When it was last asked for (a tick of `USES`).
    used: std::sync::atomic::AtomicU64,
    /// Its parser text and tree, for an incremental reparse at its next edit.
    tree: Mutex<Option<(String, Tree)>>,
    /// Its diagnostics as JSON array elements, for the key they were made for.
    published: Mutex<Option<(PublishKey, Arc<Vec<u8>>)>>,
    /// The text it is analysed in, when it is part of a host unit.
    pub context: Option<Context>,
}

/// What a chunk's analysis left besides its diagnostics, shared by the
/// chunks made from it on a new host text ([`Chunk::rebased`]).
pub struct Stored {
    pub semantic_tokens: Arc<Vec<analysis::ide::SemanticToken>>,
    pub folding_ranges: Arc<Vec<analysis::ide::FoldingRange>>,
    pub symbols: Arc<Vec<analysis::ide::DocumentSymbol>>,
    /// Every inlay hint of both kinds (a client may ask for the whole document).
    pub inlay_hints: Arc<Vec<analysis::ide::InlayHint>>,
    /// Where its main programs begin.
    pub programs: Arc<Vec<usize>>,
    /// The modules it USEs that were found nowhere (lower case).
    unknown_modules: Arc<Vec<String>>,
    /// How it was analysed, to analyse it again.
    form: SourceForm,
    config: ModelConfig,
    severities: Arc<Vec<crate::config::SeverityOverride>>,
    /// The modules its analysis looked for outside the chunk, and what it found.
    lookups: Arc<Vec<(String, Option<Arc<ExternalFile>>)>>,
    /// What the other chunks USE of it, when it defines a module.
    provides: Option<Arc<ExternalFile>>,
    /// Its text with its INCLUDE lines replaced by the files they name,
    /// which the analysis read; `None` when it has no INCLUDE line.
    pub expansion: Option<Arc<Expansion>>,
    /// The diagnostics of its analysis inside the files it includes:
    /// (the file's path, the diagnostic with a range of that file).
    pub header_diagnostics: Arc<Vec<(Arc<str>, syntax::Diagnostic)>>,
    /// A procedure's: where its host unit ends in its text, when it does
    /// (the host's END is in its last procedure's chunk).
    pub host_end: Option<usize>,
    /// A procedure's: the names its text mentions (lower case), to tell
    /// whether an edit of its host changed what it sees ([`syntax::host_spec`]).
    names: Option<Arc<std::collections::HashSet<Box<str>>>>,
}

impl std::ops::Deref for Chunk {
    type Target = Stored;

    fn deref(&self) -> &Stored {
        &self.stored
    }
}

/// A stored range of a host's chunk (folds, symbols) that ends where its
/// host unit ends, in a later chunk ([`Analysed::host_end`]).
pub const OPEN_END: usize = usize::MAX;

/// The text a chunk of a host unit is analysed in: the host's part up to
/// CONTAINS (a procedure's chunk), the chunk's own text, and a closing END
/// when the host's END is not in it. Made when first read: a procedure
/// moved onto a new host text ([`Chunk::rebased`], thousands per host edit)
/// keeps the two texts it is made of (shared) until its analysis is asked for.
pub struct Context {
    /// The host's text (empty if none) and the chunk's own text.
    parts: (Arc<str>, Arc<str>),
    /// What closes the host unit after the chunk's text (may be empty).
    closer: &'static str,
    text: OnceLock<String>,
    /// Where the chunk's own text lies in `text`.
    pub own: TextRange,
    /// A procedure's: the name its host's chunk has among the siblings
    /// ([`Analysed::sibling`]), for related places in the host.
    pub host: Option<Arc<str>>,
}

impl Context {
    /// What a chunk at `own_text` is analysed in, given the text of its
    /// host's chunk (a procedure's) and whether its host ends in it.
    fn new(own_text: Arc<str>, host: Option<(Arc<str>, Arc<str>)>, closed: bool, form: SourceForm) -> Context {
        let newline = !own_text.is_empty() && !own_text.ends_with('\n');
        let closer = match (closed, form, newline) {
            (true, _, _) => "",
            (false, SourceForm::Free, false) => "end\n",
            (false, SourceForm::Free, true) => "\nend\n",
            (false, SourceForm::Fixed { .. }, false) => "      end\n",
            (false, SourceForm::Fixed { .. }, true) => "\n      end\n",
        };
        let (host_text, host) = host.map_or((Arc::from(""), None), |(text, name)| (text, Some(name)));
        let own = TextRange::new(host_text.len(), host_text.len() + own_text.len());
        Context { parts: (host_text, own_text), closer, text: OnceLock::new(), own, host }
    }

    /// The text analysed: the host's, the chunk's, the closing END.
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| {
            let (host, own) = &self.parts;
            let mut text = String::with_capacity(host.len() + own.len() + self.closer.len());
            text.push_str(host);
            text.push_str(own);
            text.push_str(self.closer);
            text
        })
    }

    /// Whether the host unit ends in the chunk's own text (no closing END added).
    pub fn closed(&self) -> bool {
        self.closer.is_empty()
    }

    /// The host's text before the chunk's own (empty for a host's chunk).
    pub fn host_text(&self) -> &Arc<str> {
        &self.parts.0
    }
}

/// How the ranges of a chunk's analysis map to its own text: through its
/// expansion (INCLUDE lines) to the text analysed, then to its own part.
#[derive(Clone, Copy)]
pub struct Frame<'a> {
    expansion: Option<&'a Expansion>,
    context: Option<&'a Context>,
}

impl Frame<'_> {
    /// A range of the text analysed before its INCLUDE lines were expanded.
    fn analysed(&self, range: TextRange) -> Option<TextRange> {
        match self.expansion {
            Some(expansion) => expansion.to_chunk(range),
            None => Some(range),
        }
    }

    /// A range of the analysis as a range of the chunk's own text; `None`
    /// in an included file, in the host, or in the closing END.
    pub fn own(&self, range: TextRange) -> Option<TextRange> {
        let range = self.analysed(range)?;
        match self.context {
            Some(context) => (context.own.start <= range.start && range.end <= context.own.end)
                .then(|| TextRange::new(range.start - context.own.start, range.end - context.own.start)),
            None => Some(range),
        }
    }

    /// [`Frame::own`] for a range that begins in the chunk and may end after
    /// it, in the closing END: a host unit's range, which ends in a later
    /// chunk ([`OPEN_END`]).
    fn own_or_open(&self, range: TextRange) -> Option<TextRange> {
        if let Some(own) = self.own(range) {
            return Some(own);
        }
        let context = self.context?;
        let range = self.analysed(range)?;
        (!context.closed()
            && context.own.start <= range.start
            && range.start <= context.own.end
            && range.end > context.own.end)
            .then(|| TextRange { start: range.start - context.own.start, end: OPEN_END })
    }

    /// A range of the analysis in the host's chunk (a procedure's), as a range of that chunk.
    pub fn host(&self, range: TextRange) -> Option<TextRange> {
        let context = self.context.filter(|it| it.host.is_some())?;
        let range = self.analysed(range)?;
        (range.end <= context.own.start).then_some(range)
    }

    /// An offset of the chunk's own text as an offset of the analysis.
    fn analysis_offset(&self, local: usize) -> usize {
        let local = local + self.context.map_or(0, |it| it.own.start);
        match self.expansion {
            // A document offset is copied once into the expansion, or not at all (an INCLUDE line).
            Some(expansion) => expansion.map.to_expanded(0, local).unwrap_or(0),
            None => local,
        }
    }
}

/// A chunk's text with its INCLUDE lines expanded (`syntax::include`).
pub struct Expansion {
    pub text: String,
    /// File 0 is the chunk's text.
    pub map: syntax::include::SourceMap,
    /// Files not found, cycles: diagnostics of the analysis too.
    problems: Vec<syntax::Diagnostic>,
    /// The chunk's text as the preprocessor left it, which it was made
    /// from: the chunk is analysed again when that changes (a `#define`
    /// before it was edited).
    preprocessed: Option<String>,
}

impl Expansion {
    /// A range of the expanded text as a range of the chunk's text; `None` inside an included file.
    pub fn to_chunk(&self, range: TextRange) -> Option<TextRange> {
        let at = self.map.locate_range(range);
        (at.file == 0).then_some(at.range)
    }

    /// A range of the expanded text in an included file: (its path, its text, the range there).
    pub fn in_header(&self, range: TextRange) -> Option<(&str, &str, TextRange)> {
        let at = self.map.locate_range(range);
        let file = self.map.file(at.file);
        (at.file != 0).then(|| (&*file.name, &*file.text, at.range))
    }
}

/// What a document's analysis reads outside its text: the modules of
/// other files, and the files its INCLUDE lines name.
#[derive(Clone, Copy)]
pub struct Outside<'a> {
    pub modules: &'a (dyn ModuleResolver + Sync),
    pub includes: &'a Includes,
}

/// What the INCLUDE lines of a document read: files relative to the
/// document's directory, then `dirs` (hpf-ls.toml's `include`), with the
/// text of open documents in place of the disk's.
#[derive(Clone, Default)]
pub struct Includes {
    /// The document's path; `None` (not a file): INCLUDE lines are left as they are.
    pub path: Option<std::path::PathBuf>,
    pub dirs: Vec<std::path::PathBuf>,
    pub open: Vec<(std::path::PathBuf, Rope)>,
    /// Run the C preprocessor (`.F`, `.F90`, `.FPP`, or `cpp = true`), with these macros.
    pub cpp: bool,
    pub defines: Vec<String>,
    /// The headers read from disk by this analysis (many chunks include the same).
    pub(super) read: Arc<Mutex<HashMap<std::path::PathBuf, Option<String>>>>,
}

impl Includes {
    fn open_text(&self, path: &std::path::Path) -> Option<String> {
        self.open.iter().find(|(open, _)| open == path).map(|(_, rope)| rope.to_string())
    }

    /// The text a chunk's analysis reads, when it is not the chunk's own:
    /// `preprocessed` (the chunk in the document's preprocessed text, of the
    /// same length), with its INCLUDE lines expanded.
    fn expand(&self, text: &str, preprocessed: Option<String>, form: SourceForm) -> Option<Expansion> {
        let source = preprocessed.as_deref().unwrap_or(text);
        // The preprocessed text keeps its active `#include` lines, and no other directive.
        let hash_include =
            |line: &str| line.trim_start().strip_prefix('#').is_some_and(|it| it.trim_start().starts_with("include"));
        let cpp = preprocessed.is_some() && source.lines().any(hash_include);
        let has_includes = self.path.is_some()
            && (cpp || source.lines().any(|line| syntax::include::include_line(line, form).is_some()));
        if !has_includes {
            let source = preprocessed?;
            let map = syntax::include::SourceMap::identity("", &source);
            return Some(Expansion { text: source.clone(), map, problems: Vec::new(), preprocessed: Some(source) });
        }
        let path = self.path.as_ref()?;
        let overlay = |path: &std::path::Path| self.open_text(path);
        let loader = crate::sources::DiskLoader { dirs: &self.dirs, overlay: &overlay, relative_names: false };
        let root = syntax::include::Root { name: path.display().to_string(), text: source.to_string(), cpp };
        let defines = if cpp { self.defines.clone() } else { Vec::new() };
        let options = syntax::include::ExpandOptions { form, defines, common_headers_as_modules: false };
        let expanded = syntax::include::expand(&[root], &options, &loader);
        Some(Expansion { text: expanded.text, map: expanded.map, problems: expanded.diagnostics, preprocessed })
    }

    /// The document's text as the preprocessor leaves it, offsets kept
    /// (`syntax::preprocess::mask_with`): the macros its `#include`d files
    /// define hold after them.
    fn mask(&self, text: &str, form: SourceForm) -> (String, Vec<TextRange>) {
        let Some(path) = &self.path else { return syntax::preprocess::mask(text, form, &self.defines) };
        let overlay = |path: &std::path::Path| self.open_text(path);
        let loader = crate::sources::DiskLoader { dirs: &self.dirs, overlay: &overlay, relative_names: false };
        let document = path.display().to_string();
        let header = |name: &str, from: &str| {
            let from = if from.is_empty() { &document } else { from };
            syntax::include::SourceLoader::load(&loader, name, from).ok()
        };
        syntax::preprocess::mask_with(text, form, &self.defines, &header)
    }

    /// Whether the files an expansion read still read the same.
    fn unchanged(&self, expansion: &Expansion) -> bool {
        expansion.map.files().iter().skip(1).all(|file| {
            let path = std::path::Path::new(&*file.name);
            if let Some(open) = self.open_text(path) {
                return open == *file.text;
            }
            let mut read = self.read.lock().unwrap_or_else(|it| it.into_inner());
            let now = read.entry(path.to_path_buf()).or_insert_with(|| crate::cli::read_text(path).ok());
            now.as_deref() == Some(&*file.text)
        })
    }
}

/// What the LSP form of a chunk's diagnostics depends on besides the chunk.
#[derive(Clone, PartialEq, Eq)]
pub struct PublishKey {
    pub utf8: bool,
    /// The chunk's first line, then the first lines of the chunks its related information points into.
    pub lines: Vec<u32>,
}

const ALL_HINTS: analysis::ide::HintConfig = analysis::ide::HintConfig { loops: true, references: true };

/// Ticks of [`Chunk::analysis`] calls, process-wide.
static USES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The modules an analysis found, replayed: analysing a chunk again finds
/// what its first analysis found.
struct Replay<'a>(&'a [(String, Option<Arc<ExternalFile>>)]);

impl ModuleResolver for Replay<'_> {
    fn find_module(&self, key: &str) -> Option<Arc<ExternalFile>> {
        self.0.iter().find(|(looked_for, _)| looked_for == key).and_then(|(_, found)| found.clone())
    }
}

impl Chunk {
    #[allow(clippy::too_many_arguments)]
    fn new(
        text: Arc<str>,
        context: Option<Context>,
        analysis: Arc<FileAnalysis>,
        lookups: Vec<(String, Option<Arc<ExternalFile>>)>,
        provides: Option<Arc<ExternalFile>>,
        tree: Option<(String, Tree)>,
        keep: bool,
        expansion: Option<Arc<Expansion>>,
    ) -> Chunk {
        let programs = analysis
            .model
            .units
            .iter()
            .filter(|it| it.origin.is_none() && it.kind == syntax::UnitKind::Program)
            .map(|it| it.range.start)
            .collect();
        let analysed_text = match (&expansion, &context) {
            (Some(expansion), _) => expansion.text.as_str(),
            (None, Some(context)) => context.text(),
            (None, None) => &*text,
        };
        let mut diagnostics = analysis.diagnostics.clone();
        let mut semantic_tokens = analysis::ide::semantic_tokens(&analysis, analysed_text);
        let mut folding_ranges = analysis::ide::folding_ranges(&analysis, analysed_text);
        let mut symbols = analysis::ide::document_symbols(&analysis, analysed_text);
        let mut inlay_hints = analysis::ide::inlay_hints(&analysis, analysed_text, ALL_HINTS, None);
        let mut header_diagnostics = Vec::new();
        let mut programs: Vec<usize> = programs;
        let mut host_end = None;
        let names =
            context.as_ref().filter(|it| it.host.is_some()).map(|it| Arc::new(syntax::host_spec::names(&it.parts.1)));
        if expansion.is_some() || context.is_some() {
            let frame = Frame { expansion: expansion.as_deref(), context: context.as_ref() };
            let host_name = context.as_ref().and_then(|it| it.host.clone());
            // What the editor shows of this document is what lies in its text;
            // the diagnostics inside headers are published for the headers,
            // those in the host by the host's chunk.
            let mut own = Vec::new();
            // A procedure's: where its own text begins in the expansion. A
            // header included before it, in the host's text, is the host chunk's.
            let own_expanded = context.as_ref().filter(|it| it.host.is_some()).and_then(|context| {
                let expansion = expansion.as_ref()?;
                expansion.map.to_expanded(0, context.own.start)
            });
            for mut diagnostic in diagnostics {
                if let Some((name, _, range)) = expansion.as_ref().and_then(|it| it.in_header(diagnostic.range)) {
                    if own_expanded.is_some_and(|start| diagnostic.range.start < start) {
                        continue;
                    }
                    let expansion = expansion.as_ref().expect("in a header");
                    let name: Arc<str> = name.into();
                    diagnostic.range = range;
                    diagnostic.related.retain(|it| it.file.is_some() || expansion.in_header(it.range).is_some());
                    for related in diagnostic.related.iter_mut().filter(|it| it.file.is_none()) {
                        let (in_file, _, range) = expansion.in_header(related.range).expect("kept above");
                        related.range = range;
                        related.file = (in_file != &*name).then(|| in_file.into());
                    }
                    header_diagnostics.push((name, diagnostic));
                    continue;
                }
                let Some(range) = frame.own(diagnostic.range) else { continue };
                diagnostic.range = range;
                diagnostic
                    .related
                    .retain(|it| it.file.is_some() || frame.own(it.range).is_some() || frame.host(it.range).is_some());
                for related in diagnostic.related.iter_mut().filter(|it| it.file.is_none()) {
                    match frame.own(related.range) {
                        Some(range) => related.range = range,
                        None => {
                            // In the host's chunk, a sibling of this one: a range of
                            // its analysis, which read the same text (and headers) up to here.
                            related.file = host_name.clone();
                        }
                    }
                }
                own.push(diagnostic);
            }
            diagnostics = own;
            semantic_tokens.retain_mut(|it| frame.own(it.range).map(|range| it.range = range).is_some());
            folding_ranges.retain_mut(|it| frame.own_or_open(it.range).map(|range| it.range = range).is_some());
            /// Symbols outside the chunk go; those of theirs inside it take their place.
            fn map_symbols(
                frame: &Frame,
                symbols: Vec<analysis::ide::DocumentSymbol>,
            ) -> Vec<analysis::ide::DocumentSymbol> {
                let mut res = Vec::new();
                for mut symbol in symbols {
                    let children = map_symbols(frame, std::mem::take(&mut symbol.children));
                    match (frame.own_or_open(symbol.range), frame.own(symbol.selection)) {
                        (Some(range), Some(selection)) => {
                            symbol.range = range;
                            symbol.selection = selection;
                            symbol.children = children;
                            res.push(symbol);
                        }
                        _ => res.extend(children),
                    }
                }
                res
            }
            symbols = map_symbols(&frame, symbols);
            inlay_hints.retain_mut(|it| {
                frame.own(TextRange::new(it.offset, it.offset)).map(|range| it.offset = range.start).is_some()
            });
            programs.retain_mut(|it| frame.own(TextRange::new(*it, *it)).map(|range| *it = range.start).is_some());
            if context.as_ref().is_some_and(|it| it.host.is_some()) {
                let host = analysis.model.units.iter().find(|it| it.origin.is_none() && it.parent.is_none());
                host_end = host.and_then(|it| frame.own(TextRange::new(it.range.end, it.range.end))).map(|it| it.end);
            }
        }
        let stored = Stored {
            semantic_tokens: Arc::new(semantic_tokens),
            folding_ranges: Arc::new(folding_ranges),
            symbols: Arc::new(symbols),
            inlay_hints: Arc::new(inlay_hints),
            programs: Arc::new(programs),
            unknown_modules: Arc::new(super::unknown_modules(&analysis)),
            form: analysis.file.form,
            config: analysis.model.config,
            severities: Arc::new(Vec::new()),
            lookups: Arc::new(lookups),
            provides,
            expansion,
            header_diagnostics: Arc::new(header_diagnostics),
            host_end,
            names,
        };
        Chunk {
            text,
            diagnostics: Arc::new(diagnostics),
            stored: Arc::new(stored),
            full: Mutex::new(keep.then_some(analysis)),
            used: std::sync::atomic::AtomicU64::new(USES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)),
            tree: Mutex::new(tree),
            published: Mutex::new(None),
            context,
        }
    }

    /// This procedure's chunk on a new text of its host, which changed no
    /// name it mentions: its analysis is the same but for the ranges in the
    /// host, which `host_range` moves (`None` if one of them cannot be; and
    /// whether it lies before what changed).
    fn rebased(&self, context: Context, host_range: impl Fn(TextRange) -> Option<(TextRange, bool)>) -> Option<Chunk> {
        let old_host = self.context.as_ref()?.host.clone()?;
        let mut diagnostics = self.diagnostics.clone();
        let mut moved = false;
        // Copied only when one of them points into the host (few do).
        let points_to_host = |it: &syntax::Diagnostic| it.related.iter().any(|it| it.file.as_ref() == Some(&old_host));
        if diagnostics.iter().any(points_to_host) {
            for related in Arc::make_mut(&mut diagnostics).iter_mut().flat_map(|it| it.related.iter_mut()) {
                if related.file.as_ref() == Some(&old_host) {
                    let (range, before_the_edit) = host_range(related.range)?;
                    moved |= !before_the_edit;
                    related.range = range;
                    related.file = context.host.clone();
                }
            }
        }
        // Its diagnostics' JSON reads the same when every place in the host is
        // before what the edit changed (the key checks the chunks' lines).
        let published = match moved {
            true => None,
            false => self.published.lock().unwrap_or_else(|it| it.into_inner()).clone(),
        };
        Some(Chunk {
            text: self.text.clone(),
            diagnostics,
            stored: self.stored.clone(),
            // Its ranges are those of the old context: made again when asked.
            full: Mutex::new(None),
            used: std::sync::atomic::AtomicU64::new(USES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)),
            tree: Mutex::new(None),
            published: Mutex::new(published),
            context: Some(context),
        })
    }

    /// How the ranges of its analysis map to its text.
    pub fn frame(&self) -> Frame<'_> {
        Frame { expansion: self.expansion.as_deref(), context: self.context.as_ref() }
    }

    /// The text its analysis read: its own, its host's with it, or their expansion.
    pub fn analysed_text(&self) -> &str {
        match (&self.expansion, &self.context) {
            (Some(expansion), _) => &expansion.text,
            (None, Some(context)) => context.text(),
            (None, None) => &self.text,
        }
    }

    /// The chunk's full analysis (positions relative to the chunk), kept
    /// or made again from its text with the modules its first analysis found.
    pub fn analysis(&self) -> Arc<FileAnalysis> {
        self.used.store(USES.fetch_add(1, std::sync::atomic::Ordering::Relaxed), std::sync::atomic::Ordering::Relaxed);
        let mut full = self.full.lock().unwrap_or_else(|it| it.into_inner());
        if let Some(analysis) = &*full {
            return analysis.clone();
        }
        let file = syntax::parse(self.analysed_text(), self.form);
        let problems = self.expansion.as_ref().map_or(&[][..], |it| &it.problems[..]);
        let analysis = Arc::new(analyse_file(file, problems, self.config, &self.severities, &Replay(&self.lookups)));
        *full = Some(analysis.clone());
        analysis
    }

    /// Whether its full analysis is kept, and when it was last used.
    fn kept_analysis(&self) -> Option<u64> {
        let full = self.full.lock().unwrap_or_else(|it| it.into_inner());
        full.as_ref().map(|_| self.used.load(std::sync::atomic::Ordering::Relaxed))
    }

    fn drop_analysis(&self) -> Option<Arc<FileAnalysis>> {
        self.full.lock().unwrap_or_else(|it| it.into_inner()).take()
    }

    pub fn published(&self, key: &PublishKey) -> Option<Arc<Vec<u8>>> {
        let cached = self.published.lock().unwrap_or_else(|it| it.into_inner());
        cached.as_ref().filter(|(made_for, _)| made_for == key).map(|(_, bytes)| bytes.clone())
    }

    pub fn set_published(&self, key: PublishKey, bytes: Arc<Vec<u8>>) {
        *self.published.lock().unwrap_or_else(|it| it.into_inner()) = Some((key, bytes));
    }

    /// The file of another document named `name` whose modules it USEs.
    pub fn external(&self, name: &str) -> Option<&Arc<ExternalFile>> {
        self.lookups.iter().filter_map(|(_, found)| found.as_ref()).find(|it| *it.name == *name)
    }
}

/// A chunk where it lies in the document.
#[derive(Clone)]
pub struct Placed {
    /// Byte offset of its first byte in the document.
    pub start: usize,
    /// Its first line (0-based, as LSP counts lines).
    pub line: u32,
    pub chunk: Arc<Chunk>,
    pub kind: syntax::ChunkKind,
    /// A procedure's: where its host's chunk begins in the document.
    pub host: Option<usize>,
}

impl Placed {
    pub fn end(&self) -> usize {
        self.start + self.chunk.text.len()
    }

    /// A range of the chunk's analysis in document offsets: in its text,
    /// or in its host's (a range inside an included file becomes the empty
    /// range at the start of the chunk: ask [`Expansion::in_header`] first
    /// where that matters).
    pub fn global(&self, range: TextRange) -> TextRange {
        let frame = self.chunk.frame();
        if let Some(own) = frame.own(range) {
            return self.shift(own);
        }
        match (self.host, frame.host(range)) {
            (Some(host), Some(range)) => TextRange::new(range.start + host, range.end + host),
            _ => TextRange::new(self.start, self.start),
        }
    }

    /// A range of the chunk's own text (what it keeps: diagnostics, tokens, ...) in document offsets.
    pub fn shift(&self, range: TextRange) -> TextRange {
        TextRange::new(range.start + self.start, range.end + self.start)
    }

    /// A document offset as an offset of the chunk's analysis (clamped to it).
    pub fn local(&self, offset: usize) -> usize {
        let local = offset.saturating_sub(self.start).min(self.chunk.text.len());
        self.chunk.frame().analysis_offset(local)
    }

    /// A document range relative to the chunk (clamped to it).
    pub fn local_range(&self, range: TextRange) -> TextRange {
        TextRange::new(self.local(range.start), self.local(range.end.max(range.start)))
    }
}

/// The analysis of one version of a document, with the text it read.
pub struct Analysed {
    pub version: i32,
    /// The text in one piece, made on first use (not at every edit).
    text: OnceLock<Arc<String>>,
    /// Its length in bytes.
    pub len: usize,
    pub rope: Rope,
    pub form: SourceForm,
    /// The document's name in the analyses (its URI).
    pub name: String,
    /// In text order, covering the text; at least one.
    pub chunks: Vec<Placed>,
    /// The modules it USEs that were found nowhere (lower case), computed
    /// with the analysis: `didChange` of another document checks them.
    pub(super) unknown_modules: Vec<String>,
    config: ModelConfig,
    severities: Vec<crate::config::SeverityOverride>,
    /// The chunks that define modules, by their name as modules of other files.
    siblings: HashMap<Arc<str>, usize>,
    /// How many chunks this analysis computed (the others came from the previous one).
    pub computed_chunks: usize,
    whole: OnceLock<Arc<FileAnalysis>>,
    /// Where its INCLUDE lines read, for the program `hpf.run` builds.
    includes: Includes,
    /// Whether the procedures of host units are chunks of their own.
    split: bool,
}

impl Analysed {
    /// The whole text.
    pub fn text(&self) -> Arc<String> {
        self.text.get_or_init(|| Arc::new(self.rope.to_string())).clone()
    }

    /// The chunk holding `offset` (the last one for the end of the text).
    pub fn chunk_at(&self, offset: usize) -> &Placed {
        let at = self.chunks.partition_point(|it| it.start <= offset);
        &self.chunks[at.saturating_sub(1)]
    }

    /// The full analysis of a chunk of this document, for a request: made
    /// again if it was dropped, and then the least used ones are dropped.
    pub fn analysis_of(&self, placed: &Placed) -> Arc<FileAnalysis> {
        let kept = placed.chunk.kept_analysis().is_some();
        let analysis = placed.chunk.analysis();
        if !kept {
            evict_analyses(&self.chunks);
        }
        analysis
    }

    /// Whether the chunk of `placed` is a host's, with procedures' chunks after it.
    pub fn hosts(&self, placed: &Placed) -> bool {
        let idx = self.chunks.partition_point(|it| it.start < placed.start);
        self.chunks.get(idx + 1).is_some_and(|it| it.kind == syntax::ChunkKind::Procedure)
    }

    /// The sibling chunk that provides the module file `name`, or the host
    /// chunk of that name ([`Context::host`]), if it is one.
    pub fn sibling(&self, name: &str) -> Option<&Placed> {
        self.siblings.get(name).map(|idx| &self.chunks[*idx])
    }

    /// The files of other documents whose modules the chunks USE.
    pub fn externals(&self) -> impl Iterator<Item = &Arc<ExternalFile>> {
        self.chunks
            .iter()
            .flat_map(|it| it.chunk.lookups.iter().filter_map(|(_, found)| found.as_ref()))
            .filter(|it| !self.siblings.contains_key(&*it.name))
    }

    /// The analysis of the whole text as one file (what `hpf-ls check`
    /// computes), made on first use: positions are document offsets.
    pub fn whole(&self) -> Arc<FileAnalysis> {
        self.whole
            .get_or_init(|| {
                let mut externals: Vec<Arc<ExternalFile>> = Vec::new();
                for external in self.externals() {
                    if !externals.iter().any(|it| Arc::ptr_eq(it, external)) {
                        externals.push(external.clone());
                    }
                }
                let modules = Externals(externals);
                let file = syntax::parse(&self.text(), self.form);
                let mut analysis = analysis::analyze_file_with(file, self.config, &modules);
                crate::config::apply_severities(&mut analysis.diagnostics, &self.severities);
                Arc::new(analysis)
            })
            .clone()
    }

    /// The program the backend lowers: the whole text with its INCLUDE
    /// lines expanded (headers with COMMON blocks made modules, as
    /// `hpf-ls build` does) and preprocessed, analysed, and its source map.
    pub fn program(&self) -> (FileAnalysis, syntax::include::Expanded) {
        let includes = &self.includes;
        let name = includes.path.as_ref().map_or(self.name.clone(), |it| it.display().to_string());
        let root = syntax::include::Root { name, text: self.text().to_string(), cpp: includes.cpp };
        let options = syntax::include::ExpandOptions {
            form: self.form,
            defines: includes.defines.clone(),
            common_headers_as_modules: true,
        };
        let overlay = |path: &std::path::Path| includes.open_text(path);
        let loader = crate::sources::DiskLoader { dirs: &includes.dirs, overlay: &overlay, relative_names: false };
        let expanded = syntax::include::expand(&[root], &options, &loader);
        let mut externals: Vec<Arc<ExternalFile>> = Vec::new();
        for external in self.externals() {
            if !externals.iter().any(|it| Arc::ptr_eq(it, external)) {
                externals.push(external.clone());
            }
        }
        let file = syntax::parse(&expanded.text, self.form);
        let mut analysis = analysis::analyze_file_with(file, self.config, &Externals(externals));
        analysis.diagnostics.extend(expanded.diagnostics.iter().cloned());
        crate::config::apply_severities(&mut analysis.diagnostics, &self.severities);
        (analysis, expanded)
    }

    /// The diagnostics of every chunk in document offsets, in text order.
    pub fn diagnostics(&self) -> Vec<syntax::Diagnostic> {
        let mut res = Vec::new();
        for placed in &self.chunks {
            for diagnostic in placed.chunk.diagnostics.iter() {
                let mut diagnostic = diagnostic.clone();
                diagnostic.range = placed.shift(diagnostic.range);
                for related in &mut diagnostic.related {
                    match related.file.as_deref().and_then(|name| self.sibling(name)) {
                        Some(sibling) => {
                            related.range = sibling.global(related.range);
                            related.file = None;
                        }
                        None if related.file.is_none() => related.range = placed.shift(related.range),
                        None => {}
                    }
                }
                res.push(diagnostic);
            }
        }
        res
    }

    /// Where the host unit of the chunk at `idx` (a host's chunk) ends: its
    /// END, in its last procedure's chunk; the end of that chunk when it has none.
    fn host_end(&self, idx: usize) -> usize {
        let procedures = self.chunks[idx + 1..].iter().take_while(|it| it.kind == syntax::ChunkKind::Procedure);
        match procedures.last() {
            Some(last) => last.chunk.host_end.map_or(last.end(), |it| last.start + it),
            None => self.chunks[idx].end(),
        }
    }

    /// A range a chunk keeps in document offsets, [`OPEN_END`] resolved.
    fn shift_open(&self, idx: usize, range: TextRange) -> TextRange {
        let placed = &self.chunks[idx];
        match range.end {
            OPEN_END => TextRange::new(range.start + placed.start, self.host_end(idx)),
            _ => placed.shift(range),
        }
    }

    /// The folding ranges of every chunk in document offsets, in text order.
    pub fn folding_ranges(&self) -> Vec<analysis::ide::FoldingRange> {
        let mut res = Vec::new();
        for (idx, placed) in self.chunks.iter().enumerate() {
            res.extend(
                placed
                    .chunk
                    .folding_ranges
                    .iter()
                    .map(|it| analysis::ide::FoldingRange { range: self.shift_open(idx, it.range), kind: it.kind }),
            );
        }
        res
    }

    /// The document symbols of every chunk in document offsets: a
    /// procedure's under its host's, as the analysis of the whole text has them.
    pub fn document_symbols(&self) -> Vec<analysis::ide::DocumentSymbol> {
        fn shift(symbol: &mut analysis::ide::DocumentSymbol, analysed: &Analysed, idx: usize) {
            symbol.range = analysed.shift_open(idx, symbol.range);
            symbol.selection = analysed.chunks[idx].shift(symbol.selection);
            symbol.children.iter_mut().for_each(|it| shift(it, analysed, idx));
        }
        let mut res: Vec<analysis::ide::DocumentSymbol> = Vec::new();
        // The host's symbol, while its procedures' chunks follow.
        let mut host: Option<usize> = None;
        for (idx, placed) in self.chunks.iter().enumerate() {
            let mut symbols = placed.chunk.symbols.to_vec();
            symbols.iter_mut().for_each(|it| shift(it, self, idx));
            match host {
                Some(at) if placed.kind == syntax::ChunkKind::Procedure => {
                    // What follows the host's END (text that does not parse) is top-level.
                    let ends = placed.chunk.host_end.map(|it| it + placed.start);
                    let after = symbols.iter().position(|it| ends.is_some_and(|end| it.range.start >= end));
                    let after = symbols.split_off(after.unwrap_or(symbols.len()));
                    res[at].children.extend(symbols);
                    if !after.is_empty() {
                        res.extend(after);
                        host = None;
                    }
                }
                _ => {
                    // The host's symbol is open (its procedures follow); the
                    // symbols of interface bodies in its specification part
                    // come after it, top-level as in the whole text's analysis.
                    let open = placed.chunk.symbols.iter().rposition(|it| it.range.end == OPEN_END);
                    host = open.map(|it| res.len() + it);
                    res.extend(symbols);
                }
            }
        }
        res
    }
}

/// Modules found before, by the files that define them.
struct Externals(Vec<Arc<ExternalFile>>);

impl ModuleResolver for Externals {
    fn find_module(&self, key: &str) -> Option<Arc<ExternalFile>> {
        self.0.iter().find(|it| it.module(key).is_some()).cloned()
    }
}

/// The resolver of one chunk: the modules of the other chunks, then
/// `outer` (other documents, the disk); every lookup is recorded.
struct ChunkModules<'a> {
    siblings: &'a HashMap<String, Arc<ExternalFile>>,
    outer: &'a (dyn ModuleResolver + Sync),
    lookups: Mutex<Vec<(String, Option<Arc<ExternalFile>>)>>,
}

impl ChunkModules<'_> {
    fn find(&self, key: &str) -> Option<Arc<ExternalFile>> {
        self.siblings.get(key).cloned().or_else(|| self.outer.find_module(key))
    }

    /// The lookups give what they gave before.
    fn same_as(&self, lookups: &[(String, Option<Arc<ExternalFile>>)]) -> bool {
        lookups.iter().all(|(key, found)| match (self.find(key), found) {
            (None, None) => true,
            (Some(now), Some(before)) => Arc::ptr_eq(&now, before),
            _ => false,
        })
    }
}

impl ModuleResolver for ChunkModules<'_> {
    fn find_module(&self, key: &str) -> Option<Arc<ExternalFile>> {
        let found = self.find(key);
        self.lookups.lock().unwrap_or_else(|it| it.into_inner()).push((key.to_string(), found.clone()));
        found
    }
}

/// The lowering of one chunk, before its analysis.
struct Lowered {
    text: Arc<str>,
    context: Option<Context>,
    file: syntax::SourceFile,
    tree: Option<(String, Tree)>,
    expansion: Option<Arc<Expansion>>,
}

/// Parses and lowers one chunk, reparsing from the tree of the chunk it
/// replaces when that tree had no syntax error (tree-sitter's recovery
/// depends on the tree it starts from: a text with errors is parsed fresh,
/// so that an edit ends where opening the same text does).
#[allow(clippy::too_many_arguments)]
fn lower_chunk<'a>(
    text: Arc<str>,
    context: Option<Context>,
    form: SourceForm,
    replaced: Option<&Chunk>,
    // Asked only when the chunk is parsed without a tree of its own.
    host_tree: impl FnOnce() -> Option<&'a (String, Tree)>,
    keep_tree: bool,
    includes: &Includes,
    preprocessed: Option<String>,
) -> Lowered {
    let source = context.as_ref().map_or(&*text, |it| it.text());
    if source.len() > syntax::MAX_ANALYSED_BYTES {
        let file = syntax::parse(source, form);
        return Lowered { text, context, file, tree: None, expansion: None };
    }
    if let Some(expansion) = includes.expand(source, preprocessed, form) {
        // Parsed afresh: the tree of the chunk's own text is not the expansion's.
        let file = syntax::parse(&expansion.text, form);
        return Lowered { text, context, file, tree: None, expansion: Some(Arc::new(expansion)) };
    }
    let parser_text = syntax::parser_text(source, form);
    let parser_text = parser_text.as_ref();
    let old = replaced.and_then(|it| it.tree.lock().unwrap_or_else(|it| it.into_inner()).take());
    let tree = match old {
        Some((old_parser_text, mut old_tree)) if !old_tree.root_node().has_error() => {
            match syntax::input_edit(&old_parser_text, parser_text) {
                Some(edit) => {
                    old_tree.edit(&edit);
                    let tree = syntax::parse_tree(parser_text, Some(&old_tree));
                    if tree.root_node().has_error() {
                        syntax::parse_tree(parser_text, None)
                    } else {
                        tree
                    }
                }
                None => old_tree,
            }
        }
        // A procedure's text in its host's: parsed from the tree of the host's
        // text alone (closed by its END), which tree-sitter reuses, instead of
        // parsing the host's part again for every procedure of an open.
        _ => {
            match host_tree().and_then(|(host_text, tree)| Some((syntax::input_edit(host_text, parser_text)?, tree))) {
                Some((edit, host_tree)) => {
                    let mut host_tree = host_tree.clone();
                    host_tree.edit(&edit);
                    let tree = syntax::parse_tree(parser_text, Some(&host_tree));
                    if tree.root_node().has_error() {
                        syntax::parse_tree(parser_text, None)
                    } else {
                        tree
                    }
                }
                None => syntax::parse_tree(parser_text, None),
            }
        }
    };
    let file = syntax::lower_tree(source, parser_text, form, &tree);
    // Freed at once otherwise: an open lowers every chunk before it analyses them.
    let tree = keep_tree.then(|| (parser_text.to_string(), tree));
    Lowered { text, context, file, tree, expansion: None }
}

impl Lowered {
    /// The text its tree was parsed from: the expansion or the context, if any.
    fn analysed_text(&self) -> &str {
        match (&self.expansion, &self.context) {
            (Some(expansion), _) => &expansion.text,
            (None, Some(context)) => context.text(),
            (None, None) => &self.text,
        }
    }
}

/// The module key a chunk's file defines first, lower case.
fn first_module(file: &syntax::SourceFile) -> Option<String> {
    file.units.iter().find(|it| it.kind == syntax::UnitKind::Module).and_then(|it| it.name.as_ref()).map(|it| it.key())
}

fn analyse_file(
    file: syntax::SourceFile,
    problems: &[syntax::Diagnostic],
    config: ModelConfig,
    severities: &[crate::config::SeverityOverride],
    modules: &dyn ModuleResolver,
) -> FileAnalysis {
    let mut analysis = analysis::analyze_file_with(file, config, modules);
    if !problems.is_empty() {
        analysis.diagnostics.extend(problems.iter().cloned());
        analysis.diagnostics.sort_by_key(|it| (it.range.start, it.range.end, it.code.as_str()));
    }
    crate::config::apply_severities(&mut analysis.diagnostics, severities);
    // Built here, on the analysis worker: hover, definition, references and
    // rename need the occurrence index, and building it lazily made the
    // first hover after every edit pay for it (3x the idle latency under load).
    analysis::ide::occurrences(&analysis);
    analysis
}

/// Where `rope` differs from the text of `previous`: the length of their
/// common prefix, and where the common suffix begins in `rope`. The
/// previous chunks' texts and the rope's pieces are walked side by side,
/// from the start then from the end (memcmp of the pieces' common parts; no
/// lookup in the rope per chunk: thousands of chunks at 100k lines).
fn edit_region(previous: &Analysed, rope: &Rope) -> (usize, usize) {
    // Offsets of the old text need not fall on characters of the new one:
    // bytes are compared, never slices of the rope.
    let (old_len, new_len) = (previous.len, rope.len_bytes());
    let max_prefix = old_len.min(new_len);
    let mut prefix = 0;
    let mut pieces = rope.chunks();
    let mut new: &[u8] = &[];
    'prefix: for placed in &previous.chunks {
        let mut old = placed.chunk.text.as_bytes();
        while !old.is_empty() {
            while new.is_empty() {
                match pieces.next() {
                    Some(piece) => new = piece.as_bytes(),
                    None => break 'prefix,
                }
            }
            let common = old.len().min(new.len());
            if old[..common] != new[..common] {
                prefix += old.iter().zip(new).take_while(|(a, b)| a == b).count();
                break 'prefix;
            }
            prefix += common;
            (old, new) = (&old[common..], &new[common..]);
        }
    }
    let prefix = prefix.min(max_prefix);
    let max_suffix = max_prefix - prefix;
    let mut suffix = 0;
    let (mut pieces, _, _, _) = rope.chunks_at_byte(new_len);
    let mut new: &[u8] = &[];
    'suffix: for placed in previous.chunks.iter().rev() {
        let mut old = placed.chunk.text.as_bytes();
        while !old.is_empty() && suffix < max_suffix {
            while new.is_empty() {
                match pieces.prev() {
                    Some(piece) => new = piece.as_bytes(),
                    None => break 'suffix,
                }
            }
            let common = old.len().min(new.len()).min(max_suffix - suffix);
            let (old_end, new_end) = (&old[old.len() - common..], &new[new.len() - common..]);
            if old_end != new_end {
                suffix += old_end.iter().rev().zip(new_end.iter().rev()).take_while(|(a, b)| a == b).count();
                break 'suffix;
            }
            suffix += common;
            (old, new) = (&old[..old.len() - common], &new[..new.len() - common]);
        }
        if suffix >= max_suffix {
            break;
        }
    }
    (prefix, new_len - suffix)
}

/// The chunk starts of `rope`, an edit of the text of `previous`: the
/// starts of `previous` before the chunk before the edit, then a scan from
/// there until it meets a start of `previous` after the edit in the state
/// it had there, then the starts of `previous` after it, moved (the whole
/// text is neither copied nor scanned again at every keystroke; the result
/// is the same).
fn rescan(previous: &Analysed, rope: &Rope, (prefix, edit_end): (usize, usize)) -> Vec<syntax::ChunkStart> {
    let new_len = rope.len_bytes();
    let old_starts: Vec<syntax::ChunkStart> =
        previous.chunks.iter().map(|it| syntax::ChunkStart { at: it.start, kind: it.kind }).collect();
    // The chunk before the one the edit begins in: its header is before the edit.
    let holding = old_starts.partition_point(|it| it.at <= prefix).saturating_sub(1);
    let resume = holding.saturating_sub(1);
    let from = old_starts[resume];
    let delta = new_len as isize - previous.len as isize;
    // The text from there to a little after the edit, all of it if that is not enough.
    // On a character: the window is a slice of the rope.
    let mut windows = WINDOWS_AFTER_EDIT.iter();
    let mut window_end = new_len;
    if let Some(window) = windows.next() {
        window_end = rope.char_to_byte(rope.byte_to_char((edit_end + window).min(new_len)));
    }
    let local_from = syntax::ChunkStart { at: 0, kind: from.kind };
    let (mut starts, synced) = loop {
        let window = rope.byte_slice(from.at..window_end).to_string();
        let parser_text = syntax::parser_text(&window, previous.form);
        let (starts, synced) = syntax::chunks_from(&parser_text, previous.form, previous.split, local_from, |start| {
            let at = from.at + start.at;
            let old = syntax::ChunkStart { at: at.wrapping_sub_signed(delta), kind: start.kind };
            at >= edit_end && old_starts.binary_search_by_key(&old.at, |it| it.at).is_ok_and(|it| old_starts[it] == old)
        });
        if synced.is_some() || window_end == new_len {
            break (starts, synced);
        }
        window_end = match windows.next() {
            Some(window) => rope.char_to_byte(rope.byte_to_char((edit_end + window).min(new_len))),
            None => new_len,
        };
    };
    starts.iter_mut().for_each(|it| it.at += from.at);
    let mut res = old_starts[..resume].to_vec();
    res.append(&mut starts);
    if let Some(synced) = synced {
        let synced = from.at + synced;
        let old_synced = synced.wrapping_sub_signed(delta);
        let at = old_starts.partition_point(|it| it.at < old_synced);
        res.extend(
            old_starts[at..]
                .iter()
                .map(|it| syntax::ChunkStart { at: it.at.wrapping_add_signed(delta), kind: it.kind }),
        );
    }
    res
}

/// How far past an edit the rescan reads, one after the other, before it
/// reads the rest (a procedure is usually well under the first).
const WINDOWS_AFTER_EDIT: [usize; 2] = [4 * 1024, 64 * 1024];

/// What a chunk of a new version needs.
enum Job {
    /// Lowered already (it defines a module): its analysis.
    Analyse(Box<Lowered>),
    /// Its text (which changed).
    LowerAndAnalyse(String),
    /// Its text did not, a module it USEs did.
    Reanalyse(Arc<Chunk>),
}

/// Chunks per thread below which an analysis stays on one thread.
const PARALLEL_FROM: usize = 16;

/// Drops the full analyses of all but the [`KEEP_ANALYSES`] chunks used last.
fn evict_analyses(chunks: &[Placed]) {
    let mut kept: Vec<(u64, &Chunk)> =
        chunks.iter().filter_map(|it| it.chunk.kept_analysis().map(|used| (used, &*it.chunk))).collect();
    if kept.len() <= KEEP_ANALYSES {
        return;
    }
    kept.sort_by_key(|(used, _)| std::cmp::Reverse(*used));
    for (_, chunk) in &kept[KEEP_ANALYSES..] {
        chunk.drop_analysis();
    }
}

/// Analyses `rope` chunk by chunk, taking the chunks whose text and
/// modules did not change from `previous`.
pub fn analyse(
    version: i32,
    rope: Rope,
    form: SourceForm,
    name: &str,
    previous: Option<&Analysed>,
    settings: &Settings,
    outside: Outside<'_>,
) -> Analysed {
    let Outside { modules, includes } = outside;
    let started = std::time::Instant::now();
    let config = ModelConfig { number_of_processors: settings.processors };
    let len = rope.len_bytes();
    let text = OnceLock::new();
    // A preprocessed text is not cut at procedures: what is active depends on all the text before.
    let split = !includes.cpp;
    let previous = previous.filter(|it| it.form == form && it.len <= syntax::MAX_ANALYSED_BYTES && it.split == split);
    let mut region_at = std::time::Duration::ZERO;
    let (starts, edit) = match previous {
        _ if len > syntax::MAX_ANALYSED_BYTES => {
            (vec![syntax::ChunkStart { at: 0, kind: syntax::ChunkKind::Unit }], None)
        }
        Some(previous) => {
            let edit = edit_region(previous, &rope);
            region_at = started.elapsed();
            (rescan(previous, &rope, edit), Some(edit))
        }
        None => {
            // Opened: the whole text is read anyway.
            let whole = text.get_or_init(|| Arc::new(rope.to_string()));
            (syntax::chunks(&syntax::parser_text(whole, form), form, split), None)
        }
    };
    let ranges: Vec<(usize, usize)> =
        starts.iter().enumerate().map(|(idx, start)| (start.at, starts.get(idx + 1).map_or(len, |it| it.at))).collect();
    let kinds: Vec<syntax::ChunkKind> = starts.iter().map(|it| it.kind).collect();
    // The host chunk of each procedure's, and whether a chunk is a host's.
    let mut host_of: Vec<Option<usize>> = Vec::with_capacity(kinds.len());
    for (idx, kind) in kinds.iter().enumerate() {
        let host = match kind {
            syntax::ChunkKind::Unit => None,
            syntax::ChunkKind::Procedure => host_of.last().copied().flatten().or(idx.checked_sub(1)),
        };
        host_of.push(host);
    }
    let hosts = |idx: usize| kinds.get(idx + 1) == Some(&syntax::ChunkKind::Procedure);
    let old: &[Placed] = previous.map_or(&[], |it| it.chunks.as_slice());
    // Before the edit or after it, a chunk with the range it had is the same text.
    let delta = len as isize - previous.map_or(0, |it| it.len) as isize;
    let same = |new: usize, old: &Placed| {
        let Some((prefix, edit_end)) = edit else { return false };
        let (start, end) = ranges[new];
        let old_range = (old.start, old.end());
        kinds[new] == old.kind
            && ((end <= prefix && old_range == (start, end))
                || (start >= edit_end
                    && old_range == (start.wrapping_sub_signed(delta), end.wrapping_sub_signed(delta))))
    };
    let mut prefix = 0;
    while prefix < ranges.len() && prefix < old.len() && same(prefix, &old[prefix]) {
        prefix += 1;
    }
    let mut suffix = 0;
    while suffix < ranges.len() - prefix
        && suffix < old.len() - prefix
        && same(ranges.len() - 1 - suffix, &old[old.len() - 1 - suffix])
    {
        suffix += 1;
    }
    let changed = prefix..ranges.len() - suffix;
    let matched = started.elapsed();
    let old_changed = &old[prefix..old.len() - suffix];
    // A chunk replaced one for one (an edit inside a unit) reparses from its tree.
    let replaced = |idx: usize| (old_changed.len() == changed.len()).then(|| &*old_changed[idx - prefix].chunk);

    let keep_trees = changed.len() <= KEEP_TREES_UP_TO;
    // Lower the changed chunks first: their modules are needed by the others.
    // Only those that define modules (a cheap scan says which): the others
    // are lowered one at a time as they are analysed, so that an open never
    // holds the syntax of every unit at once (160 MB at 100k lines).
    // A preprocessed document: its text as cpp leaves it, offsets kept
    // (directives and inactive regions are comments, which editors dim).
    let (preprocessed, inactive) = match includes.cpp && len <= syntax::MAX_ANALYSED_BYTES {
        true => {
            let whole = text.get_or_init(|| Arc::new(rope.to_string()));
            let (masked, inactive) = includes.mask(whole, form);
            (Some(masked), inactive)
        }
        false => (None, Vec::new()),
    };
    let preprocessed_chunk = |idx: usize| {
        let (start, end) = ranges[idx];
        preprocessed.as_ref().map(|it| it[start..end].to_string())
    };
    let kept_of = |idx: usize| &old[if idx < prefix { idx } else { idx + old.len() - ranges.len() }].chunk;
    // The texts of the hosts' chunks, and their names among the siblings.
    // Indexed by chunk (most are not hosts): no hashing per chunk at every edit.
    let mut host_texts: Vec<Option<(Arc<str>, Arc<str>)>> = (0..ranges.len()).map(|_| None).collect();
    // A host is a unit's chunk with procedures' chunks after it (`hosts` also
    // holds for a procedure's chunk with more after it, where its host does not end):
    // not thousands of names and hashes of procedures' texts at every edit.
    for idx in (0..ranges.len()).filter(|it| kinds[*it] == syntax::ChunkKind::Unit && hosts(*it)) {
        let host_text: Arc<str> = if changed.contains(&idx) {
            let (start, end) = ranges[idx];
            match text.get() {
                Some(whole) => whole[start..end].into(),
                None => rope.byte_slice(start..end).to_string().into(),
            }
        } else {
            kept_of(idx).text.clone()
        };
        let host_name: Arc<str> = format!("{name}#host-{:016x}", text_hash(&host_text)).into();
        host_texts[idx] = Some((host_text, host_name));
    }
    // A procedure's host's name among the siblings, which names its text.
    let host_name_of = |idx: usize| {
        host_of[idx]
            .filter(|_| kinds[idx] == syntax::ChunkKind::Procedure)
            .and_then(|host| host_texts[host].as_ref())
            .map(|it| &it.1)
    };
    // The tree of each host's text alone (closed by an END, as its chunk is
    // analysed), parsed when a procedure of it is first lowered without a
    // tree of its own; `None` when it has a syntax error (a fresh parse then).
    type HostTree = OnceLock<Option<(String, Tree)>>;
    let host_trees: Vec<(usize, HostTree)> =
        host_texts.iter().enumerate().filter(|(_, it)| it.is_some()).map(|(idx, _)| (idx, OnceLock::new())).collect();
    let host_tree = |idx: usize| -> Option<&(String, Tree)> {
        let host = host_of[idx].filter(|_| kinds[idx] == syntax::ChunkKind::Procedure)?;
        let (host_text, _) = host_texts[host].as_ref()?;
        let at = host_trees.binary_search_by_key(&host, |it| it.0).ok()?;
        host_trees[at]
            .1
            .get_or_init(|| {
                let context = Context::new(host_text.clone(), None, false, form);
                let parser_text = syntax::parser_text(context.text(), form).into_owned();
                let tree = syntax::parse_tree(&parser_text, None);
                (!tree.root_node().has_error()).then_some((parser_text, tree))
            })
            .as_ref()
    };
    let context_of = |idx: usize, own_text: &Arc<str>| {
        let procedure = kinds[idx] == syntax::ChunkKind::Procedure;
        if !procedure && !hosts(idx) {
            return None;
        }
        let host = host_of[idx].filter(|_| procedure).and_then(|host| host_texts[host].as_ref());
        Some(Context::new(own_text.clone(), host.map(|(text, name)| (text.clone(), name.clone())), !hosts(idx), form))
    };
    let lower = |idx: usize, chunk_text: String| {
        let chunk_text: Arc<str> = chunk_text.into();
        let context = context_of(idx, &chunk_text);
        lower_chunk(
            chunk_text,
            context,
            form,
            replaced(idx),
            || host_tree(idx),
            keep_trees,
            includes,
            preprocessed_chunk(idx),
        )
    };
    // The changed chunks' texts, and the lowering of those that define modules.
    // Indexed from the first changed chunk: not one (large) slot per chunk at every edit.
    let mut texts: Vec<Option<String>> = changed.clone().map(|_| None).collect();
    let mut lowered: Vec<Option<Lowered>> = changed.clone().map(|_| None).collect();
    for idx in changed.clone() {
        let (start, end) = ranges[idx];
        let chunk_text = match text.get() {
            Some(whole) => whole[start..end].to_string(),
            None => rope.byte_slice(start..end).to_string(),
        };
        if crate::modules::defined_modules(&chunk_text).is_empty() {
            texts[idx - changed.start] = Some(chunk_text);
        } else {
            lowered[idx - changed.start] = Some(lower(idx, chunk_text));
        }
    }
    let lowered_at = started.elapsed();
    let mut siblings: HashMap<String, Arc<ExternalFile>> = HashMap::new();
    let mut provides: Vec<Option<Arc<ExternalFile>>> = Vec::with_capacity(ranges.len());
    for idx in 0..ranges.len() {
        let provided = if changed.contains(&idx) {
            lowered[idx - changed.start].as_ref().and_then(|lowered| {
                let key = first_module(&lowered.file)?;
                Some(Arc::new(ExternalFile {
                    name: format!("{name}#module-{key}").into(),
                    // The text its tree was parsed from: the expansion or the context, if any.
                    text: lowered.analysed_text().into(),
                    file: lowered.file.clone(),
                }))
            })
        } else {
            kept_of(idx).provides.clone()
        };
        if let Some(provided) = &provided {
            for unit in provided.file.units.iter().filter(|it| it.kind == syntax::UnitKind::Module) {
                if let Some(key) = unit.name.as_ref().map(|it| it.key()) {
                    siblings.entry(key).or_insert_with(|| provided.clone());
                }
            }
        }
        provides.push(provided);
    }

    // A procedure whose host changed, but no name it mentions: moved onto
    // the new host text. What changed is computed once per old and new host.
    // Also the lengths of the old and new host texts' common prefix and suffix.
    type HostChange = Option<(std::collections::HashSet<String>, usize, usize)>;
    // Few (one per host the edit changed): a list, the old host's name compared by pointer first.
    let mut host_changes: Vec<(Arc<str>, usize, HostChange)> = Vec::new();
    let mut rebase = |idx: usize, kept: &Chunk| -> Option<Chunk> {
        let host = host_of[idx].filter(|_| kinds[idx] == syntax::ChunkKind::Procedure)?;
        let (new_host, new_name) = host_texts[host].as_ref()?;
        let old = kept.context.as_ref()?;
        let old_name = old.host.clone()?;
        if kept.expansion.is_some() {
            return None;
        }
        let old_host = &**old.host_text();
        let known = host_changes
            .iter()
            .position(|(name, at, _)| *at == host && (Arc::ptr_eq(name, &old_name) || *name == old_name));
        let known = match known {
            Some(known) => known,
            None => {
                let change = (|| {
                    let changed = syntax::host_spec::changed_names(old_host, new_host, form)?;
                    // Ranges of the old host text before or after what differs in the new one.
                    let prefix = old_host.bytes().zip(new_host.bytes()).take_while(|(a, b)| a == b).count();
                    let max_suffix = old_host.len().min(new_host.len()) - prefix;
                    let suffix = old_host
                        .bytes()
                        .rev()
                        .zip(new_host.bytes().rev())
                        .take(max_suffix)
                        .take_while(|(a, b)| a == b)
                        .count();
                    Some((changed, prefix, suffix))
                })();
                host_changes.push((old_name, host, change));
                host_changes.len() - 1
            }
        };
        let (changed, prefix, suffix) = host_changes[known].2.as_ref()?;
        let (prefix, suffix) = (*prefix, *suffix);
        if changed.iter().any(|name| kept.names.as_ref().is_none_or(|it| it.contains(name.as_str()))) {
            return None;
        }
        let old_after = old_host.len() - suffix;
        let host_range = |range: TextRange| {
            if range.end <= prefix {
                Some((range, true))
            } else if range.start >= old_after {
                let moved = |at: usize| at - old_after + (new_host.len() - suffix);
                Some((TextRange::new(moved(range.start), moved(range.end)), false))
            } else {
                None
            }
        };
        let context = Context::new(kept.text.clone(), Some((new_host.clone(), new_name.clone())), old.closed(), form);
        kept.rebased(context, host_range)
    };
    let severities = Arc::new(settings.severities());
    // Full analyses are kept for an edit's chunks, not for all of an open's.
    let keep = changed.len() <= KEEP_ANALYSES;
    let chunk_modules = || ChunkModules { siblings: &siblings, outer: modules, lookups: Mutex::new(Vec::new()) };
    // What each chunk needs: nothing (the previous one), or an analysis.
    let mut chunks: Vec<Option<Arc<Chunk>>> = Vec::with_capacity(ranges.len());
    let mut jobs: Vec<(usize, Job)> = Vec::new();
    #[allow(clippy::needless_range_loop)] // `idx` indexes the old chunks, and the changed ones from their first
    for idx in 0..ranges.len() {
        let slot = idx.checked_sub(changed.start).filter(|it| *it < changed.len());
        if let Some(lowered) = slot.and_then(|it| lowered[it].take()) {
            jobs.push((idx, Job::Analyse(Box::new(lowered))));
        } else if let Some(chunk_text) = slot.and_then(|it| texts[it].take()) {
            jobs.push((idx, Job::LowerAndAnalyse(chunk_text)));
        } else if chunk_modules().same_as(&kept_of(idx).lookups)
            && kept_of(idx).context.as_ref().map(Context::closed)
                == (kinds[idx] == syntax::ChunkKind::Procedure || hosts(idx)).then_some(!hosts(idx))
            && kept_of(idx).expansion.as_ref().is_none_or(|it| includes.unchanged(it))
            && kept_of(idx).expansion.as_ref().and_then(|it| it.preprocessed.as_ref())
                == preprocessed_chunk(idx).as_ref()
        {
            let kept = kept_of(idx);
            // The same host text; an edit elsewhere may also give a procedure
            // another host (an END made a statement keeps the unit before it open).
            if kept.context.as_ref().and_then(|it| it.host.as_ref()) == host_name_of(idx) {
                // Only the chunks being edited keep a tree (134 MB for all at 100k lines).
                kept.tree.lock().unwrap_or_else(|it| it.into_inner()).take();
                chunks.push(Some(kept.clone()));
                continue;
            }
            if let Some(rebased) = rebase(idx, kept) {
                chunks.push(Some(Arc::new(rebased)));
                continue;
            }
            jobs.push((idx, Job::Reanalyse(kept.clone())));
        } else {
            // A module it USEs, or a file it includes, changed: analysed again.
            jobs.push((idx, Job::Reanalyse(kept_of(idx).clone())));
        }
        chunks.push(None);
    }
    let computed = jobs.len();
    let decided_at = started.elapsed();
    let run = |(idx, job): (usize, Job)| {
        let modules = chunk_modules();
        let (file, provided) = match job {
            Job::Analyse(lowered) => (*lowered, provides[idx].clone()),
            Job::LowerAndAnalyse(chunk_text) => (lower(idx, chunk_text), provides[idx].clone()),
            Job::Reanalyse(kept) => {
                let context = context_of(idx, &kept.text);
                let lowered = lower_chunk(
                    kept.text.clone(),
                    context,
                    form,
                    None,
                    || host_tree(idx),
                    false,
                    includes,
                    preprocessed_chunk(idx),
                );
                // A host's module, lowered again, is what its users find.
                let provided = match (&kept.provides, hosts(idx)) {
                    (Some(provided), true) => Some(Arc::new(ExternalFile {
                        name: provided.name.clone(),
                        text: lowered.analysed_text().into(),
                        file: lowered.file.clone(),
                    })),
                    _ => kept.provides.clone(),
                };
                (lowered, provided)
            }
        };
        let (Lowered { text, context, file, tree, expansion }, provided) = (file, provided);
        let problems = expansion.as_ref().map_or(&[][..], |it| &it.problems[..]);
        let analysis = Arc::new(analyse_file(file, problems, config, &severities, &modules));
        let lookups = modules.lookups.into_inner().unwrap_or_else(|it| it.into_inner());
        let mut chunk = Chunk::new(text, context, analysis, lookups, provided, tree, keep, expansion);
        // The regions `#if` leaves out fold.
        let (start, end) = ranges[idx];
        let left_out = inactive.iter().filter(|it| it.start >= start && it.end <= end);
        let stored = Arc::get_mut(&mut chunk.stored).expect("a chunk just made");
        let folds = Arc::make_mut(&mut stored.folding_ranges);
        folds.extend(left_out.map(|it| analysis::ide::FoldingRange {
            range: TextRange::new(it.start - start, it.end - start),
            kind: analysis::ide::FoldKind::Region,
        }));
        folds.sort_by_key(|it| (it.range.start, it.range.end));
        stored.severities = severities.clone();
        (idx, Arc::new(chunk))
    };
    // Many chunks (an open, an edit of a module every unit USEs) are
    // analysed on all cores; the threads inherit the workers' priority.
    let threads = std::thread::available_parallelism().map_or(1, |it| it.get()).min(jobs.len() / PARALLEL_FROM).max(1);
    let done: Vec<(usize, Arc<Chunk>)> = if threads == 1 {
        jobs.into_iter().map(run).collect()
    } else {
        // Each thread takes the next job when it is done with one: at
        // idle priority on a shared machine one thread may wait for a core
        // while the other runs, and fixed shares made the open wait for the
        // slower one's whole share.
        let queue = Mutex::new(jobs.into_iter());
        let next = || queue.lock().unwrap_or_else(|it| it.into_inner()).next();
        std::thread::scope(|scope| {
            let handles: Vec<_> =
                (0..threads).map(|_| scope.spawn(|| std::iter::from_fn(next).map(run).collect::<Vec<_>>())).collect();
            handles
                .into_iter()
                .flat_map(|it| it.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                .collect()
        })
    };
    for (idx, chunk) in done {
        chunks[idx] = Some(chunk);
    }
    let ran_at = started.elapsed();
    let chunks: Vec<Placed> = chunks
        .into_iter()
        .zip(&ranges)
        .enumerate()
        .map(|(idx, (chunk, (start, _)))| Placed {
            start: *start,
            // The chunks before and after the edit keep their lines, moved by
            // the lines it added (thousands of rope lookups otherwise).
            line: match previous {
                Some(_) if idx < prefix => old[idx].line,
                Some(previous) if idx >= ranges.len() - suffix => {
                    let old_line = old[idx + old.len() - ranges.len()].line;
                    (old_line as isize + rope.len_lines() as isize - previous.rope.len_lines() as isize) as u32
                }
                _ => rope.byte_to_line(*start) as u32,
            },
            chunk: chunk.expect("every chunk kept or computed"),
            kind: kinds[idx],
            host: host_of[idx].map(|host| ranges[host].0),
        })
        .collect();
    let analysed_at = started.elapsed();
    evict_analyses(&chunks);
    let mut unknown_modules: Vec<String> =
        chunks.iter().flat_map(|it| it.chunk.unknown_modules.iter().cloned()).collect();
    unknown_modules.sort();
    unknown_modules.dedup();
    let ms = |it: std::time::Duration| it.as_secs_f64() * 1e3;
    tracing::debug!(
        "analysed {name} v{version}: {} chunks, {computed} computed; edit region {:.2} ms, rescan and match {:.2} ms, lower {:.2} ms, keep or rebase {:.2} ms, analyse {:.2} ms, place {:.2} ms, rest {:.2} ms",
        chunks.len(),
        ms(region_at),
        ms(matched.saturating_sub(region_at)),
        ms(lowered_at - matched),
        ms(decided_at - lowered_at),
        ms(ran_at - decided_at),
        ms(analysed_at - ran_at),
        ms(started.elapsed() - analysed_at),
    );
    // The first chunk providing a name wins, as in `siblings` above.
    let mut sibling_chunks = HashMap::new();
    for (idx, placed) in chunks.iter().enumerate() {
        if let Some(provided) = &placed.chunk.provides {
            sibling_chunks.entry(provided.name.clone()).or_insert(idx);
        }
        if let Some((_, host_name)) = &host_texts[idx] {
            sibling_chunks.entry(host_name.clone()).or_insert(idx);
        }
    }
    Analysed {
        version,
        text,
        len,
        rope,
        form,
        name: name.to_string(),
        chunks,
        siblings: sibling_chunks,
        unknown_modules,
        config,
        severities: settings.severities(),
        computed_chunks: computed,
        whole: OnceLock::new(),
        includes: includes.clone(),
        split,
    }
}

/// A hash of a host's text, which names it among the siblings: the same text, the same name.
fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn settings() -> Settings {
        Settings { processors: Some(4), ..Settings::default() }
    }

    fn open(text: &str, form: SourceForm) -> Analysed {
        analyse(
            1,
            Rope::from_str(text),
            form,
            "file:///t.f90",
            None,
            &settings(),
            Outside { modules: &analysis::model::NoModules, includes: &Includes::default() },
        )
    }

    #[test]
    fn edit_region_is_the_common_prefix_and_suffix() {
        let base: String = (0..300).map(|it| format!("subroutine s{it}\n  x = {it}\nend subroutine s{it}\n")).collect();
        let previous = open(&base, SourceForm::Free);
        assert!(previous.chunks.len() > 100);
        let naive = |old: &str, new: &str| {
            let prefix = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
            let max_suffix = old.len().min(new.len()) - prefix;
            let suffix = old.bytes().rev().zip(new.bytes().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
            (prefix, new.len() - suffix)
        };
        let mut edits: Vec<String> = vec![String::new(), base.clone(), format!("{base}x"), format!("x{base}")];
        for at in [0, 1, 17, 500, base.len() / 2, base.len() - 3, base.len() - 1, base.len()] {
            let mut inserted = base.clone();
            inserted.insert_str(at, "  ! é\n");
            edits.push(inserted);
            let mut removed = base.clone();
            removed.replace_range(at..(at + 40).min(base.len()), "");
            edits.push(removed);
            edits.push(base[..at].to_string());
            edits.push(base[at..].to_string());
        }
        edits.push(base.replace("x = 7\n", "x = 77\n"));
        edits.push(base.replace("s1\n", "s1 \n"));
        for edited in &edits {
            assert_eq!(edit_region(&previous, &Rope::from_str(edited)), naive(&base, edited));
        }
    }

    #[test]
    fn chunked_diagnostics_are_those_of_the_whole_file_on_the_corpus() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
        let (mut several, mut hosts) = (0, 0);
        for dir in [corpus.clone(), corpus.join("errors")] {
            for entry in std::fs::read_dir(dir).expect("corpus") {
                let path = entry.expect("entry").path();
                let known = path.extension().is_some_and(|it| syntax::FORTRAN_EXTENSIONS.iter().any(|e| it == *e));
                if !path.is_file() || !known {
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("readable");
                let analysed = open(&text, SourceForm::from_path(&path));
                several += usize::from(analysed.chunks.len() > 1);
                hosts += usize::from(analysed.chunks.iter().any(|it| it.kind == syntax::ChunkKind::Procedure));
                assert_like_whole(&analysed, &path.display().to_string());
            }
        }
        assert!(several >= 5, "only {several} programs of several units");
        assert!(hosts >= 3, "only {hosts} programs with procedures after CONTAINS");
    }

    /// What the chunks keep is what the analysis of the whole text finds:
    /// diagnostics, semantic tokens, folds, symbols, inlay hints.
    fn assert_like_whole(analysed: &Analysed, name: &str) {
        let whole = analysed.whole();
        let text = analysed.text();
        assert_eq!(analysed.diagnostics(), whole.diagnostics, "{name}: diagnostics");
        let tokens: Vec<_> = analysed
            .chunks
            .iter()
            .flat_map(|placed| placed.chunk.semantic_tokens.iter().map(|it| (placed.shift(it.range), it.kind)))
            .collect();
        let whole_tokens: Vec<_> =
            analysis::ide::semantic_tokens(&whole, &text).into_iter().map(|it| (it.range, it.kind)).collect();
        assert_eq!(tokens, whole_tokens, "{name}: semantic tokens");
        let folds = |mut folds: Vec<analysis::ide::FoldingRange>| {
            let mut res: Vec<_> = folds.drain(..).map(|it| (it.range, it.kind)).collect();
            res.sort_by_key(|it| (it.0.start, it.0.end));
            res
        };
        assert_eq!(
            folds(analysed.folding_ranges()),
            folds(analysis::ide::folding_ranges(&whole, &text)),
            "{name}: folding ranges"
        );
        assert_eq!(
            format!("{:?}", analysed.document_symbols()),
            format!("{:?}", analysis::ide::document_symbols(&whole, &text)),
            "{name}: symbols"
        );
        let hints: Vec<_> = analysed
            .chunks
            .iter()
            .flat_map(|placed| placed.chunk.inlay_hints.iter().map(|it| (it.offset + placed.start, it.label.clone())))
            .collect();
        let whole_hints: Vec<_> = analysis::ide::inlay_hints(&whole, &text, ALL_HINTS, None)
            .into_iter()
            .map(|it| (it.offset, it.label))
            .collect();
        assert_eq!(hints, whole_hints, "{name}: inlay hints");
    }

    /// A module whose procedures use its templates and arrays, a main
    /// program with internal procedures, and a subroutine after them.
    const HOSTS: &str = "module grid\n  integer, parameter :: n = 16\n!HPF$ PROCESSORS p(4)\n!HPF$ TEMPLATE t(n)\n!HPF$ DISTRIBUTE t(BLOCK) ONTO p\n  real :: a(n), b(n)\n!HPF$ ALIGN a(i) WITH t(i)\n!HPF$ ALIGN b(i) WITH t(i)\ncontains\n  ! shifts b into a\n  subroutine shift\n    integer :: i\n    do i = 2, n\n      a(i) = b(i-1)\n    end do\n  end subroutine shift\n\n  subroutine remap\n!HPF$ REDISTRIBUTE t(CYCLIC)\n    a = 0.0\n  end subroutine remap\nend module grid\n\nprogram main\n  use grid\n  real :: c(n)\n!HPF$ ALIGN c(i) WITH t(i)\n  call shift\n  call fill\ncontains\n  subroutine fill\n    integer :: i\n    do i = 1, n - 1\n      c(i) = a(i+1)\n    end do\n  end subroutine fill\nend program main\n";

    #[test]
    fn submodule_procedures_and_fixed_form_hosts_are_analysed_as_the_whole_text() {
        let text = "module m\n  real :: a(8)\n!HPF$ DISTRIBUTE a(BLOCK)\n  interface\n    module subroutine g(x)\n      real :: x(8)\n    end subroutine\n  end interface\nend module m\nsubmodule (m) impl\n  real :: b(8)\n!HPF$ ALIGN b(i) WITH a(i)\ncontains\n  module procedure g\n    integer :: i\n    do i = 2, 8\n      b(i) = a(i-1) + x(i)\n    end do\n  end procedure g\n  subroutine h\n!HPF$ REDISTRIBUTE a(CYCLIC)\n  end subroutine\nend submodule impl\n";
        let opened = open(text, SourceForm::Free);
        assert_eq!(opened.chunks.iter().filter(|it| it.kind == syntax::ChunkKind::Procedure).count(), 2);
        assert_like_whole(&opened, "submodule");
        let fixed = "      PROGRAM P\n      REAL A(16), B(16)\nCHPF$ DISTRIBUTE A(BLOCK)\nCHPF$ ALIGN B(I) WITH A(I)\n      CALL S\n      CONTAINS\n      SUBROUTINE S\n      INTEGER I\n      DO I = 2, 16\n        A(I) = B(I-1)\n      END DO\n      END SUBROUTINE\n      END\n";
        let opened = open(fixed, SourceForm::Fixed { line_length: 72 });
        assert_eq!(opened.chunks.len(), 2);
        assert_like_whole(&opened, "fixed form");
    }

    /// A host whose specification part INCLUDEs a header is split too; its
    /// procedures see the header's arrays, and what the analysis finds in
    /// the header is published once, as when the host is one chunk (a
    /// preprocessed document, which is not split, is the reference).
    #[test]
    fn a_host_that_includes_a_header_is_split_and_analysed_as_one_chunk_is() {
        let dir = std::env::temp_dir().join(format!("hpf-ls-host-include-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        std::fs::write(
            dir.join("decl.h"),
            "  real :: a(8), b(8)\n!HPF$ DISTRIBUTE a(BLOCK)\n!HPF$ ALIGN q(i) WITH a(i)\n",
        )
        .expect("header");
        let text = "module grid\n  include 'decl.h'\n!HPF$ ALIGN b(i) WITH a(i)\ncontains\n  subroutine shift\n    integer :: i\n    do i = 2, 8\n      a(i) = b(i-1)\n    end do\n  end subroutine shift\n  subroutine remap\n!HPF$ REDISTRIBUTE a(CYCLIC)\n  end subroutine remap\nend module grid\n";
        let analysed = |text: &str, cpp: bool, previous: Option<&Analysed>| {
            let includes = Includes { path: Some(dir.join("main.f90")), cpp, ..Includes::default() };
            analyse(
                previous.map_or(1, |it| it.version + 1),
                Rope::from_str(text),
                SourceForm::Free,
                "file:///main.f90",
                previous,
                &settings(),
                Outside { modules: &analysis::model::NoModules, includes: &includes },
            )
        };
        let seen = |it: &Analysed| {
            let mut headers: Vec<String> = it
                .chunks
                .iter()
                .flat_map(|it| it.chunk.header_diagnostics.iter())
                .map(|(name, it)| format!("{name}: {:?} {}", it.range, it.message))
                .collect();
            headers.sort();
            (format!("{:?}", it.diagnostics()), headers)
        };
        let split = analysed(text, false, None);
        assert_eq!(split.chunks.len(), 3);
        let whole = analysed(text, true, None);
        assert_eq!(whole.chunks.len(), 1);
        assert_eq!(seen(&split), seen(&whole));
        assert!(!seen(&split).1.is_empty(), "the header's undeclared q is reported in it");
        // An edit inside a procedure: that procedure only.
        let edited_text = text.replacen("b(i-1)", "b(i-2)", 1);
        let edited = analysed(&edited_text, false, Some(&split));
        assert_eq!(edited.computed_chunks, 1);
        assert_eq!(seen(&edited), seen(&analysed(&edited_text, true, None)));
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A derived type with type-bound procedures (its own CONTAINS) in the
    /// host's specification part: the host's CONTAINS after it still splits.
    #[test]
    fn a_host_with_a_type_with_contains_is_split_after_its_own_contains() {
        use syntax::ChunkKind::{Procedure, Unit};
        let text = "module shapes\n  type :: box\n    real :: side(8)\n  contains\n    procedure :: area\n  end type box\n  real :: a(8)\n!HPF$ DISTRIBUTE a(BLOCK)\ncontains\n  real function area(self)\n    class(box), intent(in) :: self\n    area = self%side(1) ** 2\n  end function area\n  subroutine shift\n    integer :: i\n    do i = 2, 8\n      a(i) = a(i-1)\n    end do\n  end subroutine shift\nend module shapes\n";
        let opened = open(text, SourceForm::Free);
        let kinds: Vec<_> = opened.chunks.iter().map(|it| it.kind).collect();
        assert_eq!(kinds, [Unit, Procedure, Procedure]);
        assert_like_whole(&opened, "type with contains");
        // A component: the host and `area`, which names the type; `shift` keeps its analysis.
        let edited = edit(&opened, "real :: side(8)", "real :: side(8), depth");
        assert_eq!(edited.computed_chunks, 2);
        assert_like_whole(&edited, "component");
    }

    #[test]
    fn procedures_are_chunks_analysed_with_their_host() {
        use syntax::ChunkKind::{Procedure, Unit};
        let opened = open(HOSTS, SourceForm::Free);
        let kinds: Vec<_> = opened.chunks.iter().map(|it| it.kind).collect();
        assert_eq!(kinds, [Unit, Procedure, Procedure, Unit, Procedure]);
        assert_like_whole(&opened, "opened");
        // The REDISTRIBUTE of the host's template points at the host's declaration.
        let remap = opened.diagnostics().into_iter().find(|it| it.code == syntax::Code::NotDynamic).expect("HPF026");
        assert_eq!(&HOSTS[remap.related[0].range.to_range()], "t");
        // Inside a procedure: that procedure only.
        let edited = edit(&opened, "a(i) = b(i-1)", "a(i) = b(i-2)");
        assert_eq!(edited.computed_chunks, 1);
        assert_like_whole(&edited, "inside shift");
        // The host's specification part: the host, the procedure that
        // mentions what changed (`shift`, not `remap`), and the program that
        // USEs the module, with its internal procedure.
        let host = edit(&edited, "ALIGN b(i) WITH t(i)", "ALIGN b(i) WITH t(i+1)");
        assert_eq!(host.computed_chunks, 4);
        assert_like_whole(&host, "host");
        // A comment and a line in the host: no procedure of it (the program
        // that USEs the module and its procedure are, as for any edit of a
        // module); `remap` keeps its related declaration of `t`, moved.
        let comment = edit(&host, "!HPF$ TEMPLATE t(n)\n", "! the grid\n\n!HPF$ TEMPLATE t(n)\n");
        assert_eq!(comment.computed_chunks, 3);
        assert_like_whole(&comment, "comment");
        let remap = comment.diagnostics().into_iter().find(|it| it.code == syntax::Code::NotDynamic).expect("HPF026");
        assert_eq!(&comment.text()[remap.related[0].range.to_range()], "t");
        // A name no procedure mentions: no procedure of it.
        let unused = edit(&comment, "  real :: a(n), b(n)\n", "  real :: a(n), b(n)\n  real :: spare(n)\n");
        assert_eq!(unused.computed_chunks, 3);
        assert_like_whole(&unused, "unused");
        // Its template's distribution: every procedure that mentions it or an array aligned with it.
        let all = edit(&unused, "t(BLOCK)", "t(CYCLIC)");
        assert_eq!(all.computed_chunks, 5);
        assert_like_whole(&all, "distribution");
        let host = edit(&all, "t(CYCLIC)", "t(BLOCK)");
        // The main program's part: it and its procedure.
        let main = edit(&host, "real :: c(n)", "real :: c(n+1)");
        assert_eq!(main.computed_chunks, 2);
        assert!(Arc::ptr_eq(&main.chunks[1].chunk, &host.chunks[1].chunk));
        assert_like_whole(&main, "main");
        for (from, to) in
            [("contains\n  ! shifts", "  ! shifts"), ("  subroutine remap\n", ""), ("end module grid\n", "")]
        {
            let edited = edit(&main, from, to);
            assert_like_whole(&edited, from);
            let fresh = open(&edited.text(), SourceForm::Free);
            let starts = |it: &Analysed| it.chunks.iter().map(|it| (it.start, it.kind)).collect::<Vec<_>>();
            assert_eq!(starts(&edited), starts(&fresh), "{from:?}");
        }
    }

    /// Found by the long edit-sequence test (sequence 2417): an edit that
    /// makes an END a statement (`end( subroutine shift`) leaves the module
    /// open, so the main program and its procedures become procedures of the
    /// module; `twice`, after the edit and with the same text, now has the
    /// module's part as its host and is analysed again with it.
    #[test]
    fn a_procedure_whose_host_an_edit_changes_is_analysed_with_the_new_host() {
        let text = HOSTS.replace(
            "  end subroutine fill\n",
            "  end subroutine fill\n  integer function twice(k)\n    integer :: k\n    twice = 2 * k + c(1)\n  end function\n",
        );
        let opened = open(&text, SourceForm::Free);
        let edited_text = text.replacen("end subroutine shift", "end( subroutine shift", 1).replacen(
            "contains\n  subroutine fill",
            "contai  subroutine fill",
            1,
        );
        let (settings, modules) = (settings(), analysis::model::NoModules);
        let edited = analyse(
            2,
            Rope::from_str(&edited_text),
            SourceForm::Free,
            &opened.name,
            Some(&opened),
            &settings,
            Outside { modules: &modules, includes: &Includes::default() },
        );
        let fresh = open(&edited_text, SourceForm::Free);
        let starts = |it: &Analysed| it.chunks.iter().map(|it| (it.start, it.kind, it.host)).collect::<Vec<_>>();
        assert_eq!(starts(&edited), starts(&fresh));
        let units = |it: &Analysed| {
            it.chunks.iter().map(|placed| format!("{:?}", it.analysis_of(placed).file.units)).collect::<Vec<_>>()
        };
        assert_eq!(units(&edited), units(&fresh));
        assert_eq!(edited.diagnostics(), fresh.diagnostics());
    }

    /// An edit inside an interface body of a host's specification part
    /// analyses the host's chunk and the procedures that name its procedure
    /// (or its generic) again, as it would an edit of a procedure; the
    /// others are moved onto the new host text, which they make when asked.
    #[test]
    fn an_edit_in_an_interface_body_analyses_the_host_and_the_procedures_that_name_it() {
        let text = "module grid\n  real :: a(8)\n!HPF$ DISTRIBUTE a(BLOCK)\n  interface smooth\n    subroutine smooth_real(x, k)\n      real, intent(inout) :: x(:)\n      integer(4), intent(in) :: k\n    end subroutine smooth_real\n  end interface\ncontains\n  subroutine caller\n    call smooth(a, 2)\n  end subroutine caller\n  subroutine other\n    a = 1.0\n  end subroutine other\n  subroutine third\n    a(1) = 2.0\n  end subroutine third\nend module grid\n";
        let opened = open(text, SourceForm::Free);
        assert_eq!(opened.chunks.len(), 4);
        let edited = edit(&opened, "integer(4), intent(in) :: k", "integer(8), intent(in) :: k");
        // The host and `caller`; `other` and `third` are moved, their texts not made.
        assert_eq!(edited.computed_chunks, 2);
        for placed in &edited.chunks[2..] {
            assert!(placed.chunk.context.as_ref().is_some_and(|it| it.text.get().is_none()));
        }
        let again = edit(&edited, "integer(8), intent(in) :: k", "integer(8), intent(in) :: k, m");
        for analysed in [&edited, &again] {
            let fresh = open(&analysed.text(), SourceForm::Free);
            assert_eq!(analysed.diagnostics(), fresh.diagnostics());
            let units = |it: &Analysed| {
                it.chunks.iter().map(|placed| format!("{:?}", it.analysis_of(placed).file.units)).collect::<Vec<_>>()
            };
            assert_eq!(units(analysed), units(&fresh));
        }
    }

    const UNITS: &str = "module m\n  integer, parameter :: n = 8\nend module m\n\nsubroutine s1\n  use m\n  real :: x(n)\n  x = 1.0\nend subroutine s1\n\nsubroutine s2\n  real :: y(4)\n  y = 2.0\nend subroutine s2\n";

    fn edit(previous: &Analysed, from: &str, to: &str) -> Analysed {
        let text = previous.text().replacen(from, to, 1);
        let (settings, modules) = (settings(), analysis::model::NoModules);
        analyse(
            previous.version + 1,
            Rope::from_str(&text),
            previous.form,
            &previous.name,
            Some(previous),
            &settings,
            Outside { modules: &modules, includes: &Includes::default() },
        )
    }

    #[test]
    fn an_edit_analyses_its_chunk_and_the_users_of_a_module_it_changes() {
        let opened = open(UNITS, SourceForm::Free);
        assert_eq!((opened.chunks.len(), opened.computed_chunks), (3, 3));
        // Inside s2: s2 only, and the other chunks are the same objects.
        let edited = edit(&opened, "y = 2.0", "y = 3.0");
        assert_eq!(edited.computed_chunks, 1);
        assert!(Arc::ptr_eq(&edited.chunks[0].chunk, &opened.chunks[0].chunk));
        assert!(Arc::ptr_eq(&edited.chunks[1].chunk, &opened.chunks[1].chunk));
        // A line added in s1 moves s2, which is not analysed again.
        let moved = edit(&edited, "  x = 1.0\n", "  x = 1.0\n  x = 0.5\n");
        assert_eq!(moved.computed_chunks, 1);
        assert_eq!(moved.chunks[2].line, edited.chunks[2].line + 1);
        assert!(Arc::ptr_eq(&moved.chunks[2].chunk, &edited.chunks[2].chunk));
        // The module: it and s1, which USEs it; s2 stays.
        let module = edit(&moved, "n = 8", "n = 9");
        assert_eq!(module.computed_chunks, 2);
        assert!(Arc::ptr_eq(&module.chunks[2].chunk, &moved.chunks[2].chunk));
        // The edited chunk was reparsed from its tree, kept for its next edit.
        assert!(module.chunks[0].chunk.tree.lock().unwrap().is_some());
        assert!(module.chunks[2].chunk.tree.lock().unwrap().is_none());
        for analysed in [&edited, &moved, &module] {
            let fresh = open(&analysed.text(), SourceForm::Free);
            assert_eq!(analysed.diagnostics(), fresh.diagnostics());
            assert_eq!(analysed.diagnostics(), analysed.whole().diagnostics);
        }
    }

    #[test]
    fn a_dropped_analysis_is_made_again_as_it_was() {
        let opened = open(UNITS, SourceForm::Free);
        let seen = |it: &FileAnalysis| {
            let occurrences = analysis::ide::occurrences(it);
            format!("{:?} {:?} {:?} {:?} {occurrences:?}", it.file.units, it.model, it.loops, it.diagnostics)
        };
        for placed in &opened.chunks {
            let first = seen(&placed.chunk.analysis());
            assert!(placed.chunk.drop_analysis().is_some());
            assert!(placed.chunk.kept_analysis().is_none());
            assert_eq!(seen(&placed.chunk.analysis()), first);
        }
        // An open of more chunks than are kept keeps none; requests keep the last used.
        let many: String = (0..KEEP_ANALYSES + 8).map(|idx| format!("subroutine s{idx}\n  x = {idx}\nend\n")).collect();
        let opened = open(&many, SourceForm::Free);
        assert!(opened.chunks.iter().all(|it| it.chunk.kept_analysis().is_none()));
        for placed in &opened.chunks {
            opened.analysis_of(placed);
        }
        let kept: Vec<bool> = opened.chunks.iter().map(|it| it.chunk.kept_analysis().is_some()).collect();
        assert_eq!(kept.iter().filter(|it| **it).count(), KEEP_ANALYSES);
        assert!(kept[kept.len() - KEEP_ANALYSES..].iter().all(|it| *it), "the last used are kept");
    }

    #[test]
    fn a_rescan_after_an_edit_finds_the_chunks_of_a_whole_scan() {
        let opened = open(UNITS, SourceForm::Free);
        let edits = [
            ("y = 2.0", "y = 3.0"),
            ("end subroutine s1\n", ""),
            ("end module m\n", "end module m\nsubroutine z\nend\n"),
            ("subroutine s2", "subroutine s2x"),
            ("module m\n", ""),
            ("end subroutine s2\n", "end subroutine s2\n! tail\n"),
            ("\nsubroutine s2", "\n  ! before s2\nsubroutine s2"),
        ];
        for (from, to) in edits {
            let text = UNITS.replacen(from, to, 1);
            let whole = syntax::chunks(&text, SourceForm::Free, true);
            let rope = Rope::from_str(&text);
            assert_eq!(rescan(&opened, &rope, edit_region(&opened, &rope)), whole, "{from:?} -> {to:?}");
            let edited = edit(&opened, from, to);
            let starts: Vec<_> =
                edited.chunks.iter().map(|it| syntax::ChunkStart { at: it.start, kind: it.kind }).collect();
            assert_eq!(starts, whole);
        }
    }

    #[test]
    fn a_unit_split_or_joined_by_an_edit_is_chunked_as_a_fresh_open_would() {
        let opened = open(UNITS, SourceForm::Free);
        // Deleting the END of s1 joins s1 and s2 into one chunk.
        let joined = edit(&opened, "end subroutine s1\n", "");
        assert_eq!(joined.chunks.len(), 2);
        let fresh = open(&joined.text(), SourceForm::Free);
        assert_eq!(joined.diagnostics(), fresh.diagnostics());
        // Typing it back splits them again.
        let split = edit(&joined, "  x = 1.0\n", "  x = 1.0\nend subroutine s1\n");
        assert_eq!(split.chunks.len(), 3);
        assert_eq!(split.diagnostics(), open(&split.text(), SourceForm::Free).diagnostics());
    }
}
