//! Lua <-> JSON conversion with the controller's rules (docs/controller-semantics.md §4.3 and
//! §4.4; the controller's `pkg/util/luamanager/json.go`).
//!
//! Into Lua (gopher-lua's `decodeValue`): nulls inside lists are dropped, null map values are
//! absent, numbers are doubles. Out of Lua (the controller's `luamanager` encoder): an empty
//! table is null, a table is a list only when its keys are exactly 1..n, string keys make an
//! object, anything else is an error with the controller's wording. Integral numbers come out
//! as integers so a weight is never written `50.0`.

use mlua::{Lua, Value as LuaValue, ffi};
use serde_json::{Number, Value};
use std::collections::HashSet;
use std::ffi::c_int;

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

/// Builds the Lua value for a JSON value, inserting each map's keys in `order`.
pub fn to_lua(lua: &Lua, value: &Value, order: KeyOrder) -> mlua::Result<LuaValue> {
    let depth = depth(value);
    if depth > MAX_DEPTH {
        return Err(mlua::Error::runtime(format!("cannot hand a value nested more than {MAX_DEPTH} deep to Lua")));
    }
    // SAFETY: the build pushes with lua_createtable, lua_pushlstring, lua_pushnumber,
    // lua_pushboolean, lua_rawset and lua_rawseti into stack slots reserved up front; a memory
    // error raises to exec_raw's protected call through frames that own nothing to drop (they
    // hold references and borrowing iterators only).
    let mut reserved = false;
    let built = unsafe {
        lua.exec_raw::<LuaValue>((), |state| {
            reserved = ffi::lua_checkstack(state, 2 * depth as c_int + 4) != 0;
            if reserved {
                push(state, value, order);
            }
        })
    }?;
    if !reserved {
        return Err(mlua::Error::runtime("cannot hand the value to Lua: not enough Lua stack"));
    }
    Ok(built)
}

/// How deeply lists and maps nest in a value.
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Pushes a value as gopher-lua's `decodeValue` builds it: lists append their non-null items
/// (so they close up around nulls), maps set their non-null entries.
unsafe fn push(state: *mut ffi::lua_State, value: &Value, order: KeyOrder) {
    // SAFETY: see `to_lua`; each level takes two of the reserved slots (key and value).
    unsafe {
        match value {
            Value::Null => ffi::lua_pushnil(state),
            Value::Bool(b) => ffi::lua_pushboolean(state, c_int::from(*b)),
            Value::Number(n) => ffi::lua_pushnumber(state, n.as_f64().unwrap_or_default()),
            Value::String(s) => {
                ffi::lua_pushlstring(state, s.as_ptr().cast(), s.len());
            }
            Value::Array(items) => {
                ffi::lua_createtable(state, items.len() as c_int, 0);
                for (index, item) in items.iter().filter(|i| !i.is_null()).enumerate() {
                    push(state, item, order);
                    ffi::lua_rawseti_(state, -2, index as c_int + 1);
                }
            }
            Value::Object(map) => {
                ffi::lua_createtable(state, 0, map.len() as c_int);
                let mut set = |(key, item): (&String, &Value)| {
                    ffi::lua_pushlstring(state, key.as_ptr().cast(), key.len());
                    push(state, item, order);
                    ffi::lua_rawset(state, -3);
                };
                let entries = map.iter().filter(|(_, v)| !v.is_null());
                match order {
                    KeyOrder::Sorted => entries.for_each(&mut set),
                    KeyOrder::Reversed => entries.rev().for_each(&mut set),
                }
            }
        }
    }
}

/// Encodes a Lua value as the controller's encoder does.
pub fn from_lua(lua: &Lua, value: LuaValue, empty: EmptyTable) -> Result<Value, String> {
    // Reserving the stack for MAX_DEPTH levels grows it to 32 KiB, which costs more than the
    // walk of a usual output: a first walk reserves for a few levels, and only an output that
    // nests deeper is walked again with the full reservation (a walk changes nothing, so the
    // second one sees what the first saw).
    walk_reserving(lua, value.clone(), empty, SHALLOW_DEPTH).unwrap_or_else(|| {
        walk_reserving(lua, value, empty, MAX_DEPTH).expect("the full reservation covers every level")
    })
}

/// The walk of `value` with stack slots reserved for `levels` levels, or None when it nests
/// deeper than that (below MAX_DEPTH).
fn walk_reserving(lua: &Lua, value: LuaValue, empty: EmptyTable, levels: usize) -> Option<Result<Value, String>> {
    let (mut result, mut too_deep) = (None, false);
    // SAFETY: the walk reads the value on the stack with calls that neither allocate nor raise
    // (lua_type, lua_tonumber, lua_toboolean, lua_topointer, lua_tolstring on strings only,
    // lua_next with untouched keys), after reserving every stack slot it can need up front,
    // before any Rust value that needs dropping exists.
    let outcome = unsafe {
        lua.exec_raw::<()>(value, |state| {
            if ffi::lua_checkstack(state, 2 * levels as c_int + 4) == 0 {
                result = Some(Err("cannot encode: not enough Lua stack".to_string()));
                return;
            }
            // The controller's encoder never forgets a table it has visited, so a table reachable
            // twice (not only a cycle) is "recursively nested".
            let mut walk = Walk { empty, visited: HashSet::new(), levels, too_deep: false };
            result = Some(walk.value(state, ffi::lua_gettop(state), 0));
            too_deep = walk.too_deep;
        })
    };
    match outcome {
        Err(e) => Some(Err(e.to_string())),
        Ok(()) => (!too_deep).then(|| result.expect("the walk ran")),
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

/// Tables nested deeper than this are refused (a second walk reserves the stack for this many
/// levels, see `from_lua`).
const MAX_DEPTH: usize = 1000;

/// The levels a first walk reserves the stack for (see `from_lua`).
const SHALLOW_DEPTH: usize = 32;

/// One walk of a Lua value on the stack.
struct Walk {
    empty: EmptyTable,
    visited: HashSet<usize>,
    /// The levels the stack was reserved for.
    levels: usize,
    /// Set when a table nests deeper than `levels` allows: the result is then incomplete.
    too_deep: bool,
}

impl Walk {
    /// Converts the value at stack index `index` (absolute).
    unsafe fn value(&mut self, state: *mut ffi::lua_State, index: c_int, depth: usize) -> Result<Value, String> {
        // SAFETY: see `from_lua`.
        unsafe {
            match ffi::lua_type(state, index) {
                ffi::LUA_TNIL => Ok(Value::Null),
                ffi::LUA_TBOOLEAN => Ok(Value::Bool(ffi::lua_toboolean(state, index) != 0)),
                ffi::LUA_TNUMBER => number(ffi::lua_tonumber(state, index)),
                ffi::LUA_TSTRING => Ok(Value::String(go_string(string_at(state, index)))),
                ffi::LUA_TTABLE => self.table(state, index, depth),
                ffi::LUA_TFUNCTION => Err("cannot encode function to JSON".into()),
                ffi::LUA_TTHREAD => Err("cannot encode thread to JSON".into()),
                _ => Err("cannot encode userdata to JSON".into()),
            }
        }
    }

    unsafe fn table(&mut self, state: *mut ffi::lua_State, index: c_int, depth: usize) -> Result<Value, String> {
        if !self.visited.insert(unsafe { ffi::lua_topointer(state, index) } as usize) {
            return Err("cannot encode recursively nested tables to JSON".into());
        }
        if depth >= MAX_DEPTH {
            return Err(format!("cannot encode tables nested more than {MAX_DEPTH} deep"));
        }
        if depth >= self.levels {
            self.too_deep = true;
            return Err("deeper than the stack reserved".into());
        }
        // First the keys alone decide the table's shape, as in the controller, before any value is
        // encoded; keys are remembered with their place in the walk.
        let mut array_keys: Vec<(f64, usize)> = Vec::new();
        let mut string_keys: Vec<(String, usize)> = Vec::new();
        let (mut other_numbers, mut other_keys, mut count) = (0, 0, 0);
        // SAFETY: see `from_lua`; each level uses two of the reserved slots (key and value).
        unsafe {
            ffi::lua_pushnil(state);
            while ffi::lua_next(state, index) != 0 {
                match ffi::lua_type(state, -2) {
                    ffi::LUA_TNUMBER => {
                        let n = ffi::lua_tonumber(state, -2);
                        if (1.0..MAX_ARRAY_INDEX).contains(&n) && n.fract() == 0.0 {
                            array_keys.push((n, count));
                        } else {
                            other_numbers += 1;
                        }
                    }
                    ffi::LUA_TSTRING => string_keys.push((go_string(string_at(state, -2)), count)),
                    _ => other_keys += 1,
                }
                count += 1;
                ffi::lua_pop(state, 1);
            }
        }
        // gopher-lua iterates the array part (ascending) before any other key, so that part decides
        // whether the table is a list; in the hash part the first key decides, in insertion order,
        // which this engine cannot see: a mix is an error either way, only the wording may differ.
        let list = !array_keys.is_empty();
        if list {
            array_keys.sort_by(|a, b| a.0.total_cmp(&b.0));
            if array_keys.iter().enumerate().any(|(want, (key, _))| *key != (want + 1) as f64) {
                return Err("cannot encode sparse array".into());
            }
            if !string_keys.is_empty() || other_keys > 0 {
                return Err("cannot encode mixed or invalid key types".into());
            }
            if other_numbers > 0 {
                return Err("cannot encode sparse array".into());
            }
        } else if count == 0 {
            return Ok(match self.empty {
                EmptyTable::Null => Value::Null,
                EmptyTable::EmptyList => Value::Array(Vec::new()),
            });
        } else if other_keys > 0 || (other_numbers > 0 && !string_keys.is_empty()) {
            return Err("cannot encode mixed or invalid key types".into());
        } else if other_numbers > 0 {
            return Err("cannot encode sparse array".into());
        }
        // Then every value, in the walk's order; a failed value leaves the stack as it found it
        // (settop), and errors surface in the order Go marshals: list order, or sorted keys.
        let mut values: Vec<Option<Result<Value, String>>> = Vec::with_capacity(count);
        // SAFETY: as above.
        unsafe {
            ffi::lua_pushnil(state);
            while ffi::lua_next(state, index) != 0 {
                let value_index = ffi::lua_gettop(state);
                values.push(Some(self.value(state, value_index, depth + 1)));
                ffi::lua_settop(state, value_index - 1);
            }
        }
        let mut take = |place: usize| values[place].take().expect("each value is taken once");
        if list {
            return array_keys.into_iter().map(|(_, place)| take(place)).collect::<Result<_, _>>().map(Value::Array);
        }
        string_keys.sort_by(|a, b| a.0.cmp(&b.0));
        string_keys.into_iter().map(|(key, place)| Ok((key, take(place)?))).collect::<Result<_, _>>().map(Value::Object)
    }
}

/// The bytes of the string at `index`; valid while it stays on the stack.
unsafe fn string_at<'a>(state: *mut ffi::lua_State, index: c_int) -> &'a [u8] {
    let mut length = 0;
    // SAFETY: only called on strings, where lua_tolstring neither allocates nor changes the value.
    unsafe {
        let data = ffi::lua_tolstring(state, index, &mut length);
        std::slice::from_raw_parts(data.cast::<u8>(), length)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn eval(code: &str, empty: EmptyTable) -> Result<Value, String> {
        let lua = Lua::new();
        let value: LuaValue = lua.load(code).eval().unwrap();
        from_lua(&lua, value, empty)
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
    fn outputs_nesting_past_the_first_reservation_are_walked_in_full() {
        // `d` ends up `levels` one-item lists deep around `t`.
        let nested = |levels: usize| format!("local t = {{}} local d = t for i = 1, {levels} do d = {{d}} end ");
        let mut want = Value::Null;
        for _ in 0..SHALLOW_DEPTH + 8 {
            want = json!([want]);
        }
        assert_eq!(eval(&format!("{}return {{1, d}}", nested(SHALLOW_DEPTH + 8)), EmptyTable::Null).unwrap()[1], want);
        // A deep branch does not change which error comes first, nor hide a table seen twice.
        let code = format!("{}return {{a = d, b = t, c = print}}", nested(SHALLOW_DEPTH + 8));
        assert_eq!(eval(&code, EmptyTable::Null).unwrap_err(), "cannot encode recursively nested tables to JSON");
        assert_eq!(
            eval(&format!("{}return d", nested(MAX_DEPTH + 1)), EmptyTable::Null).unwrap_err(),
            format!("cannot encode tables nested more than {MAX_DEPTH} deep")
        );
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
        let value = to_lua(&lua, &input, KeyOrder::Sorted).unwrap();
        lua.globals().set("obj", value).unwrap();
        let got: String =
            lua.load("return #obj.list .. ' ' .. tostring(obj.gone) .. ' ' .. tostring(obj.n / 2)").eval().unwrap();
        assert_eq!(got, "2 nil 25");
    }
}
