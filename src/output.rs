//! Rendering for people: unified diffs with colour. Colour codes are always written here;
//! `cli::print` drops them where colour is off (not a terminal, NO_COLOR, TERM=dumb,
//! --no-color), in the pass that makes the text terminal-safe.

use crate::change::Change;
use crate::data::ORIGINAL_SPEC_ANNOTATION;
use crate::gojson;
use crate::model::{ObjectKey, steps_named};
use crate::plan::{RoutingPlan, StagePlan};
use crate::providers::{Action, ObjectPlan};
use crate::yaml;
use anstyle::{AnsiColor, Style};
use serde_json::Value;
use similar::udiff::UnifiedHunkHeader;
use similar::{Algorithm, ChangeTag};
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

pub const BOLD: Style = Style::new().bold();
pub const RED: Style = AnsiColor::Red.on_default();
pub const GREEN: Style = AnsiColor::Green.on_default();
pub const CYAN: Style = AnsiColor::Cyan.on_default();
pub const YELLOW: Style = AnsiColor::Yellow.on_default();
pub const DIM: Style = Style::new().dimmed();

/// `text` in `style` (the codes are dropped later where colour is off).
pub fn paint(style: Style, text: &str) -> String {
    format!("{style}{text}{style:#}")
}

/// Text for a terminal. What a cluster or a file says (a header value in a step, a status
/// message, a claim's holder, an API server's error) could otherwise move the cursor, clear the
/// screen under a confirmation, write the clipboard or reverse what is shown: every control
/// character but a line break and a tab, and every bidirectional-text control, is shown escaped
/// (`\u{1b}`). The colours this program adds (the styles above, and their reset) are kept where
/// `colour` is on and dropped where it is off, in the same pass.
pub fn terminal_safe(text: &str, colour: bool) -> std::borrow::Cow<'_, str> {
    // The bytes that begin such a character (each begins a character: none is a UTF-8
    // continuation byte): C0 and DEL; 0xC2 (C1, U+0080–U+009F); 0xD8 (U+061C); 0xE2 (U+200E,
    // U+200F, U+202A–U+202E, U+2066–U+2069).
    let suspect = |b: &u8| (*b < 0x20 && *b != b'\n' && *b != b'\t') || matches!(*b, 0x7F | 0xC2 | 0xD8 | 0xE2);
    if !text.as_bytes().iter().any(suspect) {
        return text.into();
    }
    // The codes of the styles above, and of their reset, as written.
    static OURS: std::sync::LazyLock<[String; 7]> = std::sync::LazyLock::new(|| {
        let [bold, red, green, cyan, yellow, dim] =
            [BOLD, RED, GREEN, CYAN, YELLOW, DIM].map(|s| s.render().to_string());
        [bold, red, green, cyan, yellow, dim, BOLD.render_reset().to_string()]
    });
    let mut safe = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(at) = rest.as_bytes().iter().position(suspect) {
        safe.push_str(&rest[..at]);
        rest = &rest[at..];
        let c = rest.chars().next().expect("a character begins at each suspect byte");
        let taken = match OURS.iter().find(|code| rest.starts_with(code.as_str())) {
            Some(code) => {
                if colour {
                    safe.push_str(code);
                }
                code.len()
            }
            None if is_unsafe(c) => {
                safe.extend(c.escape_unicode());
                c.len_utf8()
            }
            None => {
                safe.push(c);
                c.len_utf8()
            }
        };
        rest = &rest[taken..];
    }
    safe.push_str(rest);
    safe.into()
}

/// A character `terminal_safe` escapes.
fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// How the stored original (the original-spec annotation: the object's routing as escaped JSON,
/// one long line) shows in diffs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StoredOriginal {
    /// `stored (sha256 1a2b3c4d5e6f, 212 bytes)`: a change to it is still a changed line.
    #[default]
    Summary,
    /// Its text, as the controller writes it (`--show-stored-original`).
    Full,
}

/// The part of a gateway object the controller writes, as YAML for diffs: identity, labels,
/// annotations and spec (the spec borrowed from the object, the small metadata copied; keys in
/// sorted order as kubectl prints them); nothing for an object that does not exist (null).
/// The owner references too of an object made or deleted `whole`: they are written only when
/// it is made (the canary Ingress's, to the Rollout), decide its garbage collection and whether
/// `restore` may delete it; shown as the object has them, the owner's uid included (with
/// `plan -f`, the Rollout file's, usually `""`). An object updated has them left out, so that
/// its diffs do not carry them as unchanged context.
pub fn routing_view(object: &Value, stored: StoredOriginal, whole: bool) -> String {
    if object.is_null() {
        return String::new();
    }
    let owners = whole.then_some("ownerReferences");
    let metadata: serde_json::Map<String, Value> = ["annotations", "labels", "name", "namespace"]
        .into_iter()
        .chain(owners)
        .filter_map(|name| Some((name.to_string(), object["metadata"].get(name).filter(|v| !v.is_null())?.clone())))
        .collect();
    let mut metadata = Value::Object(metadata);
    let original = metadata.get_mut("annotations").and_then(|a| a.get_mut(ORIGINAL_SPEC_ANNOTATION));
    if let (StoredOriginal::Summary, Some(Value::String(text))) = (stored, original) {
        *text = format!("stored (sha256 {}, {} bytes)", &crate::scripts::sha256_hex(text)[..12], text.len());
    }
    let entries: Vec<(&str, &Value)> = [("apiVersion", object.get("apiVersion")), ("kind", object.get("kind"))]
        .into_iter()
        .chain([("metadata", Some(&metadata)), ("spec", object.get("spec"))])
        .filter_map(|(name, value)| Some((name, value?)))
        .collect();
    yaml::map_to_string(&entries)
}

/// The two sides of an object's diff: the YAML of its routing before and after (see
/// `routing_view`), their headers, and kubectl diff's name for the object's file
/// (`<group>.<version>.<Kind>.<namespace>.<name>`).
pub struct Sides<'a> {
    pub old: String,
    pub new: String,
    pub old_header: &'a str,
    pub new_header: &'a str,
    pub file_name: String,
}

/// How a change is shown: `unified`, or a program the command-line edge runs on the sides
/// (`KUBECTL_EXTERNAL_DIFF`).
pub type Differ = dyn Fn(&Sides) -> Result<String, String> + Sync;

/// The built-in differ: a unified diff.
pub fn unified(sides: &Sides) -> Result<String, String> {
    Ok(unified_diff(&sides.old, &sides.new, sides.old_header, sides.new_header))
}

/// How diffs are shown: who makes them, and how the stored original shows.
#[derive(Clone, Copy)]
pub struct DiffStyle<'a> {
    pub differ: &'a Differ,
    pub stored: StoredOriginal,
}

/// The diff of an object's routing (labels, annotations, spec; owner references too when one
/// side is null: a creation or a deletion) from `old` to `new`.
pub fn object_diff(
    old: &Value,
    new: &Value,
    old_header: &str,
    new_header: &str,
    style: DiffStyle,
) -> Result<String, String> {
    let sides = Sides {
        old: routing_view(old, style.stored, new.is_null()),
        new: routing_view(new, style.stored, old.is_null()),
        old_header,
        new_header,
        file_name: file_name(new),
    };
    (style.differ)(&sides)
}

/// kubectl diff's name for an object's file.
fn file_name(object: &Value) -> String {
    let api_version = object["apiVersion"].as_str().unwrap_or("v1").replace('/', ".");
    let field = |name: &str| object["metadata"][name].as_str().unwrap_or_default().to_string();
    format!("{api_version}.{}.{}.{}", object["kind"].as_str().unwrap_or_default(), field("namespace"), field("name"))
}

/// A unified diff (3 lines of context) with `---`/`+++` headers, coloured by line. The
/// algorithm is Patience over the lines; each distinct line is numbered once, so that it
/// compares numbers rather than text (a YAML of a thousand rules repeats most of its lines).
pub fn unified_diff(old: &str, new: &str, old_header: &str, new_header: &str) -> String {
    let (old_lines, new_lines) = (lines(old), lines(new));
    let mut numbers = HashMap::new();
    let (old_numbers, new_numbers) = (numbered(&mut numbers, &old_lines), numbered(&mut numbers, &new_lines));
    let ops = similar::capture_diff_slices(Algorithm::Patience, &old_numbers, &new_numbers);
    let mut out = String::new();
    let _ = writeln!(out, "{BOLD}--- {old_header}{BOLD:#}");
    let _ = writeln!(out, "{BOLD}+++ {new_header}{BOLD:#}");
    for hunk in similar::group_diff_ops(ops, 3).into_iter().filter(|hunk| !hunk.is_empty()) {
        let _ = writeln!(out, "{CYAN}{}{CYAN:#}", UnifiedHunkHeader::new(&hunk));
        for change in hunk.iter().flat_map(|op| op.iter_changes(&old_lines, &new_lines)) {
            let line = change.value().strip_suffix('\n').unwrap_or(change.value());
            // Style the text without its newline, so the codes never wrap a line break.
            let _ = match change.tag() {
                ChangeTag::Delete => writeln!(out, "{RED}-{line}{RED:#}"),
                ChangeTag::Insert => writeln!(out, "{GREEN}+{line}{GREEN:#}"),
                ChangeTag::Equal => writeln!(out, " {line}"),
            };
            if change.missing_newline() {
                out.push_str("\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// Each line's number in `numbers` (equal lines, equal numbers), numbering the lines not seen yet.
fn numbered<'a>(numbers: &mut HashMap<&'a str, usize>, lines: &[&'a str]) -> Vec<usize> {
    lines
        .iter()
        .map(|line| {
            let next = numbers.len();
            *numbers.entry(*line).or_insert(next)
        })
        .collect()
}

/// The lines of `text`, each with its terminator, split where similar's line diff splits them:
/// after `\n`, `\r\n` or a lone `\r`.
fn lines(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let (mut lines, mut start, mut at) = (Vec::new(), 0, 0);
    while at < bytes.len() {
        let end = match (bytes[at], bytes.get(at + 1)) {
            (b'\r', Some(b'\n')) => at + 2,
            (b'\r' | b'\n', _) => at + 1,
            _ => {
                at += 1;
                continue;
            }
        };
        lines.push(&text[start..end]);
        (start, at) = (end, end);
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// The text form of plans: per owner and stage, a header per object and a diff from its
/// current content to the planned one, then a closing count.
pub fn plan_text(plans: &[RoutingPlan], style: DiffStyle) -> Result<String, String> {
    Ok(plans_text(plans, style)? + &plan_summary(plans))
}

/// The compact form of plans (`--summary`): per owner, a line per stage and object (what is
/// written, and what the stage routes) with the object's warnings; then the closing count.
pub fn plan_lines(plans: &[RoutingPlan]) -> String {
    let mut out = String::new();
    for plan in plans {
        let _ = writeln!(out, "{}", paint(BOLD, &plan.owner));
        for note in &plan.notes {
            let _ = writeln!(out, "  {note}");
        }
        for warning in &plan.warnings {
            let _ = writeln!(out, "{}", paint(YELLOW, &format!("  warning: {warning}")));
        }
        let said = said_warnings(plan);
        let rows: Vec<(&StagePlan, &ObjectPlan, String, &Vec<String>)> = plan
            .stages
            .iter()
            .zip(&said)
            .flat_map(|(stage, said)| {
                stage
                    .objects
                    .iter()
                    .zip(said)
                    .map(move |(object, said)| (stage, object, stage.object_name(object), said))
            })
            .collect();
        let action = |object: &ObjectPlan| if object.changed() { object.action_name() } else { "as planned" };
        let labels = rows.iter().map(|(stage, ..)| stage.label.len()).max().unwrap_or(0);
        let objects = rows.iter().map(|(_, _, what, _)| what.len()).max().unwrap_or(0);
        let actions = rows.iter().map(|(_, object, ..)| action(object).len()).max().unwrap_or(0);
        for (stage, object, what, said) in &rows {
            let (label, action, routing) = (&stage.label, action(object), summary_routing(stage, object));
            let _ = writeln!(out, "  {label:<labels$}  {what:<objects$}  {action:<actions$}  {routing}");
            for warning in *said {
                let _ = writeln!(out, "{}", paint(YELLOW, &format!("    warning: {warning}")));
            }
        }
        out.push('\n');
    }
    out + &plan_summary(plans)
}

/// What a `--summary` line says a stage routes, for one of its objects: the stage's routing, but
/// for an HTTPRoute's restore, which rewrites the rules as they are then (B.6) and need not give
/// back the route before the release (a rule a match step dropped stays dropped), what it is.
fn summary_routing<'a>(stage: &'a StagePlan, object: &ObjectPlan) -> &'a str {
    match object.action {
        Action::RestoreRules(_) => "the controller's restore of its rules (no traffic, no matches)",
        _ => &stage.routing,
    }
}

/// The closing count of `plan_text`: a preview's objects (a Rollout not in a release) are
/// counted apart, as nothing of them is pending.
pub fn plan_summary(plans: &[RoutingPlan]) -> String {
    let (changed, unchanged, previewed) = plan_counts(plans);
    let previewed = match previewed {
        0 => String::new(),
        n => format!(", {n} in previews of a next release"),
    };
    let summary =
        format!("Plan: {changed} to change, {unchanged} already as planned{previewed} (counted per step and object).");
    format!("{}\n", paint(BOLD, &summary))
}

/// The objects planned, per step: those changed and those already as planned, of the plans that
/// are not previews, and those of previews.
fn plan_counts(plans: &[RoutingPlan]) -> (usize, usize, usize) {
    let objects = |preview: bool| {
        plans.iter().filter(move |p| p.preview == preview).flat_map(|p| &p.stages).flat_map(StagePlan::objects_changed)
    };
    let changed = objects(false).filter(|(_, changed)| *changed).count();
    (changed, objects(false).count() - changed, objects(true).count())
}

/// Plans without the closing count (for previews).
pub fn plans_text(plans: &[RoutingPlan], style: DiffStyle) -> Result<String, String> {
    plans.iter().map(|plan| plan_block(plan, style)).collect()
}

/// One plan's part of `plans_text`.
pub fn plan_block(plan: &RoutingPlan, style: DiffStyle) -> Result<String, String> {
    let mut out = String::new();
    let _ = writeln!(out, "{}", paint(BOLD, &plan.owner));
    for note in &plan.notes {
        let _ = writeln!(out, "  {note}");
    }
    for warning in &plan.warnings {
        let _ = writeln!(out, "{}", paint(YELLOW, &format!("  warning: {warning}")));
    }
    for (stage, said) in plan.stages.iter().zip(said_warnings(plan)) {
        let _ = writeln!(out, "\n{} {}", paint(BOLD, &format!("{}:", stage.label)), stage.description);
        for (object, said) in stage.objects.iter().zip(&said) {
            out.push_str(&object_text(object, &stage.object_name(object), said, &stage.label, style)?);
        }
    }
    out.push('\n');
    Ok(out)
}

/// The warnings the text forms print under each object of each stage (indexed as
/// `plan.stages[s].objects[o]`): a warning the same object gets at several stages is said once,
/// at the first of them, naming them (`steps 1, 2, 3: …`), or a plan of every step repeats it
/// per step. The JSON and YAML forms keep each stage's own warnings.
fn said_warnings(plan: &RoutingPlan) -> Vec<Vec<Vec<String>>> {
    let mut stages_of: HashMap<(&ObjectKey, &str), Vec<String>> = HashMap::new();
    for stage in &plan.stages {
        // (Only a TrafficRouting's plan has a stage without a step, and it has that one alone.)
        let number = stage.stage.map_or_else(|| stage.label.clone(), |s| s.number());
        for object in &stage.objects {
            for warning in &object.warnings {
                let numbers = stages_of.entry((&object.key, warning)).or_default();
                if !numbers.contains(&number) {
                    numbers.push(number.clone());
                }
            }
        }
    }
    let mut said = Vec::new();
    for stage in &plan.stages {
        let mut objects = Vec::new();
        for object in &stage.objects {
            let mut warnings = Vec::new();
            for warning in &object.warnings {
                // Taken at its first stage: the later ones find it gone.
                match stages_of.remove(&(&object.key, warning.as_str())).as_deref() {
                    None => {}
                    Some([_]) => warnings.push(warning.clone()),
                    Some(many) => warnings.push(format!("{}: {warning}", steps_named(many))),
                }
            }
            objects.push(warnings);
        }
        said.push(objects);
    }
    said
}

fn object_text(
    object: &ObjectPlan,
    what: &str,
    warnings: &[String],
    stage: &str,
    style: DiffStyle,
) -> Result<String, String> {
    let how = match &object.action {
        Action::Lua(script) => format!("script {} (sha256 {})", script.source, script.short_hash()),
        Action::Restore => "restore the stored original (no traffic, no matches)".into(),
        Action::Rules(how) | Action::RestoreRules(how) => how.clone(),
        Action::Delete => "delete it, as the controller's finalise does (no traffic, no matches)".into(),
        Action::Keep(why) => (*why).into(),
    };
    let mut out = String::new();
    if object.changed() {
        let _ = writeln!(out, "  {} {how}", paint(BOLD, &format!("{what}:")));
        for request in requests(object) {
            let _ = writeln!(out, "    {request}");
        }
        out.push_str(&object_diff(
            &object.current,
            &object.planned,
            &object
                .after
                .as_ref()
                .map_or_else(|| format!("{what} (current)"), |stage| format!("{what} (after {stage})")),
            &format!("{what} ({stage})"),
            style,
        )?);
    } else {
        let _ = writeln!(out, "  {} already as planned; {how}", paint(BOLD, &format!("{what}:")));
    }
    for warning in warnings {
        let _ = writeln!(out, "{}", paint(YELLOW, &format!("  warning: {warning}")));
    }
    Ok(out)
}

/// The requests of an object's writes that its diff does not show: a creation (with the
/// annotations it is made with, which a merge patch may change next), a merge patch of the
/// object, a deletion. A replace sends the planned object the diff shows.
fn requests(object: &ObjectPlan) -> Vec<String> {
    object
        .writes()
        .filter_map(|change| match change {
            Change::Create { object, .. } => {
                Some(format!("POST, annotations {}", gojson::to_string(&object["metadata"]["annotations"])))
            }
            Change::MergePatch { subresource: None, patch, .. } => {
                Some(format!("PATCH (merge) {}", gojson::to_string(patch)))
            }
            Change::Delete { .. } => Some("DELETE".into()),
            Change::Replace { .. } | Change::MergePatch { .. } | Change::Keep { .. } => None,
        })
        .collect()
}

/// What `-o json|yaml` says of an object's writes: each one's action, with what it sends where
/// the planned object does not show it: the created object, the merge patch, or the object a
/// replace puts before the last write (a custom ref's original stored on its own).
fn changes_document(plan: &ObjectPlan) -> Vec<Value> {
    plan.writes()
        .map(|change| match change {
            Change::Create { object, .. } => serde_json::json!({"action": change.action(), "object": **object}),
            Change::MergePatch { patch, .. } => serde_json::json!({"action": change.action(), "patch": patch}),
            Change::Replace { after, .. } if !Arc::ptr_eq(after, &plan.planned) => {
                serde_json::json!({"action": change.action(), "object": **after})
            }
            _ => serde_json::json!({"action": change.action()}),
        })
        .collect()
}

/// The machine form of plans (`-o yaml|json`): every planned object and a summary.
pub fn plan_document(plans: &[RoutingPlan]) -> Value {
    let (changed, unchanged, previewed) = plan_counts(plans);
    let documents: Vec<Value> = plans
        .iter()
        .map(|plan| {
            let stages: Vec<Value> = plan
                .stages
                .iter()
                .map(|stage| {
                    let objects: Vec<Value> = stage
                        .objects
                        .iter()
                        .map(|object| {
                            let script = match &object.action {
                                Action::Lua(s) => serde_json::json!({"source": s.source.to_string(), "sha256": s.sha256}),
                                Action::Restore
                                | Action::Rules(_)
                                | Action::RestoreRules(_)
                                | Action::Delete
                                | Action::Keep(_) => Value::Null,
                            };
                            serde_json::json!({
                                "apiVersion": object.current.get("apiVersion").unwrap_or(&object.planned["apiVersion"]),
                                "kind": object.reference.kind,
                                "namespace": object.key.namespace, "name": object.reference.name,
                                "routedBy": object.owner.to_string(),
                                "action": object.action_name(), "script": script, "changed": object.changed(),
                                "changes": changes_document(object), "warnings": object.warnings,
                                "planned": *object.planned,
                            })
                        })
                        .collect();
                    serde_json::json!({"step": stage.stage, "label": stage.label, "description": stage.description, "routing": stage.routing, "unrouted": stage.unrouted, "objects": objects})
                })
                .collect();
            serde_json::json!({"owner": plan.owner, "notes": plan.notes, "warnings": plan.warnings, "preview": plan.preview, "stages": stages})
        })
        .collect();
    let summary =
        serde_json::json!({"objectPlans": changed + unchanged + previewed, "changed": changed, "previewed": previewed});
    serde_json::json!({"plans": documents, "summary": summary})
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn terminal_safe_text_escapes_what_could_drive_the_terminal_and_keeps_our_colours() {
        use std::borrow::Cow;
        let plain = "step 1/3: matches [header x-canary=true]\n\tnext";
        assert!(matches!(terminal_safe(plain, true), Cow::Borrowed(_)), "nothing to escape: not copied");
        let dashes = "a \u{2014} b \u{2026} \u{2192} \u{201c}c\u{201d} \u{e9}";
        assert_eq!(terminal_safe(dashes, true), dashes, "other characters of those bytes stay");
        let ours = format!("{}\n{}", paint(RED, "-a"), paint(BOLD, "step"));
        assert_eq!(terminal_safe(&ours, true), ours, "this program's colours stay");
        let hostile = "x\u{1b}[2J\u{1b}[H\u{1b}]52;c;ZWNobw==\u{7}\rpc\u{9b}1m\u{202e}moc\u{2066}\u{7f}";
        assert_eq!(
            terminal_safe(&format!("{}{hostile}", paint(YELLOW, "w")), true),
            format!(
                "{}x\\u{{1b}}[2J\\u{{1b}}[H\\u{{1b}}]52;c;ZWNobw==\\u{{7}}\\u{{d}}pc\\u{{9b}}1m\\u{{202e}}moc\\u{{2066}}\\u{{7f}}",
                paint(YELLOW, "w")
            )
        );
        // A colour of ours given by someone else is a colour of ours: nothing more.
        assert_eq!(terminal_safe("\u{1b}[31mred\u{1b}[0m", true), "\u{1b}[31mred\u{1b}[0m");
        assert_eq!(terminal_safe("\u{1b}[8mhidden", true), "\\u{1b}[8mhidden");
        // Colour off: ours dropped, the rest escaped as with colour on.
        assert!(matches!(terminal_safe(plain, false), Cow::Borrowed(_)), "nothing to drop: not copied");
        assert_eq!(terminal_safe(&ours, false), "-a\nstep");
        assert_eq!(
            terminal_safe(&format!("{}{hostile}", paint(YELLOW, "w")), false),
            format!("w{}", terminal_safe(hostile, true))
        );
        assert_eq!(terminal_safe("\u{1b}[31mred\u{1b}[0m \u{1b}[8mhidden", false), "red \\u{1b}[8mhidden");
    }

    fn strip(s: &str) -> String {
        anstream::adapter::strip_str(s).to_string()
    }

    #[test]
    fn diffs_are_unified_and_coloured_by_line() {
        let out = unified_diff("a: 1\nb: 2\n", "a: 1\nb: 3\n", "live", "planned");
        assert_eq!(strip(&out), "--- live\n+++ planned\n@@ -1,2 +1,2 @@\n a: 1\n-b: 2\n+b: 3\n");
        assert!(out.contains(&format!("{RED}-b: 2{RED:#}\n")), "{out:?}");
    }

    /// The unified diff as it was made before lines were numbered: similar's `TextDiff`, the
    /// reference the numbered diff must match byte for byte.
    fn text_diff_reference(old: &str, new: &str, old_header: &str, new_header: &str) -> String {
        let diff = similar::TextDiff::configure().algorithm(Algorithm::Patience).diff_lines(old, new);
        let mut out = String::new();
        let _ = writeln!(out, "{}", paint(BOLD, &format!("--- {old_header}")));
        let _ = writeln!(out, "{}", paint(BOLD, &format!("+++ {new_header}")));
        for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
            let _ = writeln!(out, "{}", paint(CYAN, &hunk.header().to_string()));
            for change in hunk.iter_changes() {
                let line = change.value().strip_suffix('\n').unwrap_or(change.value());
                let _ = match change.tag() {
                    ChangeTag::Delete => writeln!(out, "{}", paint(RED, &format!("-{line}"))),
                    ChangeTag::Insert => writeln!(out, "{}", paint(GREEN, &format!("+{line}"))),
                    ChangeTag::Equal => writeln!(out, " {line}"),
                };
                if change.missing_newline() {
                    out.push_str("\\ No newline at end of file\n");
                }
            }
        }
        out
    }

    fn same_as_the_reference(old: &str, new: &str) {
        assert_eq!(unified_diff(old, new, "a", "b"), text_diff_reference(old, new, "a", "b"), "{old:?} -> {new:?}");
    }

    #[test]
    fn the_numbered_diff_is_the_text_diff_byte_for_byte() {
        same_as_the_reference("a: 1\nb: 2\n", "a: 1\nb: 3\n");
        // No newline at the end of either side, or of both.
        same_as_the_reference("a\nb", "a\nb\n");
        same_as_the_reference("a\nb\n", "a\nc");
        same_as_the_reference("a\nb", "a\nc");
        // Empty sides, equal sides.
        same_as_the_reference("", "a\nb\n");
        same_as_the_reference("a\nb\n", "");
        same_as_the_reference("", "");
        same_as_the_reference("a\nb\n", "a\nb\n");
        // Lines end at \n, \r\n or a lone \r, as similar splits them.
        same_as_the_reference("a\r\nb\rc\n", "a\nb\rc\r\n");
        same_as_the_reference("x\r", "x\n");
    }

    #[test]
    fn the_numbered_diff_is_the_text_diff_on_a_large_yaml_pair() {
        // A VirtualService's YAML with a thousand routes (few unique lines: Patience falls back
        // to Myers between them), and the same with weights changed, routes added and removed.
        let rule = |i: usize, weight: usize, canary: bool| {
            let mut rule = format!(
                "  - route:\n    - destination:\n        host: reviews\n        subset: v1\n      weight: {weight}\n    - destination:\n        host: other-{i}\n      weight: {}\n",
                100 - weight
            );
            if canary {
                rule.push_str("    - destination:\n        host: reviews-canary\n      weight: 20\n");
            }
            rule
        };
        let head = "apiVersion: networking.istio.io/v1beta1\nkind: VirtualService\nmetadata:\n  name: reviews\nspec:\n  http:\n";
        let old: String = head.to_string() + &(0..1000).map(|i| rule(i, 90, false)).collect::<String>();
        let new: String = head.to_string()
            + &(0..1000)
                .filter(|i| i % 97 != 5)
                .map(|i| rule(i, if i % 3 == 0 { 72 } else { 90 }, i % 7 == 0))
                .collect::<String>();
        assert!(old.lines().count() > 8000);
        same_as_the_reference(&old, &new);
        same_as_the_reference(&new, &old);
        // Without the last newline, and with a side cut short.
        same_as_the_reference(old.trim_end(), &new);
        same_as_the_reference(&old, &new[..new.len() / 2]);
    }

    #[test]
    fn a_differ_gets_both_views_the_headers_and_kubectl_diffs_file_name() {
        let old = json!({"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "metadata": {"name": "vs", "namespace": "shop"}, "spec": {"a": 1}});
        let new = json!({"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "metadata": {"name": "vs", "namespace": "shop"}, "spec": {"a": 2}});
        let differ = |sides: &Sides| {
            Ok(format!("{} {} {}\n{}{}", sides.file_name, sides.old_header, sides.new_header, sides.old, sides.new))
        };
        let style = DiffStyle { differ: &differ, stored: StoredOriginal::Summary };
        let shown = object_diff(&old, &new, "live", "planned", style).unwrap();
        assert_eq!(
            shown,
            format!(
                "networking.istio.io.v1beta1.VirtualService.shop.vs live planned\n{}{}",
                routing_view(&old, StoredOriginal::Summary, false),
                routing_view(&new, StoredOriginal::Summary, false)
            )
        );
        let style = DiffStyle { differ: &unified, stored: StoredOriginal::Summary };
        let unified = object_diff(&old, &new, "live", "planned", style).unwrap();
        assert!(strip(&unified).contains("-  a: 1\n+  a: 2\n"), "{unified}");
    }

    #[test]
    fn the_stored_original_shows_as_one_short_line_unless_asked_for() {
        let stored = r#"{"spec":{"hosts":["demo"]}}"#;
        let object = json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "demo", "annotations": {ORIGINAL_SPEC_ANNOTATION: stored, "a": "b"}}});
        let hash = &crate::scripts::sha256_hex(stored)[..12];
        let short = routing_view(&object, StoredOriginal::Summary, false);
        assert!(
            short.contains(&format!("    {ORIGINAL_SPEC_ANNOTATION}: stored (sha256 {hash}, 27 bytes)\n")),
            "{short}"
        );
        assert!(short.contains("    a: b\n"), "{short}");
        let full = routing_view(&object, StoredOriginal::Full, false);
        assert!(full.contains(r#"{\"spec\":{\"hosts\":[\"demo\"]}}"#), "{full}");
    }

    #[test]
    fn view_keeps_what_the_controller_writes() {
        let object = json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "demo", "uid": "u", "resourceVersion": "1", "labels": {"a": "b"}}, "spec": {"k": 1}, "status": {}});
        assert_eq!(
            routing_view(&object, StoredOriginal::Summary, false),
            "apiVersion: v1\nkind: X\nmetadata:\n  labels:\n    a: b\n  name: demo\nspec:\n  k: 1\n"
        );
    }

    #[test]
    fn a_creation_and_a_deletion_show_the_owner_references_and_a_change_does_not() {
        let owner = json!({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "name": "web", "uid": "",
                           "controller": true, "blockOwnerDeletion": true});
        let object = |weight: &str| {
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "web-canary", "uid": "c-1", "resourceVersion": "3", "ownerReferences": [owner],
                         "annotations": {"weight": weight}},
            "spec": {"ingressClassName": "nginx"}})
        };
        let style = DiffStyle { differ: &unified, stored: StoredOriginal::Summary };
        let created = strip(&object_diff(&Value::Null, &object("0"), "current", "step 1", style).unwrap());
        assert!(
            created.contains(
                "+  name: web-canary\n+  ownerReferences:\n+  - apiVersion: rollouts.kruise.io/v1beta1\n\
                 +    blockOwnerDeletion: true\n+    controller: true\n+    kind: Rollout\n+    name: web\n+    uid: \"\"\n+spec:\n"
            ),
            "{created}"
        );
        assert!(!created.contains("c-1") && !created.contains("resourceVersion"), "{created}");
        let changed = strip(&object_diff(&object("0"), &object("20"), "step 1", "step 2", style).unwrap());
        assert!(!changed.contains("ownerReferences"), "{changed}");
        let deleted = strip(&object_diff(&object("20"), &Value::Null, "step 2", "step 3", style).unwrap());
        assert!(
            deleted.contains("-  name: web-canary\n-  ownerReferences:\n-  - apiVersion: rollouts.kruise.io/v1beta1\n"),
            "{deleted}"
        );
    }

    /// The plan of an Ingress `name` of namespace shop, from `current` to `planned` by `changes`.
    fn ingress_plan(name: &str, current: Value, planned: Value, changes: Vec<Change>) -> ObjectPlan {
        let reference = crate::providers::ingress::canary_reference(name.trim_end_matches("-canary"));
        let owner = crate::model::Owner {
            kind: crate::model::OwnerKind::Rollout,
            namespace: "shop".into(),
            name: "demo".into(),
            uid: String::new(),
        };
        ObjectPlan {
            untouched: current.is_null(),
            current: current.into(),
            planned: planned.into(),
            action: Action::Keep("for the test"),
            notes: Vec::new(),
            changes,
            ..ObjectPlan::not_found(&reference, &owner, String::new())
        }
    }

    /// Step `step` of 3 routing `traffic {step}0%`, with `objects`.
    fn stage_of(step: usize, objects: Vec<ObjectPlan>) -> StagePlan {
        StagePlan {
            stage: Some(crate::model::Stage::Step(step)),
            label: format!("step {step}/3"),
            description: String::new(),
            routing: format!("traffic {step}0%"),
            unrouted: false,
            objects,
        }
    }

    /// Rollout shop/demo's plan of `stages`, a preview or not.
    fn plan_of(preview: bool, stages: Vec<StagePlan>) -> RoutingPlan {
        RoutingPlan {
            owner: "Rollout shop/demo".into(),
            notes: Vec::new(),
            warnings: Vec::new(),
            preview,
            waiting_for_stable_service: Vec::new(),
            stages,
        }
    }

    #[test]
    fn a_warning_an_object_gets_at_several_steps_is_said_once_naming_them() {
        let object = |name: &str, warnings: &[&str]| ObjectPlan {
            warnings: warnings.iter().map(ToString::to_string).collect(),
            ..ingress_plan(name, Value::Null, Value::Null, Vec::new())
        };
        let missing = "Service web-canary does not exist";
        let plan = RoutingPlan {
            warnings: vec!["of the whole plan".into()],
            ..plan_of(
                false,
                vec![
                    stage_of(1, vec![object("web-canary", &[missing]), object("api-canary", &[missing])]),
                    stage_of(2, vec![object("web-canary", &[missing, "kept match rule"]), object("api-canary", &[])]),
                    stage_of(3, vec![object("web-canary", &["kept match rule", missing]), object("api-canary", &[])]),
                ],
            )
        };
        let text = |warnings: &[&str]| warnings.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(
            said_warnings(&plan),
            [
                // The same text of another object is that object's own warning, said apart.
                vec![text(&["steps 1, 2, 3: Service web-canary does not exist"]), text(&[missing])],
                // Different texts are not merged; each is said at its first step.
                vec![text(&["steps 2, 3: kept match rule"]), text(&[])],
                vec![text(&[]), text(&[])],
            ]
        );
        let lines = strip(&plan_lines(std::slice::from_ref(&plan)));
        assert_eq!(lines.matches(missing).count(), 2, "{lines}");
        assert!(
            lines.contains(
                "  step 1/3  Ingress shop/web-canary  as planned  traffic 10%\n    warning: steps 1, 2, 3: Service web-canary does not exist\n"
            ),
            "{lines}"
        );
        let diff = strip(&plan_block(&plan, DiffStyle { differ: &unified, stored: StoredOriginal::Summary }).unwrap());
        assert_eq!(diff.matches("kept match rule").count(), 1, "{diff}");
        assert!(diff.contains("  warning: of the whole plan\n"), "{diff}");
        // The machine forms keep each step's own.
        let document = plan_document(std::slice::from_ref(&plan));
        assert_eq!(document["plans"][0]["stages"][2]["objects"][0]["warnings"], json!(["kept match rule", missing]));
    }

    #[test]
    fn a_previews_objects_are_counted_apart() {
        let made = json!({"metadata": {"name": "web-canary"}, "spec": {"rules": [{"host": "a"}]}});
        let before = json!({"metadata": {"name": "web-canary"}, "spec": {"rules": [{"host": "b"}]}});
        let plan = |preview: bool, objects: Vec<ObjectPlan>| plan_of(preview, vec![stage_of(1, objects)]);
        let changing = |name| ingress_plan(name, before.clone(), made.clone(), Vec::new());
        let as_planned = |name| ingress_plan(name, made.clone(), made.clone(), Vec::new());
        let plans = [
            plan(false, vec![changing("a-canary"), as_planned("b-canary")]),
            plan(true, vec![changing("a-canary"), changing("b-canary")]),
        ];
        assert_eq!(
            strip(&plan_summary(&plans)),
            "Plan: 1 to change, 1 already as planned, 2 in previews of a next release (counted per step and object).\n"
        );
        assert_eq!(
            strip(&plan_summary(&plans[..1])),
            "Plan: 1 to change, 1 already as planned (counted per step and object).\n"
        );
        let document = plan_document(&plans);
        assert_eq!(document["summary"], json!({"objectPlans": 4, "changed": 1, "previewed": 2}));
        assert_eq!((&document["plans"][0]["preview"], &document["plans"][1]["preview"]), (&json!(false), &json!(true)));
    }

    #[test]
    fn an_object_both_routings_plan_is_named_with_each_and_counted_once() {
        use crate::model::OwnerKind;
        let (before, after) = (json!({"spec": {"a": 1}}), json!({"spec": {"a": 2}}));
        let by = |kind, name: &str, planned: &Value| {
            let mut object = ingress_plan("web-canary", before.clone(), planned.clone(), Vec::new());
            object.owner =
                crate::model::Owner { kind, namespace: "shop".into(), name: name.into(), uid: String::new() };
            object
        };
        let contested =
            stage_of(1, vec![by(OwnerKind::Rollout, "demo", &before), by(OwnerKind::TrafficRouting, "tr", &after)]);
        let names: Vec<String> = contested.objects.iter().map(|o| contested.object_name(o)).collect();
        assert_eq!(
            names,
            [
                "Ingress shop/web-canary, routed by Rollout shop/demo",
                "Ingress shop/web-canary, routed by TrafficRouting shop/tr"
            ]
        );
        let key = &contested.objects[0].key;
        assert_eq!(contested.objects_changed(), [(key, true)], "changed by either: changed");
        let alone = stage_of(1, vec![by(OwnerKind::Rollout, "demo", &before)]);
        assert_eq!(alone.object_name(&alone.objects[0]), "Ingress shop/web-canary");
        assert_eq!(alone.objects_changed(), [(key, false)]);
        let plans = [plan_of(false, vec![contested])];
        assert_eq!(
            strip(&plan_summary(&plans)),
            "Plan: 1 to change, 0 already as planned (counted per step and object).\n"
        );
        let document = plan_document(&plans);
        assert_eq!(document["summary"], json!({"objectPlans": 1, "changed": 1, "previewed": 0}));
        let objects = &document["plans"][0]["stages"][0]["objects"];
        assert_eq!(
            (&objects[0]["routedBy"], &objects[1]["routedBy"]),
            (&json!("Rollout shop/demo"), &json!("TrafficRouting shop/tr"))
        );
    }

    #[test]
    fn writes_a_diff_does_not_show_are_spelled_out() {
        let key = ObjectKey::new("networking.k8s.io", "Ingress", "shop", "web-canary");
        let canary = |current, planned, changes| ingress_plan("web-canary", current, planned, changes);
        let made = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                          "metadata": {"name": "web-canary", "annotations": {"canary": "true", "weight": "0"}}});
        let patch = json!({"metadata": {"annotations": {"weight": "20", "header": null}}});
        let patched = crate::change::merge_patch(&made, &patch);
        let plan = canary(
            Value::Null,
            patched.clone(),
            vec![
                Change::Create { key: key.clone(), object: made.clone().into() },
                Change::MergePatch {
                    key: key.clone(),
                    subresource: None,
                    before: made.clone().into(),
                    patch: patch.clone(),
                },
            ],
        );
        assert_eq!(
            requests(&plan),
            [
                r#"POST, annotations {"canary":"true","weight":"0"}"#,
                r#"PATCH (merge) {"metadata":{"annotations":{"header":null,"weight":"20"}}}"#
            ]
        );
        assert_eq!(
            changes_document(&plan),
            [json!({"action": "create", "object": made}), json!({"action": "patch", "patch": patch})]
        );
        let text = strip(
            &object_text(
                &plan,
                &plan.describe(),
                &plan.warnings,
                "step 1/2",
                DiffStyle { differ: &unified, stored: StoredOriginal::Summary },
            )
            .unwrap(),
        );
        assert!(
            text.contains("--- Ingress shop/web-canary (current)\n+++ Ingress shop/web-canary (step 1/2)\n@@ -0,0 +1,"),
            "{text}"
        );
        // Two replaces, as for a custom ref whose original is not stored yet: the first names
        // the object it sends, the last sends the planned object.
        let stored = json!({"metadata": {"name": "web-canary", "annotations": {"original": "{}"}}});
        let planned = json!({"metadata": {"name": "web-canary", "annotations": {"original": "{}", "weight": "20"}}});
        let (stored, planned) = (Arc::new(stored), Arc::new(planned));
        let mut replaced = canary(made.clone(), Value::Null, Vec::new());
        replaced.planned = Arc::clone(&planned);
        replaced.changes = vec![
            Change::Replace { key: key.clone(), before: Arc::clone(&replaced.current), after: Arc::clone(&stored) },
            Change::Replace { key: key.clone(), before: Arc::clone(&stored), after: Arc::clone(&planned) },
        ];
        assert_eq!(
            changes_document(&replaced),
            [json!({"action": "replace", "object": *stored}), json!({"action": "replace"})]
        );
        let deleted =
            canary(patched.clone(), Value::Null, vec![Change::Delete { key: key.clone(), before: patched.into() }]);
        assert_eq!(requests(&deleted), ["DELETE"]);
        assert_eq!(changes_document(&deleted), [json!({"action": "delete"})]);
        assert_eq!(
            routing_view(&Value::Null, StoredOriginal::Summary, true),
            "",
            "nothing to show of an object that is not there"
        );
    }
}
