//! Lua <-> JSON conversion with the controller's rules (controller-semantics.md 4.3 and 4.4).
//!
//! Into Lua (gopher-lua's `decodeValue`): nulls inside lists are dropped, null map values are
//! absent, numbers are doubles. Out of Lua (the controller's `luamanager` encoder): an empty
//! table is null, a table is a list only when its keys are exactly 1..n, string keys make an
//! object, anything else is an error with the controller's wording. Integral numbers come out
//! as integers so a weight is never written `50.0`.

use mlua::{Lua, Table, Value as LuaValue};
use serde_json::{Map, Number, Value};
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

/// gopher-lua keeps positive integer keys below this in a table's array part.
const MAX_ARRAY_INDEX: f64 = 67_108_864.0;

/// Builds the Lua value for a JSON value; `on_table` sees every table created (used to mark
/// input tables).
pub fn to_lua(
    lua: &Lua,
    value: &Value,
    order: KeyOrder,
    on_table: &mut dyn FnMut(&Table) -> mlua::Result<()>,
) -> mlua::Result<LuaValue> {
    Ok(match value {
        Value::Null => LuaValue::Nil,
        Value::Bool(b) => LuaValue::Boolean(*b),
        Value::Number(n) => LuaValue::Number(n.as_f64().unwrap_or_default()),
        Value::String(s) => LuaValue::String(lua.create_string(s)?),
        Value::Array(items) => {
            let table = lua.create_table_with_capacity(items.len(), 0)?;
            let mut index = 0;
            for item in items {
                let converted = to_lua(lua, item, order, on_table)?;
                if !converted.is_nil() {
                    index += 1;
                    table.raw_set(index, converted)?;
                }
            }
            on_table(&table)?;
            LuaValue::Table(table)
        }
        Value::Object(map) => {
            let table = lua.create_table_with_capacity(0, map.len())?;
            let mut entries: Vec<_> = map.iter().collect();
            if order == KeyOrder::Reversed {
                entries.reverse();
            }
            for (key, item) in entries {
                let converted = to_lua(lua, item, order, on_table)?;
                if !converted.is_nil() {
                    table.raw_set(key.as_str(), converted)?;
                }
            }
            on_table(&table)?;
            LuaValue::Table(table)
        }
    })
}

/// Encodes a Lua value as the controller's encoder does.
pub fn from_lua(value: &LuaValue, empty: EmptyTable) -> Result<Value, String> {
    // The controller's encoder never forgets a table it has visited, so a table reachable twice
    // (not only a cycle) is "recursively nested".
    let mut visited = HashSet::new();
    encode(value, empty, &mut visited)
}

fn encode(value: &LuaValue, empty: EmptyTable, visited: &mut HashSet<usize>) -> Result<Value, String> {
    match value {
        LuaValue::Nil => Ok(Value::Null),
        LuaValue::Boolean(b) => Ok(Value::Bool(*b)),
        // Lua 5.1 has only doubles; mlua hands whole ones over as integers.
        LuaValue::Integer(i) => number(*i as f64),
        LuaValue::Number(n) => number(*n),
        LuaValue::String(s) => Ok(Value::String(go_string(&s.as_bytes()))),
        LuaValue::Table(table) => encode_table(table, empty, visited),
        other => Err(format!("cannot encode {} to JSON", other.type_name())),
    }
}

/// A double as JSON, as Go's encoder prints it: whole numbers below 2^53 (exact, and printed
/// with every digit either way) become integers so a weight is never `50.0`; everything else
/// stays a double, printed with Go's shortest digits (`-0`, `1152921504606847000`). NaN and
/// infinities are rejected, as Go's json.Marshal rejects them.
pub fn number(n: f64) -> Result<Value, String> {
    if n.is_nan() || n.is_infinite() {
        let shown = if n.is_nan() {
            "NaN"
        } else if n > 0.0 {
            "+Inf"
        } else {
            "-Inf"
        };
        return Err(format!("json: unsupported value: {shown}"));
    }
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if n.fract() == 0.0 && n.abs() < EXACT && !(n == 0.0 && n.is_sign_negative()) {
        return Ok(Value::from(n as i64));
    }
    Ok(Value::Number(Number::from_f64(n).expect("finite")))
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

fn encode_table(table: &Table, empty: EmptyTable, visited: &mut HashSet<usize>) -> Result<Value, String> {
    if !visited.insert(table.to_pointer() as usize) {
        return Err("cannot encode recursively nested tables to JSON".into());
    }
    let mut array_part: Vec<(f64, LuaValue)> = Vec::new();
    let mut strings: Vec<(String, LuaValue)> = Vec::new();
    let (mut other_numbers, mut other_keys) = (0, 0);
    for pair in table.pairs::<LuaValue, LuaValue>() {
        let (key, item) = pair.map_err(|e| e.to_string())?;
        match key {
            LuaValue::Number(n) if (1.0..MAX_ARRAY_INDEX).contains(&n) && n.fract() == 0.0 => {
                array_part.push((n, item))
            }
            LuaValue::Integer(i) if i >= 1 && (i as f64) < MAX_ARRAY_INDEX => array_part.push((i as f64, item)),
            LuaValue::Number(_) | LuaValue::Integer(_) => other_numbers += 1,
            LuaValue::String(s) => strings.push((go_string(&s.as_bytes()), item)),
            _ => other_keys += 1,
        }
    }
    // gopher-lua iterates the array part (ascending) before any other key, so that part decides
    // whether the table is a list; in the hash part the first key decides, in insertion order,
    // which this engine cannot see: a mix is an error either way, only the wording may differ.
    if !array_part.is_empty() {
        array_part.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut items = Vec::with_capacity(array_part.len());
        for (want, (key, item)) in array_part.iter().enumerate() {
            if *key != (want + 1) as f64 {
                return Err("cannot encode sparse array".into());
            }
            items.push(encode(item, empty, visited)?);
        }
        if !strings.is_empty() || other_keys > 0 {
            return Err("cannot encode mixed or invalid key types".into());
        }
        if other_numbers > 0 {
            return Err("cannot encode sparse array".into());
        }
        return Ok(Value::Array(items));
    }
    if strings.is_empty() && other_keys == 0 && other_numbers == 0 {
        return Ok(match empty {
            EmptyTable::Null => Value::Null,
            EmptyTable::EmptyList => Value::Array(Vec::new()),
        });
    }
    if other_keys > 0 || (other_numbers > 0 && !strings.is_empty()) {
        return Err("cannot encode mixed or invalid key types".into());
    }
    if other_numbers > 0 {
        return Err("cannot encode sparse array".into());
    }
    // Go marshals a map in sorted key order, so nested errors surface in that order too.
    strings.sort_by(|a, b| a.0.cmp(&b.0));
    let mut map = Map::new();
    for (key, item) in strings {
        let encoded = encode(&item, empty, visited)?;
        map.insert(key, encoded);
    }
    Ok(Value::Object(map))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn eval(code: &str, empty: EmptyTable) -> Result<Value, String> {
        let lua = Lua::new();
        let value: LuaValue = lua.load(code).eval().unwrap();
        from_lua(&value, empty)
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
    fn input_drops_nulls_and_keeps_numbers_as_doubles() {
        let lua = Lua::new();
        let input = json!({"list": [1, null, 2], "gone": null, "n": 50});
        let value = to_lua(&lua, &input, KeyOrder::Sorted, &mut |_| Ok(())).unwrap();
        lua.globals().set("obj", value).unwrap();
        let got: String =
            lua.load("return #obj.list .. ' ' .. tostring(obj.gone) .. ' ' .. tostring(obj.n / 2)").eval().unwrap();
        assert_eq!(got, "2 nil 25");
    }
}
