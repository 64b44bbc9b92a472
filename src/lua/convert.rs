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
    /// It takes more bytes than the budget, each value counted at what it holds as a result
    /// (`VALUE_BYTES`, and its string's or key's bytes): a string or table referenced many times
    /// is stored once in Lua, but copied for each reference in the result.
    TooLarge,
    /// Lua could not allocate what reading the value needs (the script left its state at the
    /// memory limit).
    OutOfMemory,
}

/// What a value of a result takes besides its bytes of text: a `serde_json::Value`, as a plan
/// holds it (a list of two million numbers takes 64 MB there, and 4 MB as JSON).
pub const VALUE_BYTES: usize = std::mem::size_of::<Value>();

/// What a map of a result takes besides its values and keys: serde_json's maps are B-trees,
/// whose first node has room for 11 keys and values (a list of many one-key maps takes 20 times
/// what its values alone do).
pub const MAP_BYTES: usize = 11 * std::mem::size_of::<(String, Value)>() + 16;

/// The bytes a conversion out of Lua may take: its strings' and keys', `per_value` for each
/// value and `per_map` for each map.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub bytes: usize,
    pub per_value: usize,
    pub per_map: usize,
    /// Whether a string counts as written in JSON, escapes and quotes included (each control
    /// character or invalid byte takes 6), rather than as its bytes.
    pub written: bool,
}

impl Budget {
    /// A script's result, as the plan holds it.
    pub fn result(bytes: usize) -> Budget {
        Budget { bytes, per_value: VALUE_BYTES, per_map: MAP_BYTES, written: false }
    }

    /// A text (`json.encode`'s), which holds no value.
    pub fn text(bytes: usize) -> Budget {
        Budget { bytes, per_value: 0, per_map: 0, written: true }
    }
}

/// The bytes of `bytes` written as a JSON string by `json.Marshal`, at most (U+2028 and U+2029,
/// escaped from 3 bytes to 6, are counted as they are).
fn written_len(bytes: &[u8]) -> usize {
    let escaped = |b: &u8| match b {
        b'"' | b'\\' | b'\n' | b'\r' | b'\t' => 2,
        b'<' | b'>' | b'&' | 0..=0x1f => 6,
        _ => 1,
    };
    let chunks = bytes
        .utf8_chunks()
        .map(|chunk| chunk.valid().as_bytes().iter().map(escaped).sum::<usize>() + 6 * chunk.invalid().len());
    2 + chunks.sum::<usize>()
}

/// gopher-lua keeps positive integer keys below this in a table's array part.
const MAX_ARRAY_INDEX: f64 = 67_108_864.0;

/// Values nested deeper than this are refused, both ways (the stack is reserved for this many
/// levels): a Kubernetes object nests far less, and files nested deeper are refused as they
/// are read (`yaml::YAML_LIMITS`).
const MAX_DEPTH: usize = 100;

/// Builds the Lua value for a JSON value, inserting each map's keys in `order`.
pub fn to_lua(lua: &Lua, value: &Value, order: KeyOrder) -> mlua::Result<LuaValue> {
    within_depth(lua, value, order)?.ok_or_else(too_deep)
}

/// `to_lua`, or none for a value nested past `MAX_DEPTH`.
pub fn within_depth(lua: &Lua, value: &Value, order: KeyOrder) -> mlua::Result<Option<LuaValue>> {
    stack::build(lua, value, order, MAX_DEPTH)
}

/// The error of a value nested past `MAX_DEPTH`, which the script cannot catch as a failure
/// return (it is raised).
pub fn too_deep() -> mlua::Error {
    mlua::Error::runtime(too_deep_message())
}

pub fn too_deep_message() -> String {
    format!("cannot hand a value nested more than {MAX_DEPTH} deep to Lua")
}

/// `to_lua` of the `Value` the JSON text of an object reads as, built as the text is read (see
/// `stack::build_from_json`).
pub fn json_to_lua(lua: &Lua, text: &str, order: KeyOrder, refused: &[&str]) -> mlua::Result<stack::FromJson> {
    stack::build_from_json(lua, text, order, MAX_DEPTH, refused)
}

/// What encoding a Lua value builds: a JSON value (`Values`), or its text as Go writes it
/// (`GoJsonText`), which spares building and freeing a value where only its text is wanted. The
/// walk hands the value over in the order Go writes it: a list's items in order, a map's entries
/// in key order, each container between its begin and end.
pub trait Encoding {
    /// What the whole encoding gives.
    type Output;
    fn null(&mut self);
    fn boolean(&mut self, value: bool);
    /// A double as Go writes it (see `gojson::number`), or why it has no JSON.
    fn number(&mut self, value: f64) -> Result<(), String>;
    /// A Lua string's bytes (Go's view of invalid UTF-8 is the encoding's to take).
    fn string(&mut self, value: &[u8]);
    fn begin_list(&mut self, len: usize);
    fn end_list(&mut self);
    fn begin_map(&mut self, len: usize);
    /// The key of the map entry whose value comes next, as `string` takes it.
    fn key(&mut self, key: &[u8]);
    fn end_map(&mut self);
    fn finish(self) -> Self::Output;
}

/// Encoding into a `serde_json::Value`.
#[derive(Default)]
pub struct Values {
    /// The lists and maps begun and not yet ended, innermost last, with a map's pending key.
    open: Vec<(Value, Option<String>)>,
    whole: Value,
}

impl Values {
    fn put(&mut self, value: Value) {
        match self.open.last_mut() {
            Some((Value::Array(items), _)) => items.push(value),
            Some((Value::Object(map), key)) => {
                map.insert(key.take().expect("a key before its value"), value);
            }
            _ => self.whole = value,
        }
    }
}

impl Encoding for Values {
    type Output = Value;
    fn null(&mut self) {
        self.put(Value::Null);
    }
    fn boolean(&mut self, value: bool) {
        self.put(Value::Bool(value));
    }
    fn number(&mut self, value: f64) -> Result<(), String> {
        self.put(gojson::number(value)?);
        Ok(())
    }
    fn string(&mut self, value: &[u8]) {
        self.put(Value::String(go_string(value).into_owned()));
    }
    fn begin_list(&mut self, len: usize) {
        self.open.push((Value::Array(Vec::with_capacity(len)), None));
    }
    fn begin_map(&mut self, _len: usize) {
        self.open.push((Value::Object(serde_json::Map::new()), None));
    }
    fn key(&mut self, key: &[u8]) {
        if let Some((_, pending)) = self.open.last_mut() {
            *pending = Some(go_string(key).into_owned());
        }
    }
    fn end_list(&mut self) {
        let (list, _) = self.open.pop().expect("a list begun");
        self.put(list);
    }
    fn end_map(&mut self) {
        self.end_list();
    }
    fn finish(self) -> Value {
        self.whole
    }
}

/// Go's JSON text of an encoded value (what `gojson::to_string` writes for its `Value`) and, when
/// it is a map, its entries: each key, and where its value is in the text.
#[derive(Debug, PartialEq)]
pub struct GoJson {
    pub text: String,
    pub entries: Vec<(String, Range<usize>)>,
    /// How many values and keys it holds.
    pub values: u64,
}

/// Encoding into Go's JSON text, written as it comes.
#[derive(Default)]
pub struct GoJsonText {
    /// Whether invalid UTF-8 is written as `json.Marshal` writes it (each bad byte `\ufffd`, what
    /// the controller's `json.encode` returns), rather than as the U+FFFD characters the
    /// controller's output holds once it has decoded the text.
    marshal: bool,
    out: String,
    /// How many lists and maps are open.
    depth: usize,
    /// The entries of the outermost map: each key, and where the entry starts and its value.
    entries: Vec<(String, Range<usize>)>,
    values: u64,
    /// Where each key of the maps open inside the outermost starts in `out`, a map's after its
    /// parent's; and for each such map, where its keys start in this list and whether one of
    /// them is invalid UTF-8 (see `end_map`). Not kept for `marshal`.
    key_starts: Vec<usize>,
    inner_maps: Vec<(usize, bool)>,
}

impl GoJsonText {
    /// The text `json.Marshal` writes: see `marshal`.
    pub fn marshal() -> GoJsonText {
        GoJsonText { marshal: true, ..GoJsonText::default() }
    }

    fn write_string(&mut self, bytes: &[u8]) {
        if !self.marshal {
            gojson::write_string(&mut self.out, &go_string(bytes));
            return;
        }
        self.out.push('"');
        for chunk in bytes.utf8_chunks() {
            gojson::write_string_body(&mut self.out, chunk.valid());
            for _ in chunk.invalid() {
                self.out.push_str("\\ufffd");
            }
        }
        self.out.push('"');
    }

    /// The entries of the map being ended, whose keys start at `key_starts[first..]`, as the
    /// controller's output holds them: its keys, invalid UTF-8 replaced, had been written in the
    /// order of their bytes (`json.Marshal`), and decoding that text keeps the last of keys made
    /// equal by the replacement, and writing it again sorts the keys as replaced.
    fn merge_replaced_keys(&mut self, first: usize) {
        let starts = &self.key_starts[first..];
        // Each entry ends at the comma before the next, the last at the map's end.
        let ends = starts.iter().skip(1).map(|next| next - 1).chain([self.out.len()]);
        let mut merged = std::collections::BTreeMap::new();
        for (&start, end) in starts.iter().zip(ends) {
            let entry = &self.out[start..end];
            let key = serde_json::Deserializer::from_str(entry).into_iter::<String>().next();
            merged.insert(key.expect("a key").expect("a key written as JSON"), entry.to_string());
        }
        self.out.truncate(starts[0]);
        let entries: Vec<String> = merged.into_values().collect();
        self.out.push_str(&entries.join(","));
    }

    /// The comma before a list's item or a map's key that follows another; counts the value
    /// or key that follows.
    fn separate(&mut self) {
        self.values += 1;
        if !matches!(self.out.as_bytes().last(), None | Some(b'[' | b'{' | b':')) {
            self.out.push(',');
        }
    }
}

impl Encoding for GoJsonText {
    type Output = GoJson;
    fn null(&mut self) {
        self.separate();
        self.out.push_str("null");
    }
    fn boolean(&mut self, value: bool) {
        self.separate();
        self.out.push_str(if value { "true" } else { "false" });
    }
    fn number(&mut self, value: f64) -> Result<(), String> {
        let number = gojson::number(value)?;
        self.separate();
        gojson::write_value(&mut self.out, &number);
        Ok(())
    }
    fn string(&mut self, value: &[u8]) {
        self.separate();
        self.write_string(value);
    }
    fn begin_list(&mut self, _len: usize) {
        self.separate();
        self.out.push('[');
        self.depth += 1;
    }
    fn end_list(&mut self) {
        self.out.push(']');
        self.depth -= 1;
    }
    fn begin_map(&mut self, _len: usize) {
        self.separate();
        self.out.push('{');
        self.depth += 1;
        if self.depth > 1 && !self.marshal {
            self.inner_maps.push((self.key_starts.len(), false));
        }
    }
    fn key(&mut self, key: &[u8]) {
        let start = self.out.len();
        self.separate();
        if let Some((_, invalid)) = self.inner_maps.last_mut() {
            *invalid |= std::str::from_utf8(key).is_err();
            self.key_starts.push(self.out.len());
        }
        self.write_string(key);
        self.out.push(':');
        if self.depth == 1 {
            self.entries.push((go_string(key).into_owned(), start..self.out.len()));
        }
    }
    fn end_map(&mut self) {
        if self.depth > 1
            && let Some((first, invalid)) = self.inner_maps.pop()
        {
            if invalid {
                self.merge_replaced_keys(first);
            }
            self.key_starts.truncate(first);
        }
        self.out.push('}');
        self.depth -= 1;
    }
    fn finish(self) -> GoJson {
        // Each value ends where the next entry starts, the last before the closing brace.
        let ends = self.entries.iter().skip(1).map(|(_, entry)| entry.start).chain([self.out.len().saturating_sub(1)]);
        let entries = self.entries.iter().zip(ends).map(|((key, entry), end)| (key.clone(), entry.end..end)).collect();
        GoJson { text: self.out, entries, values: self.values }
    }
}

/// Encodes a Lua value as the controller's encoder does, taking at most `budget` bytes (see
/// `EncodeError::TooLarge`).
pub fn from_lua<E: Encoding>(
    lua: &Lua,
    value: LuaValue,
    empty: EmptyTable,
    budget: Budget,
    encoding: E,
) -> Result<E::Output, EncodeError> {
    // The controller's encoder never forgets a table it has visited, so a table reachable twice
    // (not only a cycle) is "recursively nested".
    let read = stack::read(lua, value, MAX_DEPTH, |stack, index| {
        let mut walk = Walk {
            empty,
            visited: BTreeSet::new(),
            budget: budget.bytes,
            per_value: budget.per_value,
            per_map: budget.per_map,
            written: budget.written,
            encoding,
            keys: Vec::new(),
        };
        walk.value(stack, index, 0).map(|()| walk.encoding.finish())
    });
    match read {
        Ok(Ok(output)) => Ok(output),
        Ok(Err(Stop::Refused(message))) => Err(EncodeError::Refused(message)),
        Ok(Err(Stop::TooLarge)) => Err(EncodeError::TooLarge),
        Ok(Err(Stop::NoRoom)) => Err(EncodeError::Refused("cannot encode: not enough Lua stack".into())),
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

/// JSON text as Go's decoder reads it, for serde_json, which fails where Go replaces: invalid
/// UTF-8 becomes U+FFFD (see `go_string`), and so does a lone surrogate's escape (see
/// `gojson::lone_surrogates_replaced`).
pub fn go_json_input(bytes: &[u8]) -> Cow<'_, str> {
    match go_string(bytes) {
        Cow::Borrowed(text) => gojson::lone_surrogates_replaced(text),
        Cow::Owned(text) => Cow::Owned(gojson::lone_surrogates_replaced(&text).into_owned()),
    }
}

/// Why a walk stops: the first error in the order Go encodes, as Go's encoder stops there.
enum Stop {
    Refused(String),
    TooLarge,
    NoRoom,
}

/// One walk of a Lua value on the stack, in the order Go encodes it (which decides the error
/// met first and the table found "recursively nested"), handing it to the encoding.
struct Walk<'r, E> {
    empty: EmptyTable,
    visited: BTreeSet<usize>,
    /// The bytes the values, strings and keys still to come may take.
    budget: usize,
    /// What each value and map takes of it, and how a string does (see `Budget`).
    per_value: usize,
    per_map: usize,
    written: bool,
    encoding: E,
    /// The string keys of the maps being walked, each map's after its parent's.
    keys: Vec<&'r [u8]>,
}

/// A table's shape, decided by its keys alone, as in the controller.
enum Shape {
    Empty,
    List(usize),
    Map,
}

impl<'r, E: Encoding> Walk<'r, E> {
    fn value(&mut self, stack: &mut Stack<'r>, index: Index, depth: usize) -> Result<(), Stop> {
        self.budget = self.budget.checked_sub(self.per_value).ok_or(Stop::TooLarge)?;
        match stack.kind(index) {
            Kind::Nil => self.encoding.null(),
            Kind::Boolean => self.encoding.boolean(stack.boolean(index)),
            Kind::Number => self.encoding.number(stack.number(index)).map_err(Stop::Refused)?,
            Kind::String => {
                let string = self.string(stack.string(index).unwrap_or_default())?;
                self.encoding.string(string);
            }
            Kind::Table => return self.table(stack, index, depth),
            Kind::Function => return Err(Stop::Refused("cannot encode function to JSON".into())),
            Kind::Thread => return Err(Stop::Refused("cannot encode thread to JSON".into())),
            Kind::Userdata => return Err(Stop::Refused("cannot encode userdata to JSON".into())),
        }
        Ok(())
    }

    /// A string's bytes, charged to the budget before they are copied.
    fn string(&mut self, bytes: &'r [u8]) -> Result<&'r [u8], Stop> {
        let cost = if self.written { written_len(bytes) } else { bytes.len() };
        self.budget = self.budget.checked_sub(cost).ok_or(Stop::TooLarge)?;
        Ok(bytes)
    }

    fn table(&mut self, stack: &mut Stack<'r>, index: Index, depth: usize) -> Result<(), Stop> {
        if !self.visited.insert(stack.pointer(index)) {
            return Err(Stop::Refused("cannot encode recursively nested tables to JSON".into()));
        }
        if depth >= MAX_DEPTH {
            return Err(Stop::Refused(format!("cannot encode tables nested more than {MAX_DEPTH} deep")));
        }
        let start = self.keys.len();
        let walked = self.shape(stack, index).and_then(|shape| match shape {
            Shape::Empty => {
                match self.empty {
                    EmptyTable::Null => self.encoding.null(),
                    EmptyTable::EmptyList => {
                        self.encoding.begin_list(0);
                        self.encoding.end_list();
                    }
                }
                Ok(())
            }
            Shape::List(len) => {
                // Go encodes a list in order and stops at the first item that fails.
                self.encoding.begin_list(len);
                for n in 1..=len {
                    let item = stack.push_item(index, n).ok_or(Stop::NoRoom)?;
                    self.value(stack, item, depth + 1)?;
                    stack.pop();
                }
                self.encoding.end_list();
                Ok(())
            }
            Shape::Map => {
                // Go encodes a map in sorted key order (of its bytes) and stops at the first value
                // that fails.
                self.keys[start..].sort_unstable();
                self.budget = self.budget.checked_sub(self.per_map).ok_or(Stop::TooLarge)?;
                self.encoding.begin_map(self.keys.len() - start);
                for k in start..self.keys.len() {
                    let key = self.keys[k];
                    let shown = self.string(key)?;
                    self.encoding.key(shown);
                    let value = stack.push_field(index, key).ok_or(Stop::NoRoom)?;
                    self.value(stack, value, depth + 1)?;
                    stack.pop();
                }
                self.encoding.end_map();
                Ok(())
            }
        });
        self.keys.truncate(start);
        walked
    }

    /// The shape of the table at `index`, its string keys added to `keys`.
    fn shape(&mut self, stack: &mut Stack<'r>, index: Index) -> Result<Shape, Stop> {
        let start = self.keys.len();
        let (mut items, mut last_item, mut other_numbers, mut other_keys) = (0, 0.0, 0, 0);
        stack.for_each(
            index,
            |stack, key| {
                match stack.kind(key) {
                    Kind::Number => {
                        let n = stack.number(key);
                        if (1.0..MAX_ARRAY_INDEX).contains(&n) && n.fract() == 0.0 {
                            items += 1;
                            last_item = f64::max(last_item, n);
                        } else {
                            other_numbers += 1;
                        }
                    }
                    Kind::String => self.keys.push(stack.string(key).unwrap_or_default()),
                    _ => other_keys += 1,
                }
                Ok(())
            },
            Stop::NoRoom,
        )?;
        let strings = self.keys.len() - start;
        let refused = |message: &str| Err(Stop::Refused(message.into()));
        // gopher-lua iterates the array part (ascending) before any other key, so that part decides
        // whether the table is a list; in the hash part the first key decides, in insertion order,
        // which this engine cannot see: a mix is an error either way, only the wording may differ.
        if items > 0 {
            // Distinct whole numbers from 1 are exactly 1..n when the largest is n.
            if last_item != items as f64 {
                return refused("cannot encode sparse array");
            }
            if strings > 0 || other_keys > 0 {
                return refused("cannot encode mixed or invalid key types");
            }
            if other_numbers > 0 {
                return refused("cannot encode sparse array");
            }
            return Ok(Shape::List(items));
        }
        if strings == 0 && other_numbers == 0 && other_keys == 0 {
            return Ok(Shape::Empty);
        }
        if other_keys > 0 || (other_numbers > 0 && strings > 0) {
            return refused("cannot encode mixed or invalid key types");
        }
        if other_numbers > 0 {
            return refused("cannot encode sparse array");
        }
        Ok(Shape::Map)
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
        let decoded =
            from_lua(&lua, value.clone(), empty, Budget::result(usize::MAX), Values::default()).map_err(message);
        let text = from_lua(&lua, value, empty, Budget::result(usize::MAX), GoJsonText::default()).map_err(message);
        if let Ok(GoJson { text, entries, .. }) = &text {
            let map: serde_json::Map<String, Value> = serde_json::from_str(text).unwrap_or_default();
            let found: Vec<(String, Value)> = entries
                .iter()
                .map(|(key, at)| (key.clone(), serde_json::from_str(&text[at.clone()]).unwrap()))
                .collect();
            assert_eq!(found, map.into_iter().collect::<Vec<_>>(), "{code}: the entries of {text}");
        }
        assert_eq!(text.map(|t| t.text), decoded.as_ref().map(gojson::to_string).map_err(Clone::clone), "{code}");
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
        assert_eq!(
            from_lua(&lua, value, EmptyTable::Null, Budget::result(usize::MAX), Values::default()),
            Err(EncodeError::OutOfMemory)
        );
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
        // The sandbox has neither newproxy nor coroutines, but a Rust error caught by pcall is a
        // userdata there.
        err("return {u = newproxy()}", "cannot encode userdata to JSON");
        err("return {coroutine.create(function() end)}", "cannot encode thread to JSON");
        err("return {n = 1/0}", "json: unsupported value: +Inf");
        // The keys decide the shape before any value is encoded, and a failed value leaves the
        // walk of its parent intact.
        err("return {spec = {[true] = {{print}}}}", "cannot encode mixed or invalid key types");
        err("return {[true] = {{print}}, [false] = 1}", "cannot encode mixed or invalid key types");
        // Values fail in sorted key order, as Go marshals a map, whatever order Lua walks them.
        // Tables are marked visited as Go encodes them, in that order: the first reference to a
        // shared table is encoded, a later one is "recursively nested", whatever order Lua walks.
        for _ in 0..20 {
            err("local x = {1} return {a = x, b = print, c = x}", "cannot encode function to JSON");
            err("local x = {1} return {x, print, x}", "cannot encode function to JSON");
            err("local x = {1} return {c = x, d = print, a = x}", "cannot encode recursively nested tables to JSON");
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
    fn the_values_strings_and_keys_of_a_result_are_charged_to_the_budget() {
        let lua = Lua::new();
        let encode = |code: &str, budget: usize| {
            let value: LuaValue = lua.load(code).eval().unwrap();
            from_lua(&lua, value, EmptyTable::Null, Budget::result(budget), Values::default())
        };
        // One string stored once in Lua and referenced four times: four copies in the result,
        // and five values (the list and its items).
        let shared = "local s = string.rep('x', 1000) return {s, s, s, s}";
        let size = 4000 + 5 * VALUE_BYTES;
        assert_eq!(encode(shared, size).unwrap(), Value::Array(vec![json!("x".repeat(1000)); 4]));
        assert_eq!(encode(shared, size - 1), Err(EncodeError::TooLarge));
        // Keys count too, and maps, and the budget beats an error found later.
        let map = 5 + 2 * VALUE_BYTES + MAP_BYTES;
        assert_eq!(encode("return {abc = 'de'}", map).unwrap(), json!({"abc": "de"}));
        assert_eq!(encode("return {abc = 'de'}", map - 1), Err(EncodeError::TooLarge));
        assert_eq!(encode("return {'xx', print}", 1 + 2 * VALUE_BYTES), Err(EncodeError::TooLarge));
        // Values without text count alone: a list of numbers, a table shared by reference.
        let numbers = "local t = {} for i = 1, 1000 do t[i] = 0 end return t";
        assert!(encode(numbers, 1001 * VALUE_BYTES).is_ok());
        assert_eq!(encode(numbers, 1001 * VALUE_BYTES - 1), Err(EncodeError::TooLarge));
    }

    #[test]
    fn a_texts_strings_are_charged_as_written_escapes_and_all() {
        let lua = Lua::new();
        let encode = |code: &str, budget: usize| {
            let value: LuaValue = lua.load(code).eval().unwrap();
            from_lua(&lua, value, EmptyTable::Null, Budget::text(budget), GoJsonText::marshal()).map(|json| json.text)
        };
        // Each control character, `<` or invalid byte is written in 6 bytes, a quote in 2.
        let text = r#"return {"a\1<\255\"b"}"#;
        let written = encode(text, usize::MAX).unwrap();
        assert_eq!(written, r#"["a\u0001\u003c\ufffd\"b"]"#);
        assert_eq!(encode(text, written.len() - 2).unwrap(), written, "its brackets are not counted");
        assert_eq!(encode(text, written.len() - 3), Err(EncodeError::TooLarge));
        // Values and maps take nothing of a text's budget but what is written of them.
        assert_eq!(encode("return {a = {1, 2}}", 3).unwrap(), r#"{"a":[1,2]}"#);
        assert_eq!(written_len("é\u{2028}\t".as_bytes()), 2 + 2 + 3 + 2);
    }

    #[test]
    fn invalid_utf8_is_replaced_a_byte_at_a_time() {
        assert_eq!(go_string(b"x\xe2\x82y"), "x\u{FFFD}\u{FFFD}y");
        assert_eq!(go_string(b"ok \xf0\x9f\x98"), "ok \u{FFFD}\u{FFFD}\u{FFFD}");
        assert_eq!(go_string("h\u{e9}".as_bytes()), "h\u{e9}");
    }

    #[test]
    fn json_text_reads_as_gos_decoder_reads_it() {
        // A lone or reversed surrogate is U+FFFD; a pair stays; `\\` starts no escape.
        assert_eq!(go_json_input(br#""\ud800""#), r#""\ufffd""#);
        assert_eq!(go_json_input(br#""\udc00\ud800x\ud83d\ude00""#), r#""\ufffd\ufffdx\ud83d\ude00""#);
        assert_eq!(go_json_input(br#""\ud800\u0041""#), r#""\ufffd\u0041""#);
        assert_eq!(go_json_input(r#""\\ud800\é""#.as_bytes()), r#""\\ud800\é""#);
        assert_eq!(go_json_input(b"\"\xff\""), "\"\u{FFFD}\"");
        assert!(matches!(go_json_input(br#"{"a": "\u00e9"}"#), Cow::Borrowed(_)));
    }

    #[test]
    fn invalid_utf8_is_written_as_go_marshals_it_or_as_the_controllers_output_holds_it() {
        let lua = Lua::new();
        let value: LuaValue = lua.load(r#"return {["k\255"] = "a\255\254b\195\169<"}"#).eval().unwrap();
        let text = |encoding: GoJsonText| {
            from_lua(&lua, value.clone(), EmptyTable::Null, Budget::result(usize::MAX), encoding).ok().unwrap().text
        };
        assert_eq!(text(GoJsonText::marshal()), r#"{"k\ufffd":"a\ufffd\ufffdbé\u003c"}"#);
        assert_eq!(text(GoJsonText::default()), "{\"k\u{FFFD}\":\"a\u{FFFD}\u{FFFD}bé\\u003c\"}");
    }

    #[test]
    fn keys_made_equal_or_reordered_by_the_replacement_of_invalid_utf8_are_as_the_controller_decodes_them() {
        let lua = Lua::new();
        let text = |code: &str, encoding: GoJsonText| {
            let value: LuaValue = lua.load(code).eval().unwrap();
            from_lua(&lua, value, EmptyTable::Null, Budget::result(usize::MAX), encoding).ok().unwrap().text
        };
        // Written in the order of their bytes, "\254" before "\255": decoding keeps the last.
        let equal = r#"return {spec = {["\255"] = 1, ["\254"] = 2, a = {["x\255"] = 3, ["x\254"] = {4}}, b = 5}}"#;
        assert_eq!(text(equal, GoJsonText::default()), "{\"spec\":{\"a\":{\"x\u{FFFD}\":3},\"b\":5,\"\u{FFFD}\":1}}");
        // json.encode writes them all, in the order of their bytes.
        assert_eq!(
            text(equal, GoJsonText::marshal()),
            r#"{"spec":{"a":{"x\ufffd":[4],"x\ufffd":3},"b":5,"\ufffd":2,"\ufffd":1}}"#
        );
        // U+FFFE sorts after the bytes "\255" and before U+FFFD they are replaced by.
        let reordered = r#"return {spec = {["\255"] = 1, ["\239\191\190"] = 2}}"#;
        assert_eq!(text(reordered, GoJsonText::default()), "{\"spec\":{\"\u{FFFD}\":1,\"\u{FFFE}\":2}}");
        // Only the outermost map's keys are left to the decoding of the result's fields.
        let outer = r#"return {["\255"] = 1, ["\254"] = 2}"#;
        assert_eq!(text(outer, GoJsonText::default()), "{\"\u{FFFD}\":2,\"\u{FFFD}\":1}");
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
          -- By the thousand: gopher-lua's concat (as this engine's) refuses some 2550 or more.
          local joined = {}
          for i = 1, #parts, 1000 do joined[#joined + 1] = table.concat(parts, ",", i, math.min(i + 999, #parts)) end
          return "{" .. table.concat(joined, ",") .. "}"
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
            // Past the items that wait on the stack: built as it is read, nulls across chunks.
            &format!("{{\"l\": [{}]}}", [long_list.as_str(); 9].join(",")),
            &format!("{{\"l\": [{}], \"m\": [[{long_list}], null]}}", vec!["{\"a\": [1]}"; 3000].join(",")),
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
        let wide = format!("{{{}}}", (0..5000).map(|i| format!("\"k{i}\": 1")).collect::<Vec<_>>().join(","));
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
