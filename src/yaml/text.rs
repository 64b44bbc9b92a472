//! The text a document was read from, kept for the few documents whose fields messages name
//! (Rollouts and TrafficRoutings), and the line of a field in it. The line is looked up only when
//! there is a message to give: the text is read again then by the YAML parser's events (JSON is
//! YAML's flow style), which carry each node's line.

use crate::model::{Path, Segment};
use granit_parser::{Event, Parser, ScalarStyle, Span, StrInput};
use std::sync::Arc;

/// A document's text, and where the document is in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentText {
    /// The file (or `<stdin>`, `kustomize DIR`) it was read from.
    pub(super) source: String,
    /// From the document's first line on for a YAML document; all of a JSON file, shared by its
    /// items.
    pub(super) text: Arc<str>,
    /// The line of the source `text` starts on.
    pub(super) first_line: usize,
    /// Where the document is in the first document of `text`: `items[3]` of a `kind: List`, `[3]`
    /// of a JSON array, `rollout` of a test case.
    pub(super) within: Path,
}

impl DocumentText {
    /// `file.yaml:14`: where `field` of the document is written (its key, or a list item's first
    /// line). Where the text does not have it (a required field left out, a default, a field
    /// added by the conversion from v1alpha1, one reached through an alias or a merge `<<`), where
    /// the nearest field around it is written (the step that lacks its `replicas`); `None` when
    /// not even the first is.
    pub fn place_of(&self, field: &Path) -> Option<String> {
        let line = line_of(&self.text, self.within.segments().iter().chain(field.segments()))?;
        Some(format!("{}:{}", self.source, self.first_line + line - 1))
    }

    /// Where each string of the map at `map` is written in its file, in one reading of the
    /// text: its key, the line of its key, and for a literal block (`|`) the line its text starts
    /// on, from which its lines are the file's one for one (a ConfigMap's scripts, whose errors
    /// give a line of the script). None when the text has no map there.
    pub fn strings_lines(&self, map: &Path) -> Vec<StringLines> {
        let mut nodes = Nodes(Parser::new_from_str(&self.text));
        let path = self.within.segments().iter().chain(map.segments());
        let Some((Event::MappingStart(..), _)) = descend(&mut nodes, path, &mut None) else { return Vec::new() };
        let in_file = |line: usize| self.first_line + line - 1;
        let mut found = Vec::new();
        while let Some((key, key_span)) = nodes.next() {
            let Some((value, span)) = (key != Event::MappingEnd).then(|| nodes.next()).flatten() else { break };
            let first_line = match &value {
                // The parser places a block at its first line with more than spaces.
                Event::Scalar(text, ScalarStyle::Literal, ..) => {
                    let empty_lines = text.len() - text.trim_start_matches('\n').len();
                    Some(in_file(span.start.line().saturating_sub(empty_lines)))
                }
                _ => None,
            };
            match (&key, &value) {
                (Event::Scalar(name, ..), Event::Scalar(..)) => found.push(StringLines {
                    key: name.to_string(),
                    key_line: in_file(key_span.start.line()),
                    first_line,
                }),
                _ if nodes.skip(&key).and_then(|()| nodes.skip(&value)).is_none() => break,
                _ => {}
            }
        }
        found
    }

    /// The file (or `<stdin>`, `kustomize DIR`) the text was read from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The text of the map under `key` (a test case's `rollout`).
    pub fn inside(&self, key: &str) -> DocumentText {
        DocumentText { within: self.within.field(key), ..self.clone() }
    }
}

/// Where a string of a map is written (`DocumentText::strings_lines`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StringLines {
    pub key: String,
    pub key_line: usize,
    pub first_line: Option<usize>,
}

/// The line (1-based, in `text`) of the node `path` leads to in the first document of `text`,
/// or of the deepest node on the way that the text has.
fn line_of<'a>(text: &str, path: impl Iterator<Item = &'a Segment>) -> Option<usize> {
    let mut line = None;
    descend(&mut Nodes(Parser::new_from_str(text)), path, &mut line);
    line
}

/// The node `path` leads to in the first document of `nodes`, when the text has it; `line` is
/// left at the line of the deepest node reached on the way (a key's, a list item's).
fn descend<'a, 'p>(
    nodes: &mut Nodes<'a>,
    path: impl Iterator<Item = &'p Segment>,
    line: &mut Option<usize>,
) -> Option<(Event<'a>, Span)> {
    // The node the next segment looks into, when it has been read already.
    let mut read: Option<(Event, Span)> = None;
    for segment in path {
        let node = match read.take() {
            Some(node) => node.0,
            None => nodes.next()?.0,
        };
        match (segment, node) {
            (Segment::Key(key), Event::MappingStart(..)) => loop {
                let (candidate, span) = nodes.next()?;
                match candidate {
                    Event::MappingEnd => return None,
                    Event::Scalar(name, ..) if name == key.as_str() => {
                        *line = Some(span.start.line());
                        break;
                    }
                    // Another key (a complex one too), and its value.
                    other => {
                        nodes.skip(&other)?;
                        let (value, _) = nodes.next()?;
                        nodes.skip(&value)?;
                    }
                }
            },
            (Segment::Index(index), Event::SequenceStart(..)) => {
                for _ in 0..*index {
                    match nodes.next()?.0 {
                        Event::SequenceEnd => return None,
                        item => nodes.skip(&item)?,
                    }
                }
                let (item, span) = nodes.next()?;
                if item == Event::SequenceEnd {
                    return None;
                }
                *line = Some(span.start.line());
                read = Some((item, span));
            }
            // A scalar, an alias (its node is written elsewhere), or the other kind of collection.
            _ => return None,
        }
    }
    read.or_else(|| nodes.next())
}

/// The events of the first document's nodes.
struct Nodes<'a>(Parser<'a, StrInput<'a>>);

impl<'a> Nodes<'a> {
    /// The next event of a node, or `None` at the end of the document or at an error.
    fn next(&mut self) -> Option<(Event<'a>, Span)> {
        loop {
            let (event, span) = self.0.next()?.ok()?;
            match event {
                Event::StreamStart | Event::DocumentStart(..) | Event::Comment(..) | Event::Anchor(..) => {}
                Event::StreamEnd | Event::DocumentEnd => return None,
                event => return Some((event, span)),
            }
        }
    }

    /// Reads past the node that `first` starts.
    fn skip(&mut self, first: &Event) -> Option<()> {
        let mut open = usize::from(matches!(first, Event::MappingStart(..) | Event::SequenceStart(..)));
        while open > 0 {
            match self.next()?.0 {
                Event::MappingStart(..) | Event::SequenceStart(..) => open += 1,
                Event::MappingEnd | Event::SequenceEnd => open -= 1,
                _ => {}
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::StringLines;
    use crate::model::Path;
    use crate::yaml::parse_documents_keeping;

    /// Where `field` of each document of `text` is, as `f:LINE`, or `-` when it falls back.
    fn places(text: &str, field: &Path) -> Vec<String> {
        let documents = parse_documents_keeping(text, "f", |_| true).unwrap();
        documents.iter().map(|d| d.text.as_ref().expect("kept").place_of(field).unwrap_or_else(|| "-".into())).collect()
    }

    fn path(text: &str) -> Path {
        // `a.b[2].c`, for keys without dots or brackets.
        let mut path = Path::default();
        for part in text.split('.') {
            let (key, indices) = part.split_once('[').map_or((part, ""), |(key, rest)| (key, rest));
            path = path.field(key);
            for index in indices.split('[').filter(|i| !i.is_empty()) {
                path = path.index(index.trim_end_matches(']').parse().unwrap());
            }
        }
        path
    }

    #[test]
    fn finds_a_keys_line_in_block_yaml() {
        let text = "# a comment\nspec:\n  strategy:\n    canary:\n      steps:\n      - replicas: 1\n        traffic: 20%\n\n      - replicas: 2\n        # why\n        traffic: \"150%\"\n";
        assert_eq!(places(text, &path("spec.strategy.canary.steps[1].traffic")), ["f:11"]);
        assert_eq!(places(text, &path("spec.strategy.canary.steps[0].traffic")), ["f:7"]);
        // A list item is where it starts.
        assert_eq!(places(text, &path("spec.strategy.canary.steps[1]")), ["f:9"]);
        assert_eq!(places(text, &path("spec.strategy")), ["f:3"]);
    }

    #[test]
    fn a_field_the_text_does_not_have_is_placed_at_the_nearest_around_it() {
        let text = "spec:\n  steps:\n  - replicas: 1\n  - traffic: 20%\n";
        // The step without replicas, the list without a third step, the scalar without fields.
        for (missing, place) in [
            ("spec.steps[1].replicas", "f:4"),
            ("spec.steps[2]", "f:2"),
            ("spec.steps[0].replicas.x", "f:3"),
            ("spec.steps.x", "f:2"),
        ] {
            assert_eq!(places(text, &path(missing)), [place], "{missing}");
        }
        // Not even the first field: the document's place instead.
        assert_eq!(places(text, &path("status")), ["-"]);
    }

    #[test]
    fn keys_with_special_characters_are_matched_whole() {
        let text = "metadata:\n  annotations:\n    rollouts.kruise.io/trafficrouting: tr\n    \"a: b[0]\": x\n    'it''s': y\n    rollouts: {kruise: {io/trafficrouting: no}}\n";
        let annotations = Path::root("metadata").field("annotations");
        assert_eq!(places(text, &annotations.field("rollouts.kruise.io/trafficrouting")), ["f:3"]);
        assert_eq!(places(text, &annotations.field("a: b[0]")), ["f:4"]);
        assert_eq!(places(text, &annotations.field("it's")), ["f:5"]);
        assert_eq!(places(text, &annotations.field("rollouts.kruise")), ["f:2"], "the annotations");
    }

    #[test]
    fn flow_style_maps_give_the_keys_line() {
        let text = "metadata: {name: r, namespace: demo}\nspec:\n  steps:\n  - {replicas: 1, wieght: 20}\n  - {replicas: 2,\n     traffic: 50%}\n";
        assert_eq!(places(text, &path("spec.steps[0].wieght")), ["f:4"]);
        assert_eq!(places(text, &path("spec.steps[1].traffic")), ["f:6"]);
        // On the document's line: that line.
        assert_eq!(places(text, &path("metadata.namespace")), ["f:1"]);
    }

    #[test]
    fn json_single_line_or_pretty() {
        let one_line = r#"{"kind": "Rollout", "spec": {"steps": [{"replicas": 1}, {"traffic": "150%"}]}}"#;
        assert_eq!(places(one_line, &path("spec.steps[1].traffic")), ["f:1"]);
        let pretty = "{\n  \"kind\": \"Rollout\",\n  \"spec\": {\n    \"steps\": [\n      {\"replicas\": 1},\n      {\n        \"traffic\":\"150%\"\n      }\n    ]\n  }\n}\n";
        assert_eq!(places(pretty, &path("spec.steps[1].traffic")), ["f:7"]);
        assert_eq!(places(pretty, &path("spec.steps[0].traffic")), ["f:5"], "its step");
        // Escapes in a key are read as JSON reads them.
        assert_eq!(places("{\n\"a\\u002eb\": 1}", &Path::root("a.b")), ["f:2"]);
        // The items of a JSON array, each in the one text.
        let array = "[\n{\"a\": 1},\n{\"b\": 2,\n \"a\": 3}\n]";
        assert_eq!(places(array, &Path::root("a")), ["f:2", "f:4"]);
    }

    #[test]
    fn each_document_of_a_file_has_its_own_lines() {
        let text = "a: 1\nb: 2\n---\n# second\n\nb: 3\n--- {a: 4,\n  b: 5}\n---\n~\n---\nc:\n  b: 6\n...\n";
        assert_eq!(places(text, &Path::root("b")), ["f:2", "f:6", "f:8", "-"]);
        assert_eq!(places(text, &Path::root("c").field("b")), ["-", "-", "-", "f:13"]);
        // Only the documents asked for keep their text, each its own.
        let documents = parse_documents_keeping(text, "f", |d| d.get("c").is_some()).unwrap();
        let kept: Vec<_> = documents.iter().map(|d| d.text.as_ref().map(|t| t.text.len())).collect();
        assert_eq!(kept, [None, None, None, Some("c:\n  b: 6\n...\n".len())]);
    }

    #[test]
    fn the_items_of_a_list_share_its_text() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- kind: A\n  a: 1\n- kind: B\n  b:\n    a: 2\n";
        assert_eq!(places(text, &Path::root("a")), ["f:5", "f:6"], "the item without a");
        assert_eq!(places(text, &Path::root("b").field("a")), ["f:4", "f:8"], "the item without b");
        let documents = parse_documents_keeping(text, "f", |_| true).unwrap();
        let (first, second) = (documents[0].text.as_ref().unwrap(), documents[1].text.as_ref().unwrap());
        assert!(std::sync::Arc::ptr_eq(&first.text, &second.text));
        // A List after another document, in JSON too.
        let after = "x: 1\n---\nkind: List\nitems:\n- a: 1\n";
        assert_eq!(places(after, &Path::root("a")), ["-", "f:5"]);
        let json = "{\"kind\": \"List\",\n \"items\": [{\"a\": 1},\n  {\"a\": 2}]}";
        assert_eq!(places(json, &Path::root("a")), ["f:2", "f:3"]);
    }

    #[test]
    fn anchors_and_aliases_give_the_line_written_or_the_alias_line() {
        let text = "base: &base\n  a: 1\n  b: 2\nalias: *base\nmerged:\n  <<: *base\n  b: 3\nlist: &l [1, 2]\n";
        // Inside the anchored node: where it is written.
        assert_eq!(places(text, &path("base.a")), ["f:2"]);
        // Through an alias or a merge, the node is elsewhere: the alias's or merge's key instead.
        assert_eq!(places(text, &path("alias.a")), ["f:4"]);
        assert_eq!(places(text, &path("merged.a")), ["f:5"]);
        // A key written beside a merge is its own.
        assert_eq!(places(text, &path("merged.b")), ["f:7"]);
        assert_eq!(places(text, &path("list[1]")), ["f:8"]);
    }

    #[test]
    fn a_test_cases_subject_is_looked_up_under_its_key() {
        let text = "rollout:\n  spec:\n    replica: 1\noriginal:\n  spec:\n    replica: 2\n";
        let documents = parse_documents_keeping(text, "f", |_| true).unwrap();
        let subject = documents[0].text.as_ref().unwrap().inside("rollout");
        assert_eq!(subject.place_of(&path("spec.replica")).as_deref(), Some("f:3"));
        let original = documents[0].text.as_ref().unwrap().inside("original");
        assert_eq!(original.place_of(&path("spec.replica")).as_deref(), Some("f:6"));
    }

    #[test]
    fn a_literal_blocks_lines_are_the_files_others_only_the_keys() {
        let text = "kind: ConfigMap\ndata:\n  a: |\n    local x = 1\n    return x\n  b: |-2\n      first\n  c: \"one\\ntwo\"\n  d: >\n    folded\n  e:\n    |\n    late header\n  f: 1\n  g: |\n\n    after an empty line\n  n: {x: 1}\n  l: [1]\n  z: last\n";
        let documents = parse_documents_keeping(&format!("x: 1\n---\n{text}"), "f", |_| true).unwrap();
        let text = documents[1].text.as_ref().unwrap();
        assert_eq!(text.source(), "f");
        let lines: Vec<(String, usize, Option<usize>)> = text
            .strings_lines(&Path::root("data"))
            .into_iter()
            .map(|StringLines { key, key_line, first_line }| (key, key_line, first_line))
            .collect();
        let expected = [
            ("a", 5, Some(6)),
            ("b", 8, Some(9)),
            ("c", 10, None),
            ("d", 11, None),
            ("e", 13, Some(15)),
            ("f", 16, None),
            ("g", 17, Some(18)),
            ("z", 22, None),
        ];
        assert_eq!(lines, expected.map(|(k, l, f)| (k.to_string(), l, f)), "maps and lists passed over");
        // With an indentation indicator, spaces past the indentation are text: a line of only
        // such spaces is one of the block's lines.
        let indicated = "data:\n  h: |2\n       \n     \n    third\n  i: |2-\n\n      \n    third\n  j: |2\n   \n    second\n  k: |\n   \n    second\n  z: 1\n";
        let documents = parse_documents_keeping(indicated, "f", |_| true).unwrap();
        let lines = documents[0].text.as_ref().unwrap().strings_lines(&Path::root("data"));
        let first: Vec<(&str, Option<usize>)> = lines.iter().map(|l| (l.key.as_str(), l.first_line)).collect();
        assert_eq!(first, [("h", Some(3)), ("i", Some(7)), ("j", Some(11)), ("k", Some(14)), ("z", None)]);
        // No map there.
        assert_eq!(text.strings_lines(&Path::root("kind")), Vec::new());
        assert_eq!(text.strings_lines(&Path::root("nothing")), Vec::new());
    }

    #[test]
    fn indented_documents_windows_line_ends_and_wide_characters() {
        // The document's text starts at its first line's start, indentation kept.
        let text = "a: 1\r\n---\r\n  b: 1\r\n  c: 2\r\n";
        assert_eq!(places(text, &path("c")), ["-", "f:4"]);
        let text = "a: \"é🦀\"\n---\n  b: 1\n  c: 2\n";
        assert_eq!(places(text, &path("c")), ["-", "f:4"]);
    }
}
