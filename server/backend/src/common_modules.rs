//! COMMON blocks that hold distributed (or aligned) arrays, as F77-era HPF
//! codes keep their fields (`COMMON /FIELDS/ H, U, V` with `!HPF$
//! DISTRIBUTE H(BLOCK)` in every routine that declares the block). HPF
//! makes such a block non-sequential: every unit declares the same
//! sequence of variables (types, shapes, mappings), the names may differ.
//!
//! Before the lowering (the first pass of `hoist::rewrite`), the program
//! is rewritten so that each such block is a module of its own
//! (`hpf_common_<block>`, `hpf_blank_common` for blank COMMON), appended
//! to the text: its variables in block order, with the names, types,
//! folded bounds and mappings of the first unit that declares it (the
//! PROCESSORS arrangements and TEMPLATEs its mappings name are declared
//! in the module too, under names of its own). Each
//! unit that declares the block USEs the module (without ONLY: its
//! procedures' copies name the gathered copies too) right after its first
//! statement, and its COMMON statement (the block's part of it), its
//! declarations of the block's variables and its mapping directives of
//! them are blanked in place; a unit whose names differ has
//! its references renamed to the module's names. The main program USEs
//! every such module (it allocates the local parts). The distributed
//! arrays are then module arrays, lowered as `module_arrays.rs` says, and
//! the subroutines that work on them run SPMD (`procedures.rs`).
//!
//! A unit that declares the block with a different sequence (count,
//! type, shape or mapping of a variable) is refused at its COMMON
//! statement, naming the block and the first variable that differs; so
//! are what the rewriting cannot keep: DATA, EQUIVALENCE or BLOCK DATA on
//! the block, an alignment with an array outside the block or with an
//! aligned template, bounds, shapes or kinds that do not fold, a
//! directive that also maps variables outside the block.

use std::collections::BTreeMap;
use std::fmt::Write;

use analysis::model::{Axis, Bound, Distribution, Format, SymbolId, SymbolKind, UnitId};
use analysis::FileAnalysis;
use syntax::{DeclAttr, TextRange, UnitKind};

use crate::common_blocks::CommonDeclaration;
use crate::element_type::ElementType;

/// Errors at user ranges.
pub(crate) type Refusals = Vec<(TextRange, String)>;

/// The module a mapped block becomes.
pub(crate) fn module_name(block: &str) -> String {
    if block.is_empty() {
        "hpf_blank_common".to_string()
    } else {
        format!("hpf_common_{block}")
    }
}

fn shown(block: &str) -> String {
    if block.is_empty() {
        "blank COMMON".to_string()
    } else {
        format!("COMMON /{block}/")
    }
}

/// Whether a COMMON block member is mapped by its own directives.
fn mapped(analysis: &FileAnalysis, id: SymbolId) -> bool {
    let mapping = &analysis.model.symbol(id).mapping;
    mapping.distribution.is_some() || mapping.align.is_some()
}

/// The blocks that hold a mapped variable in some unit.
pub(crate) fn mapped_blocks(analysis: &FileAnalysis, declarations: &[CommonDeclaration]) -> Vec<String> {
    let mut res: Vec<String> = Vec::new();
    for declaration in declarations {
        if declaration.members.iter().any(|it| mapped(analysis, *it)) && !res.contains(&declaration.block) {
            res.push(declaration.block.clone());
        }
    }
    res
}

/// One declaration of a block as the module would declare it, with the
/// names of `names` (the module's): per variable its declaration and
/// directive lines, or why it cannot be written.
/// The last entry holds the PROCESSORS and TEMPLATE directives the
/// mappings name, under names of the module's own (`hpf_p_<block>_<k>`,
/// `hpf_t_<block>_<k>`).
fn member_lines(
    analysis: &FileAnalysis,
    declaration: &CommonDeclaration,
    names: &[String],
) -> Result<Vec<Vec<String>>, String> {
    let model = &analysis.model;
    let flat = analysis::model::flatten_units(&analysis.file);
    let unit = flat.get(declaration.unit).map(|it| it.0).ok_or("a unit of another file")?;
    let mut res = Vec::new();
    let mut arrangements = Arrangements {
        analysis,
        tag: if declaration.block.is_empty() { "blank".to_string() } else { declaration.block.clone() },
        placed: Vec::new(),
        lines: Vec::new(),
    };
    for (index, &member) in declaration.members.iter().enumerate() {
        let symbol = model.symbol(member);
        let local = &symbol.name.text;
        let name = names.get(index).cloned().unwrap_or_else(|| local.to_ascii_lowercase());
        let mut lines = Vec::new();
        // The type: declared, or the unit's IMPLICIT rule for its letter.
        let mut typed = symbol.clone();
        if typed.type_name.is_empty() {
            let first = local.to_ascii_lowercase().chars().next().unwrap_or('a');
            let rule = unit
                .implicit
                .iter()
                .rev()
                .find(|rule| rule.letters.iter().any(|(lo, hi)| (*lo..=*hi).contains(&first)));
            if let Some(rule) = rule {
                if rule.type_name.is_empty() {
                    return Err(format!("`{local}` has no type"));
                }
                typed.type_name = rule.type_name.clone();
                typed.type_kind = rule.type_kind.clone();
                let digits: String = rule.type_kind.chars().filter(|it| it.is_ascii_digit()).collect();
                typed.kind_value = digits.parse().ok();
            }
        }
        let element = ElementType::of_symbol(&typed).map_err(|why| format!("`{local}`: {why}"))?;
        let mut dims = Vec::new();
        for dim in &symbol.shape {
            match (&dim.lo, &dim.hi) {
                (Bound::Known(lo), Bound::Known(hi)) => dims.push(format!("{lo}:{hi}")),
                _ => return Err(format!("the bounds of `{local}` do not fold to constants")),
            }
        }
        let entity = if dims.is_empty() { name.clone() } else { format!("{name}({})", dims.join(",")) };
        lines.push(format!("      {} :: {entity}", element.declaration()));
        let mapping = &symbol.mapping;
        if mapping.dynamic || mapping.shadow.is_some() {
            return Err(format!("`{local}` is DYNAMIC or has a SHADOW directive"));
        }
        if let Some(distribution) = &mapping.distribution {
            let line = arrangements.distribute(&name, local, distribution)?;
            lines.push(line);
        }
        if let Some(align) = &mapping.align {
            let target_name = match declaration.members.iter().position(|it| *it == align.target) {
                Some(target) => names.get(target).cloned().unwrap_or_default(),
                None if model.symbol(align.target).kind == SymbolKind::Template => {
                    arrangements.template(align.target)?
                }
                None => {
                    return Err(format!(
                        "`{local}` is aligned with `{}`, which is neither in the block nor a template",
                        model.symbol(align.target).name.text
                    ))
                }
            };
            let mut used = vec![false; symbol.shape.len()];
            let mut subscripts = Vec::new();
            for axis in &align.axes {
                subscripts.push(match axis {
                    Axis::Affine { source_dim, stride, offset } => {
                        if let Some(it) = used.get_mut(*source_dim) {
                            *it = true;
                        }
                        let variable = format!("hpf_i{}", source_dim + 1);
                        let scaled = if *stride == 1 { variable } else { format!("{stride}*{variable}") };
                        match offset {
                            0 => scaled,
                            it if *it > 0 => format!("{scaled}+{it}"),
                            it => format!("{scaled}{it}"),
                        }
                    }
                    Axis::Constant(value) => value.to_string(),
                    Axis::Replicated => "*".to_string(),
                    Axis::Unknown => return Err(format!("the alignment of `{local}` does not fold")),
                });
            }
            let dummies: Vec<String> = used
                .iter()
                .enumerate()
                .map(|(dim, used)| if *used { format!("hpf_i{}", dim + 1) } else { "*".to_string() })
                .collect();
            lines.push(format!(
                "!HPF$ ALIGN {name}({}) WITH {target_name}({})",
                dummies.join(","),
                subscripts.join(",")
            ));
        }
        // Fixed form reads 72 columns.
        if analysis.file.form.is_fixed() && lines.iter().any(|it| it.len() > 72) {
            return Err(format!("the declaration or mapping of `{local}` would not fit on a fixed-form line"));
        }
        res.push(lines);
    }
    res.push(arrangements.lines);
    Ok(res)
}

/// The PROCESSORS and TEMPLATE directives of a block's module.
struct Arrangements<'a> {
    analysis: &'a FileAnalysis,
    tag: String,
    /// The unit's arrangements and templates placed so far, and their names in the module.
    placed: Vec<(SymbolId, String)>,
    lines: Vec<String>,
}

impl Arrangements<'_> {
    /// The DISTRIBUTE directive of `name` (`local` in the unit).
    fn distribute(&mut self, name: &str, local: &str, distribution: &Distribution) -> Result<String, String> {
        if distribution.descriptive {
            return Err(format!("`{local}` has a descriptive distribution"));
        }
        let mut formats = Vec::new();
        for format in &distribution.formats {
            match format {
                Format::BlockOf(None) | Format::Cyclic(None) | Format::GenBlock | Format::Indirect => {
                    return Err(format!("`{local}` is distributed {}", format.render()))
                }
                _ => formats.push(format.render()),
            }
        }
        let onto = match distribution.onto {
            Some(processors) => format!(" ONTO {}", self.processors(processors)?),
            None => String::new(),
        };
        Ok(format!("!HPF$ DISTRIBUTE {name}({}){onto}", formats.join(",")))
    }

    /// The shape of `symbol` as constant bounds, or NUMBER_OF_PROCESSORS().
    fn shape(&self, symbol: &analysis::model::Symbol) -> Result<String, String> {
        let mut dims = Vec::new();
        for dim in &symbol.shape {
            match (&dim.lo, &dim.hi) {
                (Bound::Known(lo), Bound::Known(hi)) => dims.push(format!("{lo}:{hi}")),
                (Bound::Known(1), Bound::Unknown(text))
                    if text.replace(' ', "").eq_ignore_ascii_case("number_of_processors()") =>
                {
                    dims.push("NUMBER_OF_PROCESSORS()".to_string())
                }
                _ => return Err(format!("the shape of `{}` does not fold to constants", symbol.name.text)),
            }
        }
        Ok(dims.join(","))
    }

    fn processors(&mut self, id: SymbolId) -> Result<String, String> {
        if let Some((_, name)) = self.placed.iter().find(|it| it.0 == id) {
            return Ok(name.clone());
        }
        let symbol = self.analysis.model.symbol(id);
        let name = format!("hpf_p_{}_{}", self.tag, self.placed.len() + 1);
        let shape = self.shape(symbol)?;
        self.placed.push((id, name.clone()));
        self.lines.push(format!("!HPF$ PROCESSORS {name}({shape})"));
        Ok(name)
    }

    fn template(&mut self, id: SymbolId) -> Result<String, String> {
        if let Some((_, name)) = self.placed.iter().find(|it| it.0 == id) {
            return Ok(name.clone());
        }
        let symbol = self.analysis.model.symbol(id);
        let local = symbol.name.text.clone();
        if symbol.mapping.align.is_some() || symbol.mapping.dynamic {
            return Err(format!("template `{local}` is aligned or DYNAMIC"));
        }
        let name = format!("hpf_t_{}_{}", self.tag, self.placed.len() + 1);
        let shape = self.shape(symbol)?;
        self.placed.push((id, name.clone()));
        let distribution = symbol.mapping.distribution.clone();
        let mut lines = vec![format!("!HPF$ TEMPLATE {name}({shape})")];
        if let Some(distribution) = distribution {
            lines.push(self.distribute(&name, &local, &distribution)?);
        }
        self.lines.extend(lines);
        Ok(name)
    }
}

/// The whole lines `range` spans, without their line ends.
fn whole_lines(text: &str, range: TextRange) -> TextRange {
    let start = text[..range.start.min(text.len())].rfind('\n').map_or(0, |it| it + 1);
    let from = range.end.max(range.start + 1).min(text.len()).saturating_sub(1);
    let end = text[from..].find('\n').map_or(text.len(), |it| from + it);
    TextRange::new(start, end.max(start))
}

/// `range` of `text` blanked: every character but line ends a space.
fn blanked(text: &str, range: TextRange) -> String {
    text[range.to_range()].chars().map(|it| if it == '\n' || it == '\r' { it } else { ' ' }).collect()
}

/// The first word of each statement line of `range` (lower case), with the line's range.
fn statement_lines(text: &str, range: TextRange) -> Vec<(String, TextRange)> {
    let mut res = Vec::new();
    let mut at = range.start;
    for line in text[range.to_range()].split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let code = if content.starts_with(['!', '*', 'c', 'C']) { "" } else { content };
        let word: String = code
            .trim_start_matches(|it: char| it.is_ascii_digit() || it.is_whitespace())
            .chars()
            .take_while(|it| it.is_ascii_alphabetic() || *it == ' ')
            .filter(|it| *it != ' ')
            .collect::<String>()
            .to_ascii_lowercase();
        res.push((word, TextRange::new(at, at + content.len())));
        at += line.len();
    }
    res
}

/// The rewriting of the program's mapped COMMON blocks into modules: the
/// edits of the user's `text` (sorted, not overlapping), `None` when the
/// program has none, or the refusals.
pub(crate) fn rewrite(analysis: &FileAnalysis, text: &str) -> Result<Option<Vec<(TextRange, String)>>, Refusals> {
    let normalised = syntax::parser_text(text, analysis.file.form).into_owned();
    let declarations = crate::common_blocks::declarations(analysis, &normalised);
    let blocks = mapped_blocks(analysis, &declarations);
    if blocks.is_empty() {
        return Ok(None);
    }
    let model = &analysis.model;
    let flat = analysis::model::flatten_units(&analysis.file);
    let occurrences = analysis::ide::occurrences(analysis);
    let mut errors: Refusals = Vec::new();
    let mut edits: Vec<(TextRange, String)> = Vec::new();
    // Per unit, the USE lines to insert after its first statement.
    let mut uses: BTreeMap<UnitId, Vec<String>> = BTreeMap::new();
    let mut modules = String::new();
    let main = flat.iter().position(|(it, _)| it.kind == UnitKind::Program);
    // Per unit, the variables of all its mapped blocks (a declaration may
    // name variables of several).
    let mut unit_members: BTreeMap<UnitId, Vec<SymbolId>> = BTreeMap::new();
    for declaration in declarations.iter().filter(|it| blocks.contains(&it.block)) {
        unit_members.entry(declaration.unit).or_default().extend(declaration.members.iter().copied());
    }
    let mut declarations_done: Vec<UnitId> = Vec::new();
    for block in &blocks {
        let of_block: Vec<&CommonDeclaration> = declarations.iter().filter(|it| &it.block == block).collect();
        let first = of_block[0];
        let names: Vec<String> =
            first.members.iter().map(|it| model.symbol(*it).name.text.to_ascii_lowercase()).collect();
        let canonical = match member_lines(analysis, first, &names) {
            Ok(lines) => lines,
            Err(why) => {
                errors.push((
                    first.statement,
                    format!("{}: the MPI backend cannot make it a module: {why}", shown(block)),
                ));
                continue;
            }
        };
        let module = module_name(block);
        let _ = writeln!(modules, "      module {module}");
        // Its PROCESSORS and TEMPLATE directives (the last entry) first.
        let arrangements = canonical.last().into_iter();
        for lines in arrangements.chain(&canonical[..canonical.len().saturating_sub(1)]) {
            for line in lines {
                let _ = writeln!(modules, "{line}");
            }
        }
        let _ = writeln!(modules, "      end module {module}");
        // Without ONLY: the procedures' copies on gathered copies name `hpf_g_*` too.
        let only = format!("      use {module}");
        for declaration in &of_block {
            let (unit, parent) = flat[declaration.unit];
            if parent.is_some() || !matches!(unit.kind, UnitKind::Program | UnitKind::Subroutine | UnitKind::Function) {
                let what = if unit.kind == UnitKind::BlockData { "a BLOCK DATA unit" } else { "this unit" };
                errors.push((
                    declaration.statement,
                    format!("{} holds distributed arrays: the MPI backend does not lower it in {what} (initial values or declarations of the block outside main programs and external procedures)", shown(block)),
                ));
                continue;
            }
            // The same sequence as the first declaration.
            if declaration.members.len() != first.members.len() {
                let at = declaration.members.len().min(first.members.len());
                let which = first.members.get(at).or(declaration.members.get(at)).copied();
                let name = which.map_or(String::new(), |it| model.symbol(it).name.text.clone());
                errors.push((
                    declaration.statement,
                    format!("{} holds distributed arrays, and this unit declares {} variables in it where the first unit that declares it has {} (from `{name}` on): every unit must declare the same sequence of variables", shown(block), declaration.members.len(), first.members.len()),
                ));
                continue;
            }
            let here = match member_lines(analysis, declaration, &names) {
                Ok(lines) => lines,
                Err(why) => {
                    errors.push((
                        declaration.statement,
                        format!("{}: the MPI backend cannot make it a module: {why}", shown(block)),
                    ));
                    continue;
                }
            };
            if let Some(index) = (0..here.len()).find(|it| here[*it] != canonical[*it]) {
                // Past the variables: the templates or arrangements differ; the first aligned variable names it.
                let index = if index < names.len() {
                    index
                } else {
                    (0..names.len())
                        .find(|it| model.symbol(declaration.members[*it]).mapping.align.is_some())
                        .unwrap_or(0)
                };
                let local = &model.symbol(declaration.members[index]).name.text;
                errors.push((
                    declaration.statement,
                    format!("{} holds distributed arrays, and this unit declares its variable {} (`{local}`) otherwise than the first unit that declares it (`{}`: type, shape or mapping): every unit must declare the same sequence of variables", shown(block), index + 1, names[index]),
                ));
                continue;
            }
            let unit_id = declaration.unit;
            let members: Vec<SymbolId> = declaration.members.clone();
            let is_member = |id: SymbolId| members.contains(&id);
            let mut blanks: Vec<TextRange> = Vec::new();
            // Names that would clash with the module's.
            for (index, name) in names.iter().enumerate() {
                if model.lookup(unit_id, name).is_some_and(|other| other != members[index]) {
                    errors.push((
                        declaration.statement,
                        format!("{}: this unit names its variable {} `{}`, and `{name}` (the block's name for it in the first unit that declares it) is another entity here: rename one of them", shown(block), index + 1, model.symbol(members[index]).name.text),
                    ));
                }
            }
            // The COMMON statement's part for the block.
            let statement_text = &normalised[declaration.statement.to_range()];
            let markers = block_segments(statement_text);
            let own: Vec<&(String, usize, usize)> = markers.iter().filter(|it| &it.0 == block).collect();
            if own.len() == markers.len() {
                blanks.push(whole_lines(&normalised, declaration.statement));
            } else {
                for (_, start, end) in own {
                    let mut start = declaration.statement.start + start;
                    let end = declaration.statement.start + end;
                    // The comma before the last block's part goes too.
                    let before = normalised[..start].trim_end();
                    let last = end >= declaration.statement.end.min(normalised.len())
                        || normalised[end..declaration.statement.end].trim().is_empty();
                    if last && before.ends_with(',') {
                        start = before.len() - 1;
                    }
                    blanks.push(TextRange::new(start, end));
                }
            }
            // The unit's declarations of the variables of its mapped blocks, once.
            let all_members = unit_members.get(&unit_id).cloned().unwrap_or_default();
            let in_blocks = |id: SymbolId| all_members.contains(&id);
            let decls: &[syntax::Decl] = if declarations_done.contains(&unit_id) { &[] } else { &unit.decls };
            declarations_done.push(unit_id);
            for decl in decls {
                if decl.attrs.iter().any(|it| matches!(it, DeclAttr::Other(word) if word == "common")) {
                    continue;
                }
                let inside: Vec<bool> = decl
                    .entities
                    .iter()
                    .map(|it| model.lookup(unit_id, &it.name.key()).is_some_and(in_blocks))
                    .collect();
                if !inside.contains(&true) {
                    continue;
                }
                if decl.attrs.iter().any(|it| {
                    matches!(it, DeclAttr::Parameter | DeclAttr::Allocatable | DeclAttr::Pointer | DeclAttr::Intent)
                }) {
                    errors.push((decl.range, format!("{} holds distributed arrays: the MPI backend does not lower this statement on its variables", shown(block))));
                    continue;
                }
                if inside.iter().all(|it| *it) {
                    blanks.push(whole_lines(&normalised, decl.range));
                    continue;
                }
                for (index, entity) in decl.entities.iter().enumerate() {
                    if !inside[index] {
                        continue;
                    }
                    // With its comma: the one after it while a kept entity follows, else the one before.
                    let kept_after = inside[index + 1..].contains(&false);
                    let range = match (index.checked_sub(1).map(|it| &decl.entities[it]), decl.entities.get(index + 1))
                    {
                        (_, Some(next)) if kept_after => TextRange::new(entity.range.start, next.range.start),
                        (Some(previous), _) => TextRange::new(previous.range.end, entity.range.end),
                        _ => entity.range,
                    };
                    blanks.push(range);
                }
            }
            // Its mapping directives.
            for &member in &members {
                let mapping = &model.symbol(member).mapping;
                let ranges = mapping
                    .distribution
                    .iter()
                    .map(|it| it.directive)
                    .chain(mapping.align.iter().map(|it| it.directive));
                for directive in ranges {
                    let others = model.units[unit_id].symbols.iter().enumerate().any(|(index, symbol)| {
                        let id = SymbolId { unit: unit_id, index };
                        let same = symbol.mapping.distribution.as_ref().is_some_and(|it| it.directive == directive)
                            || symbol.mapping.align.as_ref().is_some_and(|it| it.directive == directive);
                        same && !is_member(id)
                    });
                    if others {
                        errors.push((directive, format!("{} holds distributed arrays: this directive maps variables in it and outside it; write one directive for the block's variables", shown(block))));
                    }
                    blanks.push(whole_lines(&normalised, directive));
                }
            }
            // DATA and EQUIVALENCE on the block's variables.
            let spec = TextRange::new(
                unit.header.end.min(unit.range.end),
                unit.execution_start.max(unit.header.end).min(unit.range.end),
            );
            for (word, line) in statement_lines(&normalised, spec) {
                let text = &normalised[line.to_range()];
                let names_here = members.iter().map(|it| model.symbol(*it).name.key());
                let mentions = names_here.clone().any(|name| crate::private::mentions_word(text, &name));
                if (word.starts_with("data") || word.starts_with("equivalence")) && mentions {
                    errors.push((line, format!("{} holds distributed arrays: the MPI backend does not lower DATA or EQUIVALENCE on its variables", shown(block))));
                } else if word.starts_with("save") && text.to_ascii_lowercase().contains(&format!("/{block}/")) {
                    let rest = text.to_ascii_lowercase().replace(&format!("/{block}/"), "");
                    let rest: String = rest.chars().filter(|it| !it.is_whitespace() && *it != ',').collect();
                    if rest == "save" {
                        blanks.push(line);
                    } else {
                        errors.push((
                            line,
                            format!(
                                "SAVE of {} with other entities: write `SAVE /{block}/` on a line of its own",
                                shown(block)
                            ),
                        ));
                    }
                }
            }
            blanks.sort_by_key(|it| (it.start, it.end));
            blanks.dedup();
            // References under other names than the module's.
            for occurrence in occurrences.iter() {
                let Some(index) = members.iter().position(|it| *it == occurrence.symbol) else { continue };
                if !unit.range.contains_range(occurrence.range)
                    || blanks.iter().any(|it| it.contains_range(occurrence.range))
                    || model.symbol(occurrence.symbol).name.key() == names[index]
                {
                    continue;
                }
                edits.push((occurrence.range, names[index].clone()));
            }
            for range in blanks {
                edits.push((range, blanked(&normalised, range)));
            }
            uses.entry(unit_id).or_default().push(only.clone());
        }
        // The main program allocates the module's arrays: it USEs it.
        if let Some(main) = main {
            let entry = uses.entry(main).or_default();
            if !entry.contains(&only) {
                for name in &names {
                    if model.lookup(main, name).is_some() {
                        errors.push((
                            flat[main].0.header,
                            format!("the main program does not declare {}, and its `{name}` would clash with the block's variable of that name: declare the block in the main program", shown(block)),
                        ));
                    }
                }
                entry.push(only.clone());
            }
        }
    }
    if !errors.is_empty() {
        errors.sort_by_key(|it| (it.0.start, it.0.end));
        errors.dedup();
        return Err(errors);
    }
    for (unit, lines) in uses {
        let (syntax_unit, _) = flat[unit];
        let header = syntax_unit.header;
        let from = header.end.max(header.start + 1).min(normalised.len()).saturating_sub(1);
        let mut at = normalised[from..].find('\n').map_or(normalised.len(), |it| from + it + 1);
        // A main program without a PROGRAM statement: before its first statement.
        if syntax_unit.kind == UnitKind::Program && syntax_unit.name.is_none() {
            let start = syntax_unit.header.start.min(normalised.len());
            at = normalised[..start].rfind('\n').map_or(0, |it| it + 1);
        }
        let mut inserted = lines.join("\n");
        inserted.push('\n');
        if at == normalised.len() && !normalised.ends_with('\n') {
            inserted.insert(0, '\n');
        }
        edits.push((TextRange::empty(at), inserted));
    }
    let mut tail = String::new();
    if !text.ends_with('\n') {
        tail.push('\n');
    }
    tail.push_str(&modules);
    edits.push((TextRange::empty(text.len()), tail));
    edits.sort_by_key(|it| (it.0.start, it.0.end));
    // Overlapping edits (a rename inside a blanked range) keep the first.
    let mut res: Vec<(TextRange, String)> = Vec::new();
    for edit in edits {
        if res.last().is_some_and(|last| edit.0.start < last.0.end) {
            continue;
        }
        res.push(edit);
    }
    Ok(Some(res))
}

/// The parts of a COMMON statement's text per block: (block, start, end)
/// relative to the text, from the block's opening `/` (or the first
/// object, for blank COMMON first) to the next block's.
fn block_segments(text: &str) -> Vec<(String, usize, usize)> {
    let mut slashes = Vec::new();
    let mut depth = 0usize;
    for (at, ch) in text.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            '/' if depth == 0 => slashes.push(at),
            _ => {}
        }
    }
    // After the keyword.
    let lower = text.to_ascii_lowercase();
    let body = lower.find("common").map_or(0, |it| it + 6);
    let mut res: Vec<(String, usize, usize)> = Vec::new();
    if slashes.first().is_none_or(|first| !text[body..*first].trim().trim_end_matches(',').trim().is_empty()) {
        res.push((String::new(), body, slashes.first().copied().unwrap_or(text.len())));
    }
    for pair in slashes.chunks(2) {
        let [open, close] = pair else { break };
        let name: String = text[open + 1..*close].chars().filter(|it| !it.is_whitespace() && *it != '&').collect();
        res.push((name.to_ascii_lowercase(), *open, text.len()));
    }
    let count = res.len();
    for index in 0..count.saturating_sub(1) {
        let next = res[index + 1].1;
        res[index].2 = next;
    }
    res
}

#[cfg(test)]
mod tests {
    use super::block_segments;

    #[test]
    fn segments_run_from_a_block_to_the_next() {
        let text = "COMMON /A/ X, /B/ Y";
        let segments = block_segments(text);
        assert_eq!(segments, vec![("a".to_string(), 7, 14), ("b".to_string(), 14, 19)]);
        assert_eq!(block_segments("common x, y // z"), vec![(String::new(), 6, 12), (String::new(), 12, 16)]);
    }
}
