//! YAML and JSON documents in, YAML out: multi-document files with the line each document
//! starts on, so messages can point at it, and for the documents asked for, their text, so that
//! a message about one of their fields can point at its line. A key given twice in one map is an
//! error naming both lines (never last-wins), and the YAML parser's budget is sized for cluster
//! exports.

use crate::gojson::{self, GoNumbers};
use crate::model::Path;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::{Budget, DuplicateKeyPolicy, MessageFormatter, Spanned};
use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::ops::Range;
use std::sync::Arc;

mod emit;
mod text;

pub use text::{DocumentText, StringLines};

/// The YAML parser's limits for one file.
#[derive(Clone, Copy, Debug)]
pub struct YamlLimits {
    /// Maps, lists and scalars.
    pub nodes: usize,
    /// Documents (`---`).
    pub documents: usize,
    /// Nesting of maps and lists.
    pub depth: usize,
}

/// A `kubectl get … -o yaml` export of 3,000 Deployments, ReplicaSets, Pods, Services and
/// ConfigMaps (managedFields included) is 13.6 MB: about 300 nodes per object and 15 bytes per
/// node. These limits let a file reach the 64 MiB manifest limit (about 14,000 such objects, or
/// one document each) before they do. The depth is what the sandbox hands to Lua
/// (`lua::convert`), so a file that reads is one a script can be given. JSON has the same
/// limits, a document being an item of a top-level list.
pub const YAML_LIMITS: YamlLimits = YamlLimits { nodes: 5_000_000, documents: 50_000, depth: 100 };

/// A document read from a file, and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// The line (1-based) the document starts on.
    pub line: usize,
    /// Its place in the document it was taken from: `items[3]` of a `kind: List`, `[3]` of a
    /// JSON array; empty for a document of its own.
    pub within: Path,
    pub value: Value,
    /// The text it was read from, for the documents `parse_documents_keeping` keeps it for
    /// (boxed: most documents have none, and a document costs no more for it).
    pub text: Option<Box<DocumentText>>,
}

impl Document {
    /// `file.yaml:12`, or `file.yaml:1 items[3]` for an item of a list.
    pub fn place(&self, source: &str) -> String {
        match self.within.segments() {
            [] => format!("{source}:{}", self.line),
            _ => format!("{source}:{} {}", self.line, self.within),
        }
    }
}

/// Parses a file's text: JSON when it starts with `{` or `[` (one value, or several one after
/// another), else (multi-document) YAML. `kind: List` documents are flattened into their items.
/// Errors name `source` and the line.
pub fn parse_documents(text: &str, source: &str) -> Result<Vec<Document>, String> {
    parse_documents_keeping(text, source, |_| false)
}

/// `parse_documents`, and the documents `keep_text` picks keep the text they were read from: a
/// YAML document its own, the items of a JSON file or of a List the whole of it, one copy shared
/// by them all. The others keep none, so that reading holds no more than the values.
pub fn parse_documents_keeping(
    text: &str,
    source: &str,
    keep_text: fn(&Value) -> bool,
) -> Result<Vec<Document>, String> {
    let trimmed = text.trim_start();
    let documents = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        let mut documents = Vec::new();
        // As Go reads it (a lone surrogate's escape is U+FFFD), in as many bytes.
        for (start, span, value) in parse_json_values(&gojson::lone_surrogates_replaced(text), source, YAML_LIMITS)? {
            match value {
                Value::Array(items) => documents.extend(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, value)| (document(start.line, Path::default().index(i), value), Some(span.clone()))),
                ),
                value => documents.push((document(start.line, Path::default(), value), Some(span))),
            }
        }
        documents
    } else {
        parse_yaml(text, source, YAML_LIMITS)?
    };
    let mut shared: Option<(Range<usize>, Arc<str>)> = None;
    let mut documents = flatten_lists(documents);
    for (document, span) in &mut documents {
        let Some(span) = span.take().filter(|_| keep_text(&document.value)) else { continue };
        let text = match &shared {
            Some((kept, text)) if *kept == span => text.clone(),
            _ => shared.insert((span.clone(), Arc::from(&text[span]))).1.clone(),
        };
        document.text = Some(Box::new(DocumentText {
            source: source.to_string(),
            text,
            first_line: document.line,
            within: document.within.clone(),
        }));
    }
    Ok(documents.into_iter().map(|(document, _)| document).collect())
}

/// A document, and its text's byte range in what was read (when known).
type InText = (Document, Option<Range<usize>>);

fn document(line: usize, within: Path, value: Value) -> Document {
    Document { line, within, value, text: None }
}

/// Where a JSON value begins in its file: the line (1-based) and the bytes before it on that line.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Start {
    line: usize,
    column: usize,
}

impl Start {
    const FILE: Start = Start { line: 1, column: 0 };
}

/// The values of a JSON text, each with where it begins and its bytes: one, or several one after
/// another, as `jq '.items[]'` writes them and kubectl reads them (an object each). Each is read
/// with the limits of a file, and there may be as many as a file's documents.
fn parse_json_values(
    text: &str,
    source: &str,
    limits: YamlLimits,
) -> Result<Vec<(Start, Range<usize>, Value)>, String> {
    // More than one value: serde_json tells it only in its message (its categories say "syntax").
    let spans = match parse_json_at(text, source, limits, Start::FILE) {
        Err(e) if e.ends_with(": trailing characters") => json_value_spans(text).ok_or(e)?,
        whole => return whole.map(|value| vec![(Start::FILE, 0..text.len(), value)]),
    };
    if let Some((start, _)) = spans.get(limits.documents) {
        let message = past_limit(Past::Documents, "JSON", limits);
        return Err(format!("{source}:{}:{}: {message}", start.line, start.column + 1));
    }
    spans
        .into_iter()
        .map(|(start, span)| {
            parse_json_at(&text[span.clone()], source, limits, start).map(|value| (start, span, value))
        })
        .collect()
}

/// Where each top-level value of a JSON text of several objects or lists begins (and on which
/// line) and ends, by the depth of their brackets outside strings, in one pass; a last one left
/// open runs to the end, for the parser to say what is wrong with it. None when anything else is
/// at the top level.
fn json_value_spans(text: &str) -> Option<Vec<(Start, Range<usize>)>> {
    let (mut spans, mut depth, mut begun) = (Vec::new(), 0usize, (Start::FILE, 0));
    let (mut in_string, mut escaped) = (false, false);
    let (mut line, mut line_start) = (1, 0);
    for (at, &byte) in text.as_bytes().iter().enumerate() {
        if byte == b'\n' {
            (line, line_start) = (line + 1, at + 1);
        }
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => {}
            b'{' | b'[' => {
                if depth == 0 {
                    begun = (Start { line, column: at - line_start }, at);
                }
                depth += 1;
            }
            b'}' | b']' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    spans.push((begun.0, begun.1..at + 1));
                }
            }
            b'"' if depth > 0 => in_string = true,
            _ if depth == 0 => return None,
            _ => {}
        }
    }
    if depth > 0 {
        spans.push((begun.0, begun.1..text.len()));
    }
    Some(spans)
}

/// One JSON value, which begins at `start` of the file its message names.
fn parse_json_at(text: &str, source: &str, limits: YamlLimits, start: Start) -> Result<Value, String> {
    // Read once from the text, the quick way; only a duplicate key makes it read again, counting
    // lines, to name both.
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let counter = JsonCounter { limits, nodes: Cell::new(0) };
    let value = ValueSeed::json(Lines::Untracked, &counter)
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value));
    match value {
        Err(e) if e.to_string().starts_with(DUPLICATE_KEY) => parse_json_counting_lines(text, source, limits, start),
        other => other.map_err(|e| json_error(&e, source, start)),
    }
}

/// `parse_json_at` reading a byte at a time, so that a duplicate key's message has both lines.
fn parse_json_counting_lines(text: &str, source: &str, limits: YamlLimits, start: Start) -> Result<Value, String> {
    let line = Cell::new(start.line);
    let reader = LineCounting { rest: text.as_bytes(), line: &line };
    let mut deserializer = serde_json::Deserializer::from_reader(reader);
    let counter = JsonCounter { limits, nodes: Cell::new(0) };
    let value = ValueSeed::json(Lines::Counted(&line), &counter)
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value))
        .map_err(|e| json_error(&e, source, start))?;
    Ok(value)
}

/// `file:line:column: message`, for a value that begins at `start` of the file.
fn json_error(error: &serde_json::Error, source: &str, start: Start) -> String {
    // serde_json's message ends with its own " at line L column C".
    let message = error.to_string();
    let message =
        message.strip_suffix(&format!(" at line {} column {}", error.line(), error.column())).unwrap_or(&message);
    let column = if error.line() == 1 { error.column() + start.column } else { error.column() };
    format!("{source}:{}:{column}: {message}", error.line() + start.line - 1)
}

/// The documents of a YAML text, each with its text's byte range: from the start of its first
/// line to the next document's first line.
fn parse_yaml(text: &str, source: &str, limits: YamlLimits) -> Result<Vec<InText>, String> {
    let mut options = serde_saphyr::options! {
        // Duplicates reach the map visitor, which names both lines.
        duplicate_keys: DuplicateKeyPolicy::PassThrough,
        // go-yaml v2 reads an integer as Go's `strconv.ParseInt(s, 0, 64)` does: a leading 0
        // makes it octal (`010` is 8), and one that is no octal (`09`) a float.
        legacy_octal_numbers: true,
    };
    let mut budget = Budget::default();
    budget.max_nodes = limits.nodes;
    budget.max_documents = limits.documents;
    budget.max_depth = limits.depth;
    // Every node is at most a start and an end event, and a document adds two more: the nodes
    // or documents limit is reached first, with its own message.
    budget.max_events = 2 * limits.nodes + 2 * limits.documents + 2;
    // The parser's aliases-per-anchor heuristic refuses ordinary files (one `&defaults` merged
    // into a hundred maps); what aliases expand to is bounded by the replayed nodes and text.
    budget.enforce_alias_anchor_ratio = false;
    options.budget = Some(budget.clone());
    // What kubectl reads past is not parsed either: its bytes become spaces, so that the lines
    // and offsets of the rest stay as they are.
    let dropped = past_document_ends(text);
    let mut read = Cow::Borrowed(text);
    if !dropped.is_empty() {
        let mut bytes = text.as_bytes().to_vec();
        for range in dropped {
            bytes[range].iter_mut().filter(|byte| **byte != b'\n').for_each(|byte| *byte = b' ');
        }
        read = Cow::Owned(String::from_utf8(bytes).expect("spaces and newlines are UTF-8"));
    }
    let documents: Vec<Spanned<YamlValue>> = serde_saphyr::from_multiple_with_options(&read, options)
        .map_err(|e| yaml_error(&e, &read, source, limits, &budget))?;
    let documents: Vec<(Spanned<YamlValue>, Option<usize>)> = documents
        .into_iter()
        .map(|d| {
            let offset = d.referenced.span().byte_offset().and_then(|offset| usize::try_from(offset).ok());
            (d, offset)
        })
        .collect();
    let starts: Vec<Option<usize>> = documents
        .iter()
        .map(|(_, offset)| Some(text.get(..(*offset)?)?.rfind('\n').map_or(0, |newline| newline + 1)))
        .collect();
    Ok(documents
        .into_iter()
        .enumerate()
        .map(|(i, (d, _))| {
            let end = starts[i + 1..].iter().find_map(|start| *start).unwrap_or(text.len());
            let span = starts[i].map(|start| start..end);
            (document(d.referenced.line() as usize, Path::default(), d.value.0), span)
        })
        .collect())
}

/// The parts of a YAML text that kubectl reads past: it splits a file at the lines that begin
/// with `---` and reads one document from each part, so what follows a `...` line that ends a
/// document, up to the next `---` line, is dropped (where a YAML parser reads a further document).
fn past_document_ends(text: &str) -> Vec<Range<usize>> {
    let blank = |rest: &str| rest.trim_start().is_empty() || rest.trim_start().starts_with('#');
    let (mut dropped, mut from) = (Vec::new(), None);
    // Whether the part has a document yet, and whether a `...` has ended it.
    let (mut content, mut ended) = (false, false);
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("---") {
            dropped.extend(from.take().map(|from| from..start));
            // A document may begin on the `---` line itself.
            (content, ended) = (!blank(rest), false);
        } else if line.strip_prefix("...").is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
        {
            ended |= content;
        } else if !blank(line) {
            if ended && from.is_none() {
                from = Some(start);
            }
            content = true;
        }
        start += line.len();
    }
    dropped.extend(from.map(|from| from..text.len()));
    dropped
}

/// A limit of `YamlLimits` a file went past.
#[derive(Clone, Copy)]
enum Past {
    Nodes,
    Documents,
    Depth,
}

/// The message for a file past one of `limits`, the same for YAML and JSON.
fn past_limit(past: Past, format: &str, limits: YamlLimits) -> String {
    let split = "split the file (one per namespace or per kind, for example), or read only the objects the plan \
                 needs: Rollouts, TrafficRoutings, their gateway objects and the script ConfigMap";
    match past {
        Past::Nodes => format!("more than {} {format} nodes, the limit for one file: {split}", limits.nodes),
        Past::Documents => {
            format!("more than {} {format} documents, the limit for one file: {split}", limits.documents)
        }
        Past::Depth => format!("maps and lists nested deeper than {} levels, the limit", limits.depth),
    }
}

/// `file:line:column: message`, with what to do when a limit was reached, and the line indented
/// with a tab when there is one (the parser reports where the node it was reading began).
fn yaml_error(error: &serde_saphyr::Error, text: &str, source: &str, limits: YamlLimits, budget: &Budget) -> String {
    let error = error.without_snippet();
    let line = error.location().map_or(0, |location| location.line() as usize);
    let at = match error.location() {
        Some(location) if line > 0 => format!("{source}:{line}:{}", location.column()),
        _ => source.to_string(),
    };
    // A limit reached while an alias is replayed comes wrapped; its place is the alias's.
    let mut original = error;
    while let serde_saphyr::Error::AliasError { error, .. } | serde_saphyr::Error::WithSnippet { error, .. } = original
    {
        original = error;
    }
    let message = match original {
        serde_saphyr::Error::Budget { breach, .. } => match breach {
            BudgetBreach::Nodes { .. } | BudgetBreach::Events { .. } => past_limit(Past::Nodes, "YAML", limits),
            BudgetBreach::Documents { .. } => past_limit(Past::Documents, "YAML", limits),
            BudgetBreach::Depth { .. } => past_limit(Past::Depth, "YAML", limits),
            BudgetBreach::RecordedAnchorEvents { .. } => format!(
                "aliases that repeat more than {} nodes, the limit for one file: anchors and aliases that expand too far",
                budget.max_recorded_anchor_events
            ),
            BudgetBreach::ScalarBytes { .. } => format!(
                "more than {} MiB of text with its aliases expanded, the limit for one file",
                budget.max_total_scalar_bytes >> 20
            ),
            BudgetBreach::MergeKeys { .. } => {
                format!("more than {} merge keys (`<<`), the limit for one file", budget.max_merge_keys)
            }
            BudgetBreach::Aliases { .. } => {
                format!("more than {} aliases (`*name`), the limit for one file", budget.max_aliases)
            }
            BudgetBreach::Anchors { .. } => {
                format!("more than {} anchors (`&name`), the limit for one file", budget.max_anchors)
            }
            _ => "too much for the YAML parser: anchors and aliases that expand too far, or more than 64 MiB of text"
                .to_string(),
        },
        // Merge keys (`<<: [*a, *b]`) replay their aliases through another counter.
        serde_saphyr::Error::AliasReplayLimitExceeded { max_total_replayed_events, .. } => format!(
            "aliases and merge keys (`<<`) that repeat more than {max_total_replayed_events} nodes, the limit for one file: anchors and aliases that expand too far"
        ),
        serde_saphyr::Error::AliasExpansionLimitExceeded { max_expansions_per_anchor, .. } => format!(
            "an anchor repeated by more than {max_expansions_per_anchor} aliases, the limit for one file"
        ),
        serde_saphyr::Error::AliasReplayStackDepthExceeded { max_depth, .. } => {
            format!("aliases nested more than {max_depth} deep, the limit for one file")
        }
        serde_saphyr::Error::NonFiniteFloat { value, .. } => {
            format!("`{value}` is infinite or not a number as a float, which JSON (and so Kubernetes) cannot hold")
        }
        // kubectl (go-yaml v2) reads such a value and JSON then writes each bad byte as U+FFFD;
        // the parser's own advice names an option of its own.
        serde_saphyr::Error::BinaryNotUtf8 { .. } => {
            "a !!binary value that is not UTF-8 text, which a Kubernetes object cannot hold as a string: write it as text (or base64 text without the tag)".to_string()
        }
        // The scanner's own limit on `[`/`{` nesting (255), met first when it reads ahead.
        serde_saphyr::Error::ExternalMessage { msg, .. } if msg == "recursion limit exceeded" => {
            past_limit(Past::Depth, "YAML", limits)
        }
        other => {
            let message = serde_saphyr::DefaultMessageFormatter.format_message(other);
            let message: String = message.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
            let tab = text
                .lines()
                .enumerate()
                .skip(line.saturating_sub(1))
                .find(|(_, l)| l.chars().take_while(|c| c.is_whitespace()).any(|c| c == '\t'));
            match tab {
                Some((i, _)) => {
                    format!("{message} (line {} is indented with a tab: YAML indents with spaces only)", i + 1)
                }
                None => message,
            }
        }
    };
    format!("{at}: {message}")
}

/// serde_json reads an `io::Read` a byte at a time, so the lines read so far are the line of
/// the key it has just read: duplicate keys in JSON are reported with both lines, as in YAML.
struct LineCounting<'a> {
    rest: &'a [u8],
    line: &'a Cell<usize>,
}

impl Read for LineCounting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.rest.read(buf)?;
        self.line.set(self.line.get() + buf[..n].iter().filter(|&&b| b == b'\n').count());
        Ok(n)
    }
}

/// How a map visitor learns the line of a key.
#[derive(Clone, Copy)]
enum Lines<'a> {
    /// YAML: keys come with their span.
    Spans,
    /// JSON: the line counted so far.
    Counted(&'a Cell<usize>),
    /// None: a duplicate key fails with `DUPLICATE_KEY` alone (the caller reads again to say
    /// where).
    Untracked,
}

/// The start of the error `Lines::Untracked` gives for a duplicate key.
const DUPLICATE_KEY: &str = "duplicate key";

/// A document's value, read as serde_json's `Value` is, but refusing duplicate keys.
struct YamlValue(Value);

impl<'de> de::Deserialize<'de> for YamlValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<YamlValue, D::Error> {
        ValueSeed { lines: Lines::Spans, json: None, depth: 0 }.deserialize(deserializer).map(YamlValue)
    }
}

/// JSON's nodes read so far, counted against the limits YAML's parser applies itself.
struct JsonCounter {
    limits: YamlLimits,
    nodes: Cell<usize>,
}

#[derive(Clone, Copy)]
struct ValueSeed<'a> {
    lines: Lines<'a>,
    /// Counts JSON; YAML is counted by its parser.
    json: Option<&'a JsonCounter>,
    /// The maps and lists the value is in.
    depth: usize,
}

impl<'a> ValueSeed<'a> {
    fn json(lines: Lines<'a>, counter: &'a JsonCounter) -> Self {
        ValueSeed { lines, json: Some(counter), depth: 0 }
    }

    /// Counts a node (a value or a key) of JSON.
    fn count_node<E: de::Error>(&self) -> Result<(), E> {
        match self.json {
            Some(counter) if counter.nodes.get() >= counter.limits.nodes => {
                Err(E::custom(past_limit(Past::Nodes, "JSON", counter.limits)))
            }
            Some(counter) => {
                counter.nodes.set(counter.nodes.get() + 1);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// The seed for the items of a map or list, refused past the depth limit in JSON.
    fn inside<E: de::Error>(self) -> Result<Self, E> {
        match self.json {
            Some(counter) if self.depth >= counter.limits.depth => {
                Err(E::custom(past_limit(Past::Depth, "JSON", counter.limits)))
            }
            _ => Ok(ValueSeed { depth: self.depth + 1, ..self }),
        }
    }
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.count_node()?;
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML or JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.into()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inside = self.inside()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(inside)? {
            items.push(item);
            // The items of a top-level JSON list are its documents.
            match self.json {
                Some(counter) if self.depth == 0 && items.len() > counter.limits.documents => {
                    return Err(de::Error::custom(past_limit(Past::Documents, "JSON", counter.limits)));
                }
                _ => {}
            }
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let inside = self.inside()?;
        let mut values = Map::new();
        let mut first_lines: HashMap<String, usize> = HashMap::new();
        loop {
            let (key, line) = match self.lines {
                Lines::Spans => match map.next_key::<Spanned<YamlKey>>()? {
                    Some(key) => (key.value.0, Some(key.referenced.line() as usize)),
                    None => break,
                },
                Lines::Counted(line) => match map.next_key::<String>()? {
                    Some(key) => (key, Some(line.get())),
                    None => break,
                },
                Lines::Untracked => match map.next_key::<String>()? {
                    Some(key) => (key, None),
                    None => break,
                },
            };
            match line {
                None if values.contains_key(&key) => return Err(de::Error::custom(DUPLICATE_KEY)),
                None => {}
                Some(line) => {
                    if let Some(first) = first_lines.get(&key) {
                        let pasted = match key.as_str() {
                            "apiVersion" | "kind" => " (two documents without a --- line between them?)",
                            "true" | "false" => {
                                " (YAML 1.1 reads y, yes, on and true alike as true, n, no, off and false as false, as kubectl does)"
                            }
                            _ => "",
                        };
                        let lines = match *first == line {
                            true => format!("on line {line}"),
                            false => format!("at lines {first} and {line}"),
                        };
                        return Err(de::Error::custom(format!("key {key:?} given twice, {lines}{pasted}")));
                    }
                    first_lines.insert(key.clone(), line);
                }
            }
            self.count_node()?;
            values.insert(key, map.next_value_seed(inside)?);
        }
        Ok(Value::Object(values))
    }
}

/// A YAML map key as kubectl reads it (sigs.k8s.io/yaml over go-yaml v2): a plain scalar typed
/// by YAML 1.1's rules (`y`, `on` and `true` are the boolean true; `0x10` and `010` the number
/// 16 and 8), then made a string as JSON needs it (`true`, `16`, `1.5`).
struct YamlKey(String);

impl<'de> de::Deserialize<'de> for YamlKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<YamlKey, D::Error> {
        deserializer.deserialize_any(YamlKey(String::new()))
    }
}

impl<'de> Visitor<'de> for YamlKey {
    type Value = YamlKey;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map key (a string, number or boolean)")
    }

    fn visit_bool<E>(self, value: bool) -> Result<YamlKey, E> {
        Ok(YamlKey(value.to_string()))
    }

    fn visit_i64<E>(self, value: i64) -> Result<YamlKey, E> {
        Ok(YamlKey(value.to_string()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<YamlKey, E> {
        Ok(YamlKey(value.to_string()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<YamlKey, E> {
        Ok(YamlKey(go_float32_key(value)))
    }

    fn visit_str<E>(self, value: &str) -> Result<YamlKey, E> {
        Ok(YamlKey(value.into()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<YamlKey, E> {
        Err(E::custom("a null map key (~ or null), which kubectl cannot read"))
    }

    fn visit_none<E: de::Error>(self) -> Result<YamlKey, E> {
        self.visit_unit()
    }
}

/// A float map key as sigs.k8s.io/yaml writes it: Go's `strconv.FormatFloat(f, 'g', -1, 32)`
/// (the shortest digits of the float32, an exponent from 1e+06 and below 1e-04), and YAML's
/// names of infinity and NaN.
fn go_float32_key(value: f64) -> String {
    let single = value as f32;
    if single.is_nan() {
        return ".nan".into();
    }
    if single.is_infinite() {
        return if single > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    let scientific = gojson::shortest_scientific(single);
    let (mantissa, exponent) = gojson::scientific_parts(&scientific);
    if (-4..6).contains(&exponent) {
        return gojson::plain_notation(mantissa, exponent);
    }
    let exponent_sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{exponent_sign}{:02}", exponent.abs())
}

/// The items of a List (and of a List among them) share the List's text. An item of a typed
/// list (`RolloutList`, as the API server returns it) without kind and apiVersion gets them from
/// the list, as kubectl's decoder gives them.
fn flatten_lists(documents: Vec<InText>) -> Vec<InText> {
    let mut flat = Vec::with_capacity(documents.len());
    for (mut document, span) in documents {
        let list_kind = document.value["kind"].as_str().and_then(|k| k.strip_suffix("List")).map(str::to_string);
        let api_version = document.value["apiVersion"].clone();
        match document.value.get_mut("items").map(Value::take) {
            Some(Value::Array(items)) if list_kind.is_some() => {
                let within = document.within.field("items");
                let item_kind = list_kind.filter(|kind| !kind.is_empty());
                let items = items.into_iter().enumerate().map(|(i, mut value)| {
                    if let (Some(kind), Some(item)) = (&item_kind, value.as_object_mut())
                        && !item.contains_key("kind")
                        && !item.contains_key("apiVersion")
                    {
                        item.insert("kind".into(), Value::String(kind.clone()));
                        item.insert("apiVersion".into(), api_version.clone());
                    }
                    (self::document(document.line, within.index(i), value), span.clone())
                });
                // A List among the items is flattened too, as kubectl's FlattenListVisitor does.
                flat.extend(flatten_lists(items.collect()))
            }
            Some(items) => {
                document.value["items"] = items;
                flat.push((document, span));
            }
            None => flat.push((document, span)),
        }
    }
    flat
}

/// A JSON value as YAML, as kubectl prints it (block style, sorted keys), with its numbers as
/// Go's JSON has them (`12345678901234567000`, not `1.2345678901234567e+19`); a negative zero
/// and numbers Go writes with an exponent keep YAML's float syntax (`-0.0`, `1.0e+21`).
pub fn to_string(value: &Value) -> String {
    emit::value(value).unwrap_or_else(|| typed_to_string(&GoNumbers(value)))
}

/// The entries of a map, in this order, as YAML: `to_string` of a map holding them, without
/// building one.
pub fn map_to_string(entries: &[(&str, &Value)]) -> String {
    struct Entries<'a>(&'a [(&'a str, &'a Value)]);
    impl serde::Serialize for Entries<'_> {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_map(self.0.iter().map(|(key, value)| (key, GoNumbers(value))))
        }
    }
    emit::map(entries).unwrap_or_else(|| typed_to_string(&Entries(entries)))
}

/// A typed value as YAML (fields in their declared order).
pub fn typed_to_string(value: &impl serde::Serialize) -> String {
    serde_saphyr::to_string(value).unwrap_or_else(|e| format!("# cannot render as YAML: {e}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_multi_document_yaml_with_lines() {
        let docs = parse_documents("# comment\na: 1\n---\n\nb: 2\n---\nkind: List\nitems:\n- c: 3\n- d: 4\n", "f.yaml")
            .unwrap();
        let lines: Vec<usize> = docs.iter().map(|d| d.line).collect();
        assert_eq!(lines, vec![2, 5, 7, 7]);
        assert_eq!(docs[3].value, json!({"d": 4}));
        assert_eq!(docs[3].place("f.yaml"), "f.yaml:7 items[1]");
        assert_eq!(docs[1].place("f.yaml"), "f.yaml:5");
    }

    #[test]
    fn the_items_of_a_typed_list_get_its_kind_as_kubectl_gives_them() {
        // As the API server returns a list (`kubectl get --raw …/rollouts`): items without kind
        // and apiVersion.
        let list = "{\"apiVersion\": \"rollouts.kruise.io/v1beta1\", \"kind\": \"RolloutList\", \"items\": [\n\
                    {\"metadata\": {\"name\": \"a\"}},\n\
                    {\"apiVersion\": \"v1\", \"kind\": \"Service\", \"metadata\": {\"name\": \"b\"}},\n\
                    {\"kind\": \"Other\"}]}";
        let values: Vec<Value> = parse_documents(list, "l.json").unwrap().into_iter().map(|d| d.value).collect();
        assert_eq!(
            values,
            [
                json!({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "a"}}),
                json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b"}}),
                json!({"kind": "Other"}),
            ]
        );
        // A plain List names no kind for its items.
        let plain = parse_documents("apiVersion: v1\nkind: List\nitems:\n- metadata: {name: a}\n", "l.yaml").unwrap();
        assert_eq!(plain[0].value, json!({"metadata": {"name": "a"}}));
        // A List among a List's items is flattened too, its items placed within both.
        let nested = "kind: List\napiVersion: v1\nitems:\n- kind: List\n  apiVersion: v1\n  items:\n  - metadata: {name: a}\n- metadata: {name: b}\n";
        let flat: Vec<(String, Value)> =
            parse_documents(nested, "n.yaml").unwrap().into_iter().map(|d| (d.within.to_string(), d.value)).collect();
        assert_eq!(
            flat,
            [
                ("items[0].items[0]".to_string(), json!({"metadata": {"name": "a"}})),
                ("items[1]".to_string(), json!({"metadata": {"name": "b"}})),
            ]
        );
    }

    #[test]
    fn text_after_a_document_end_is_read_as_kubectl_reads_it() {
        // kubectl reads one document between `---` lines: what follows a `...` that ends one is
        // dropped, up to the next `---`.
        let read = |text: &str| -> Vec<(usize, Value)> {
            parse_documents(text, "f.yaml").unwrap().into_iter().map(|d| (d.line, d.value)).collect()
        };
        assert_eq!(read("a: 1\n...\nb: 2\n"), [(1, json!({"a": 1}))]);
        assert_eq!(read("a: 1\n... # end\n# c\nb: 2\n---\nc: 3\n"), [(1, json!({"a": 1})), (6, json!({"c": 3}))]);
        assert_eq!(read("a: 1\n...\n---\nb: 2\n"), [(1, json!({"a": 1})), (4, json!({"b": 2}))]);
        // What is dropped is not parsed: kubectl reads a file with a syntax error there.
        assert_eq!(
            read("a: 1\n...\nthis is: [not closed\n---\nc: [3,\n  4]\n"),
            [(1, json!({"a": 1})), (5, json!({"c": [3, 4]}))]
        );
        // An empty document is one; a `...` before any is not an end.
        assert_eq!(read("~\n...\na: 1\n"), []);
        assert_eq!(read("...\na: 1\n"), [(2, json!({"a": 1}))]);
        assert_eq!(read("a: 1\n---\n...\nb: 2\n"), [(1, json!({"a": 1})), (4, json!({"b": 2}))]);
        // A document on its `---` line; `...x` is no marker.
        assert_eq!(read("--- {a: 1}\n...\nb: 2\n--- {c: 3}\n"), [(1, json!({"a": 1})), (4, json!({"c": 3}))]);
        assert_eq!(read("a: |\n  x\n...x: 2\n"), [(1, json!({"a": "x\n", "...x": 2}))]);
        // The text of the document kept runs to the next document kept.
        let docs = parse_documents_keeping("a: 1\n...\nb: 2\n---\nc: 3\n", "f.yaml", |_| true).unwrap();
        assert_eq!(docs[0].text.as_ref().unwrap().text.as_ref(), "a: 1\n...\nb: 2\n---\n");
    }

    #[test]
    fn empty_documents_and_comments_do_not_shift_lines() {
        let docs = parse_documents("---\n~\n---\n--- # note\na: [1,\n  2]\n---\n- x\n", "f.yaml").unwrap();
        let found: Vec<(usize, Value)> = docs.into_iter().map(|d| (d.line, d.value)).collect();
        assert_eq!(found, vec![(5, json!({"a": [1, 2]})), (8, json!(["x"]))]);
    }

    #[test]
    fn reads_json() {
        assert_eq!(parse_documents("{\"a\": 1}", "f.json").unwrap()[0].value, json!({"a": 1}));
        assert_eq!(parse_documents("{\"a\": }", "f.json").unwrap_err(), "f.json:1:7: expected value");
        assert_eq!(parse_documents("{} x", "f.json").unwrap_err(), "f.json:1:4: trailing characters");
        let docs = parse_documents("[{\"a\": 1}, {\"b\": 2}]", "f.json").unwrap();
        assert_eq!(docs[1].place("f.json"), "f.json:1 [1]");
        // A lone surrogate's escape is U+FFFD, as Go (and kubectl) read it; a pair is its character.
        let surrogates = r#"{"a": "\udc00", "b": "x\ud800", "c": "\ud83d\ude00"}"#;
        assert_eq!(
            parse_documents(surrogates, "f.json").unwrap()[0].value,
            json!({"a": "\u{FFFD}", "b": "x\u{FFFD}", "c": "😀"})
        );
        // Errors after one are placed where they are.
        assert_eq!(parse_documents("{\"a\": \"\\udc00\",\n }", "f.json").unwrap_err(), "f.json:2:2: trailing comma");
    }

    #[test]
    fn reads_a_stream_of_json_values_as_kubectl_does() {
        // What `jq '.items[]'` writes: objects one after another, each a document.
        let stream = "{\"a\": \"}{\"}\n{\"b\": [1,\n 2]}\n  {\"c\": 3}{\"d\": 4}\n[{\"e\": 5}]\n";
        let docs = parse_documents(stream, "s.json").unwrap();
        let found: Vec<(String, Value)> = docs.iter().map(|d| (d.place("s.json"), d.value.clone())).collect();
        assert_eq!(
            found,
            [
                ("s.json:1".to_string(), json!({"a": "}{"})),
                ("s.json:2".to_string(), json!({"b": [1, 2]})),
                ("s.json:4".to_string(), json!({"c": 3})),
                ("s.json:4".to_string(), json!({"d": 4})),
                ("s.json:5 [0]".to_string(), json!({"e": 5})),
            ]
        );
        // A fault in a later value is placed in the file.
        assert_eq!(parse_documents("{}\n  {\"a\": }", "s.json").unwrap_err(), "s.json:2:9: expected value");
        assert_eq!(parse_documents("{}\n{\"a\": 1", "s.json").unwrap_err(), "s.json:2:7: EOF while parsing an object");
        assert_eq!(
            parse_documents("{}\n{\"a\": 1, \"a\": 2}", "s.json").unwrap_err(),
            "s.json:2:13: key \"a\" given twice, on line 2"
        );
        // So are the documents' limit and the nodes' within each value.
        let small = YamlLimits { nodes: 20, documents: 2, depth: 4 };
        let err = parse_json_values("{}\n{}\n{}", "s.json", small).unwrap_err();
        assert!(err.starts_with("s.json:3:1: more than 2 JSON documents, the limit for one file"), "{err}");
        let err = parse_json_values("{}\n{\"a\": [[[[1]]]]}", "s.json", small).unwrap_err();
        assert_eq!(err, "s.json:2:10: maps and lists nested deeper than 4 levels, the limit");
    }

    #[test]
    fn numbers_are_written_as_go_writes_them() {
        let value = json!({"big": 12345678901234567890.0, "count": 3, "half": 0.5});
        assert_eq!(to_string(&value), "big: 12345678901234567000\ncount: 3\nhalf: 0.5\n");
    }

    /// go-yaml v2's `resolve` (sigs.k8s.io/yaml, and so kubectl and the controller): the
    /// underscores dropped, then `strconv.ParseInt(s, 0, 64)`, `ParseUint`, then `ParseFloat`
    /// of what looks like a float, else a string.
    #[test]
    fn integers_resolve_as_go_yaml_v2_resolves_them() {
        let table: &[(&str, Value)] = &[
            ("010", json!(8)),
            ("0644", json!(420)),
            ("-010", json!(-8)),
            ("+010", json!(8)),
            ("0_10", json!(8)),
            ("00", json!(0)),
            ("0", json!(0)),
            ("-0", json!(0)),
            ("+0", json!(0)),
            // No octal: ParseInt fails, the float pattern matches.
            ("09", json!(9.0)),
            ("-09", json!(-9.0)),
            ("08.5", json!(8.5)),
            ("010e1", json!(100.0)),
            ("0.", json!(0.0)),
            // Past 64 bits as octal: ParseFloat reads the digits as decimal.
            ("0777777777777777777777777", json!(7.777777777777778e23)),
            ("0o17", json!(15)),
            ("0O17", json!(15)),
            ("0x1F", json!(31)),
            ("0x_1F", json!(31)),
            ("-0x1F", json!(-31)),
            ("0b101", json!(5)),
            ("-0b101", json!(-5)),
            ("1_000", json!(1000)),
            ("10", json!(10)),
            ("-10", json!(-10)),
            ("0xFFFFFFFFFFFFFFFF", json!(u64::MAX)),
            ("-9223372036854775808", json!(i64::MIN)),
            ("0o", json!("0o")),
            ("0x", json!("0x")),
            ("08x", json!("08x")),
        ];
        for (scalar, expected) in table {
            let read = &parse_documents(&format!("a: {scalar}\n"), "f.yaml").unwrap()[0].value["a"];
            assert_eq!(read, expected, "{scalar}");
        }
    }

    /// Strings that read as numbers (or booleans, or null) are quoted on the way out: what the
    /// tool writes (`record`'s cases, `-o yaml`) reads back as it was.
    #[test]
    fn strings_that_read_as_something_else_are_written_quoted() {
        let strings = [
            "010",
            "0644",
            "-010",
            "+010",
            "0_10",
            "00",
            "-0",
            "09",
            "-09",
            "08.5",
            "0o17",
            "0x1F",
            "0b101",
            "-0b101",
            "1_000",
            "0777777777777777777777777",
            "y",
            "on",
            "~",
            "1e3",
            ".5",
            "2001-12-14",
        ];
        for string in strings {
            for value in [json!({"a": string}), json!([string]), json!({string: 1})] {
                let text = to_string(&value);
                assert_eq!(parse_documents(&text, "f.yaml").unwrap()[0].value, value, "{text}");
            }
        }
    }

    #[test]
    fn json_numbers_read_as_serde_json_reads_them() {
        let text = r#"{"i": -3, "u": 18446744073709551615, "f": 0.1, "e": 1e+21, "z": -0.0, "s": "\u00e9"}"#;
        assert_eq!(parse_documents(text, "f.json").unwrap()[0].value, serde_json::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn errors_name_the_file_line_and_column_once() {
        let err = parse_documents("a: 1\n---\nb: [1,\n c: d\n", "bad.yaml").unwrap_err();
        assert!(err.starts_with("bad.yaml:3:"), "{err}");
        assert!(!err.contains("error") && !err.contains('\n'), "{err}");
    }

    #[test]
    fn a_tab_in_the_indentation_is_named() {
        let err = parse_documents("a:\n  b: 1\n\tc: 2\n", "t.yaml").unwrap_err();
        assert!(err.starts_with("t.yaml:2:"), "{err}");
        assert!(err.ends_with(" (line 3 is indented with a tab: YAML indents with spaces only)"), "{err}");
        // A tab elsewhere is no part of the message.
        let err = parse_documents("a: [1,\n", "t.yaml").unwrap_err();
        assert!(!err.contains("tab"), "{err}");
    }

    #[test]
    fn map_keys_are_read_as_kubectl_reads_them() {
        // go-yaml v2 types a plain key as YAML 1.1 does; sigs.k8s.io/yaml makes it a string.
        let text = "y: 1\nOff: 2\n010: 3\n0x10: 4\n1_000: 5\n1.5: 6\n\"on\": 7\n'no': 8\nplain: 9\n";
        let value = &parse_documents(text, "k.yaml").unwrap()[0].value;
        assert_eq!(
            value,
            &serde_json::json!({"true": 1, "false": 2, "8": 3, "16": 4, "1000": 5, "1.5": 6, "on": 7, "no": 8, "plain": 9})
        );
        // Two spellings of one key are one key twice.
        let err = parse_documents("a:\n  y: 1\n  on: 2\n", "k.yaml").unwrap_err();
        assert!(err.ends_with("key \"true\" given twice, at lines 2 and 3 (YAML 1.1 reads y, yes, on and true alike as true, n, no, off and false as false, as kubectl does)"), "{err}");
        let err = parse_documents("a:\n  ~: 1\n", "k.yaml").unwrap_err();
        assert!(err.contains("a null map key (~ or null), which kubectl cannot read"), "{err}");
    }

    #[test]
    fn a_float_key_is_written_as_go_writes_a_float32() {
        for (float, text) in [
            (1.5, "1.5"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (100000.0, "100000"),
            (1e6, "1e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (123456789.0, "1.2345679e+08"),
            (3.0, "3"),
            (f64::INFINITY, ".inf"),
            (f64::NEG_INFINITY, "-.inf"),
            (f64::NAN, ".nan"),
        ] {
            assert_eq!(go_float32_key(float), text, "{float}");
        }
    }

    #[test]
    fn duplicate_keys_name_both_lines() {
        assert_eq!(
            parse_documents("a: 1\nb:\n  c: 1\n  c: 2\n", "d.yaml").unwrap_err(),
            "d.yaml:3:3: key \"c\" given twice, at lines 3 and 4"
        );
        assert_eq!(
            parse_documents("{\"a\": {\"b\": 1,\n\n \"b\": 2}}", "d.json").unwrap_err(),
            "d.json:3:5: key \"b\" given twice, at lines 1 and 3"
        );
        // Two objects pasted together without `---`.
        let pasted = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\napiVersion: v1\nkind: ConfigMap\n";
        assert_eq!(
            parse_documents(pasted, "p.yaml").unwrap_err(),
            "p.yaml: key \"apiVersion\" given twice, at lines 1 and 4 (two documents without a --- line between them?)"
        );
        // The same key in two maps, and keys a merge overrides, are no duplicates.
        let merged = parse_documents("x: {k: 1}\ny: {k: 2}\nbase: &b {k: 1, j: 2}\nm:\n  <<: *b\n  k: 3\n", "m.yaml");
        assert_eq!(merged.unwrap()[0].value["m"], json!({"k": 3, "j": 2}));
    }

    #[test]
    fn limits_say_which_and_how_to_split() {
        let small = YamlLimits { nodes: 20, documents: 3, depth: 4 };
        let err = parse_yaml("a: [[[[[1]]]]]\n", "deep.yaml", small).unwrap_err();
        assert_eq!(err, "deep.yaml:1:7: maps and lists nested deeper than 4 levels, the limit");
        let err = parse_yaml(&"---\na: 1\n".repeat(4), "many.yaml", small).unwrap_err();
        assert!(
            err.starts_with("many.yaml:7:1: more than 3 YAML documents, the limit for one file: split the file"),
            "{err}"
        );
        let err = parse_yaml(&format!("a: [{}0]\n", "0,".repeat(20)), "big.yaml", small).unwrap_err();
        assert!(err.contains(": more than 20 YAML nodes, the limit for one file: split the file"), "{err}");
        assert!(parse_yaml(&format!("a: [{}0]\n", "0,".repeat(16)), "fits.yaml", small).is_ok());
    }

    #[test]
    fn one_anchor_takes_many_aliases_up_to_the_limit_on_aliases() {
        // The parser's aliases-per-anchor heuristic (ten, past a hundred aliases) is off: a
        // shared `<<: *defaults` in a hundred maps is an ordinary file.
        let aliases = |n: usize| format!("a: &x 1\nb: [{}*x]\n", "*x, ".repeat(n - 1));
        assert!(parse_yaml(&aliases(1000), "alias.yaml", YAML_LIMITS).is_ok());
        let merges: String = (0..200).map(|n| format!("k{n}: {{<<: *base, n: {n}}}\n")).collect();
        assert!(parse_yaml(&format!("base: &base {{team: shop}}\n{merges}"), "merge.yaml", YAML_LIMITS).is_ok());
        let err = parse_yaml(&aliases(50_001), "alias.yaml", YAML_LIMITS).unwrap_err();
        assert!(
            err.starts_with("alias.yaml:2:")
                && err.ends_with(": more than 50000 aliases (`*name`), the limit for one file"),
            "{err}"
        );
        let anchors: String = (0..50_001).map(|n| format!("- &a{n} 1\n")).collect();
        let err = parse_yaml(&anchors, "anchors.yaml", YAML_LIMITS).unwrap_err();
        assert!(err.ends_with(": more than 50000 anchors (`&name`), the limit for one file"), "{err}");
    }

    #[test]
    fn json_has_the_same_limits() {
        let small = YamlLimits { nodes: 20, documents: 3, depth: 4 };
        assert!(parse_json_at("{\"a\": [[[1]]]}", "deep.json", small, Start::FILE).is_ok());
        let err = parse_json_at("{\"a\": [[[[1]]]]}", "deep.json", small, Start::FILE).unwrap_err();
        assert_eq!(err, "deep.json:1:10: maps and lists nested deeper than 4 levels, the limit");
        // The items of a top-level list are documents; a list inside is not.
        assert!(parse_json_at("[{}, {}, {}]", "many.json", small, Start::FILE).is_ok());
        assert!(parse_json_at("{\"a\": [{}, {}, {}, {}]}", "many.json", small, Start::FILE).is_ok());
        let err = parse_json_at("[{},\n{}, {},\n {}]", "many.json", small, Start::FILE).unwrap_err();
        assert!(
            err.starts_with("many.json:3:4: more than 3 JSON documents, the limit for one file: split the file"),
            "{err}"
        );
        // Keys count as nodes, as in YAML: 1 map + 9 keys + 9 values + 1 = 20 fits.
        let map = |n: usize| format!("{{{}}}", (0..n).map(|i| format!("\"k{i}\": {i}")).collect::<Vec<_>>().join(", "));
        assert!(parse_json_at(&map(9), "big.json", small, Start::FILE).is_ok());
        let err = parse_json_at(&map(10), "big.json", small, Start::FILE).unwrap_err();
        assert!(err.contains(": more than 20 JSON nodes, the limit for one file: split the file"), "{err}");
        // The limits hold on the slow path that names both lines of a duplicate key too.
        let err = parse_json_counting_lines("{\"a\": [[[[1]]]]}", "deep.json", small, Start::FILE).unwrap_err();
        assert!(err.ends_with(": maps and lists nested deeper than 4 levels, the limit"), "{err}");
    }

    #[test]
    fn infinite_numbers_are_named() {
        for (text, value) in
            [("weight: 1e400\n", "1e400"), ("a: [.inf]\n", ".inf"), ("a: -.Inf\n", "-.Inf"), ("a: .nan\n", ".nan")]
        {
            assert!(
                parse_yaml(text, "n.yaml", YAML_LIMITS).unwrap_err().ends_with(&format!(
                    ": `{value}` is infinite or not a number as a float, which JSON (and so Kubernetes) cannot hold"
                )),
                "{text}"
            );
        }
    }

    #[test]
    fn a_binary_value_that_is_not_text_is_said_without_the_parsers_options() {
        let err = parse_yaml("a: !!binary gIA=\n", "b.yaml", YAML_LIMITS).unwrap_err();
        assert_eq!(
            err,
            "b.yaml:1:13: a !!binary value that is not UTF-8 text, which a Kubernetes object cannot hold as a string: write it as text (or base64 text without the tag)"
        );
        // Text, it is read as its text, as kubectl reads it.
        let documents = parse_yaml("a: !!binary aGk=\n", "b.yaml", YAML_LIMITS).unwrap();
        assert_eq!(documents[0].0.value, serde_json::json!({"a": "hi"}));
    }

    #[test]
    fn alias_limits_are_named() {
        // Each level doubles the one before: 2^21 replayed nodes pass the 1,000,000 limit.
        let mut laughs = "a0: &a0 [x]\n".to_string();
        for level in 1..22 {
            laughs += &format!("a{level}: &a{level} [*a{}, *a{}]\n", level - 1, level - 1);
        }
        let err = parse_yaml(&laughs, "laughs.yaml", YAML_LIMITS).unwrap_err();
        assert!(err.ends_with(": aliases that repeat more than 1000000 nodes, the limit for one file: anchors and aliases that expand too far"), "{err}");
        assert!(err.starts_with("laughs.yaml:"), "{err}");
        // Text: 1 MiB used 65 times.
        let text = format!("s: &s {}\nl: [{}]\n", "x".repeat(1 << 20), vec!["*s"; 64].join(", "));
        let err = parse_yaml(&text, "text.yaml", YAML_LIMITS).unwrap_err();
        assert!(err.ends_with(": more than 64 MiB of text with its aliases expanded, the limit for one file"), "{err}");
        // Merge keys.
        let merges: String = (0..10_001).map(|i| format!("m{i}: {{<<: {{a: 1}}}}\n")).collect();
        let err = parse_yaml(&merges, "merge.yaml", YAML_LIMITS).unwrap_err();
        assert!(err.ends_with(": more than 10000 merge keys (`<<`), the limit for one file"), "{err}");
        // An anchor merged many times over (a regression: the parser's own words).
        let keys: Vec<String> = (0..2000).map(|i| format!("k{i}: {i}")).collect();
        let merged = format!("big: &big {{{}}}\nm: {{<<: [{}]}}\n", keys.join(", "), vec!["*big"; 600].join(", "));
        let err = parse_yaml(&merged, "merged.yaml", YAML_LIMITS).unwrap_err();
        assert!(
            err.ends_with(": aliases and merge keys (`<<`) that repeat more than 1000000 nodes, the limit for one file: anchors and aliases that expand too far"),
            "{err}"
        );
    }

    #[test]
    fn a_cluster_export_fits_the_limits() {
        // 3,000 objects of a few kB each, as one List and as separate documents.
        let object = "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: x, namespace: y, labels: {a: b}}\n  data: {k: v}\n";
        let list = format!("apiVersion: v1\nkind: List\nitems:\n{}", object.repeat(3000));
        assert_eq!(parse_documents(&list, "export.yaml").unwrap().len(), 3000);
        let documents = object.replace("- ", "---\n").replace("\n  ", "\n").repeat(3000);
        assert_eq!(parse_documents(&documents, "export.yaml").unwrap().len(), 3000);
    }
}
