//! What a script can reach: the controller's libraries, minus file access and code loading
//! (`NOT_AVAILABLE`), plus the controller's `json` module and its `math.huge`.

use super::gofmt::{FormatError, Operand, string_format};
use super::gostrconv::{parse_float, parse_int, trim_lua_space};
use super::stack::library_chunk;
use super::{EmptyTable, EvalOptions, PairsOrder, convert, deadline, gounicode};
use mlua::{IntoLuaMulti, Lua, MultiValue, Table, Value as LuaValue};

const INPUT_TABLES: &str = "kubectl-rollout-lua.input-tables";

/// Walks tables backwards where asked; `pairs` keeps its checks and its normal speed otherwise.
const PAIRS_PRELUDE: &str = r#"
local next, rawget, original, inputs, all = next, rawget, pairs, ...
function pairs(t)
  original(t)
  if not (all or inputs[t]) then return next, t, nil end
  local keys, n, i = {}, 0, 0
  for k in next, t do n = n + 1; keys[n] = k end
  return function()
    while i < n do
      i = i + 1
      local k = keys[i % n + 1]
      local v = rawget(t, k)
      if v ~= nil then return k, v end
    end
  end, t, nil
end
"#;

/// The library functions written in Rust raise only the sandbox's own errors (time, memory):
/// mlua raises an error from Rust as a userdata, gopher-lua as a string, so a script that catches
/// one with `pcall` and uses it as a string (`"failed: " .. e`) would fail here only. Their
/// argument errors are raised in Lua instead, and `print` calls `tostring` in Lua (the one the
/// state starts with, as gopher-lua's `print` does not look up the global).
const JSON_PRELUDE: &str = r#"
local encode, decode = ...
local select, type, error = select, type, error
local function checked_encode(...)
  if select('#', ...) == 0 then error("bad argument #1 to encode (value expected)", 3) end
  return encode((...))
end
local function checked_decode(text)
  local kind = type(text)
  if kind ~= "string" and kind ~= "number" then
    error("bad argument #1 to decode (string expected, got " .. kind .. ")", 3)
  end
  local value, problem, past_a_limit = decode(text)
  if past_a_limit then error(problem, 3) end
  if problem ~= nil then return value, problem end
  return value
end
return {encode = checked_encode, decode = checked_decode}
"#;

/// Base functions the controller has and this tool removes: a workstation tool loads no code or
/// bytecode and reads no file for a script, and a `newproxy` userdata's `__gc` would run script
/// code when the state closes, past the time limit. Each raises, naming itself, rather than
/// leaving a bare "attempt to call a nil value".
const NOT_AVAILABLE: [&str; 7] = ["dofile", "loadfile", "load", "loadstring", "require", "module", "newproxy"];

/// The functions above, and gopher-lua's `string.dump`, which raises whatever the argument: each
/// message at the script's line even when a C function such as `pcall` calls it (gopher-lua
/// names the nearest Lua caller).
const SANDBOX_PRELUDE: &str = r#"
local error, names, script_where = error, ...
for _, name in ipairs(names) do
  _G[name] = function()
    error(script_where() .. name .. " is not available in kubectl rollout-lua (the controller has it): scripts here load no code, read no file and make no userdata", 0)
  end
end
string.dump = function() error(script_where() .. "GopherLua does not support the string.dump", 0) end
"#;

/// See `JSON_PRELUDE`. gopher-lua's `_printregs` prints its engine's registers, which this one
/// does not have: it says so where `print` writes.
const PRINT_PRELUDE: &str = r#"
local write = ...
local select, tostring, type, unpack = select, tostring, type, unpack
return function(...)
  local n, texts = select('#', ...), {...}
  for i = 1, n do
    local text = tostring(texts[i])
    -- A `__tostring` that returns no string: gopher-lua prints what it returns as that value's
    -- own text (`5`, `true`, `nil`; a table or function as `table: 0x…`, in `write`).
    local kind = type(text)
    if kind == "number" or kind == "boolean" or kind == "nil" then text = tostring(text) end
    texts[i] = text
  end
  return write(unpack(texts, 1, n))
end, function()
  write("_printregs: the controller's engine prints its registers here; this one has none")
end
"#;

/// gopher-lua's `string.format`, `string.upper`, `string.lower` and `tonumber`, which Go's
/// `fmt`, `strings` and `strconv` do there: the work in Rust (`go_functions`), the argument
/// checks here (see `JSON_PRELUDE`), worded as gopher-lua's.
const GO_PRELUDE: &str = r#"
local format, upper, lower, to_number, string = ...
local select, type, error, tostring = select, type, error, tostring
local function text_argument(value, name)
  local kind = type(value)
  if kind == "number" then return tostring(value) end
  if kind ~= "string" then error("bad argument #1 to " .. name .. " (string expected, got " .. kind .. ")", 4) end
  return value
end
function string.format(...)
  local text, problem = format(text_argument((...), "format"), select(2, ...))
  if text == nil then error(problem, 3) end
  return text
end
function string.upper(text) return upper(text_argument(text, "upper")) end
function string.lower(text) return lower(text_argument(text, "lower")) end
function tonumber(...)
  local value, base = ...
  if base ~= nil and type(base) ~= "number" then
    error("bad argument #2 to tonumber (number expected, got " .. type(base) .. ")", 3)
  end
  if select('#', ...) == 0 then error("bad argument #1 to tonumber (value expected)", 3) end
  local kind = type(value)
  if kind == "number" then return value end
  if kind ~= "string" then return nil end
  return to_number(value, base)
end
"#;

/// What every evaluation's state holds, whatever the script and options.
pub fn install_common(lua: &Lua) -> mlua::Result<()> {
    let globals = lua.globals();
    // The controller's gopher-lua has no coroutine library or gcinfo either.
    for name in ["coroutine", "gcinfo"] {
        globals.raw_set(name, LuaValue::Nil)?;
    }
    // gopher-lua's math.huge is the largest double, not infinity.
    globals.get::<Table>("math")?.raw_set("huge", f64::MAX)?;
    globals.raw_set("_GOPHER_LUA_VERSION", "GopherLua 0.1")?;
    // Where the script was when it called a function below (gopher-lua's message prefix).
    let script_where = lua.create_function(|lua, ()| {
        Ok(match super::script_line(lua) {
            0 => String::new(),
            line => format!("{}:{line}: ", super::CHUNK_NAME),
        })
    })?;
    library_chunk::<()>(lua, SANDBOX_PRELUDE, "=sandbox", (lua.create_sequence_from(NOT_AVAILABLE)?, script_where))?;
    let json: Table = library_chunk(lua, JSON_PRELUDE, "=json", json_functions(lua)?)?;
    globals.raw_set("json", json)?;
    let (format, upper, lower, to_number) = go_functions(lua)?;
    library_chunk(lua, GO_PRELUDE, "=string", (format, upper, lower, to_number, globals.get::<Table>("string")?))
}

/// What depends on the script and the options: `print` (and `_printregs`, which prints), and
/// the order `pairs` walks in.
pub fn install_for(lua: &Lua, script_name: &str, options: EvalOptions) -> mlua::Result<()> {
    let globals = lua.globals();
    let (print, print_registers): (mlua::Function, mlua::Function) =
        library_chunk(lua, PRINT_PRELUDE, "=print", write_function(lua, script_name)?)?;
    globals.raw_set("print", print)?;
    globals.raw_set("_printregs", print_registers)?;
    if options.pairs != PairsOrder::Natural {
        let inputs = lua.create_table()?;
        inputs.set_metatable(Some(lua.create_table_from([("__mode", "k")])?))?;
        lua.set_named_registry_value(INPUT_TABLES, &inputs)?;
        library_chunk::<()>(lua, PAIRS_PRELUDE, "=pairs", (inputs, options.pairs == PairsOrder::RotatedForAll))?;
    }
    Ok(())
}

/// Records every table reachable from `value` as input, when `pairs` walks input rotated:
/// `obj`, and what `json.decode` makes (Go maps in the controller, walked in random order).
pub fn mark_input(lua: &Lua, value: &LuaValue) -> mlua::Result<()> {
    let Some(inputs) = lua.named_registry_value::<Option<Table>>(INPUT_TABLES)? else { return Ok(()) };
    lua.load(MARK_INPUTS).set_name("=mark").call::<()>((inputs, value))
}

const MARK_INPUTS: &str = r#"
local inputs, value = ...
local next, type = next, type
local function mark(t)
  if inputs[t] then return end
  inputs[t] = true
  for _, v in next, t do
    if type(v) == "table" then mark(v) end
  end
end
if type(value) == "table" then mark(value) end
"#;

/// A single return value, as the controller's module returns on success.
fn one(lua: &Lua, value: LuaValue) -> mlua::Result<MultiValue> {
    (value,).into_lua_multi(lua)
}

/// `nil, message`: the controller's module reports failures instead of raising them.
fn failed(lua: &Lua, message: &str) -> mlua::Result<MultiValue> {
    (LuaValue::Nil, lua.create_string(message)?).into_lua_multi(lua)
}

/// What `print` may write in one evaluation: a script printing in a loop could otherwise write
/// hundreds of megabytes within its time limit. Past it, output stops with a note saying so.
pub const PRINT_LIMIT: usize = 1 << 20;

/// What the evaluation's `print` calls wrote, in the state's app data until `take_printed`.
struct PrintBuffer(Vec<u8>);

/// What `print` wrote in this state, taken out of it.
pub fn take_printed(lua: &Lua) -> Vec<u8> {
    lua.remove_app_data::<PrintBuffer>().map(|b| b.0).unwrap_or_default()
}

/// `print`'s writing half (`PRINT_PRELUDE` turns its arguments into text): a line with the
/// script's name (the command-line edge shows them on stderr, keeping stdout for plans and YAML).
fn write_function(lua: &Lua, script_name: &str) -> mlua::Result<mlua::Function> {
    let prefix = format!("[{script_name}] ");
    lua.set_app_data(PrintBuffer(Vec::new()));
    lua.create_function(move |lua, texts: MultiValue| {
        let left = PRINT_LIMIT.saturating_sub(lua.app_data_ref::<PrintBuffer>().map_or(0, |buffer| buffer.0.len()));
        let mut line = prefix.clone().into_bytes();
        for (i, text) in texts.into_iter().enumerate() {
            if i > 0 {
                line.push(b'\t');
            }
            match text {
                LuaValue::String(text) => append_within(&mut line, left, &text.as_bytes()),
                // A `__tostring` that returns a table or a function: gopher-lua prints it as it
                // would without one.
                other => append_within(
                    &mut line,
                    left,
                    format!("{}: {:?}", other.type_name(), other.to_pointer()).as_bytes(),
                ),
            }
        }
        line.push(b'\n');
        let mut buffer = lua.app_data_mut::<PrintBuffer>().expect("set with print");
        let left = PRINT_LIMIT.saturating_sub(buffer.0.len());
        if left == 0 {
            return Ok(());
        }
        if line.len() > left {
            // The note goes past the limit; nothing comes after it.
            line.truncate(left);
            let note = format!("\n{prefix}print: output stops here, at its limit of {} MiB\n", PRINT_LIMIT >> 20);
            line.extend_from_slice(note.as_bytes());
        }
        buffer.0.extend_from_slice(&line);
        Ok(())
    })
}

/// Appends to `line` what is left of the limit of `text`, its control characters escaped, and a
/// byte to tell it is exceeded: no more is copied, however long the text.
fn append_within(line: &mut Vec<u8>, left: usize, text: &[u8]) {
    let room = (left + 1).saturating_sub(line.len());
    line.extend_from_slice(&super::escape_controls(&text[..text.len().min(room)]));
}

/// `lua.create_function(f)` for a library function written in Rust, where a memory error of `f`
/// (its result over the limit, or an allocation of Lua's failing) stops the script as one in
/// the C library does (`deadline::stop_if_out_of_memory`).
fn library_function<A, R>(
    lua: &Lua,
    f: impl Fn(&Lua, A) -> mlua::Result<R> + mlua::MaybeSend + 'static,
) -> mlua::Result<mlua::Function>
where
    A: mlua::FromLuaMulti,
    R: mlua::IntoLuaMulti,
{
    lua.create_function(move |lua, args| f(lua, args).map_err(|e| deadline::stop_if_out_of_memory(lua, e)))
}

/// The controller's `json` functions, encode and decode (their arguments checked by
/// `JSON_PRELUDE`): failures return `nil, message` instead of raising.
fn json_functions(lua: &Lua) -> mlua::Result<(mlua::Function, mlua::Function)> {
    Ok((
        library_function(lua, |lua, value: LuaValue| {
            let encoded = convert::from_lua(
                lua,
                value,
                EmptyTable::Null,
                convert::Budget::text(super::output_budget(lua)),
                convert::GoJsonText::marshal(),
            );
            deadline::check(lua)?;
            match encoded {
                Ok(json) => {
                    // gopher-lua's encoding (a Go value built from the table, then marshalled)
                    // takes it about as long as 6 instructions a value or key, and one per 10
                    // bytes (measured with the oracle, against 45 ns an instruction: 5.7 ms for
                    // a VirtualService's 20,000 values and keys in 126 KB, 8.9 ms for 2 MB in
                    // 2,000 strings).
                    deadline::count_steps(lua, 6 * json.values + json.text.len() as u64 / 10);
                    one(lua, LuaValue::String(lua.create_string(json.text)?))
                }
                Err(convert::EncodeError::Refused(message)) => failed(lua, &message),
                // The text would not fit in the sandbox's memory either.
                Err(convert::EncodeError::TooLarge | convert::EncodeError::OutOfMemory) => {
                    Err(mlua::Error::MemoryError("json.encode".into()))
                }
            }
        })?,
        library_function(lua, |lua, text: mlua::LuaString| {
            // Nested past the engine's limit, which Go decodes: raised, by the wrapper, at the
            // script's line (a regression: `nil, message`, a failure the script would handle).
            let too_deep = || (LuaValue::Nil, convert::too_deep_message(), true).into_lua_multi(lua);
            let decoded = match serde_json::from_str::<serde_json::Value>(&convert::go_json_input(&text.as_bytes())) {
                Ok(json) => match convert::within_depth(lua, &json, convert::KeyOrder::Sorted)? {
                    Some(value) => {
                        mark_input(lua, &value)?;
                        one(lua, value)
                    }
                    None => too_deep(),
                },
                // serde_json's own limit (128 levels), past the engine's.
                Err(e) if e.to_string().starts_with("recursion limit exceeded") => too_deep(),
                Err(e) => failed(lua, &e.to_string()),
            };
            deadline::check(lua)?;
            decoded
        })?,
    ))
}

/// The memory a library function may still take for a result: what the limit leaves.
fn memory_left(lua: &Lua) -> usize {
    super::output_budget(lua).saturating_sub(lua.used_memory())
}

/// The Rust halves of `GO_PRELUDE`'s functions: `format(text, args...)` (the text, or `nil,
/// message` for what this engine does not reproduce), `upper(text)`, `lower(text)` and
/// `to_number(text, base)` (gopher-lua's `tonumber` of a string: trimmed, `ParseFloat` where
/// there is a ".", else `ParseInt` with the base, or 16 after "0x" when no base is given; `nil`
/// on any error). Results longer than the memory left fail as the memory limit.
fn go_functions(lua: &Lua) -> mlua::Result<(mlua::Function, mlua::Function, mlua::Function, mlua::Function)> {
    let change_case = |upper: bool| {
        library_function(lua, move |lua, text: mlua::LuaString| {
            let changed = gounicode::change_case(&text.as_bytes(), upper, memory_left(lua));
            deadline::check(lua)?;
            let changed = changed.ok_or_else(|| mlua::Error::MemoryError("string.upper".into()))?;
            lua.create_string(changed)
        })
    };
    Ok((
        library_function(lua, |lua, (format, args): (mlua::LuaString, MultiValue)| {
            let strings: Vec<_> =
                args.iter().map(|arg| if let LuaValue::String(s) = arg { Some(s.as_bytes()) } else { None }).collect();
            let mut operands = Vec::with_capacity(args.len());
            for (arg, string) in args.iter().zip(&strings) {
                operands.push(match (arg, string) {
                    (_, Some(bytes)) => Operand::String(bytes),
                    (LuaValue::Nil, _) => Operand::Nil,
                    (LuaValue::Boolean(b), _) => Operand::Bool(*b),
                    (LuaValue::Number(n), _) => Operand::Number(*n),
                    (LuaValue::Integer(n), _) => Operand::Number(*n as f64),
                    (LuaValue::Table(t), _) => Operand::Table(t.to_pointer() as usize),
                    (LuaValue::Function(f), _) => Operand::Function(f.to_pointer() as usize),
                    (other, _) => {
                        return failed(
                            lua,
                            &format!("string.format: a {} has no counterpart in the controller", other.type_name()),
                        );
                    }
                });
            }
            let formatted = string_format(&format.as_bytes(), &operands, memory_left(lua));
            deadline::check(lua)?;
            match formatted {
                Ok(text) => one(lua, LuaValue::String(lua.create_string(text)?)),
                Err(FormatError::Refused(message)) => failed(lua, &format!("string.format: {message}")),
                Err(FormatError::TooLarge) => Err(mlua::Error::MemoryError("string.format".into())),
            }
        })?,
        change_case(true)?,
        change_case(false)?,
        lua.create_function(|_, (text, base): (mlua::LuaString, Option<f64>)| {
            let bytes = text.as_bytes();
            let text = trim_lua_space(&bytes);
            if text.contains(&b'.') {
                return Ok(parse_float(text));
            }
            let (base, digits) = match base {
                Some(base) => (super::gofmt::go_int64(base), text),
                None if text.len() >= 2 && text[..2].eq_ignore_ascii_case(b"0x") => (16, &text[2..]),
                None => (10, text),
            };
            Ok(parse_int(digits, base).map(|n| n as f64))
        })?,
    ))
}

#[cfg(test)]
mod tests {
    use crate::lua::{EvalOptions, Limits, Printed, Script, ScriptError, ScriptErrorKind, Values, evaluate};
    use serde_json::{Value, json};

    fn evaluated(code: &str) -> Result<Value, ScriptError> {
        let script = Script::new("tables.lua", code);
        evaluate(
            &script,
            std::borrow::Cow::Owned(json!({})),
            &Limits::default(),
            EvalOptions::CONTROLLER,
            &Printed::default(),
            Values::default(),
        )
        .map(|mut evaluated| evaluated.output["spec"].take())
    }

    fn run(code: &str) -> Result<Value, ScriptErrorKind> {
        evaluated(code).map_err(|e| e.kind)
    }

    /// `code` builds `r`, which the script returns as its spec.
    fn spec(code: &str) -> Value {
        run(&format!("local r = {{}} {code} return {{spec = r}}")).unwrap_or_else(|e| panic!("{code}: {e:?}"))
    }

    // The expected values below are what the controller's engine (the oracle) gives.

    #[test]
    fn json_encode_needs_a_value_and_nil_is_one() {
        let err = evaluated("local text = json.encode()\nreturn {}").unwrap_err();
        assert_eq!(
            (err.kind, err.to_string()),
            (ScriptErrorKind::Runtime, "script tables.lua:1: bad argument #1 to encode (value expected)".into())
        );
        assert_eq!(spec("r[1] = json.encode(nil)"), json!(["null"]));
        let err = evaluated("local x = 1\nlocal v = json.decode({})\nreturn v").unwrap_err();
        assert_eq!(err.to_string(), "script tables.lua:2: bad argument #1 to decode (string expected, got table)");
        assert_eq!(spec("r[1] = json.decode(5) r[2] = json.decode('[1]')"), json!([5, [1]]));
    }

    #[test]
    fn json_decode_past_the_depth_limit_raises_at_any_depth() {
        // Go decodes such text; this engine refuses it, raised (as to_lua's limit), and not as
        // the `nil, message` a script would take for a failure it can handle.
        for depth in [101, 127, 128, 1000] {
            let code =
                format!("local v, e = json.decode(string.rep('[', {depth}) .. string.rep(']', {depth})) return {{}}");
            let err = evaluated(&code).unwrap_err();
            assert!(
                err.to_string().ends_with(":1: cannot hand a value nested more than 100 deep to Lua"),
                "{depth}: {err}"
            );
        }
    }

    #[test]
    fn library_errors_a_script_catches_are_strings_as_in_gopher_lua() {
        // mlua would hand `pcall` a userdata for an error raised in Rust: `..` on it fails. The
        // position is the script's, as gopher-lua names the Lua function calling pcall.
        let got = spec(
            "local function caught(f, ...) local ok, e = pcall(f, ...) r[#r + 1] = type(e) .. ': ' .. e end
             caught(json.encode)
             caught(json.decode, {})
             caught(json.decode)
             caught(json.decode, string.rep('[', 101) .. string.rep(']', 101))
             caught(print, setmetatable({}, {__tostring = function() error('boom', 0) end}))",
        );
        assert_eq!(
            got,
            json!([
                "string: <string>:1: bad argument #1 to encode (value expected)",
                "string: <string>:1: bad argument #1 to decode (string expected, got table)",
                "string: <string>:1: bad argument #1 to decode (string expected, got nil)",
                "string: <string>:1: cannot hand a value nested more than 100 deep to Lua",
                "string: boom"
            ])
        );
        // print uses the tostring the state starts with, and prints a __tostring that returns no
        // string as what it returns, where Lua 5.1's print would fail: a number, a boolean or nil
        // as its text, as gopher-lua's does.
        let printed = Printed::default();
        let returning = |value: &str| format!("setmetatable({{}}, {{__tostring = function() return {value} end}})");
        let script = Script::new(
            "p.lua",
            format!(
                "tostring = nil print(1, {}, {}, {}, {}, {}) return {{}}",
                returning("{}"),
                returning("5"),
                returning("2.5"),
                returning("true"),
                returning("nil")
            ),
        );
        let limits = Limits::default();
        evaluate(
            &script,
            std::borrow::Cow::Owned(json!({})),
            &limits,
            EvalOptions::CONTROLLER,
            &printed,
            Values::default(),
        )
        .unwrap();
        let text = String::from_utf8(printed.0.borrow().clone()).unwrap();
        assert!(text.starts_with("[p.lua] 1\ttable: 0x"), "{text:?}");
        assert!(text.ends_with("\t5\t2.5\ttrue\tnil\n"), "{text:?}");
    }

    #[test]
    fn errors_are_placed_and_unpack_reads_as_gopher_lua_does() {
        // An error a library function raises names the script's line; a library function
        // tail-called keeps the script's frame; a level landing on a lost tail call names the
        // chunk's line; an empty position is a space.
        let got = spec(
            "local function f1() error('m', 3) end
             local function f2() return f1() end
             local function caught(f, ...) local ok, e = pcall(f, ...) return e end
             r[1] = select(2, pcall(function() table.sort({1, 'x'}) end))
             r[2] = caught(function()
               return string.upper({})
             end)
             r[3] = caught(f2)
             r[4] = select(2, pcall(error, 'x', 50))",
        );
        assert_eq!(
            got,
            json!([
                "<string>:4: attempt to compare string with number",
                "<string>:6: bad argument #1 to upper (string expected, got table)",
                "<string>:8: m",
                " x"
            ])
        );
        // unpack reads the array part only; an empty range whose count Go wraps fails there.
        let got = spec(
            "local t = {[0] = 'zero', 'one'}
             r[1] = tostring((unpack(t, 0, 0)))
             r[2] = pcall(unpack, {}, 2, 0/0)
             r[3] = pcall(unpack, {}, 1, 0/0)",
        );
        assert_eq!(got, json!(["nil", false, true]));
    }

    #[test]
    fn metamethods_are_gopher_luas() {
        // Only a function is called (a callable table is none, a __tostring string is ignored);
        // __unm gets the operand alone; a nil key reaches __newindex.
        let got = spec(
            "local c = setmetatable({}, {__call = function() return true end})
             local mt = {__eq = c}
             r[1] = setmetatable({}, mt) == setmetatable({}, mt)
             r[2] = pcall(function() return setmetatable({}, {__add = c}) + 1 end)
             r[3] = tostring(setmetatable({}, {__tostring = 'x'})):sub(1, 6)
             r[4] = -setmetatable({}, {__unm = function(...) return select('#', ...) end})
             local t = setmetatable({}, {__newindex = function(_, k) r[5] = tostring(k) end})
             t[nil] = 1",
        );
        assert_eq!(got, json!([false, false, "table:", 1, "nil"]));
        // setmetatable takes a missing metatable as nil, and sets that of any value's type but
        // nil's; a string's metamethod comes before the string is read as a number.
        let got = spec(
            "local t = setmetatable({}, {__index = {a = 1}})
             setmetatable(t)
             r[1] = tostring(t.a)
             setmetatable(1, {__index = function(n, k) return k end})
             r[2] = (5).key
             r[3] = pcall(setmetatable, nil, {})
             getmetatable('').__add = function() return 'string __add' end
             r[4] = '2' + 1",
        );
        assert_eq!(got, json!(["nil", "key", false, "string __add"]));
    }

    #[test]
    fn the_base_library_is_gopher_luas() {
        // gopher-lua's library functions are Go functions, whose environment cannot change;
        // a script's own can.
        let got = spec(
            "for i, f in ipairs({print, tonumber, string.format, string.upper, json.encode, _printregs, string.find}) do
               r[i] = pcall(setfenv, f, {})
             end
             local function mine() return 1 end
             r[#r + 1] = pcall(setfenv, mine, {}) r[#r + 1] = _GOPHER_LUA_VERSION",
        );
        assert_eq!(got, json!([false, false, false, false, false, false, false, true, "GopherLua 0.1"]));
        let printed = Printed::default();
        let script = Script::new("regs.lua", "_printregs() return {}");
        let limits = Limits::default();
        let options = EvalOptions::CONTROLLER;
        evaluate(&script, std::borrow::Cow::Owned(json!({})), &limits, options, &printed, Values::default()).unwrap();
        let text = String::from_utf8(printed.0.borrow().clone()).unwrap();
        assert_eq!(
            text,
            "[regs.lua] _printregs: the controller's engine prints its registers here; this one has none\n"
        );
    }

    #[test]
    fn format_upper_lower_and_tonumber_are_the_go_functions_gopher_lua_calls() {
        let got = spec(
            r#"r[1] = string.format("%s=%s %d|%5s|%s", "a", nil, "x", "é", true)
               r[2] = ("%.1f"):format(2.25)
               r[3] = string.upper("héllo ß")
               r[4] = string.lower(1.5)
               r[5] = string.format(12)
               local n = {tonumber(12, 16), tonumber(nil), tonumber({}), tonumber("0x1F", nil), tonumber("ff", 16.9),
                 tonumber("0x10", 10), tonumber("-0x10"), tonumber("0x-10"), tonumber(" \t1.5\n"), tonumber("1.e500"),
                 tonumber("inf"), tonumber("1e2"), tonumber("-ff", 16), tonumber("\r1"), tonumber("9223372036854775808")}
               for i = 1, 15 do r[5 + i] = tostring(n[i]) end"#,
        );
        assert_eq!(
            got,
            json!([
                "a=nil 0|    é|true",
                "2.2",
                "HÉLLO ß",
                "1.5",
                "12",
                "12",
                "nil",
                "nil",
                "31",
                "255",
                "nil",
                "nil",
                "-16",
                "1.5",
                "nil",
                "nil",
                "nil",
                "-255",
                "nil",
                "nil"
            ])
        );
    }

    #[test]
    fn their_argument_errors_are_gopher_luas_strings() {
        for (call, message) in [
            ("string.format()", "bad argument #1 to format (string expected, got nil)"),
            ("string.upper({})", "bad argument #1 to upper (string expected, got table)"),
            ("('x').lower(true)", "bad argument #1 to lower (string expected, got boolean)"),
            ("tonumber()", "bad argument #1 to tonumber (value expected)"),
            ("tonumber('10', '16')", "bad argument #2 to tonumber (number expected, got string)"),
        ] {
            let err = evaluated(&format!("local x = 1\nlocal v = {call}\nreturn {{}}")).unwrap_err();
            assert_eq!(err.to_string(), format!("script tables.lua:2: {message}"), "{call}");
            let caught = spec(&format!("local ok, e = pcall(function() return {call} end) r[1] = type(e)"));
            assert_eq!(caught, json!(["string"]), "{call}");
        }
        // What this engine does not reproduce fails the script, saying why.
        let err = evaluated("local x = 1\nlocal v = string.format('%d', {})\nreturn {}").unwrap_err();
        assert!(
            err.to_string().starts_with("script tables.lua:2: string.format: %d of a table: the controller prints"),
            "{err}"
        );
    }

    #[test]
    fn their_results_stay_within_the_memory_limit() {
        let within_4_mib = |code: &str| {
            let limits = Limits { memory: 4 << 20, ..Limits::default() };
            let script = Script::new("big.lua", format!("{code} return {{}}"));
            let outcome = evaluate(
                &script,
                std::borrow::Cow::Owned(json!({})),
                &limits,
                EvalOptions::CONTROLLER,
                &Printed::default(),
                Values::default(),
            );
            outcome.map(drop).map_err(|e| e.kind)
        };
        // Each within the limit, but not all of them.
        let ten = "local s = string.format(string.rep('%999999d', 10), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)";
        assert_eq!(within_4_mib(ten), Err(ScriptErrorKind::Memory));
        assert_eq!(within_4_mib("local s = string.format('%999999d', 1)"), Ok(()));
        // Each invalid byte becomes three.
        assert_eq!(within_4_mib("local s = string.upper(string.rep('\\255', 1500000))"), Err(ScriptErrorKind::Memory));
        // Go's widths stop at about a million: a larger one ends the format.
        assert_eq!(spec("r[1] = #string.format('%999999999d', 1)"), json!([33]));
        // json.encode's text is held to the limit, not what its values would take as a result
        // (32 bytes each): 2^17 numbers are 256 KB of text, and 2 MB in Lua.
        let numbers = "local t = {} for i = 1, 131072 do t[i] = 0 end local s = json.encode(t)";
        assert_eq!(within_4_mib(numbers), Ok(()));
        const { assert!(131_073 * crate::lua::convert::VALUE_BYTES > 4 << 20) };
    }

    #[test]
    fn length_is_the_last_value_of_gopher_luas_array_part() {
        let got = spec(
            "local t = {} t[3] = 'x' r[1] = #t r[2] = select('#', unpack(t)) r[3] = table.getn(t) r[4] = table.maxn(t)
             local holes = {1, nil, 3} r[5] = #holes
             local cut = {1, 2, 3} cut[3] = nil r[6] = #cut
             local gone = {} gone[5] = nil r[7] = #gone
             local far = {} far[2^26] = 1 far[1.5] = 1 far[-1] = 1 r[8] = #far r[9] = table.maxn(far)
             local mixed = {n = 1, 5, 6} r[10] = #mixed",
        );
        assert_eq!(got, json!([3, 3, 3, 3, 3, 2, 0, 0, 0, 2]));
    }

    #[test]
    fn a_len_metamethod_answers_the_length_of_a_table_as_in_gopher_lua() {
        let got = spec(
            "r[1] = #setmetatable({1, 2, 3}, {__len = function() return 42 end})
             r[2] = #setmetatable({1, 2}, {__len = function() return 'seven' end})
             r[3] = #setmetatable({}, {__len = function(...) return select('#', ...) end})
             r[4] = #setmetatable({1, 2}, {__len = 5})
             r[5] = table.getn(setmetatable({1, 2}, {__len = function() return 42 end}))",
        );
        assert_eq!(got, json!([42, "seven", 1, 2, 2]));
        assert_eq!(run("return {spec = #nil}"), Err(ScriptErrorKind::Runtime));
    }

    #[test]
    fn a_length_below_many_nils_takes_no_longer_than_the_table_is_big() {
        // Stepping down over 5 million nils for every `#` would take minutes (more would pass
        // what the controller can pad within its second, and run out of memory here).
        let got = spec(
            "local t = {} for i = 1, 100000 do t[i] = i end
             local n = 0 for i = 1, 1000 do t[5000000] = nil n = n + #t end r[1] = n
             for i = 2, 100000 do t[i] = nil end t.x = 1 r[2] = #t",
        );
        assert_eq!(got, json!([100000000, 1]));
    }

    #[test]
    fn insert_and_remove_follow_gopher_lua() {
        let got = spec(
            "local t = {} t[3] = 'x' table.insert(t, 'y') r[1] = #t r[2] = t[4]
             local a = {'a', 'b'} table.insert(a, 0, 'z') r[3] = table.concat(a, ',') r[4] = a[0]
             table.insert(a, 5, 'e') r[5] = #a table.insert(a, nil) r[6] = #a
             local b = {'a', 'b', 'c'} r[7] = table.remove(b, 0) r[8] = tostring(table.remove(b, 5)) r[9] = table.concat(b, ',')
             local c = {1, 2, 3} c[3] = nil r[10] = tostring(table.remove(c)) r[11] = #c
             r[12] = select('#', table.remove({}))",
        );
        assert_eq!(got, json!([4, "y", "a,b", "z", 5, 5, "c", "nil", "a,b", "nil", 2, 1]));
    }

    #[test]
    fn a_key_a_metamethod_takes_does_not_grow_the_array_part() {
        let got = spec(
            "local t = setmetatable({1, 2}, {__newindex = function(t, k, v) rawset(t, 'k' .. k, v) end})
             t[5] = 'x' r[1] = table.remove(t) r[2] = #t r[3] = t.k5",
        );
        assert_eq!(got, json!([2, 1, "x"]));
    }

    #[test]
    fn concat_stays_within_the_length() {
        let got = spec(
            "local t = {'a', 'b', 'c'}
             r[1] = table.concat(t, ',', 0) r[2] = table.concat(t, ',', 2, 10) r[3] = table.concat(t, ',', 5)
             r[4] = table.concat(t, ',', -1, 2) r[5] = table.concat({1, 2.5}, ' ')",
        );
        assert_eq!(got, json!(["", "b,c", "", "a,b", "1 2.5"]));
    }

    #[test]
    fn sort_is_gos_sort() {
        // Go sorts up to 12 elements by insertion, which keeps equal ones in order, and longer
        // arrays by pattern-defeating quicksort; Lua's quicksort orders ties otherwise.
        let got = spec(
            "local function names(t) local n = {} for i, v in ipairs(t) do n[i] = v.name end return table.concat(n, ' ') end
             local small = {{name = 'a', w = 1}, {name = 'b', w = 0}, {name = 'c', w = 1}, {name = 'd', w = 0}, {name = 'e', w = 1}}
             table.sort(small, function(x, y) return x.w < y.w end) r[1] = names(small)
             local big = {} for i = 1, 30 do big[i] = {name = tostring(i), w = i % 4} end
             table.sort(big, function(x, y) return x.w < y.w end) r[2] = names(big)
             local n = {5, 2, 8, 1, 9, 3} table.sort(n) r[3] = table.concat(n, ',')",
        );
        let big = "24 8 28 4 20 12 16 9 29 1 21 25 13 5 17 22 26 18 30 14 2 10 6 7 23 15 27 3 11 19";
        assert_eq!(got, json!(["b d a c e", big, "1,2,3,5,8,9"]));
        // gopher-lua sorts its whole array part, nils included: they cannot be compared.
        assert_eq!(run("local t = {3, 2, 1} t[3] = nil table.sort(t) return {}"), Err(ScriptErrorKind::Runtime));
        assert_eq!(run("table.sort({2, 1}, nil) return {}"), Err(ScriptErrorKind::Runtime));
    }

    #[test]
    fn the_table_library_has_the_controllers_functions_only() {
        let got = spec(
            "for _, f in ipairs({'foreach', 'foreachi', 'setn', 'getn', 'maxn'}) do r[#r + 1] = type(table[f]) end",
        );
        assert_eq!(got, json!(["nil", "nil", "nil", "function", "function"]));
    }

    #[test]
    fn counts_beyond_an_int_do_not_wrap() {
        // An int count would wrap 2^31 to a negative one and return "". The controller's engine
        // runs out of time building it; here it runs out of memory (or, on a slow machine, time).
        let huge = run("return {spec = string.rep('x', 2^31)}");
        assert!(matches!(huge, Err(ScriptErrorKind::Memory | ScriptErrorKind::Timeout)), "{huge:?}");
        let got = spec(
            "r[1] = select(2, string.gsub('aaa', 'a', 'b', 2^32)) r[2] = string.rep('', 2^40) r[3] = string.rep('ab', 2)",
        );
        assert_eq!(got, json!([3, "", "abab"]));
    }

    #[test]
    fn syntax_is_gopher_luas() {
        let got = spec(
            "r[1] = 1;; ; local t = {1,, 2;; 3,} r[2] = #t
             local f = function(n) if n == 0 then return 1 end return n * f(n - 1) end r[3] = f(4)
             local id = function(x) return x end local y = id
             (5) r[4] = y r[5] = [[a [[b]]",
        );
        assert_eq!(got, json!([1, 3, 24, 5, "a [[b"]));
        for refused in ["local a = 1\u{c} return {}", "--[=x\nreturn {}", "local t = {,1} return {}"] {
            assert_eq!(run(refused), Err(ScriptErrorKind::Syntax), "{refused:?}");
        }
        // 200 registers, locals and temporaries together: 200 locals compile, 201 do not.
        let locals = |n: usize| (0..n).map(|i| format!("local v{i} = {i} ")).collect::<String>();
        assert!(run(&format!("local function f() {}return v0 end return {{}}", locals(200))).is_ok());
        assert_eq!(
            run(&format!("local function f() {}return v0 end return {{}}", locals(201))),
            Err(ScriptErrorKind::Syntax)
        );
    }

    #[test]
    fn and_or_into_a_local_is_compiled_as_gopher_lua_compiles_it() {
        // A false `a` is stored in x before `c` reads x; constants and comparisons store
        // nothing early, nor does a new local; the last of several targets too.
        let got = spec(
            "local f, t = false, true
             do local x = -1 x = f and 1 or x r[1] = x end
             do local x = -1 x = not t and 1 or x r[2] = x end
             do local x = -1 x = (t or 2) and x r[3] = x end
             do local x = -1 x = nil and 1 or x r[4] = x end
             do local x = -1 x = (x > 0) and 1 or x r[5] = x end
             do local x = -1 local y = f and 1 or x r[6] = y end
             do local x, y = -1, -2 x, y = 1, f and 1 or y r[7] = y end
             do local x = -1 x = x or 5 r[8] = x end
             do local x = -1 x = not (x < 0) and 1 or x r[9] = x end
             do local x = -1 x = not (t or f) and 1 or x r[10] = x end",
        );
        // A `not` is a value, whatever it negates (a comparison, an and/or), and so stored.
        assert_eq!(got, json!([false, false, true, -1, -1, -1, false, -1, false, false]));
    }

    #[test]
    fn a_caught_error_closes_every_open_upvalue_as_in_gopher_lua() {
        // The closure keeps its copy of n from the error on; xpcall and pcall of a value it
        // cannot call close nothing.
        let got = spec(
            "local function probe(raise) local n = 1 local get = function() return n end raise() n = 5 return get() end
             r[1] = probe(function() pcall(error, 'x') end)
             r[2] = probe(function() pcall(function() return nil .. 1 end) end)
             r[3] = probe(function() xpcall(function() error('x') end, function(e) return e end) end)
             r[4] = probe(function() pcall(nil) end)
             r[5] = probe(function() end)
             r[6] = tostring(1 / -0)",
        );
        assert_eq!(got, json!([1, 1, 5, 5, 5, "-Inf"]));
    }

    #[test]
    fn arithmetic_on_numbers_never_gives_negative_zero() {
        // gopher-lua stores such a result through its allocator, which hands out 0 for -0.
        let got = spec(
            "local zero = #'' r[1] = -zero r[2] = zero * -1 r[3] = zero / -1 r[4] = -zero % 5
             r[5] = -0 r[6] = math.ceil(-0.5) r[7] = -'0'",
        );
        assert_eq!(serde_json::to_string(&got).unwrap(), "[0,0,0,0,-0.0,-0.0,-0.0]");
    }

    #[test]
    fn ranges_beyond_an_int_are_gopher_luas() {
        // unpack's count once wrapped (a crash: `pcall` could not catch it); gopher-lua's range
        // is 64 bits, and a position Go makes -2^63 of (NaN) is past the end for table.remove.
        assert_eq!(spec("r = {pcall(unpack, {}, -2^31)}"), json!([false, "<string>:1: registry overflow"]));
        assert_eq!(run("unpack({1, 2, 3}, 0/0) return {}"), Err(ScriptErrorKind::Runtime));
        let got = spec(
            "r[1] = select('#', unpack({}, 2^31 - 1, 2^31)) r[2] = select('#', unpack({}, 2^53, 2^53 + 2))
             local t = {1, 2, 3} r[3] = tostring(table.remove(t, 0/0)) r[4] = #t
             r[5] = table.remove(t, -2^62) r[6] = #t",
        );
        assert_eq!(got, json!([2, 3, "nil", 3, 3, 2]));
    }

    #[test]
    fn concat_returns_a_lone_value_as_it_is() {
        let got =
            spec("r[1] = table.concat({7}) r[2] = table.concat({1, 2, 3}, ',', 3) r[3] = table.concat({1, 2}, '')");
        assert_eq!(got, json!([7, 3, "12"]));
        assert_eq!(run("table.concat({{}}) return {}"), Err(ScriptErrorKind::Runtime));
    }

    #[test]
    fn strings_and_numerals_read_as_gopher_lua_reads_them() {
        // Go's ParseInt with base 0, then ParseFloat, of the text without " \t\n" around it.
        let got = spec(
            "r[1] = '017' + 0 r[2] = '0b101' * 1 r[3] = -'1_000' r[4] = ' 0x10\\n' + 0
             r[5] = 0010 r[6] = 010 r[7] = tostring(1e309) r[8] = tostring(0x8000000000000000) r[9] = 0xff
             r[10] = string.byte('\\300')",
        );
        assert_eq!(got, json!([15, 5, -1000, 16, 8, 10, "NaN", "NaN", 255, 44]));
        for failing in ["'\\f5' + 0", "'5\\0' + 0", "'1e400' + 0", "'0x1.8' + 0"] {
            assert_eq!(run(&format!("local x = {failing} return {{}}")), Err(ScriptErrorKind::Runtime), "{failing}");
        }
        assert_eq!(run("for i = 1, '3' do end return {}"), Err(ScriptErrorKind::Runtime));
        assert_eq!(run("return {spec = 0x1p4}"), Err(ScriptErrorKind::Syntax));
    }
}
