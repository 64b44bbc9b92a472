//! Lua <-> JSON conversion with the controller's rules (docs/controller-semantics.md §4.3 and
//! §4.4; the controller's `pkg/util/luamanager/json.go`).
//!
//! Into Lua (gopher-lua's `decodeValue`): nulls inside lists are dropped, null map values are
//! absent, numbers are doubles. Out of Lua (the controller's `luamanager` encoder): an empty
//! table is null, a table is a list only when its keys are exactly 1..n, string keys make an
//! object, anything else is an error with the controller's wording. Integral numbers come out
//! as integers so a weight is never written `50.0`. The stack operations are in `stack`.

use super::stack::{self, Index, Kind, Stack};
use crate::gojson::number;
use mlua::{Lua, Value as LuaValue};
use serde_json::{Map, Value};
use std::collections::HashSet;

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

/// Encodes a Lua value as the controller's encoder does, its strings and keys adding up to at
/// most `budget` bytes.
pub fn from_lua(lua: &Lua, value: LuaValue, empty: EmptyTable, budget: usize) -> Result<Value, EncodeError> {
    // The controller's encoder never forgets a table it has visited, so a table reachable twice
    // (not only a cycle) is "recursively nested".
    let mut walk = Walk { empty, visited: HashSet::new(), budget };
    match stack::read(lua, value, MAX_DEPTH, |stack, index| walk.value(stack, index, 0)) {
        Ok(Ok(encoded)) => encoded.map_err(EncodeError::Refused),
        Ok(Err(Abort::TooLarge)) => Err(EncodeError::TooLarge),
        Ok(Err(Abort::NoRoom)) => Err(EncodeError::Refused("cannot encode: not enough Lua stack".into())),
        // Reading raises nothing (stack.rs, invariant 2): only setting the read up can fail,
        // when it cannot allocate.
        Err(_) => Err(EncodeError::OutOfMemory),
    }
}

/// A Lua string as Go sees it: invalid UTF-8 becomes one U+FFFD per bad byte (Go's decoder
/// steps a byte at a time; Rust's lossy conversion replaces whole sequences).
pub fn go_string(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                out.push_str(valid);
                return out;
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

/// A value's JSON, or the controller's message for why it has none.
type Encoded = Result<Value, String>;

/// One walk of a Lua value on the stack.
struct Walk {
    empty: EmptyTable,
    visited: HashSet<usize>,
    /// The bytes the strings and keys still to come may take.
    budget: usize,
}

impl Walk {
    fn value(&mut self, stack: &mut Stack, index: Index, depth: usize) -> Result<Encoded, Abort> {
        Ok(match stack.kind(index) {
            Kind::Nil => Ok(Value::Null),
            Kind::Boolean => Ok(Value::Bool(stack.boolean(index))),
            Kind::Number => number(stack.number(index)),
            Kind::String => Ok(Value::String(self.string(stack, index)?)),
            Kind::Table => return self.table(stack, index, depth),
            Kind::Function => Err("cannot encode function to JSON".into()),
            Kind::Thread => Err("cannot encode thread to JSON".into()),
            Kind::Userdata => Err("cannot encode userdata to JSON".into()),
        })
    }

    /// The string at `index`, charged to the budget before it is copied.
    fn string(&mut self, stack: &Stack, index: Index) -> Result<String, Abort> {
        let bytes = stack.string(index).unwrap_or_default();
        self.budget = self.budget.checked_sub(bytes.len()).ok_or(Abort::TooLarge)?;
        Ok(go_string(bytes))
    }

    fn table(&mut self, stack: &mut Stack, index: Index, depth: usize) -> Result<Encoded, Abort> {
        if !self.visited.insert(stack.pointer(index)) {
            return Ok(Err("cannot encode recursively nested tables to JSON".into()));
        }
        if depth >= MAX_DEPTH {
            return Ok(Err(format!("cannot encode tables nested more than {MAX_DEPTH} deep")));
        }
        // Each value is encoded as its key comes; the keys alone decide the table's shape, as in
        // the controller, and the values' order decides which error counts.
        let mut items: Vec<(f64, Encoded)> = Vec::new();
        let mut entries: Vec<(String, Encoded)> = Vec::new();
        let (mut other_numbers, mut other_keys) = (0, 0);
        let each = |stack: &mut Stack, key: Index, value: Index| {
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
            return Ok(items.into_iter().map(|(_, item)| item).collect::<Result<_, _>>().map(Value::Array));
        }
        if entries.is_empty() && other_numbers == 0 && other_keys == 0 {
            return Ok(Ok(match self.empty {
                EmptyTable::Null => Value::Null,
                EmptyTable::EmptyList => Value::Array(Vec::new()),
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
        let mut map = Map::new();
        for (key, item) in entries {
            match item {
                Ok(item) => map.insert(key, item),
                Err(message) => return Ok(Err(message)),
            };
        }
        Ok(Ok(Value::Object(map)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn eval(code: &str, empty: EmptyTable) -> Result<Value, String> {
        let lua = Lua::new();
        let value: LuaValue = lua.load(code).eval().unwrap();
        from_lua(&lua, value, empty, usize::MAX).map_err(|e| match e {
            EncodeError::Refused(message) => message,
            EncodeError::TooLarge => "too large".into(),
            EncodeError::OutOfMemory => "out of memory".into(),
        })
    }

    #[test]
    fn a_state_at_its_memory_limit_is_out_of_memory_not_out_of_stack() {
        let lua = Lua::new();
        let value: LuaValue = lua.load("return {a = {1, 2}}").eval().unwrap();
        lua.set_memory_limit(lua.used_memory()).unwrap();
        assert_eq!(from_lua(&lua, value, EmptyTable::Null, usize::MAX), Err(EncodeError::OutOfMemory));
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
            from_lua(&lua, value, EmptyTable::Null, budget)
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
