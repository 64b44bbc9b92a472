//! YAML and JSON documents in, YAML out: multi-document files with the line each document
//! starts on, so messages can point at it.

use serde_json::Value;

/// A document read from a file, and the line (1-based) it starts on.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    pub line: usize,
    pub value: Value,
}

/// Parses a file's text: JSON when it starts with `{` or `[`, else (multi-document) YAML.
/// `kind: List` documents are flattened into their items. Errors name `source` and the line.
pub fn parse_documents(text: &str, source: &str) -> Result<Vec<Document>, String> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        let value: Value =
            serde_json::from_str(text).map_err(|e| format!("{source}:{}:{}: {e}", e.line(), e.column()))?;
        let documents = match value {
            Value::Array(items) => items.into_iter().map(|value| Document { line: 1, value }).collect(),
            value => vec![Document { line: 1, value }],
        };
        return Ok(flatten_lists(documents));
    }
    let values: Vec<Value> = serde_saphyr::from_multiple(text).map_err(|e| {
        let line = e.location().map(|l| format!(":{}", l.line())).unwrap_or_default();
        format!("{source}{line}: {}", e.to_string().replace("<input>", source))
    })?;
    let starts = document_start_lines(text);
    let documents = values
        .into_iter()
        .filter(|v| !v.is_null())
        .enumerate()
        .map(|(i, value)| Document { line: starts.get(i).copied().unwrap_or(1), value })
        .collect();
    Ok(flatten_lists(documents))
}

/// The first content line of each non-empty document (separated by `---` lines).
fn document_start_lines(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut in_document = false;
    for (i, line) in text.lines().enumerate() {
        let content = line.trim_end();
        if content == "---" || content.starts_with("--- ") || content == "..." {
            in_document = false;
            continue;
        }
        let blank = content.trim_start().is_empty() || content.trim_start().starts_with('#');
        if !in_document && !blank {
            starts.push(i + 1);
            in_document = true;
        }
    }
    starts
}

fn flatten_lists(documents: Vec<Document>) -> Vec<Document> {
    documents
        .into_iter()
        .flat_map(|d| match d.value.get("items").and_then(Value::as_array) {
            Some(items) if d.value["kind"].as_str().is_some_and(|k| k.ends_with("List")) => {
                items.iter().map(|value| Document { line: d.line, value: value.clone() }).collect()
            }
            _ => vec![d],
        })
        .collect()
}

/// A JSON value as YAML, as kubectl prints it (block style, sorted keys), with its numbers as
/// Go's JSON has them (`12345678901234567000`, not `1.2345678901234567e+19`); a negative zero
/// and numbers Go writes with an exponent keep YAML's float syntax (`-0.0`, `1.0e+21`).
pub fn to_string(value: &Value) -> String {
    typed_to_string(&crate::gojson::GoNumbers(value))
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
    }

    #[test]
    fn reads_json() {
        assert_eq!(parse_documents("{\"a\": 1}", "f.json").unwrap()[0].value, json!({"a": 1}));
        assert!(parse_documents("{\"a\": }", "f.json").unwrap_err().starts_with("f.json:1:"));
    }

    #[test]
    fn numbers_are_written_as_go_writes_them() {
        let value = json!({"big": 12345678901234567890.0, "count": 3, "half": 0.5});
        assert_eq!(to_string(&value), "big: 12345678901234567000\ncount: 3\nhalf: 0.5\n");
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let err = parse_documents("a: 1\n---\nb: [1,\n c: d\n", "bad.yaml").unwrap_err();
        assert!(err.starts_with("bad.yaml:3: "), "{err}");
    }
}
