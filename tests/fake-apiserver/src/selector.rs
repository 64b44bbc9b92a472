//! `labelSelector` and `fieldSelector` query parameters of LIST requests.

use serde_json::Value;

/// A parsed selector: every requirement must hold (commas mean AND).
#[derive(Clone, Debug, Default)]
pub(crate) struct Selector(Vec<Requirement>);

#[derive(Clone, Debug)]
struct Requirement {
    key: String,
    op: Op,
    values: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
enum Op {
    Exists,
    NotExists,
    In,
    NotIn,
}

impl Selector {
    /// Parses `a=b,c!=d,e,!f,g in (x,y),h notin (z)`.
    pub fn parse_labels(text: &str) -> Result<Self, String> {
        split_outside_parens(text)
            .into_iter()
            .filter(|part| !part.trim().is_empty())
            .map(|part| parse_label_requirement(part.trim()))
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// Parses `metadata.name=x,metadata.namespace!=y`; those are the only fields custom
    /// resources support.
    pub fn parse_fields(text: &str) -> Result<Self, String> {
        let mut requirements = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, op, value) =
                split_equality(part).ok_or_else(|| format!("invalid selector: '{text}'; can't understand '{part}'"))?;
            if key != "metadata.name" && key != "metadata.namespace" {
                return Err(format!(
                    "\"{key}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                ));
            }
            requirements.push(Requirement { key: key.to_owned(), op, values: vec![value.to_owned()] });
        }
        Ok(Self(requirements))
    }

    /// Matches `metadata.labels` of `object`.
    pub fn matches_labels(&self, object: &Value) -> bool {
        let labels = &object["metadata"]["labels"];
        self.0.iter().all(|r| r.matches(labels.get(&r.key).and_then(Value::as_str)))
    }

    /// Matches the dotted field paths (`metadata.name`) of `object`.
    pub fn matches_fields(&self, object: &Value) -> bool {
        self.0.iter().all(|r| {
            let pointer = format!("/{}", r.key.replace('.', "/"));
            r.matches(object.pointer(&pointer).and_then(Value::as_str))
        })
    }
}

impl Requirement {
    fn matches(&self, actual: Option<&str>) -> bool {
        let listed = actual.is_some_and(|a| self.values.iter().any(|v| v == a));
        match self.op {
            Op::Exists => actual.is_some(),
            Op::NotExists => actual.is_none(),
            Op::In => listed,
            // As in Kubernetes, `!=` and `notin` also match objects without the label.
            Op::NotIn => !listed,
        }
    }
}

fn split_outside_parens(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// `key=value`, `key==value` or `key!=value`; equality is `In` with one value.
fn split_equality(part: &str) -> Option<(&str, Op, &str)> {
    let (key, op, value) = if let Some((k, v)) = part.split_once("!=") {
        (k, Op::NotIn, v)
    } else if let Some((k, v)) = part.split_once("==") {
        (k, Op::In, v)
    } else {
        let (k, v) = part.split_once('=')?;
        (k, Op::In, v)
    };
    Some((key.trim(), op, value.trim()))
}

fn parse_label_requirement(part: &str) -> Result<Requirement, String> {
    let error = || format!("unable to parse requirement: invalid label selector '{part}'");
    let requirement = |key: &str, op, values: Vec<String>| {
        if key.is_empty() || key.contains(char::is_whitespace) {
            Err(error())
        } else {
            Ok(Requirement { key: key.to_owned(), op, values })
        }
    };
    if let Some(key) = part.strip_prefix('!') {
        return requirement(key.trim(), Op::NotExists, Vec::new());
    }
    if let Some((key, op, value)) = split_equality(part) {
        return requirement(key, op, vec![value.to_owned()]);
    }
    let words: Vec<&str> = part.splitn(2, char::is_whitespace).collect();
    match words.as_slice() {
        [key] => requirement(key, Op::Exists, Vec::new()),
        [key, rest] => {
            let rest = rest.trim_start();
            let (op, list) = if let Some(list) = rest.strip_prefix("notin") {
                (Op::NotIn, list)
            } else if let Some(list) = rest.strip_prefix("in") {
                (Op::In, list)
            } else {
                return Err(error());
            };
            let list = list.trim().strip_prefix('(').and_then(|l| l.strip_suffix(')')).ok_or_else(error)?;
            let values = list.split(',').map(|v| v.trim().to_owned()).collect();
            requirement(key, op, values)
        }
        _ => Err(error()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labelled(labels: Value) -> Value {
        json!({ "metadata": { "name": "n", "namespace": "demo", "labels": labels } })
    }

    #[test]
    fn label_operators() {
        let obj = labelled(json!({ "app": "web", "tier": "front" }));
        let matches = |sel: &str| Selector::parse_labels(sel).unwrap().matches_labels(&obj);
        assert!(matches("app=web"));
        assert!(matches("app==web,tier=front"));
        assert!(!matches("app=web,tier=back"));
        assert!(matches("app!=api"));
        assert!(matches("missing!=x"));
        assert!(matches("app"));
        assert!(!matches("!app"));
        assert!(matches("!missing"));
        assert!(matches("app in (api, web),tier"));
        assert!(!matches("app notin (api,web)"));
        assert!(matches("missing notin (a)"));
        assert!(matches(""));
    }

    #[test]
    fn label_parse_errors() {
        assert!(Selector::parse_labels("app in web").is_err());
        assert!(Selector::parse_labels("a b c").is_err());
        assert!(Selector::parse_labels("=x").is_err());
    }

    #[test]
    fn field_selectors() {
        let obj = labelled(json!({}));
        let matches = |sel: &str| Selector::parse_fields(sel).unwrap().matches_fields(&obj);
        assert!(matches("metadata.name=n"));
        assert!(matches("metadata.name==n,metadata.namespace=demo"));
        assert!(!matches("metadata.name!=n"));
        assert!(Selector::parse_fields("spec.x=1").is_err());
    }
}
