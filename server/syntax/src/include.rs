//! A program's text as the compiler sees it: Fortran `INCLUDE 'file'`
//! lines replaced by the file (nested, in fixed and free form), `.F`-style
//! files run through the C preprocessor ([`crate::preprocess`]), and
//! several files joined into one text, with a [`SourceMap`] from every
//! offset of that text back to a file and an offset the user wrote.
//!
//! The analysis and the backend work on the expanded text; the command line
//! and the language server map ranges back at their edges. Files are read
//! through a [`SourceLoader`] (no I/O in this crate): the including file's
//! directory first, then the search directories, is the loader's business.
//!
//! Like gfortran, a file named by a Fortran INCLUDE line is not preprocessed
//! (a `#include`d one is), and each root file starts with the macros of the
//! command line only. Preprocessor directive lines and inactive `#if`
//! regions become empty lines.

use std::path::Path;
use std::sync::Arc;

use crate::preprocess::Macros;
use crate::source_form::physical_lines;
use crate::{Code, Diagnostic, SourceForm, TextRange};

/// Includes nested deeper than this are refused (a cycle through
/// differently spelled names ends here too).
pub const MAX_INCLUDE_DEPTH: usize = 64;

/// Finds and reads the files INCLUDE lines name.
pub trait SourceLoader {
    /// The file `name` as included from the file named `from` (a name this
    /// loader returned, or a root's name): its name (the same for the same
    /// file, however it is reached) and its text. `Err` says why not.
    fn load(&self, name: &str, from: &str) -> Result<(String, String), String>;
}

/// A loader that finds nothing: every INCLUDE is a diagnostic.
pub struct NoFiles;

impl SourceLoader for NoFiles {
    fn load(&self, name: &str, _from: &str) -> Result<(String, String), String> {
        Err(format!("cannot find `{name}`"))
    }
}

/// A file the expanded text comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceText {
    pub name: Arc<str>,
    pub text: Arc<str>,
}

/// A stretch of the expanded text and where it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Segment {
    start: usize,
    len: usize,
    file: usize,
    /// The text it comes from; for an exact segment, of the same length.
    source: TextRange,
    /// Copied byte for byte (else made: a macro's expansion, an empty line for a directive).
    exact: bool,
}

/// Offsets of the expanded text -> files and offsets the user wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceMap {
    files: Vec<SourceText>,
    segments: Vec<Segment>,
}

/// A range in one of the files of a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileRange {
    pub file: usize,
    pub range: TextRange,
}

impl SourceMap {
    /// The map of a text that is its own source.
    pub fn identity(name: &str, text: &str) -> SourceMap {
        SourceMap {
            files: vec![SourceText { name: name.into(), text: text.into() }],
            segments: vec![Segment {
                start: 0,
                len: text.len(),
                file: 0,
                source: TextRange::new(0, text.len()),
                exact: true,
            }],
        }
    }

    /// Every file the text comes from; the roots first, in their order.
    pub fn files(&self) -> &[SourceText] {
        &self.files
    }

    pub fn file(&self, id: usize) -> &SourceText {
        &self.files[id]
    }

    /// The id of the file named `name`.
    pub fn file_id(&self, name: &str) -> Option<usize> {
        self.files.iter().position(|it| &*it.name == name)
    }

    fn segment_at(&self, offset: usize) -> Option<&Segment> {
        let idx = self.segments.partition_point(|it| it.start + it.len <= offset);
        self.segments.get(idx).or_else(|| self.segments.last())
    }

    /// Where the byte at `offset` of the expanded text was written.
    pub fn locate(&self, offset: usize) -> FileRange {
        self.locate_range(TextRange::new(offset, offset))
    }

    /// Where `range` of the expanded text was written: its start's file, and
    /// the end in that file (the start, when the range runs into another file).
    pub fn locate_range(&self, range: TextRange) -> FileRange {
        let Some(first) = self.segment_at(range.start) else {
            return FileRange { file: 0, range };
        };
        let start = if first.exact {
            first.source.start + (range.start - first.start).min(first.len)
        } else {
            first.source.start
        };
        let end = if range.end <= range.start {
            // An empty range on a made line (a directive's) stands for what it was made from.
            if first.exact {
                start
            } else {
                first.source.end
            }
        } else {
            match self.segment_at(range.end - 1) {
                Some(last) if last.file == first.file && last.exact => {
                    last.source.start + (range.end - last.start).min(last.len)
                }
                Some(last) if last.file == first.file => last.source.end,
                _ => start,
            }
        };
        FileRange { file: first.file, range: TextRange::new(start, end.max(start)) }
    }

    /// The first offset of the expanded text that `offset` of file `file`
    /// was copied to (a header included twice has two); `None` where it
    /// was not copied (an inactive `#if` region, a directive line).
    pub fn to_expanded(&self, file: usize, offset: usize) -> Option<usize> {
        self.segments
            .iter()
            .find(|it| {
                it.file == file
                    && it.exact
                    && it.source.start <= offset
                    && (offset < it.source.end || offset == it.source.end && it.len > 0)
            })
            .map(|it| it.start + offset - it.source.start)
    }

    /// Whether the text is one file copied whole (nothing included or preprocessed).
    pub fn is_identity(&self) -> bool {
        self.files.len() == 1 && self.segments.iter().all(|it| it.exact && it.file == 0 && it.start == it.source.start)
    }
}

/// A root file of a program.
#[derive(Clone, Debug)]
pub struct Root {
    pub name: String,
    pub text: String,
    /// Run it through the C preprocessor (`.F`, `.F90`, `.FPP`, or `--cpp`).
    pub cpp: bool,
}

/// How to expand.
#[derive(Clone, Debug)]
pub struct ExpandOptions {
    /// The form of the roots and of the files they include.
    pub form: SourceForm,
    /// `NAME` or `NAME=VALUE`, as `-D` takes them, for the preprocessed roots.
    pub defines: Vec<String>,
    /// A header that holds COMMON blocks and only specifications becomes a
    /// module that its includers USE (see [`common_header`]): for the
    /// backend, which lays out distributed module arrays once for the whole
    /// program, and refuses COMMON blocks in programs with subroutines.
    pub common_headers_as_modules: bool,
}

/// The program text the analysis reads.
#[derive(Clone, Debug)]
pub struct Expanded {
    pub text: String,
    pub map: SourceMap,
    /// Files not found, cycles, preprocessor errors; ranges in `text`.
    pub diagnostics: Vec<Diagnostic>,
    /// The regions `#if` left out, in the files they are in.
    pub inactive: Vec<FileRange>,
}

/// Whether the C preprocessor runs on a file by its name, as gfortran
/// decides: `.F`, `.FOR`, `.FPP`, `.F90`, `.F95`, `.F03`, `.F08` (upper
/// case), and `.fpp` in any case.
pub fn preprocessed_by_name(name: &str) -> bool {
    let Some((_, extension)) = name.rsplit_once('.') else { return false };
    matches!(extension, "F" | "FOR" | "FTN" | "FPP" | "fpp" | "F77" | "F90" | "F95" | "F03" | "F08")
}

/// The text of `roots` joined in their order, each expanded.
pub fn expand(roots: &[Root], options: &ExpandOptions, loader: &dyn SourceLoader) -> Expanded {
    // A COMMON block a root declares itself may be laid out otherwise there: no module then.
    let common_headers_as_modules = options.common_headers_as_modules
        && !roots.iter().any(|root| {
            root.text.lines().any(|line| {
                let line = line.trim_start();
                line.get(..6).is_some_and(|it| it.eq_ignore_ascii_case("common"))
                    || line.get(..8).is_some_and(|it| it.eq_ignore_ascii_case("implicit"))
                        && !line.get(8..).is_some_and(|it| it.trim_start().to_ascii_lowercase().starts_with("none"))
            })
        });
    let mut expander = Expander {
        loader,
        common_headers_as_modules,
        modules: Vec::new(),
        prelude: (String::new(), Vec::new()),
        prelude_diagnostics: Vec::new(),
        form: options.form,
        out: String::new(),
        map: SourceMap::default(),
        diagnostics: Vec::new(),
        inactive: Vec::new(),
        stack: Vec::new(),
    };
    let ids: Vec<usize> = roots.iter().map(|root| expander.file_id(&root.name, &root.text)).collect();
    for (root, id) in roots.iter().zip(ids) {
        let mut macros = root.cpp.then(|| {
            let mut macros = Macros::predefined();
            for define in &options.defines {
                macros.define_option(define);
            }
            macros
        });
        expander.expand_file(id, macros.as_mut());
        // Files are joined on line boundaries.
        if !expander.out.is_empty() && !expander.out.ends_with('\n') {
            let end = root.text.len();
            expander.push_made("\n", id, TextRange::new(end, end));
        }
    }
    expander.prepend_prelude();
    Expanded { text: expander.out, map: expander.map, diagnostics: expander.diagnostics, inactive: expander.inactive }
}

/// Whether a header can become a module: it declares a COMMON block, and
/// holds nothing but specifications (declarations, PARAMETER, COMMON,
/// DATA, `!HPF$` directives, comments, INCLUDE lines).
pub fn common_header(text: &str, form: SourceForm) -> bool {
    let mut common = false;
    for line in text.lines() {
        if form.is_fixed() && line.starts_with(['c', 'C', '*', '!']) {
            continue;
        }
        let trimmed = line.trim_start().to_ascii_lowercase();
        if trimmed.is_empty() || trimmed.starts_with('!') || include_line(line, form).is_some() {
            continue;
        }
        // A fixed-form continuation line continues the statement before.
        if form.is_fixed()
            && line.len() > 5
            && line.chars().take(5).all(|it| it == ' ')
            && !line[5..].starts_with([' ', '0'])
        {
            continue;
        }
        let word: String =
            trimmed.chars().take_while(|it| it.is_ascii_alphabetic() || *it == ' ' || *it == '*').collect();
        let word = word.replace(' ', "");
        const SPECIFICATIONS: &[&str] = &[
            "integer",
            "real",
            "doubleprecision",
            "complex",
            "doublecomplex",
            "logical",
            "character",
            "parameter",
            "dimension",
            "common",
            "data",
            "save",
            "external",
            "intrinsic",
        ];
        if !SPECIFICATIONS.iter().any(|it| word.starts_with(it)) {
            return false;
        }
        common |= word.starts_with("common");
    }
    common
}

/// Whether a line is a COMMON statement (or continues one, `continues`).
fn is_common_line(line: &str, form: SourceForm, continues: bool) -> bool {
    if continues {
        return if form.is_fixed() {
            line.len() > 5 && line.chars().take(5).all(|it| it == ' ') && !line[5..].starts_with([' ', '0'])
        } else {
            true
        };
    }
    line.trim_start().get(..6).is_some_and(|it| it.eq_ignore_ascii_case("common"))
}

/// Whether a free-form line goes on on the next (a trailing `&`).
fn free_continued(line: &str) -> bool {
    line.split('!').next().unwrap_or("").trim_end().ends_with('&')
}

/// One `#if` group of a file being preprocessed.
struct Conditional {
    /// Where its `#if` line is, for a missing `#endif`.
    line: TextRange,
    /// The lines before the group were active.
    outer_active: bool,
    /// One of its branches was taken already.
    taken: bool,
    /// The current branch is active.
    active: bool,
    /// `#else` was seen.
    in_else: bool,
}

struct Expander<'a> {
    loader: &'a dyn SourceLoader,
    common_headers_as_modules: bool,
    /// The headers made modules: (file id, module name).
    modules: Vec<(usize, String)>,
    /// The modules' text and segments, put before the program at the end,
    /// and the diagnostics found in them (ranges in the prelude).
    prelude: (String, Vec<Segment>),
    prelude_diagnostics: Vec<Diagnostic>,
    form: SourceForm,
    out: String,
    map: SourceMap,
    diagnostics: Vec<Diagnostic>,
    inactive: Vec<FileRange>,
    /// The files being expanded, outermost first.
    stack: Vec<usize>,
}

impl Expander<'_> {
    fn file_id(&mut self, name: &str, text: &str) -> usize {
        if let Some(id) = self.map.file_id(name) {
            return id;
        }
        self.map.files.push(SourceText { name: name.into(), text: text.into() });
        self.map.files.len() - 1
    }

    fn push(&mut self, text: &str, file: usize, source: TextRange, exact: bool) {
        if text.is_empty() {
            return;
        }
        let start = self.out.len();
        self.out.push_str(text);
        if let Some(last) = self.map.segments.last_mut() {
            let contiguous = last.exact && exact && last.file == file && last.source.end == source.start;
            if contiguous {
                last.len += text.len();
                last.source = TextRange::new(last.source.start, source.end);
                return;
            }
        }
        self.map.segments.push(Segment { start, len: text.len(), file, source, exact });
    }

    fn push_exact(&mut self, text: &str, file: usize, source_start: usize) {
        self.push(text, file, TextRange::new(source_start, source_start + text.len()), true);
    }

    fn push_made(&mut self, text: &str, file: usize, source: TextRange) {
        self.push(text, file, source, false);
    }

    /// A diagnostic at the empty line that stands for `source` (a directive line).
    fn diagnose_made_line(&mut self, code: Code, file: usize, source: TextRange, message: String) {
        let at = self.out.len();
        self.push_made("\n", file, source);
        self.diagnostics.push(Diagnostic::new(code, TextRange::new(at, at), message));
    }

    fn expand_file(&mut self, file: usize, mut macros: Option<&mut Macros>) {
        self.stack.push(file);
        let text = self.map.files[file].text.clone();
        let mut conditionals: Vec<Conditional> = Vec::new();
        for line in physical_lines(&text) {
            let content = &text[line.start..line.end];
            let full_end =
                line.terminator.map_or(line.end, |it| if text.as_bytes()[it] == b'\r' { it + 2 } else { it + 1 });
            let full = &text[line.start..full_end];
            let line_range = TextRange::new(line.start, line.end);
            let active = conditionals.last().is_none_or(|it| it.active);
            if let Some(macros) = macros.as_deref_mut() {
                if let Some(directive) = content.trim_start().strip_prefix('#') {
                    self.directive(file, line_range, directive, &mut conditionals, macros);
                    continue;
                }
                if !active {
                    match self.inactive.last_mut() {
                        Some(last) if last.file == file && last.range.end + 1 >= line.start => {
                            last.range = TextRange::new(last.range.start, line.end)
                        }
                        _ => self.inactive.push(FileRange { file, range: line_range }),
                    }
                    self.push_made("\n", file, line_range);
                    continue;
                }
                if let Some((substituted, subs)) = macros.substitute(content) {
                    let mut copied = 0;
                    for sub in subs {
                        self.push_exact(
                            &substituted[copied..sub.expanded.0],
                            file,
                            line.start + sub.source.0 - (sub.expanded.0 - copied),
                        );
                        let source = TextRange::new(line.start + sub.source.0, line.start + sub.source.1);
                        self.push_made(&substituted[sub.expanded.0..sub.expanded.1], file, source);
                        copied = sub.expanded.1;
                    }
                    let tail_source = line.end - (substituted.len() - copied);
                    self.push_exact(&substituted[copied..], file, tail_source);
                    self.push_exact(&full[content.len()..], file, line.end);
                    continue;
                }
            }
            if let Some((name, name_range)) = include_line(content, self.form) {
                if self.common_headers_as_modules && self.include_as_module(file, name, line_range, &text, line.start) {
                    continue;
                }
                match self.include(file, name, None) {
                    Ok(()) => continue,
                    Err(message) => {
                        let start = self.out.len() + name_range.0;
                        let range = TextRange::new(start, start + name_range.1 - name_range.0);
                        self.diagnostics.push(Diagnostic::new(Code::IncludeNotFound, range, message));
                    }
                }
            }
            self.push_exact(full, file, line.start);
        }
        for open in conditionals {
            let at = self.out.len();
            self.push_made("\n", file, open.line);
            self.diagnostics.push(Diagnostic::new(
                Code::Preprocessor,
                TextRange::new(at, at),
                "`#if` without `#endif` before the end of the file",
            ));
        }
        self.stack.pop();
    }

    /// Replaces the INCLUDE line (`line` of file `from`, whose text is
    /// `from_text`) by a USE of the module the header `name` becomes;
    /// `false` when the header cannot become one, or the line cannot be a
    /// USE there (it follows statements other than the unit's first, other
    /// INCLUDEs and USEs).
    fn include_as_module(
        &mut self,
        from: usize,
        name: &str,
        line: TextRange,
        from_text: &str,
        line_start: usize,
    ) -> bool {
        let previous = from_text[..line_start].lines().rev().find(|it| {
            let trimmed = it.trim_start();
            let comment = trimmed.starts_with('!') || self.form.is_fixed() && it.starts_with(['c', 'C', '*']);
            !trimmed.is_empty() && !comment
        });
        let first_word = |line: &str| -> String {
            line.trim_start()
                .chars()
                .take_while(|it| it.is_ascii_alphabetic() || *it == ' ')
                .collect::<String>()
                .to_ascii_lowercase()
                .replace(' ', "")
        };
        let after_header = previous.is_some_and(|it| {
            let word = first_word(it);
            [
                "program",
                "subroutine",
                "function",
                "integerfunction",
                "realfunction",
                "doubleprecisionfunction",
                "logicalfunction",
                "use",
                "include",
                "recursivesubroutine",
            ]
            .iter()
            .any(|start| word.starts_with(start))
                || include_line(it, self.form).is_some()
        });
        if !after_header {
            return false;
        }
        let from_name = self.map.files[from].name.clone();
        let Ok((found, text)) = self.loader.load(name, &from_name) else { return false };
        if !common_header(&text, self.form) {
            return false;
        }
        let id = self.file_id(&found, &text);
        let module = match self.modules.iter().find(|(file, _)| *file == id) {
            Some((_, module)) => module.clone(),
            None => {
                // Short enough for a fixed-form line.
                let stem: String = Path::new(&found)
                    .file_stem()
                    .map(|it| {
                        it.to_string_lossy()
                            .chars()
                            .take(20)
                            .map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '_' })
                            .collect()
                    })
                    .unwrap_or_default();
                let module = format!("hpf_include_{}_{stem}", self.modules.len() + 1);
                self.modules.push((id, module.clone()));
                // The module's text goes to the prelude, made as the program's is.
                let program = (std::mem::take(&mut self.out), std::mem::take(&mut self.map.segments));
                let diagnostics_before = self.diagnostics.len();
                let indent = if self.form.is_fixed() { "      " } else { "" };
                self.push_made(&format!("{indent}module {module}\n"), from, line);
                self.stack.push(from);
                self.expand_module_body(id);
                self.stack.pop();
                if !self.out.ends_with('\n') {
                    self.out.push('\n');
                    if let Some(last) = self.map.segments.last_mut() {
                        last.len += 1;
                        last.exact = false;
                    }
                }
                self.push_made(&format!("{indent}end module {module}\n"), from, line);
                let made =
                    (std::mem::replace(&mut self.out, program.0), std::mem::replace(&mut self.map.segments, program.1));
                let shift = self.prelude.0.len();
                self.prelude.0.push_str(&made.0);
                self.prelude.1.extend(made.1.into_iter().map(|it| Segment { start: it.start + shift, ..it }));
                let found_there = self.diagnostics.split_off(diagnostics_before);
                self.prelude_diagnostics.extend(found_there.into_iter().map(|mut it| {
                    it.range = TextRange::new(it.range.start + shift, it.range.end + shift);
                    it
                }));
                module
            }
        };
        let indent = if self.form.is_fixed() { "      " } else { "" };
        self.push_made(&format!("{indent}use {module}\n"), from, line);
        true
    }

    /// A header's lines for its module: as INCLUDE expands them, its COMMON
    /// statements left out (module variables are the program's already).
    fn expand_module_body(&mut self, id: usize) {
        let text = self.map.files[id].text.clone();
        let mut continues = false;
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            let content = line.trim_end_matches(['\n', '\r']);
            let common = is_common_line(content, self.form, continues);
            continues = common && (self.form.is_fixed() || free_continued(content));
            if common {
                // An empty line in its place: the lines after keep their numbers.
                self.push_made("\n", id, TextRange::new(at, at + content.len()));
            } else {
                self.expand_line(id, line, at);
            }
            at += line.len();
        }
    }

    /// One line of a header being made a module: INCLUDE lines expanded, the rest copied.
    fn expand_line(&mut self, file: usize, line: &str, at: usize) {
        let content = line.trim_end_matches(['\n', '\r']);
        if let Some((name, name_range)) = include_line(content, self.form) {
            match self.include(file, name, None) {
                Ok(()) => return,
                Err(message) => {
                    let start = self.out.len() + name_range.0;
                    let range = TextRange::new(start, start + name_range.1 - name_range.0);
                    self.diagnostics.push(Diagnostic::new(Code::IncludeNotFound, range, message));
                }
            }
        }
        self.push_exact(line, file, at);
    }

    /// Puts the modules made of headers before the program.
    fn prepend_prelude(&mut self) {
        let (prelude, segments) = std::mem::take(&mut self.prelude);
        if prelude.is_empty() {
            return;
        }
        let shift = prelude.len();
        for segment in &mut self.map.segments {
            segment.start += shift;
        }
        for diagnostic in &mut self.diagnostics {
            diagnostic.range = TextRange::new(diagnostic.range.start + shift, diagnostic.range.end + shift);
        }
        self.diagnostics.append(&mut self.prelude_diagnostics);
        let mut all = segments;
        all.append(&mut self.map.segments);
        self.map.segments = all;
        self.out.insert_str(0, &prelude);
    }

    /// Expands the file `name` that file `from` includes, at the end of
    /// the text; `Err` says why it cannot (not found, a cycle, too deep).
    fn include(&mut self, from: usize, name: &str, macros: Option<&mut Macros>) -> Result<(), String> {
        let from_name = self.map.files[from].name.clone();
        let (found, text) = self.loader.load(name, &from_name)?;
        let id = self.file_id(&found, &text);
        if let Some(at) = self.stack.iter().position(|it| *it == id) {
            let chain: Vec<&str> = self.stack[at..].iter().chain([&id]).map(|it| &*self.map.files[*it].name).collect();
            return Err(format!("`{name}` includes itself: {}", chain.join(" -> ")));
        }
        if self.stack.len() >= MAX_INCLUDE_DEPTH {
            return Err(format!("`{name}`: includes nested deeper than {MAX_INCLUDE_DEPTH}"));
        }
        // A header included many times over, at many levels, could make a
        // text of any size: past what is analysed, no more is expanded.
        if self.out.len() + self.prelude.0.len() + text.len() > crate::MAX_ANALYSED_BYTES {
            return Err(format!(
                "`{name}` is not included: the program would be larger than the {} MiB hpf-ls analyses",
                crate::MAX_ANALYSED_BYTES >> 20
            ));
        }
        self.expand_file(id, macros);
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            let end = self.map.files[id].text.len();
            self.push_made("\n", id, TextRange::new(end, end));
        }
        Ok(())
    }

    /// One preprocessor directive line (`rest` follows its `#`).
    fn directive(
        &mut self,
        file: usize,
        line: TextRange,
        rest: &str,
        conditionals: &mut Vec<Conditional>,
        macros: &mut Macros,
    ) {
        let rest = rest.trim_start();
        let keyword_len = rest.bytes().take_while(|it| it.is_ascii_alphabetic()).count();
        let (keyword, argument) = rest.split_at(keyword_len);
        let active = conditionals.last().is_none_or(|it| it.active);
        let mut problem = None;
        match keyword {
            "if" | "ifdef" | "ifndef" => {
                let value = if !active {
                    Ok(false)
                } else if keyword == "if" {
                    macros.evaluate(argument).map(|it| it != 0)
                } else {
                    let name = argument.trim();
                    Ok(macros.is_defined(name) == (keyword == "ifdef"))
                };
                let taken = value.clone().unwrap_or(false);
                problem = value.err();
                conditionals.push(Conditional { line, outer_active: active, taken, active: taken, in_else: false });
            }
            "elif" | "else" => match conditionals.last_mut() {
                None => problem = Some(format!("`#{keyword}` without `#if`")),
                Some(group) if group.in_else => problem = Some(format!("`#{keyword}` after `#else`")),
                Some(group) => {
                    let take = if !group.outer_active || group.taken {
                        false
                    } else if keyword == "elif" {
                        match macros.evaluate(argument) {
                            Ok(value) => value != 0,
                            Err(message) => {
                                problem = Some(message);
                                false
                            }
                        }
                    } else {
                        true
                    };
                    group.in_else = keyword == "else";
                    group.active = take;
                    group.taken |= take;
                }
            },
            "endif" => problem = conditionals.pop().is_none().then(|| "`#endif` without `#if`".to_string()),
            _ if !active => {}
            "define" => problem = macros.define_directive(argument).err(),
            "undef" => macros.undefine(argument.trim()),
            "include" => match crate::preprocess::include_name(argument) {
                None => problem = Some("`#include` needs a \"file\" or <file>".to_string()),
                Some(name) => {
                    match self.include(file, name, Some(macros)) {
                        Ok(()) => self.push_made("\n", file, line),
                        Err(message) => self.diagnose_made_line(Code::IncludeNotFound, file, line, message),
                    }
                    return;
                }
            },
            "error" => problem = Some(format!("#error{argument}")),
            // `#pragma`, `#line`, `#warning`, `#ident` and the null directive change nothing here.
            _ => {}
        }
        match problem {
            Some(message) => self.diagnose_made_line(Code::Preprocessor, file, line, message),
            None => self.push_made("\n", file, line),
        }
    }
}

/// The file an `INCLUDE 'name'` line names, and the range of the name in
/// the line; `None` for any other line. Case and blanks as compilers take
/// them; a trailing `!` comment is allowed.
pub fn include_line(line: &str, form: SourceForm) -> Option<(&str, (usize, usize))> {
    if form.is_fixed() && line.starts_with(['c', 'C', '*', '!', 'd', 'D']) && !line[1..].trim_start().is_empty() {
        // A comment line, unless it is `include` written from column 1.
        if !line.get(..7).is_some_and(|it| it.eq_ignore_ascii_case("include")) {
            return None;
        }
    }
    let trimmed = line.trim_start();
    let keyword = trimmed.get(..7)?;
    if !keyword.eq_ignore_ascii_case("include") {
        return None;
    }
    let after = trimmed[7..].trim_start();
    let quote = after.chars().next().filter(|it| *it == '\'' || *it == '"')?;
    let body = &after[1..];
    let close = body.find(quote)?;
    let name = &body[..close];
    let tail = body[close + 1..].trim_start();
    if name.is_empty() || !(tail.is_empty() || tail.starts_with('!') || tail.starts_with(';')) {
        return None;
    }
    let start = line.len() - body.len();
    Some((name, (start, start + name.len())))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    struct Files(HashMap<&'static str, &'static str>);

    impl SourceLoader for Files {
        fn load(&self, name: &str, _from: &str) -> Result<(String, String), String> {
            self.0
                .get(name)
                .map(|text| (name.to_string(), text.to_string()))
                .ok_or_else(|| format!("cannot find `{name}`"))
        }
    }

    fn expand_one(text: &str, cpp: bool, files: &[(&'static str, &'static str)], defines: &[&str]) -> Expanded {
        let loader = Files(files.iter().copied().collect());
        let roots = [Root { name: "main.f".to_string(), text: text.to_string(), cpp }];
        let options = ExpandOptions {
            form: SourceForm::FIXED,
            defines: defines.iter().map(|it| it.to_string()).collect(),
            common_headers_as_modules: false,
        };
        expand(&roots, &options, &loader)
    }

    #[test]
    fn include_lines_are_recognised_in_both_forms() {
        assert_eq!(include_line("      INCLUDE 'grid.h'", SourceForm::FIXED), Some(("grid.h", (15, 21))));
        assert_eq!(include_line("\tinclude \"a.h\" ! mappings", SourceForm::FIXED).map(|it| it.0), Some("a.h"));
        assert_eq!(include_line("  Include 'mod/a.inc'", SourceForm::Free).map(|it| it.0), Some("mod/a.inc"));
        assert_eq!(include_line("c     include 'a.h'", SourceForm::FIXED), None);
        assert_eq!(include_line("      includes = 'a.h'", SourceForm::FIXED), None);
        assert_eq!(include_line("      include = 1", SourceForm::FIXED), None);
    }

    #[test]
    fn nested_includes_are_expanded_and_mapped_back() {
        let main = "      program p\n      include 'a.h'\n      x = 1\n      end\n";
        let a = "      real x\n      include 'b.h'\n";
        let b = "!hpf$ distribute x(block)";
        let expanded = expand_one(main, false, &[("a.h", a), ("b.h", b)], &[]);
        assert!(expanded.diagnostics.is_empty(), "{:?}", expanded.diagnostics);
        assert_eq!(expanded.text, "      program p\n      real x\n!hpf$ distribute x(block)\n      x = 1\n      end\n");
        let directive = expanded.text.find("distribute").unwrap();
        let at = expanded.map.locate(directive);
        assert_eq!(&*expanded.map.file(at.file).name, "b.h");
        assert_eq!(at.range.start, b.find("distribute").unwrap());
        let assignment = expanded.text.find("x = 1").unwrap();
        let at = expanded.map.locate_range(TextRange::new(assignment, assignment + 5));
        assert_eq!((at.file, &main[at.range.start..at.range.end]), (0, "x = 1"));
        assert_eq!(expanded.map.to_expanded(0, at.range.start), Some(assignment));
    }

    #[test]
    fn missing_files_and_cycles_are_diagnostics_at_the_include_line() {
        let main = "      include 'gone.h'\n      include 'self.h'\n      end\n";
        let expanded = expand_one(main, false, &[("self.h", "      include 'self.h'\n")], &[]);
        let found: Vec<(String, String)> = expanded
            .diagnostics
            .iter()
            .map(|it| {
                let at = expanded.map.locate_range(it.range);
                let file = expanded.map.file(at.file);
                (file.text[at.range.start..at.range.end].to_string(), it.message.clone())
            })
            .collect();
        assert_eq!(found[0], ("gone.h".to_string(), "cannot find `gone.h`".to_string()));
        assert_eq!(found[1].0, "self.h");
        assert!(found[1].1.contains("includes itself: self.h -> self.h"), "{}", found[1].1);
    }

    #[test]
    fn the_preprocessor_keeps_lines_and_maps_macros_to_their_names() {
        let main =
            "#define N 8\n#ifdef DEBUG\n      print *, 'debug'\n#else\n      real a(N)\n#endif\n#include \"c.h\"\n";
        let expanded = expand_one(main, true, &[("c.h", "#if N > 4\n      real b(N)\n#endif\n")], &[]);
        assert!(expanded.diagnostics.is_empty(), "{:?}", expanded.diagnostics);
        assert_eq!(expanded.text, "\n\n\n\n      real a(8)\n\n\n      real b(8)\n\n\n");
        let eight = expanded.text.find('8').unwrap();
        let at = expanded.map.locate_range(TextRange::new(eight, eight + 1));
        assert_eq!(&main[at.range.start..at.range.end], "N");
        let paren = expanded.text.find(")").unwrap();
        assert_eq!(&main[expanded.map.locate(paren).range.start..][..1], ")");
        assert_eq!(expanded.inactive, [FileRange { file: 0, range: TextRange::new(25, 47) }]);
        let debug = expand_one(main, true, &[("c.h", "")], &["DEBUG"]);
        assert!(debug.text.contains("'debug'") && !debug.text.contains("real a"));
    }

    #[test]
    fn preprocessor_errors_point_at_their_directive() {
        let main = "      x = 1\n#if 1 +\n#endif\n#error no grid\n#ifdef X\n";
        let expanded = expand_one(main, true, &[], &[]);
        let lines: Vec<&str> = expanded
            .diagnostics
            .iter()
            .map(|it| {
                let at = expanded.map.locate_range(it.range);
                &main[at.range.start..at.range.end]
            })
            .collect();
        assert_eq!(lines, ["#if 1 +", "#error no grid", "#ifdef X"]);
    }

    #[test]
    fn includes_that_multiply_stop_at_the_size_analysed() {
        // Each level includes the next ten times: 10^9 lines if nothing stopped it.
        let mut files: Vec<(&'static str, &'static str)> = Vec::new();
        let names: Vec<&'static str> = (0..9).map(|it| &*Box::leak(format!("h{it}.h").into_boxed_str())).collect();
        for level in 0..9 {
            let text = if level == 8 {
                "      x = x + 1\n".to_string()
            } else {
                format!("      include '{}'\n", names[level + 1]).repeat(10)
            };
            files.push((names[level], Box::leak(text.into_boxed_str())));
        }
        let expanded = expand_one("      include 'h0.h'\n      end\n", false, &files, &[]);
        assert!(expanded.text.len() <= crate::MAX_ANALYSED_BYTES + (64 << 10), "{}", expanded.text.len());
        assert!(expanded.diagnostics.iter().any(|it| it.message.contains("larger than")));
    }

    #[test]
    fn roots_are_joined_on_line_boundaries() {
        let loader = NoFiles;
        let roots = [
            Root { name: "a.f90".into(), text: "subroutine s\nend subroutine".into(), cpp: false },
            Root { name: "b.f90".into(), text: "program p\nend program\n".into(), cpp: false },
        ];
        let expanded = expand(
            &roots,
            &ExpandOptions { form: SourceForm::Free, defines: Vec::new(), common_headers_as_modules: false },
            &loader,
        );
        assert_eq!(expanded.text, "subroutine s\nend subroutine\nprogram p\nend program\n");
        let at = expanded.map.locate(expanded.text.find("program").unwrap());
        assert_eq!((at.file, at.range.start), (1, 0));
    }

    #[test]
    fn a_header_with_common_blocks_becomes_a_module_its_includers_use() {
        let loader = Files(
            [("grid.h", "      INTEGER N\n      PARAMETER (N = 8)\n      REAL U(N)\n      COMMON /F/ U,\n     &  V\n!HPF$ DISTRIBUTE U(BLOCK)\n")]
                .into_iter()
                .collect(),
        );
        let main = "      PROGRAM P\n      INCLUDE 'grid.h'\n      CALL S\n      END\n      SUBROUTINE S\n      INCLUDE 'grid.h'\n      U = 1.0\n      END\n";
        let roots = [Root { name: "main.f".into(), text: main.into(), cpp: false }];
        let options = ExpandOptions { form: SourceForm::FIXED, defines: Vec::new(), common_headers_as_modules: true };
        let expanded = expand(&roots, &options, &loader);
        assert!(expanded.diagnostics.is_empty(), "{:?}", expanded.diagnostics);
        assert_eq!(
            expanded.text,
            "      module hpf_include_1_grid\n      INTEGER N\n      PARAMETER (N = 8)\n      REAL U(N)\n\n\n!HPF$ DISTRIBUTE U(BLOCK)\n      end module hpf_include_1_grid\n      PROGRAM P\n      use hpf_include_1_grid\n      CALL S\n      END\n      SUBROUTINE S\n      use hpf_include_1_grid\n      U = 1.0\n      END\n"
        );
        let directive = expanded.text.find("DISTRIBUTE").unwrap();
        let at = expanded.map.locate(directive);
        assert_eq!((&*expanded.map.file(at.file).name, at.range.start), ("grid.h", 92));
        let call = expanded.text.find("CALL S").unwrap();
        assert_eq!(expanded.map.locate(call), FileRange { file: 0, range: TextRange::new(45, 45) });
        // A unit that declares the block itself keeps the header inlined.
        let own =
            "      PROGRAM P\n      INCLUDE 'grid.h'\n      END\n      SUBROUTINE S\n      COMMON /F/ U\n      END\n";
        let roots = [Root { name: "main.f".into(), text: own.into(), cpp: false }];
        assert!(!expand(&roots, &options, &loader).text.contains("module"));
    }
}
