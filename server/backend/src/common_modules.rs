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
//! DATA statements on the block (in BLOCK DATA, whose declarations of the
//! block are blanked like the others', or in any unit that declares it)
//! move into a module of initial values (`hpf_data_<block>_<k>`, the
//! block's variables as `hpf_init_<k>_<j>`), which the main program USEs;
//! before its first executable statement it assigns them to the block's
//! variables, a FORALL per array, so each process sets its own part.
//!
//! A unit that declares the block with a different sequence (count,
//! type, shape or mapping of a variable) is refused at its COMMON
//! statement, naming the block and the first variable that differs; so
//! are what the rewriting cannot keep: EQUIVALENCE on the block, DATA on
//! it that names anything else (`data_initialisation`), an alignment with an array outside the block or with an
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
    let mut helpers: Vec<DataHelper> = Vec::new();
    for block in &blocks {
        let helpers_before = helpers.len();
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
            if parent.is_some()
                || !matches!(
                    unit.kind,
                    UnitKind::Program | UnitKind::Subroutine | UnitKind::Function | UnitKind::BlockData
                )
            {
                errors.push((
                    declaration.statement,
                    format!("{} holds distributed arrays: the MPI backend does not lower it in this unit (declarations of the block outside main programs, external procedures and BLOCK DATA units)", shown(block)),
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
                if word.starts_with("equivalence") && mentions {
                    errors.push((
                        line,
                        format!(
                            "{} holds distributed arrays: the MPI backend does not lower EQUIVALENCE on its variables",
                            shown(block)
                        ),
                    ));
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
            // DATA on the block's variables: moved into a subroutine of its
            // own that the main program calls first (`data_initialisation`).
            match data_initialisation(analysis, text, &normalised, declaration, unit, &names, helpers.len()) {
                Ok(None) => {}
                Ok(Some(helper)) => {
                    blanks.extend(helper.statements.iter().copied());
                    helpers.push(helper);
                }
                Err(mut refused) => errors.append(&mut refused),
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
            // A BLOCK DATA unit keeps only what it initialises of other blocks.
            if unit.kind != UnitKind::BlockData {
                uses.entry(unit_id).or_default().push(only.clone());
            }
        }
        // The main program allocates the module's arrays: it USEs it, and
        // the initial values of the block's DATA.
        if let Some(main) = main {
            let entry = uses.entry(main).or_default();
            for helper in &helpers[helpers_before..] {
                entry.push(helper.uses.trim_end().to_string());
            }
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
    // The main program first calls the subroutines that hold the blocks' DATA.
    if let (Some(main), false) = (main, helpers.is_empty()) {
        let unit = flat[main].0;
        let mut at = unit.execution_start.min(normalised.len());
        if at >= unit.range.end {
            // No executable statement: before the END line.
            let body = normalised[..unit.range.end.min(normalised.len())].trim_end();
            at = body.rfind('\n').map_or(0, |it| it + 1);
        } else {
            at = normalised[..at].rfind('\n').map_or(0, |it| it + 1);
        }
        let calls: String = helpers.iter().map(|it| it.call.clone()).collect();
        edits.push((TextRange::empty(at), calls));
    }
    let mut tail = String::new();
    if !text.ends_with('\n') {
        tail.push('\n');
    }
    tail.push_str(&modules);
    for helper in &helpers {
        tail.push_str(&helper.source);
    }
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

/// A unit's DATA statements on a mapped block, moved into a module of
/// their own (`hpf_data_<block>_<k>`): copies of the block's variables
/// under the unit's names, and the DATA statements as written. The main
/// program USEs them renamed and, before its first executable statement,
/// assigns each to the block's variable: replicated values into
/// distributed arrays, each process its own part.
struct DataHelper {
    /// The DATA statements moved (whole lines of the user's text).
    statements: Vec<TextRange>,
    source: String,
    /// The main program's USE of the values, renamed.
    uses: String,
    /// The assignments of the values to the block's variables.
    call: String,
}

/// The DATA statements of `unit` on the variables of `declaration`'s
/// block, as a [`DataHelper`]; `None` when it has none.
fn data_initialisation(
    analysis: &FileAnalysis,
    text: &str,
    normalised: &str,
    declaration: &CommonDeclaration,
    unit: &syntax::Unit,
    names: &[String],
    index: usize,
) -> Result<Option<DataHelper>, Refusals> {
    let model = &analysis.model;
    let fixed = analysis.file.form.is_fixed();
    let members = &declaration.members;
    let member_keys: Vec<String> = members.iter().map(|it| model.symbol(*it).name.key()).collect();
    let own_end = unit.contains.first().map_or(unit.range.end, |it| it.range.start);
    let scanned = TextRange::new(unit.header.end.min(own_end), own_end);
    let lines = statement_lines(normalised, scanned);
    let mut statements: Vec<TextRange> = Vec::new();
    let mut errors: Refusals = Vec::new();
    let mut counters: Vec<String> = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let (word, line) = &lines[at];
        at += 1;
        if !word.starts_with("data") {
            continue;
        }
        // The statement with its continuation lines.
        let mut range = *line;
        while at < lines.len() && continues(text, fixed, range, lines[at].1) {
            range = TextRange::new(range.start, lines[at].1.end);
            at += 1;
        }
        let names = data_names(&normalised[range.to_range()]);
        if !names.iter().any(|it| member_keys.contains(it)) {
            continue;
        }
        for name in names.iter().skip(1) {
            if member_keys.contains(name) || counters.contains(name) {
                continue;
            }
            let id = model.lookup(declaration.unit, name);
            let counter = id.is_none_or(|id| {
                let symbol = model.symbol(id);
                symbol.kind == SymbolKind::Variable
                    && symbol.shape.is_empty()
                    && (symbol.type_name.eq_ignore_ascii_case("integer")
                        || symbol.type_name.is_empty() && ('i'..='n').contains(&name.chars().next().unwrap_or('a')))
            });
            if counter {
                counters.push(name.clone());
            } else {
                errors.push((range, format!("{} holds distributed arrays, and this DATA statement also names `{name}`, which is not in the block: the MPI backend moves the block's DATA into a module of its own (write the block's DATA with literal constants, in statements of their own)", shown(&declaration.block))));
            }
        }
        statements.push(range);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if statements.is_empty() {
        return Ok(None);
    }
    let refuse = |why: String| {
        vec![(statements[0], format!("{}: the MPI backend cannot move its DATA: {why}", shown(&declaration.block)))]
    };
    let tag = if declaration.block.is_empty() { "blank".to_string() } else { declaration.block.clone() };
    let name = format!("hpf_data_{tag}_{}", index + 1);
    let indent = if fixed { "      " } else { "  " };
    // The initial values in a module of their own, under names of its own
    // (`hpf_init_<k>_<j>`, the DATA statements rewritten to them); the main
    // program USEs them and, before anything else, assigns them to the
    // block's variables by one FORALL per array (its indices the module's,
    // `hpf_init_<k>_k<d>`), so that the owners assign their parts.
    let value_names: Vec<String> = (1..=members.len()).map(|it| format!("hpf_init_{}_{it}", index + 1)).collect();
    let values = member_lines(analysis, declaration, &value_names).map_err(refuse)?;
    let rank = members.iter().map(|it| model.symbol(*it).rank()).max().unwrap_or(0);
    let indices: Vec<String> = (1..=rank).map(|it| format!("hpf_init_{}_k{it}", index + 1)).collect();
    let mut source = format!("{indent}module {name}\n");
    for lines in values.iter().take(members.len()) {
        if let Some(line) = lines.first() {
            let _ = writeln!(source, "{indent}{}", line.trim());
        }
    }
    for counter in counters.iter().chain(&indices) {
        let _ = writeln!(source, "{indent}integer {counter}");
    }
    for range in &statements {
        let joined = joined_statement(text, fixed, whole_lines(text, *range));
        let mut renamed = String::new();
        let mut last = 0;
        for (start, end) in data_identifiers(&joined) {
            let key = joined[start..end].to_ascii_lowercase();
            if let Some(position) = member_keys.iter().position(|it| *it == key) {
                renamed.push_str(&joined[last..start]);
                renamed.push_str(&value_names[position]);
                last = end;
            }
        }
        renamed.push_str(&joined[last..]);
        source.push_str(&chopped(fixed, renamed.trim()));
    }
    let _ = writeln!(source, "{indent}end module {name}");
    let mut call = String::new();
    for ((module_name, value), member) in names.iter().zip(&value_names).zip(members) {
        let shape = &model.symbol(*member).shape;
        if shape.is_empty() {
            let _ = writeln!(call, "{indent}{module_name} = {value}");
            continue;
        }
        let controls: Vec<String> = shape
            .iter()
            .zip(&indices)
            .map(|(dim, k)| format!("{k} = {}:{}", dim.lo.known().unwrap_or(1), dim.hi.known().unwrap_or(0)))
            .collect();
        let used = indices[..shape.len()].join(", ");
        let statement = format!("forall ({}) {module_name}({used}) = {value}({used})", controls.join(", "));
        call.push_str(&broken(fixed, &statement));
    }
    let imported: Vec<String> = value_names.iter().chain(&indices).cloned().collect();
    let uses = wrapped(fixed, &format!("use {name}, only: "), &imported, "");
    Ok(Some(DataHelper {
        statements: statements.iter().map(|it| whole_lines(text, *it)).collect(),
        source,
        uses,
        call,
    }))
}

/// Whether `next` continues the statement whose lines so far are `range`.
fn continues(text: &str, fixed: bool, range: TextRange, next: TextRange) -> bool {
    let line = &text[next.to_range()];
    if fixed {
        let bytes = line.as_bytes();
        !line.starts_with(['c', 'C', '*', '!'])
            && bytes.len() > 5
            && bytes[..5].iter().all(|it| *it == b' ')
            && !matches!(bytes[5], b' ' | b'0')
    } else {
        let previous = &text[range.to_range()];
        previous.lines().last().is_some_and(|it| it.split('!').next().unwrap_or("").trim_end().ends_with('&'))
    }
}

/// The names a DATA statement mentions, lower case, in order (the keyword
/// first): not the letters of numbers (`1.5E0`), dot operators and
/// constants (`.TRUE.`), BOZ prefixes (`Z'FF'`) or character literals.
fn data_names(statement: &str) -> Vec<String> {
    let mut res: Vec<String> = Vec::new();
    for (start, end) in data_identifiers(statement) {
        let word = statement[start..end].to_ascii_lowercase();
        if !res.contains(&word) {
            res.push(word);
        }
    }
    res
}

/// The byte ranges of the names in a DATA statement (as [`data_names`]).
fn data_identifiers(statement: &str) -> Vec<(usize, usize)> {
    let bytes = statement.as_bytes();
    let mut res: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte == b'\'' || byte == b'"' {
            at += 1 + statement[at + 1..].find(byte as char).unwrap_or(statement.len() - at - 1) + 1;
        } else if byte == b'!' {
            at = statement[at..].find('\n').map_or(bytes.len(), |it| at + it);
        } else if byte.is_ascii_digit() {
            // A number with its exponent and kind (`1.5D+0`, `2_8`).
            at += 1;
            while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'.' || bytes[at] == b'_') {
                let exponent = matches!(bytes[at], b'e' | b'E' | b'd' | b'D' | b'q' | b'Q');
                at += 1;
                if exponent && at < bytes.len() && matches!(bytes[at], b'+' | b'-') {
                    at += 1;
                }
            }
        } else if byte == b'.' {
            let word = statement[at + 1..].bytes().take_while(u8::is_ascii_alphabetic).count();
            at += if word > 0 && bytes.get(at + 1 + word) == Some(&b'.') { word + 2 } else { 1 };
        } else if byte.is_ascii_alphabetic() {
            let end = at + statement[at..].bytes().take_while(|it| it.is_ascii_alphanumeric() || *it == b'_').count();
            if !matches!(bytes.get(end), Some(b'\'' | b'"')) {
                res.push((at, end));
            }
            at = end;
        } else {
            at += 1;
        }
    }
    res
}

/// A statement's text on one line: fixed form's columns 7-72 of each line,
/// free form's lines without their continuation marks (comments dropped).
fn joined_statement(text: &str, fixed: bool, range: TextRange) -> String {
    let mut res = String::new();
    for line in text[range.to_range()].lines() {
        if fixed {
            if line.starts_with(['c', 'C', '*', '!']) {
                continue;
            }
            let end = line.len().min(72);
            res.push_str(line.get(6.min(end)..end).unwrap_or(""));
        } else {
            let code = line.trim();
            if code.starts_with('!') {
                continue;
            }
            let code = code.strip_prefix('&').unwrap_or(code);
            res.push_str(code.strip_suffix('&').unwrap_or(code));
        }
    }
    res
}

/// A statement's text cut into lines of the file's form (fixed form's
/// columns 7-72, continued in column 6; free form's `&` at both ends), at
/// any character: both forms continue a token or a literal there.
fn chopped(fixed: bool, statement: &str) -> String {
    let chars: Vec<char> = statement.chars().collect();
    let mut res = String::new();
    for (index, piece) in chars.chunks(60).enumerate() {
        let piece: String = piece.iter().collect();
        match (fixed, index) {
            (true, 0) => res.push_str(&format!("      {piece}")),
            (true, _) => res.push_str(&format!("\n     &{piece}")),
            (false, 0) => res.push_str(&format!("  {piece}")),
            (false, _) => res.push_str(&format!("&\n  &{piece}")),
        }
    }
    res.push('\n');
    res
}

/// A statement cut into lines of the file's form at its blanks (never
/// inside a token: the backend reads these lines as the user's).
fn broken(fixed: bool, statement: &str) -> String {
    let (first, next) = if fixed { ("      ", "     &") } else { ("  ", "    ") };
    let mut res = String::new();
    let mut line = first.to_string();
    for word in statement.split(' ') {
        if line.len() + word.len() + 1 > 70 && line.len() > first.len() {
            if fixed {
                res.push_str(line.trim_end());
                res.push('\n');
            } else {
                res.push_str(&line);
                res.push_str("&\n");
            }
            line = next.to_string();
        }
        if !line.ends_with([' ', '&']) {
            line.push(' ');
        }
        line.push_str(word);
    }
    res.push_str(line.trim_end());
    res.push('\n');
    res
}

/// `head item, item, ... tail` as a statement of the file's form, continued
/// over lines of at most 72 columns in fixed form.
fn wrapped(fixed: bool, head: &str, items: &[String], tail: &str) -> String {
    let indent = if fixed { "      " } else { "  " };
    let mut res = String::new();
    let mut line = format!("{indent}{head}");
    for (index, item) in items.iter().enumerate() {
        let piece = if index + 1 < items.len() { format!("{item}, ") } else { format!("{item}{tail}") };
        if line.len() + piece.len() > 70 && line.trim().len() > head.len() {
            if fixed {
                res.push_str(line.trim_end());
                res.push('\n');
                line = "     &".to_string();
            } else {
                res.push_str(&line);
                res.push_str("&\n");
                line = format!("{indent}  ");
            }
        }
        line.push_str(&piece);
    }
    if items.is_empty() {
        line.push_str(tail);
    }
    res.push_str(&line);
    res.push('\n');
    res
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

#[cfg(test)]
mod data_tests {
    use crate::tests::lowered;

    fn program(data: &str) -> String {
        format!(
            "program p
  implicit none
  integer, parameter :: k = 4
  real :: a(8, 3)
  integer :: n
  common /f/ a, n
!HPF$ DISTRIBUTE A(*, BLOCK)
{data}  print *, sum(a), n
end program p
"
        )
    }

    /// DATA on a block's variables in the main program: the values go into
    /// a module of their own, and each process assigns its part first.
    #[test]
    fn data_of_a_distributed_block_ends_in_each_local_part() {
        let (notes, source) =
            lowered(&program("  data a /12*1.5, 12*2.5/\n  data ((a(i, j), i = 1, 2), j = 1, 3) /6*0.0/, n /3/\n"))
                .unwrap();
        assert!(notes.iter().all(|it| !it.contains("runs on one process")), "{notes:?}");
        assert!(source.contains("module hpf_data_f_1\n  real :: hpf_init_1_1(1:8,1:3)\n  integer :: hpf_init_1_2\n  integer i\n  integer j\n  integer hpf_init_1_k1\n  integer hpf_init_1_k2\n  data hpf_init_1_1 /12*1.5, 12*2.5/\n  data ((hpf_init_1_1(i, j), i = 1, 2), j = 1, 3) /6*0.0/, hpf&\n  &_init_1_2 /3/\n"), "{source}");
        assert!(
            source
                .contains("use hpf_data_f_1, only: hpf_init_1_1, hpf_init_1_2, hpf_init_1_k1, &\n    hpf_init_1_k2\n"),
            "{source}"
        );
        assert!(source.contains("  n = hpf_init_1_2\n"), "{source}");
        assert!(source.contains("  forall (hpf_init_1_k1 = 1:8, hpf_init_1_k2 = hpf_lo:hpf_hi:1) a(hpf_init_1_k1,&\n    hpf_init_1_k2) = hpf_init_1_1(hpf_init_1_k1, hpf_init_1_k2)\n"), "{source}");
        // The DATA statements are gone from the program.
        assert!(!source.contains("data a /"), "{source}");
    }

    #[test]
    fn data_naming_other_entities_is_refused() {
        let errors = lowered(&program("  data a /24*1.5/, n /k/\n")).unwrap_err();
        assert_eq!(errors, ["8: COMMON /f/ holds distributed arrays, and this DATA statement also names `k`, which is not in the block: the MPI backend moves the block's DATA into a module of its own (write the block's DATA with literal constants, in statements of their own)"]);
        let errors = lowered(&program("  real :: b(24)\n  equivalence (a, b)\n")).unwrap_err();
        assert_eq!(
            errors,
            ["9: COMMON /f/ holds distributed arrays: the MPI backend does not lower EQUIVALENCE on its variables"]
        );
    }
}
