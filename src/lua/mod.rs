//! The sandboxed Lua engine: a fresh Lua 5.1 state per evaluation with the controller's
//! libraries (base without file or bytecode loading, table, string, math, json), `obj` as a
//! global, a time and memory limit, and the controller's value conversion.

mod convert;
mod deadline;
mod stdlib;

pub use convert::{EmptyTable, KeyOrder, number};

use crate::data::Data;
use mlua::{Lua, LuaOptions, StdLib, Value as LuaValue, chunk::ChunkMode};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use std::time::Duration;

/// Resource limits for one evaluation.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub timeout: Duration,
    pub memory: usize,
}

impl Default for Limits {
    /// The controller's 1 s timeout, and 64 MiB of memory.
    fn default() -> Self {
        Limits { timeout: Duration::from_secs(1), memory: 64 << 20 }
    }
}

/// A script and the name errors and `print` output carry (a path, or a ConfigMap key).
#[derive(Clone, Debug)]
pub struct Script {
    pub name: String,
    code: String,
    /// The chunk compiled once per distinct text in this process (bytecode with line
    /// information): every evaluation needs a fresh state, but not a fresh parse.
    compiled: Arc<Compiled>,
}

/// Bytecode, or the syntax error, of a script's text.
type Compiled = OnceLock<Result<Vec<u8>, String>>;

impl Script {
    pub fn new(name: impl Into<String>, code: impl Into<String>) -> Script {
        static COMPILED: LazyLock<Mutex<HashMap<String, Arc<Compiled>>>> = LazyLock::new(Default::default);
        let code = code.into();
        let mut cache = COMPILED.lock().expect("not poisoned");
        let compiled = match cache.get(&code) {
            Some(known) => known.clone(),
            None => cache.entry(code.clone()).or_default().clone(),
        };
        drop(cache);
        Script { name: name.into(), code, compiled }
    }

    /// The text (private: the compiled bytecode is cached by it).
    pub fn code(&self) -> &str {
        &self.code
    }

    fn bytecode(&self) -> Result<&[u8], String> {
        let compiled = self.compiled.get_or_init(|| {
            let lua = Lua::new_with(StdLib::NONE, LuaOptions::default()).map_err(|e| e.to_string())?;
            // Text only: a user's file holding bytecode is refused (it would bypass the parser).
            let chunk = lua.load(self.code.as_str()).set_name(format!("={CHUNK_NAME}")).set_mode(ChunkMode::Text);
            chunk.into_function().map(|f| f.dump(false)).map_err(|e| lua_message(&e))
        });
        compiled.as_deref().map_err(Clone::clone)
    }
}

/// A sandbox made ahead of need (see `prepare`), with the chunk of the script it was made for
/// loaded (not run) when that script compiles: loading is the costly part of the controller's
/// `DoString`, and has no effect the script could see.
struct Prepared {
    lua: Lua,
    chunk: Option<(Arc<Compiled>, mlua::Function)>,
}

impl Prepared {
    fn new(script: Option<&Script>) -> mlua::Result<Prepared> {
        let lua = new_sandbox()?;
        let chunk =
            script.and_then(|script| Some((script.compiled.clone(), load_chunk(&lua, script.bytecode().ok()?).ok()?)));
        Ok(Prepared { lua, chunk })
    }

    fn is_for(&self, script: Option<&Script>) -> bool {
        match (&self.chunk, script) {
            (Some((compiled, _)), Some(script)) => Arc::ptr_eq(compiled, &script.compiled),
            (None, None) => true,
            _ => false,
        }
    }
}

thread_local! {
    /// Sandboxes made ahead of need on this thread (see `prepare`).
    static SANDBOXES: RefCell<Vec<Prepared>> = const { RefCell::new(Vec::new()) };
    /// Used states waiting to be closed by the next `prepare` on this thread.
    static SPENT: RefCell<Vec<Lua>> = const { RefCell::new(Vec::new()) };
}

/// How many used states a thread keeps for later closing, and the most memory one may hold to
/// be kept: beyond that they are closed at once.
const SPENT_STATES: usize = 64;
const SPENT_STATE_MEMORY: usize = 256 << 10;

/// A fresh state with the controller's libraries: what every evaluation starts from.
fn new_sandbox() -> mlua::Result<Lua> {
    let lua = Lua::new_with(StdLib::TABLE | StdLib::STRING | StdLib::MATH, LuaOptions::default())?;
    stdlib::install_common(&lua)?;
    Ok(lua)
}

/// The function a chunk of this engine's bytecode compiles to in `lua`.
fn load_chunk(lua: &Lua, bytecode: &[u8]) -> mlua::Result<mlua::Function> {
    // The bytecode is this engine's own compilation of the script's text.
    lua.load(bytecode).set_mode(ChunkMode::Binary).into_function()
}

/// A state for one evaluation of `script`: a prepared sandbox when this thread has one (made
/// for `script`, else one made for no script). A prepared one is, once used, set aside to be
/// closed by the next `prepare` (closing costs about as much as creating); one made here is
/// closed here, as on a thread that never prepares nothing would.
struct Sandbox {
    lua: Option<Lua>,
    /// `script`'s chunk, loaded ahead.
    chunk: Option<mlua::Function>,
    prepared: bool,
}

impl Sandbox {
    fn take(script: &Script) -> mlua::Result<Sandbox> {
        let prepared = SANDBOXES.with(|prepared| {
            let mut prepared = prepared.borrow_mut();
            let found = prepared.iter().rposition(|p| p.is_for(Some(script)));
            found.or_else(|| prepared.iter().rposition(|p| p.is_for(None))).map(|i| prepared.swap_remove(i))
        });
        Ok(match prepared {
            Some(Prepared { lua, chunk }) => Sandbox { lua: Some(lua), chunk: chunk.map(|(_, f)| f), prepared: true },
            None => Sandbox { lua: Some(new_sandbox()?), chunk: None, prepared: false },
        })
    }
}

impl std::ops::Deref for Sandbox {
    type Target = Lua;

    fn deref(&self) -> &Lua {
        self.lua.as_ref().expect("present until dropped")
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let Some(lua) = self.lua.take() else { return };
        if !self.prepared || lua.used_memory() > SPENT_STATE_MEMORY {
            return;
        }
        // During thread teardown the list is gone: then the state closes here.
        let _ = SPENT.try_with(|spent| {
            let mut spent = spent.borrow_mut();
            if spent.len() < SPENT_STATES {
                spent.push(lua);
            }
        });
    }
}

/// Gets this thread ready for evaluations, e.g. while the API server answers: closes the
/// prepared states earlier evaluations used, and tops up this thread's fresh sandboxes to the
/// given count for each script (compiled once per process, its chunk loaded into each; a script
/// that does not compile gets plain sandboxes and its error when it runs) and to `others` for
/// scripts not known yet. Each sandbox serves one evaluation, so every evaluation still starts
/// from a fresh state.
pub fn prepare(scripts: &[(Script, usize)], others: usize) {
    SPENT.with(|spent| spent.take());
    // A script that does not compile gets plain sandboxes: they count with the others.
    let (compiled, broken): (Vec<_>, Vec<_>) = scripts.iter().partition(|(script, _)| script.bytecode().is_ok());
    let others = others + broken.iter().map(|(_, count)| count).sum::<usize>();
    let wanted = compiled.into_iter().map(|(script, count)| (Some(script), *count)).chain([(None, others)]);
    for (script, count) in wanted {
        let have = SANDBOXES.with(|prepared| prepared.borrow().iter().filter(|p| p.is_for(script)).count());
        let made: Vec<Prepared> = (have..count).map_while(|_| Prepared::new(script).ok()).collect();
        SANDBOXES.with(|prepared| prepared.borrow_mut().extend(made));
    }
}

/// How `pairs()` walks tables: the controller's order over input maps is random, so the
/// engine can walk them backwards to see whether a script's output depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairsOrder {
    Natural,
    ReversedForInput,
    ReversedForAll,
}

#[derive(Clone, Copy, Debug)]
pub struct EvalOptions {
    pub empty: EmptyTable,
    pub keys: KeyOrder,
    pub pairs: PairsOrder,
    /// Whether the script's `print` reaches stderr (variant runs stay quiet).
    pub print: bool,
}

impl EvalOptions {
    /// The controller's semantics.
    pub const CONTROLLER: EvalOptions =
        EvalOptions { empty: EmptyTable::Null, keys: KeyOrder::Sorted, pairs: PairsOrder::Natural, print: true };
    /// The controller's test harness: empty tables encode as `[]`.
    pub const HARNESS: EvalOptions = EvalOptions { empty: EmptyTable::EmptyList, ..EvalOptions::CONTROLLER };
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptErrorKind {
    Syntax,
    Runtime,
    Timeout,
    Memory,
    Output,
}

/// A script failed; the message names the script and, where Lua knows it, the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptError {
    pub script: String,
    pub kind: ScriptErrorKind,
    pub message: String,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Lua messages start with "script:LINE:" for errors it can place.
        match self.message.strip_prefix(CHUNK_NAME).filter(|rest| rest.starts_with(':')) {
            Some(rest) => write!(f, "script {}{rest}", self.script),
            None => write!(f, "script {}: {}", self.script, self.message),
        }
    }
}

impl std::error::Error for ScriptError {}

/// The chunk name Lua puts in its messages; Display swaps in the real name, which may be
/// longer than Lua's 60-character limit on chunk names.
const CHUNK_NAME: &str = "script";

/// Runs `script` with `obj` and returns what the controller would read back from it.
pub fn evaluate(script: &Script, obj: &Value, limits: &Limits, options: EvalOptions) -> Result<Data, ScriptError> {
    let encoded = evaluate_value(script, obj, limits, options)?;
    Data::from_decoded(encoded).map_err(|message| ScriptError {
        script: script.name.clone(),
        kind: ScriptErrorKind::Output,
        message,
    })
}

/// Runs `script` with `obj` and returns its last return value as the controller encodes it,
/// before it is decoded into a gateway object's `Data` or an Ingress's annotations.
pub fn evaluate_value(
    script: &Script,
    obj: &Value,
    limits: &Limits,
    options: EvalOptions,
) -> Result<Value, ScriptError> {
    let fail = |kind, message: String| ScriptError { script: script.name.clone(), kind, message };
    let mut lua =
        Sandbox::take(script).map_err(|e| fail(ScriptErrorKind::Runtime, format!("setting up the sandbox: {e}")))?;
    let loaded = lua.chunk.take();
    let setup = || -> mlua::Result<deadline::Deadline> {
        stdlib::install_for(&lua, &script.name, options)?;
        // Building the input makes no garbage: collecting meanwhile would only re-mark it.
        lua.gc_stop();
        lua.globals().set("obj", convert::to_lua(&lua, obj, options.keys)?)?;
        lua.gc_restart();
        stdlib::mark_inputs(&lua)?;
        lua.set_memory_limit(limits.memory)?;
        deadline::Deadline::start(&lua, limits.timeout)
    };
    let deadline = setup().map_err(|e| fail(ScriptErrorKind::Runtime, format!("setting up the sandbox: {e}")))?;

    let function = match loaded {
        Some(function) => function,
        None => {
            let bytecode = script.bytecode().map_err(|message| fail(ScriptErrorKind::Syntax, message))?;
            load_chunk(&lua, bytecode).map_err(|e| fail(ScriptErrorKind::Syntax, lua_message(&e)))?
        }
    };
    let outcome = function.call::<mlua::MultiValue>(());
    // Past the deadline nothing the script did counts, whatever it caught on the way out.
    if let Some(line) = deadline.passed_at() {
        let message =
            format!("{CHUNK_NAME}:{line}: timed out after {:?} (the controller's limit is 1s)", limits.timeout);
        return Err(fail(ScriptErrorKind::Timeout, message));
    }
    let returned = match outcome {
        Ok(values) => values,
        Err(e) => {
            if is_memory_error(&e) {
                let message = format!("ran out of memory (limit {} MiB)", limits.memory >> 20);
                return Err(fail(ScriptErrorKind::Memory, message));
            }
            return Err(fail(ScriptErrorKind::Runtime, lua_message(&e)));
        }
    };
    // Only the last value returned counts, as in the controller (`l.Get(-1)`).
    let last = returned.into_iter().last().unwrap_or(LuaValue::Nil);
    if !last.is_table() {
        return Err(fail(
            ScriptErrorKind::Output,
            format!("expect table output from Lua script, not {}", lua_type(&last)),
        ));
    }
    convert::from_lua(&lua, last, options.empty).map_err(|e| fail(ScriptErrorKind::Output, e))
}

/// How a script's output depends on `pairs()` order, if it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderDependence {
    /// The output changes with the order of input maps, which is random in the controller: the
    /// controller would rewrite the object on every pass and never settle.
    InputMaps,
    /// The output changes with the order of tables the script builds; gopher-lua walks those
    /// in insertion order, this engine in hash order, so the plan may differ from the controller.
    ScriptTables,
}

/// Re-evaluates under other table orders and reports whether the output changes.
pub fn order_dependence(
    script: &Script,
    obj: &Value,
    limits: &Limits,
    options: EvalOptions,
    baseline: &Data,
) -> Option<OrderDependence> {
    let quiet = EvalOptions { print: false, ..options };
    let differs = |variant: EvalOptions| evaluate(script, obj, limits, variant).map_or(true, |d| &d != baseline);
    // One run with every order reversed settles the common case; a difference is then pinned on
    // the input maps or on the script's own tables.
    if !differs(EvalOptions { keys: KeyOrder::Reversed, pairs: PairsOrder::ReversedForAll, ..quiet }) {
        return None;
    }
    if differs(EvalOptions { keys: KeyOrder::Reversed, pairs: PairsOrder::ReversedForInput, ..quiet }) {
        return Some(OrderDependence::InputMaps);
    }
    Some(OrderDependence::ScriptTables)
}

/// The type as Lua 5.1's `type()` names it (mlua calls integral numbers "integer").
fn lua_type(value: &LuaValue) -> &'static str {
    match value {
        LuaValue::Integer(_) => "number",
        other => other.type_name(),
    }
}

/// Whether the error is Lua running out of memory, also inside a callback (json.decode).
fn is_memory_error(error: &mlua::Error) -> bool {
    matches!(root_cause(error), mlua::Error::MemoryError(_))
}

/// The Lua message of an error, without mlua's wrapping or the stack traceback it appends.
fn lua_message(error: &mlua::Error) -> String {
    match root_cause(error) {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::RuntimeError(message) => message.split("\nstack traceback:").next().unwrap_or(message).to_string(),
        other => other.to_string(),
    }
}

/// The error under mlua's callback and context wrapping.
fn root_cause(error: &mlua::Error) -> &mlua::Error {
    match error {
        mlua::Error::CallbackError { cause, .. } | mlua::Error::WithContext { cause, .. } => root_cause(cause),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(code: &str, obj: Value) -> Result<Data, ScriptError> {
        let script = Script::new("test.lua", code);
        evaluate(&script, &obj, &Limits::default(), EvalOptions::CONTROLLER)
    }

    fn spec(code: &str) -> Value {
        run(code, json!({})).unwrap().spec.unwrap()
    }

    #[test]
    fn has_lua_5_1_semantics_and_gopher_number_formatting() {
        let got = spec(
            "return {spec = {tostring(100/2), 0.1 + 0.2 .. '', tostring(2^53), unpack({'u'}), table.getn({1, 2}), math.pow(2, 3), math.huge}}",
        );
        assert_eq!(got, json!(["50", "0.30000000000000004", "9007199254740992", "u", 2, 8, 1.7976931348623157e308]));
    }

    #[test]
    fn sandbox_has_no_file_access_or_code_loading() {
        let got = spec(
            "return {spec = {type(dofile), type(loadfile), type(load), type(loadstring), type(require), type(module), type(io), type(os), type(debug), type(package), type(coroutine), type(gcinfo), type(newproxy)}}",
        );
        assert_eq!(
            got,
            json!(["nil", "nil", "nil", "nil", "nil", "nil", "nil", "nil", "nil", "nil", "nil", "nil", "nil"])
        );
    }

    #[test]
    fn prepared_sandboxes_are_fresh_and_serve_one_evaluation_each() {
        // A script that leaves a global behind and reports what it found: every evaluation, on
        // a prepared sandbox or on a new one, must find nothing left by an earlier one.
        let script = Script::new(
            "leaky.lua",
            "local seen = leftover; leftover = 1; return {spec = {seen == nil, type(print), type(json), type(coroutine)}}",
        );
        let fresh = json!([true, "function", "table", "nil"]);
        prepare(&[(script.clone(), 3)], 0);
        assert_eq!(SANDBOXES.with(|s| s.borrow().iter().filter(|p| p.is_for(Some(&script))).count()), 3);
        for left in (0..3).rev() {
            let got = evaluate(&script, &json!({}), &Limits::default(), EvalOptions::CONTROLLER).unwrap();
            assert_eq!(got.spec.unwrap(), fresh);
            assert_eq!(SANDBOXES.with(|s| s.borrow().len()), left, "each evaluation takes one sandbox");
        }
        // With none left, an evaluation makes its own.
        let got = evaluate(&script, &json!({}), &Limits::default(), EvalOptions::CONTROLLER).unwrap();
        assert_eq!(got.spec.unwrap(), fresh);
        assert_eq!(SPENT.with(|s| s.borrow().len()), 3, "prepared states wait to be closed, the one made here did not");
        // Topping up closes the used states and counts what is still there.
        prepare(&[], 2);
        prepare(&[], 1);
        assert_eq!((SANDBOXES.with(|s| s.borrow().len()), SPENT.with(|s| s.borrow().len())), (2, 0));
        prepare(&[(script.clone(), 1)], 0);
        assert_eq!(SANDBOXES.with(|s| s.borrow().len()), 3);
        SANDBOXES.with(|s| s.borrow_mut().clear());
    }

    #[test]
    fn a_sandbox_prepared_for_one_script_serves_only_that_script() {
        let (a, b) = (Script::new("a.lua", "return {spec = {'a'}}"), Script::new("b.lua", "return {spec = {'b'}}"));
        prepare(&[(a.clone(), 1)], 1);
        let spec =
            |script: &Script| evaluate(script, &json!({}), &Limits::default(), EvalOptions::CONTROLLER).unwrap().spec;
        // b takes the plain sandbox (and loads itself), leaving a's; a then takes its own.
        assert_eq!(spec(&b), Some(json!(["b"])));
        assert!(SANDBOXES.with(|s| s.borrow().iter().all(|p| p.is_for(Some(&a)))));
        assert_eq!(spec(&a), Some(json!(["a"])));
        assert_eq!(SANDBOXES.with(|s| s.borrow().len()), 0);
        // With none prepared for it, b makes its own rather than run in a's.
        prepare(&[(a.clone(), 1)], 0);
        assert_eq!(spec(&b), Some(json!(["b"])));
        assert_eq!(SANDBOXES.with(|s| s.borrow().len()), 1);
        SANDBOXES.with(|s| s.borrow_mut().clear());
    }

    #[test]
    fn a_loaded_chunk_reports_errors_as_a_loaded_script_does() {
        let failing = Script::new("failing.lua", "local x = 1\nerror('boom')");
        let unprepared = evaluate(&failing, &json!({}), &Limits::default(), EvalOptions::CONTROLLER).unwrap_err();
        prepare(&[(failing.clone(), 1)], 0);
        assert!(SANDBOXES.with(|s| s.borrow()[0].is_for(Some(&failing))));
        let prepared = evaluate(&failing, &json!({}), &Limits::default(), EvalOptions::CONTROLLER).unwrap_err();
        assert_eq!(prepared, unprepared);
        assert_eq!(prepared.to_string(), "script failing.lua:2: boom");
        // A script that does not compile gets a plain sandbox, and its syntax error when it runs.
        let broken = Script::new("broken.lua", "return {");
        prepare(&[(broken.clone(), 1)], 0);
        prepare(&[(broken.clone(), 1)], 0);
        assert_eq!(SANDBOXES.with(|s| s.borrow().len()), 1, "its plain sandboxes count with the others");
        assert!(SANDBOXES.with(|s| s.borrow()[0].is_for(None)));
        let error = evaluate(&broken, &json!({}), &Limits::default(), EvalOptions::CONTROLLER).unwrap_err();
        assert_eq!(error.kind, ScriptErrorKind::Syntax);
    }

    #[test]
    fn used_states_waiting_to_close_are_bounded() {
        let small = Script::new("small.lua", "return {spec = {}}");
        let big = Script::new("big.lua", "keep = string.rep('x', 1024 * 1024) return {spec = {}}");
        evaluate(&small, &json!({}), &Limits::default(), EvalOptions::CONTROLLER).unwrap();
        assert_eq!(SPENT.with(|s| s.borrow().len()), 0, "without prepare, nothing is kept");
        prepare(&[], SPENT_STATES + 10);
        for _ in 0..SPENT_STATES + 10 {
            evaluate(&small, &json!({}), &Limits::default(), EvalOptions::CONTROLLER).unwrap();
        }
        assert_eq!(SPENT.with(|s| s.borrow().len()), SPENT_STATES);
        prepare(&[], 1);
        evaluate(&big, &json!({}), &Limits::default(), EvalOptions::CONTROLLER).unwrap();
        assert_eq!(SPENT.with(|s| s.borrow().len()), 0, "a state holding a lot of memory is closed at once");
    }

    #[test]
    fn a_prepared_sandbox_takes_the_options_of_its_evaluation() {
        let script = Script::new(
            "order.lua",
            "local keys = {} for k in pairs(obj.m) do keys[#keys + 1] = k end return {spec = keys}",
        );
        let obj = json!({"m": {"a": 1, "b": 2, "c": 3}});
        prepare(&[], 2);
        let natural = evaluate(&script, &obj, &Limits::default(), EvalOptions::CONTROLLER).unwrap();
        let reversed = EvalOptions { pairs: PairsOrder::ReversedForInput, print: false, ..EvalOptions::CONTROLLER };
        let backwards = evaluate(&script, &obj, &Limits::default(), reversed).unwrap();
        let mut walked = backwards.spec.unwrap().as_array().unwrap().clone();
        walked.reverse();
        assert_eq!(natural.spec.unwrap(), Value::Array(walked));
    }

    #[test]
    fn json_module_returns_nil_and_message_on_failure() {
        let got = spec(
            r#"local a, e = json.decode("{bad") local b, f = json.encode({[1] = 1, [3] = 3})
               return {spec = {a == nil, e ~= nil, b == nil, f, json.encode({1, {}, "<"}), json.decode('[1,null,2]')[2]}}"#,
        );
        assert_eq!(got, json!([true, true, true, "cannot encode sparse array", "[1,null,\"\\u003c\"]", 2]));
    }

    #[test]
    fn obj_is_a_global_and_only_the_last_return_value_counts() {
        let data = run(
            "obj.data.spec.n = obj.canaryWeight return 1, obj.data",
            json!({"data": {"spec": {}, "labels": {"a": "b"}}, "canaryWeight": 20}),
        )
        .unwrap();
        assert_eq!(data.spec, Some(json!({"n": 20})));
        assert_eq!(data.labels.get("a").map(String::as_str), Some("b"));
        let err = run("return obj.data, nil", json!({"data": {}})).unwrap_err();
        assert_eq!(err.to_string(), "script test.lua: expect table output from Lua script, not nil");
    }

    #[test]
    fn errors_name_the_script_and_line() {
        let syntax = run("local x = \nreturn {", json!({})).unwrap_err();
        assert_eq!(syntax.kind, ScriptErrorKind::Syntax);
        assert!(syntax.to_string().starts_with("script test.lua:2:"), "{syntax}");
        let runtime = run("local x = 1\nlocal y = obj.missing.field\nreturn {}", json!({})).unwrap_err();
        assert_eq!(runtime.kind, ScriptErrorKind::Runtime);
        assert!(runtime.to_string().starts_with("script test.lua:2: attempt to index field 'missing'"), "{runtime}");
        let mixed = run("return {spec = {1, a = 2}}", json!({})).unwrap_err();
        assert_eq!(mixed.to_string(), "script test.lua: cannot encode mixed or invalid key types");
    }

    #[test]
    fn stops_infinite_loops_and_memory_bombs() {
        let script = Script::new("loop.lua", "local i = 0\nwhile true do i = i + 1 end");
        let limits = Limits { timeout: Duration::from_millis(100), ..Limits::default() };
        let err = evaluate(&script, &json!({}), &limits, EvalOptions::CONTROLLER).unwrap_err();
        assert_eq!(err.kind, ScriptErrorKind::Timeout);
        assert!(err.to_string().starts_with("script loop.lua:2: timed out"), "{err}");
        // Time enough that only the memory limit can stop them, however busy the machine.
        let memory_only = Limits { timeout: Duration::from_secs(60), ..Limits::default() };
        for bomb in ["local t = {} for i = 1, 1e9 do t[i] = i end return t", "return {spec = string.rep('x', 1e9)}"] {
            let script = Script::new("test.lua", bomb);
            let err = evaluate(&script, &json!({}), &memory_only, EvalOptions::CONTROLLER).unwrap_err();
            assert_eq!(err.kind, ScriptErrorKind::Memory, "{bomb}: {err}");
        }
    }

    #[test]
    fn memory_runs_out_safely_while_decoding_json() {
        // The input builder raises Lua's memory error from inside its own frames.
        let script = Script::new(
            "decode.lua",
            "local text = '[' .. string.rep('[1],', 100000) .. '[]]' local t = json.decode(text) return {spec = #t}",
        );
        let limits = Limits { memory: 4 << 20, ..Limits::default() };
        let err = evaluate(&script, &json!({}), &limits, EvalOptions::CONTROLLER).unwrap_err();
        assert_eq!(err.kind, ScriptErrorKind::Memory, "{err}");
        let without_decode = Script::new(
            "text.lua",
            script.code().replace("local t = json.decode(text) return {spec = #t}", "return {spec = #text}"),
        );
        evaluate(&without_decode, &json!({}), &limits, EvalOptions::CONTROLLER).expect("building the text fits");
    }

    #[test]
    fn bytecode_is_refused() {
        let err = run("\x1bLuaQ\0", json!({})).unwrap_err();
        assert_eq!(err.kind, ScriptErrorKind::Syntax);
    }

    #[test]
    fn flags_scripts_that_depend_on_pairs_order() {
        let obj = json!({"data": {"labels": {"a": "1", "b": "2", "c": "3", "d": "4"}}});
        let check = |code: &str| {
            let script = Script::new("order.lua", code);
            let baseline = evaluate(&script, &obj, &Limits::default(), EvalOptions::CONTROLLER).unwrap();
            order_dependence(&script, &obj, &Limits::default(), EvalOptions::CONTROLLER, &baseline)
        };
        let from_input = "local l = {} for k in pairs(obj.data.labels) do l[#l + 1] = k end return {spec = l}";
        assert_eq!(check(from_input), Some(OrderDependence::InputMaps));
        let from_own =
            "local t = {x = 1, y = 2, z = 3} local l = {} for k in pairs(t) do l[#l + 1] = k end return {spec = l}";
        assert_eq!(check(from_own), Some(OrderDependence::ScriptTables));
        let sorted =
            "local l = {} for k in pairs(obj.data.labels) do l[#l + 1] = k end table.sort(l) return {spec = l}";
        assert_eq!(check(sorted), None);
    }
}
