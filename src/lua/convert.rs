//! Lua <-> JSON conversion with the controller's rules (docs/controller-semantics.md §4.3 and
//! §4.4; the controller's `pkg/util/luamanager/json.go`).
//!
//! Into Lua (gopher-lua's `decodeValue`): nulls inside lists are dropped, null map values are
//! absent, numbers are doubles. Out of Lua (the controller's `luamanager` encoder): an empty
//! table is null, a table is a list only when its keys are exactly 1..n, string keys make an
//! object, anything else is an error with the controller's wording. Integral numbers come out
//! as integers so a weight is never written `50.0`. The stack operations are in `stack`.

use super::stack::{self, Index, Kind, Stack};
use crate::gojson;
use mlua::{Lua, Value as LuaValue};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ops::Range;

/// The order in which map keys are inserted into the Lua tables built from input. The
/// controller's order is random (Go map iteration); evaluating under several orders shows
/// whether a script depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOrder {
    Sorted,
    Reversed,
}

/// What an empty Lua table encodes to: the controller writes null, the controller's test
/// harness (layeh gopher-json) writes `[]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmptyTable {
    Null,
    EmptyList,
}

/// Why a Lua value is not encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// The controller's encoder refuses it too, with this message.
    Refused(String),
    /// Its strings and keys add up to more bytes than the budget: a string referenced many
    /// times is stored once in Lua, but copied for each reference in the result.
    TooLarge,
    /// Lua could not allocate what reading the value needs (the script left its state at the
    /// memory limit).
    OutOfMemory,
}

/// gopher-lua keeps positive integer keys below this in a table's array part.
const MAX_ARRAY_INDEX: f64 = 67_108_864.0;

/// Values nested deeper than this are refused, both ways (the stack is reserved for this many
/// levels): a Kubernetes object nests far less, and serde_json reads at most 128 levels.
const MAX_DEPTH: usize = 100;

/// Builds the Lua value for a JSON value, inserting each map's keys in `order`.
pub fn to_lua(lua: &Lua, value: &Value, order: KeyOrder) -> mlua::Result<LuaValue> {
    stack::build(lua, value, order, MAX_DEPTH)?
        .ok_or_else(|| mlua::Error::runtime(format!("cannot hand a value nested more than {MAX_DEPTH} deep to Lua")))
}

/// `to_lua` of the `Value` the JSON text of an object reads as, built as the text is read (see
/// `stack::build_from_json`).
pub fn json_to_lua(lua: &Lua, text: &str, order: KeyOrder, refused: &[&str]) -> mlua::Result<stack::FromJson> {
    stack::build_from_json(lua, text, order, MAX_DEPTH, refused)
}

/// What encoding a Lua value builds: a JSON value (`Values`), or its text as Go writes it
/// (`GoJsonText`), which spares building and freeing a value where only its text is wanted. The
/// walk hands each value's parts over as it finishes them: a table's after its children's.
pub trait Encoding {
    /// An encoded value, as far as the walk needs to hold it.
    type Part;
    /// What the whole encoding gives.
    type Output;
    fn null(&mut self) -> Self::Part;
    fn boolean(&mut self, value: bool) -> Self::Part;
    /// A double as Go writes it (see `gojson::number`), or why it has no JSON.
    fn number(&mut self, value: f64) -> Result<Self::Part, String>;
    fn string(&mut self, value: &str) -> Self::Part;
    fn list(&mut self, items: Vec<Self::Part>) -> Self::Part;
    /// A map from its entries, sorted by key, each key once.
    fn map(&mut self, entries: Vec<(Cow<'_, str>, Self::Part)>) -> Self::Part;
    fn finish(self, whole: Self::Part) -> Self::Output;
}

/// Encoding into a `serde_json::Value`.
pub struct Values;

impl Encoding for Values {
    type Part = Value;
    type Output = Value;
    fn null(&mut self) -> Value {
        Value::Null
    }
    fn boolean(&mut self, value: bool) -> Value {
        Value::Bool(value)
    }
    fn number(&mut self, value: f64) -> Result<Value, String> {
        gojson::number(value)
    }
    fn string(&mut self, value: &str) -> Value {
        Value::String(value.to_string())
    }
    fn list(&mut self, items: Vec<Value>) -> Value {
        Value::Array(items)
    }
    fn map(&mut self, entries: Vec<(Cow<'_, str>, Value)>) -> Value {
        Value::Object(entries.into_iter().map(|(key, value)| (key.into_owned(), value)).collect())
    }
    fn finish(self, whole: Value) -> Value {
        whole
    }
}

/// Go's JSON text of an encoded value: what `gojson::to_string` writes for its `Value`.
#[derive(Debug, PartialEq)]
pub struct GoJson(pub String);

/// Encoding into Go's JSON text. Each value is written at the end of one buffer, its part being
/// where; a table's children are the last values written when it gets them, so it moves them
/// aside and writes them back in key order, with its brackets, separators and keys.
#[derive(Default)]
pub struct GoJsonText {
    out: String,
    /// The children of the table being written, moved aside.
    aside: String,
}

impl GoJsonText {
    fn push(&mut self, text: &str) -> Range<usize> {
        let start = self.out.len();
        self.out.push_str(text);
        start..self.out.len()
    }

    /// Moves the parts from `start` on aside, for writing back in another order.
    fn set_aside(&mut self, start: usize) {
        self.aside.clear();
        self.aside.push_str(&self.out[start..]);
        self.out.truncate(start);
    }
}

impl Encoding for GoJsonText {
    type Part = Range<usize>;
    type Output = GoJson;
    fn null(&mut self) -> Range<usize> {
        self.push("null")
    }
    fn boolean(&mut self, value: bool) -> Range<usize> {
        self.push(if value { "true" } else { "false" })
    }
    fn number(&mut self, value: f64) -> Result<Range<usize>, String> {
        let start = self.out.len();
        gojson::write_value(&mut self.out, &gojson::number(value)?);
        Ok(start..self.out.len())
    }
    fn string(&mut self, value: &str) -> Range<usize> {
        let start = self.out.len();
        gojson::write_string(&mut self.out, value);
        start..self.out.len()
    }
    fn list(&mut self, items: Vec<Range<usize>>) -> Range<usize> {
        let start = items.iter().map(|item| item.start).min().unwrap_or(self.out.len());
        self.set_aside(start);
        self.out.push('[');
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.out.push_str(&self.aside[item.start - start..item.end - start]);
        }
        self.out.push(']');
        start..self.out.len()
    }
    fn map(&mut self, entries: Vec<(Cow<'_, str>, Range<usize>)>) -> Range<usize> {
        let start = entries.iter().map(|(_, item)| item.start).min().unwrap_or(self.out.len());
        self.set_aside(start);
        self.out.push('{');
        for (i, (key, item)) in entries.into_iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            gojson::write_string(&mut self.out, &key);
            self.out.push(':');
            self.out.push_str(&self.aside[item.start - start..item.end - start]);
        }
        self.out.push('}');
        start..self.out.len()
    }
    fn finish(mut self, whole: Range<usize>) -> GoJson {
        self.out.truncate(whole.end);
        self.out.drain(..whole.start);
        GoJson(self.out)
    }
}

/// Encodes a Lua value as the controller's encoder does, its strings and keys adding up to at
/// most `budget` bytes.
pub fn from_lua<E: Encoding>(
    lua: &Lua,
    value: LuaValue,
    empty: EmptyTable,
    budget: usize,
    encoding: E,
) -> Result<E::Output, EncodeError> {
    // The controller's encoder never forgets a table it has visited, so a table reachable twice
    // (not only a cycle) is "recursively nested".
    let mut walk = Walk { empty, visited: BTreeSet::new(), budget, encoding };
    match stack::read(lua, value, MAX_DEPTH, |stack, index| walk.value(stack, index, 0)) {
        Ok(Ok(encoded)) => encoded.map(|whole| walk.encoding.finish(whole)).map_err(EncodeError::Refused),
        Ok(Err(Abort::TooLarge)) => Err(EncodeError::TooLarge),
        Ok(Err(Abort::NoRoom)) => Err(EncodeError::Refused("cannot encode: not enough Lua stack".into())),
        // Reading raises nothing (stack.rs, invariant 2): only setting the read up can fail,
        // when it cannot allocate.
        Err(_) => Err(EncodeError::OutOfMemory),
    }
}

/// A Lua string as Go sees it: invalid UTF-8 becomes one U+FFFD per bad byte (Go's decoder
/// steps a byte at a time; Rust's lossy conversion replaces whole sequences).
pub fn go_string(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(valid) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(valid);
    }
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                out.push_str(valid);
                return Cow::Owned(out);
            }
            Err(error) => {
                let (valid, after) = rest.split_at(error.valid_up_to());
                out.push_str(std::str::from_utf8(valid).expect("checked"));
                let bad = error.error_len().unwrap_or(after.len());
                out.extend(std::iter::repeat_n('\u{FFFD}', bad));
                rest = &after[bad..];
            }
        }
    }
}

/// Why a walk ends at once, whatever else it would find.
enum Abort {
    TooLarge,
    NoRoom,
}

/// A value's encoding, or the controller's message for why it has none.
type Encoded<P> = Result<P, String>;

/// One walk of a Lua value on the stack.
struct Walk<E> {
    empty: EmptyTable,
    visited: BTreeSet<usize>,
    /// The bytes the strings and keys still to come may take.
    budget: usize,
    encoding: E,
}

impl<E: Encoding> Walk<E> {
    fn value(&mut self, stack: &mut Stack, index: Index, depth: usize) -> Result<Encoded<E::Part>, Abort> {
        Ok(match stack.kind(index) {
            Kind::Nil => Ok(self.encoding.null()),
            Kind::Boolean => Ok(self.encoding.boolean(stack.boolean(index))),
            Kind::Number => self.encoding.number(stack.number(index)),
            Kind::String => {
                let string = self.string(stack, index)?;
                Ok(self.encoding.string(&string))
            }
            Kind::Table => return self.table(stack, index, depth),
            Kind::Function => Err("cannot encode function to JSON".into()),
            Kind::Thread => Err("cannot encode thread to JSON".into()),
            Kind::Userdata => Err("cannot encode userdata to JSON".into()),
        })
    }

    /// The string at `index`, charged to the budget before it is copied.
    fn string<'r>(&mut self, stack: &Stack<'r>, index: Index) -> Result<Cow<'r, str>, Abort> {
        let bytes = stack.string(index).unwrap_or_default();
        self.budget = self.budget.checked_sub(bytes.len()).ok_or(Abort::TooLarge)?;
        Ok(go_string(bytes))
    }

    fn table<'r>(&mut self, stack: &mut Stack<'r>, index: Index, depth: usize) -> Result<Encoded<E::Part>, Abort> {
        if !self.visited.insert(stack.pointer(index)) {
            return Ok(Err("cannot encode recursively nested tables to JSON".into()));
        }
        if depth >= MAX_DEPTH {
            return Ok(Err(format!("cannot encode tables nested more than {MAX_DEPTH} deep")));
        }
        // Each value is encoded as its key comes; the keys alone decide the table's shape, as in
        // the controller, and the values' order decides which error counts.
        let mut items: Vec<(f64, Encoded<E::Part>)> = Vec::new();
        let mut entries: Vec<(Cow<'r, str>, Encoded<E::Part>)> = Vec::new();
        let (mut other_numbers, mut other_keys) = (0, 0);
        let each = |stack: &mut Stack<'r>, key: Index, value: Index| {
            match stack.kind(key) {
                Kind::Number => {
                    let n = stack.number(key);
                    if (1.0..MAX_ARRAY_INDEX).contains(&n) && n.fract() == 0.0 {
                        items.push((n, self.value(stack, value, depth + 1)?));
                    } else {
                        other_numbers += 1;
                    }
                }
                Kind::String => {
                    let key = self.string(stack, key)?;
                    entries.push((key, self.value(stack, value, depth + 1)?));
                }
                _ => other_keys += 1,
            }
            Ok(())
        };
        stack.for_each(index, each, Abort::NoRoom)?;
        // gopher-lua iterates the array part (ascending) before any other key, so that part decides
        // whether the table is a list; in the hash part the first key decides, in insertion order,
        // which this engine cannot see: a mix is an error either way, only the wording may differ.
        if !items.is_empty() {
            items.sort_by(|a, b| a.0.total_cmp(&b.0));
            if items.iter().enumerate().any(|(want, (key, _))| *key != (want + 1) as f64) {
                return Ok(Err("cannot encode sparse array".into()));
            }
            if !entries.is_empty() || other_keys > 0 {
                return Ok(Err("cannot encode mixed or invalid key types".into()));
            }
            if other_numbers > 0 {
                return Ok(Err("cannot encode sparse array".into()));
            }
            // Go encodes a list in order and stops at the first item that fails.
            let items = items.into_iter().map(|(_, item)| item).collect::<Result<_, _>>();
            return Ok(items.map(|items| self.encoding.list(items)));
        }
        if entries.is_empty() && other_numbers == 0 && other_keys == 0 {
            return Ok(Ok(match self.empty {
                EmptyTable::Null => self.encoding.null(),
                EmptyTable::EmptyList => self.encoding.list(Vec::new()),
            }));
        }
        if other_keys > 0 || (other_numbers > 0 && !entries.is_empty()) {
            return Ok(Err("cannot encode mixed or invalid key types".into()));
        }
        if other_numbers > 0 {
            return Ok(Err("cannot encode sparse array".into()));
        }
        // Go encodes a map in sorted key order and stops at the first value that fails.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let entries = entries.into_iter().map(|(key, item)| item.map(|item| (key, item))).collect::<Result<_, _>>();
        Ok(entries.map(|entries| self.encoding.map(entries)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The value encoded both ways: the text must be what Go writes for the value, and the
    /// errors the same.
    fn eval(code: &str, empty: EmptyTable) -> Result<Value, String> {
        let lua = Lua::new();
        let value: LuaValue = lua.load(code).eval().unwrap();
        let message = |e| match e {
            EncodeError::Refused(message) => message,
            EncodeError::TooLarge => "too large".into(),
            EncodeError::OutOfMemory => "out of memory".into(),
        };
        let decoded = from_lua(&lua, value.clone(), empty, usize::MAX, Values).map_err(message);
        let text = from_lua(&lua, value, empty, usize::MAX, GoJsonText::default()).map_err(message);
        assert_eq!(text.map(|t| t.0), decoded.as_ref().map(gojson::to_string).map_err(Clone::clone), "{code}");
        decoded
    }

    #[test]
    fn text_is_what_go_writes_for_the_value() {
        // `eval` checks both encodings; these add what the other tests do not reach.
        for code in [
            "return {b = {z = {1, {y = 'x', a = 'b'}}, a = 'q'}, a = {'<&>', '\\u{2028}', 'x\\\"y\\n'}}",
            "local t = {} t[3] = 'c' t[1] = 'a' t[2] = {k = {}} return {list = t, n = {0.1, -0.0, 1e21, 2^53}}",
            "return {[1] = true, [2] = false}",
            "return {e = {}, f = {{}, {}}}",
            "return {s = 'ok \\240\\159\\152', k = {['\\226\\130'] = 1}}",
        ] {
            eval(code, EmptyTable::Null).unwrap();
            eval(code, EmptyTable::EmptyList).unwrap();
        }
    }

    #[test]
    fn a_state_at_its_memory_limit_is_out_of_memory_not_out_of_stack() {
        let lua = Lua::new();
        let value: LuaValue = lua.load("return {a = {1, 2}}").eval().unwrap();
        lua.set_memory_limit(lua.used_memory()).unwrap();
        assert_eq!(from_lua(&lua, value, EmptyTable::Null, usize::MAX, Values), Err(EncodeError::OutOfMemory));
    }

    #[test]
    fn encodes_like_the_controller() {
        let ok = |code: &str, want: Value| assert_eq!(eval(code, EmptyTable::Null).unwrap(), want, "{code}");
        ok("return {}", Value::Null);
        ok("return {a = {}, b = {1, 2}}", json!({"a": null, "b": [1, 2]}));
        ok("return {100/2, 0.5, 2^52, 7.0}", json!([50, 0.5, 4503599627370496i64, 7]));
        // Go prints the shortest digits of large doubles, and keeps negative zero.
        let big = eval("return {2^60, -0.0}", EmptyTable::Null).unwrap();
        assert_eq!(crate::gojson::to_string(&big), "[1152921504606847000,-0]");
        ok("local t = {} t[2] = 'b' t[1] = 'a' return t", json!(["a", "b"]));
        ok("return {x = 'y', n = {z = true}}", json!({"n": {"z": true}, "x": "y"}));
    }

    #[test]
    fn rejects_what_the_controller_rejects() {
        let err = |code: &str, want: &str| assert_eq!(eval(code, EmptyTable::Null).unwrap_err(), want, "{code}");
        err("return {[1] = 1, [3] = 3}", "cannot encode sparse array");
        err("return {1, a = 2}", "cannot encode mixed or invalid key types");
        err("return {[0] = 1}", "cannot encode sparse array");
        err("return {[true] = 1}", "cannot encode mixed or invalid key types");
        err("local t = {} t.self = t return t", "cannot encode recursively nested tables to JSON");
        err("local x = {1} return {a = x, b = x}", "cannot encode recursively nested tables to JSON");
        err("return {f = print}", "cannot encode function to JSON");
        err("return {n = 1/0}", "json: unsupported value: +Inf");
        // The keys decide the shape before any value is encoded, and a failed value leaves the
        // walk of its parent intact.
        err("return {spec = {[true] = {{print}}}}", "cannot encode mixed or invalid key types");
        err("return {[true] = {{print}}, [false] = 1}", "cannot encode mixed or invalid key types");
        // Values fail in sorted key order, as Go marshals a map, whatever order Lua walks them.
        for _ in 0..20 {
            err("return {a = print, b = {[1] = 1, [3] = 3}, c = 1/0}", "cannot encode function to JSON");
            err("return {z = print, y = {[1] = 1, [3] = 3}}", "cannot encode sparse array");
        }
    }

    #[test]
    fn outputs_nesting_too_deep_are_refused() {
        let nested = |levels: usize| format!("local d = {{}} for i = 1, {levels} do d = {{d}} end return d");
        let mut want = Value::Null;
        for _ in 0..MAX_DEPTH - 1 {
            want = json!([want]);
        }
        assert_eq!(eval(&nested(MAX_DEPTH - 1), EmptyTable::Null).unwrap(), want);
        assert_eq!(
            eval(&nested(MAX_DEPTH + 1), EmptyTable::Null).unwrap_err(),
            format!("cannot encode tables nested more than {MAX_DEPTH} deep")
        );
    }

    #[test]
    fn the_strings_and_keys_of_a_result_are_charged_to_the_budget() {
        let lua = Lua::new();
        let encode = |code: &str, budget: usize| {
            let value: LuaValue = lua.load(code).eval().unwrap();
            from_lua(&lua, value, EmptyTable::Null, budget, Values)
        };
        // One string stored once in Lua and referenced four times: four copies in the result.
        let shared = "local s = string.rep('x', 1000) return {s, s, s, s}";
        assert_eq!(encode(shared, 4000).unwrap(), Value::Array(vec![json!("x".repeat(1000)); 4]));
        assert_eq!(encode(shared, 3999), Err(EncodeError::TooLarge));
        // Keys count too, and the budget beats an error found later.
        assert_eq!(encode("return {abc = 'de'}", 5).unwrap(), json!({"abc": "de"}));
        assert_eq!(encode("return {abc = 'de'}", 4), Err(EncodeError::TooLarge));
        assert_eq!(encode("return {'xx', print}", 1), Err(EncodeError::TooLarge));
    }

    #[test]
    fn invalid_utf8_is_replaced_a_byte_at_a_time() {
        assert_eq!(go_string(b"x\xe2\x82y"), "x\u{FFFD}\u{FFFD}y");
        assert_eq!(go_string(b"ok \xf0\x9f\x98"), "ok \u{FFFD}\u{FFFD}\u{FFFD}");
        assert_eq!(go_string("h\u{e9}".as_bytes()), "h\u{e9}");
    }

    #[test]
    fn harness_encodes_empty_tables_as_lists() {
        assert_eq!(eval("return {a = {}}", EmptyTable::EmptyList).unwrap(), json!({"a": []}));
    }

    #[test]
    fn inputs_nesting_too_deep_are_refused() {
        let nested = |levels: usize| (0..levels).fold(json!(1), |inner, _| json!({"a": [inner]}));
        let lua = Lua::new();
        let value = to_lua(&lua, &nested(MAX_DEPTH / 2), KeyOrder::Sorted).unwrap();
        lua.globals().set("obj", value).unwrap();
        let path = "obj".to_string() + &".a[1]".repeat(MAX_DEPTH / 2);
        assert_eq!(lua.load(format!("return {path}")).eval::<i64>().unwrap(), 1);
        let err = to_lua(&lua, &nested(MAX_DEPTH / 2 + 1), KeyOrder::Reversed).unwrap_err();
        assert!(err.to_string().contains("nested more than 100 deep"), "{err}");
    }

    /// Every table of `obj` with its length and its entries in `pairs()` order, which shows
    /// how it was built (the order depends on the insertion order and the sizes).
    const DUMP: &str = r##"
        local function dump(v)
          if type(v) ~= "table" then return type(v) .. ":" .. tostring(v) end
          local parts = {"#" .. #v}
          for k, x in pairs(v) do parts[#parts + 1] = tostring(k) .. "=" .. dump(x) end
          return "{" .. table.concat(parts, ",") .. "}"
        end
        return dump(obj)"##;

    fn dump(lua: &Lua, value: LuaValue) -> String {
        lua.globals().set("obj", value).unwrap();
        lua.load(DUMP).eval().unwrap()
    }

    fn built_from_text(lua: &Lua, text: &str, order: KeyOrder, refused: &[&str]) -> Option<LuaValue> {
        match json_to_lua(lua, text, order, refused).unwrap() {
            stack::FromJson::Built(value) => Some(value),
            stack::FromJson::Unread => None,
            stack::FromJson::TooLarge => panic!("too large: {text}"),
        }
    }

    #[test]
    fn json_text_builds_what_its_value_builds() {
        let many_keys: String =
            (0..300).map(|i| format!("\"k{}\": {i}", i * 7919 % 1000)).collect::<Vec<_>>().join(",");
        let long_list: String =
            (0..500).map(|i| if i % 7 == 0 { "null".into() } else { i.to_string() }).collect::<Vec<_>>().join(",");
        for text in [
            r#"{"data": {"spec": {"http": [{"route": [{"destination": {"host": "a"}, "weight": 100}]}]}}, "stableWeight": 90}"#,
            r#"{"list": [1, null, 2, null], "gone": null, "n": 50, "f": -0.5, "big": 18446744073709551615, "neg": -9007199254740993}"#,
            r#"{"e": {}, "l": [], "nested": [[], [{}], [null]], "t": true, "u": false}"#,
            r#" {"esc\"aped\u00e9": "x\ny", "\u0000": "nul", "z": "\ud83d\ude00"} "#,
            r#"{"b": 1, "a": 2, "c": {"y": 1, "x": 2}}"#,
            &format!("{{{many_keys}}}"),
            &format!("{{\"l\": [{long_list}]}}"),
        ] {
            let value: Value = serde_json::from_str(text).unwrap();
            for order in [KeyOrder::Sorted, KeyOrder::Reversed] {
                let lua = Lua::new();
                let want = dump(&lua, to_lua(&lua, &value, order).unwrap());
                let got = dump(&lua, built_from_text(&lua, text, order, &[]).unwrap());
                assert_eq!(got, want, "{text} {order:?}");
            }
        }
    }

    #[test]
    fn json_text_that_reads_otherwise_as_a_value_is_left_unread() {
        let nested = |levels: usize| "{\"a\": ".repeat(levels) + "1" + &"}".repeat(levels);
        let wide = format!("{{\"l\": [{}]}}", vec!["1"; 9000].join(","));
        for (text, refused) in [
            (r#"{"a": 1, "a": 2}"#, &[][..]),
            (r#"{"a": null, "b": {"c": 1, "c": null}}"#, &[]),
            (r#"{"kind": "VirtualService"}"#, &["step", "kind"]),
            (r#"[{"a": 1}]"#, &[]),
            ("a: 1", &[]),
            (r#"{"a": 1} {"b": 2}"#, &[]),
            (r#"{"a": tru}"#, &[]),
            (&nested(MAX_DEPTH + 1), &[]),
            (&wide, &[]),
        ] {
            let lua = Lua::new();
            assert!(
                built_from_text(&lua, text, KeyOrder::Sorted, refused).is_none(),
                "{}",
                &text[..text.len().min(60)]
            );
        }
        // A refused key counts only at the top; the deepest nesting `to_lua` takes is read.
        let lua = Lua::new();
        assert!(built_from_text(&lua, r#"{"data": {"kind": 1}}"#, KeyOrder::Sorted, &["kind"]).is_some());
        assert!(built_from_text(&lua, &nested(MAX_DEPTH), KeyOrder::Sorted, &[]).is_some());
    }

    #[test]
    fn json_text_over_the_memory_limit_is_too_large_and_the_limit_stays() {
        let lua = Lua::new();
        let limit = lua.used_memory() + (256 << 10);
        lua.set_memory_limit(limit).unwrap();
        let text = format!("{{\"l\": [{}]}}", vec!["{\"k\": \"some value\"}"; 4000].join(","));
        assert!(matches!(json_to_lua(&lua, &text, KeyOrder::Sorted, &[]).unwrap(), stack::FromJson::TooLarge));
        assert_eq!(lua.set_memory_limit(limit).unwrap(), limit);
        lua.gc_collect().unwrap();
        assert!(matches!(json_to_lua(&lua, r#"{"k": 1}"#, KeyOrder::Sorted, &[]).unwrap(), stack::FromJson::Built(_)));
    }

    #[test]
    fn input_drops_nulls_and_keeps_numbers_as_doubles() {
        let lua = Lua::new();
        let input = json!({"list": [1, null, 2], "gone": null, "n": 50});
        let value = to_lua(&lua, &input, KeyOrder::Sorted).unwrap();
        lua.globals().set("obj", value).unwrap();
        let got: String =
            lua.load("return #obj.list .. ' ' .. tostring(obj.gone) .. ' ' .. tostring(obj.n / 2)").eval().unwrap();
        assert_eq!(got, "2 nil 25");
    }
}
