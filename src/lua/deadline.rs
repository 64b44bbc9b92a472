//! The time limit. The controller's engine checks its deadline before every instruction, so once
//! it has passed nothing runs: `pcall` catches the timeout error, and the next instruction fails
//! again. Here a count hook looks at the clock every `CHECK_EVERY` instructions; once the deadline
//! has passed it fails the script, and from then on every instruction the script reaches, so that
//! no error handler (`pcall`, `xpcall`'s handler, a metamethod) can carry on. Library functions
//! that loop in C (pattern matching, `string.rep`, the table library, `collectgarbage`) count
//! their steps as instructions (`lua_librarysteps` in build/lua-5.1.5), so the hook stops them
//! too; the ones written in Rust (`json`, `string.format`, `string.upper`/`lower`) look at the
//! clock themselves (`check`). A memory error of theirs stops the script the same way
//! (`stop_if_out_of_memory`).

use mlua::{HookTriggers, Lua, VmState};
use std::cell::Cell;
use std::ops::Range;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Instructions between two looks at the clock: a few microseconds of Lua.
const CHECK_EVERY: u32 = 1000;

/// The clock of one evaluation: when its time is up, and where the script was then, if it was.
#[derive(Clone)]
pub struct Deadline {
    at: Instant,
    passed: Rc<Cell<Option<usize>>>,
    /// How often the hook ran: thousands of instructions (library loops' steps included).
    checks: Rc<Cell<u64>>,
    /// Steps of library functions written in Rust, which the hook does not see (`count_steps`).
    library_steps: Rc<Cell<u64>>,
    /// The string keys set in the state's tables when the script began, and those of its obj.
    string_keys_at_start: u64,
    obj_string_keys: u64,
}

impl Deadline {
    /// Starts the clock for the script about to run in `lua`, whose obj set the string keys
    /// counted from `obj_string_keys.start` to its end (`stack::string_keys`).
    pub fn start(lua: &Lua, timeout: Duration, obj_string_keys: Range<u64>) -> mlua::Result<Deadline> {
        let clock = Deadline {
            at: Instant::now() + timeout,
            passed: Rc::default(),
            checks: Rc::default(),
            library_steps: Rc::default(),
            string_keys_at_start: obj_string_keys.end,
            obj_string_keys: obj_string_keys.end - obj_string_keys.start,
        };
        lua.set_app_data(clock.clone());
        let hook = clock.clone();
        lua.set_hook(HookTriggers::new().every_nth_instruction(CHECK_EVERY), move |lua, _| {
            hook.checks.set(hook.checks.get() + 1);
            hook.check(lua).map(|()| VmState::Continue)
        })?;
        Ok(clock)
    }

    /// The work the script has done so far in `lua`, counted: unlike its time, the same on
    /// any machine.
    pub fn work(&self, lua: &Lua) -> mlua::Result<Work> {
        Ok(Work {
            instructions: self.checks.get() * u64::from(CHECK_EVERY) + self.library_steps.get(),
            string_keys: super::stack::string_keys(lua)? - self.string_keys_at_start,
            obj_string_keys: self.obj_string_keys,
        })
    }

    /// The line the script was running when its time ran out (0 where Lua knows none), or None
    /// while it has time left.
    pub fn passed_at(&self) -> Option<usize> {
        self.passed.get()
    }

    /// Fails once the time is up, and from then on makes every instruction fail too.
    fn check(&self, lua: &Lua) -> mlua::Result<()> {
        if Instant::now() < self.at {
            return Ok(());
        }
        if self.passed.get().is_none() {
            self.passed.set(Some(super::script_line(lua)));
        }
        Err(fail_from_now_on(lua, timed_out()))
    }
}

/// What a script's run cost, counted (see `lua::controller_warnings`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// The instructions it ran, to the thousand (the steps of library loops counted as
    /// instructions, and a byte of `json.encode`'s text as one).
    pub instructions: u64,
    /// The string keys it set in tables: gopher-lua keeps them in Go maps, which cost it far
    /// more than an instruction.
    pub string_keys: u64,
    /// The string keys of its obj, set as the obj was made (within the controller's deadline).
    pub obj_string_keys: u64,
}

/// Makes every instruction the script reaches from now on fail with `error`, which is returned:
/// no error handler (`pcall`, `xpcall`'s handler, a metamethod) can carry on.
fn fail_from_now_on(lua: &Lua, error: mlua::Error) -> mlua::Error {
    // Installing the new hook allocates, which must not fail for a script that holds all the
    // memory it may: what is left to run is error handling only.
    let _ = lua.set_memory_limit(0);
    let raised = error.clone();
    let _ = lua.set_hook(HookTriggers::new().every_nth_instruction(1), move |_, _| Err(raised.clone()));
    error
}

/// For library functions written in Rust: a memory error of theirs stops the script as one
/// in C does. mlua raises their errors as runtime errors, which `pcall` would catch, where
/// the C library's (`LUA_ERRMEM`) are passed on (build/lua-5.1.5/lbaselib.c); any other error
/// is returned as it is.
pub fn stop_if_out_of_memory(lua: &Lua, error: mlua::Error) -> mlua::Error {
    if super::is_memory_error(&error) { fail_from_now_on(lua, error) } else { error }
}

/// For library functions written in Rust whose work costs the controller's engine more than a
/// call: counts `steps` of it as instructions of the script's work (`Work::instructions`).
pub fn count_steps(lua: &Lua, steps: u64) {
    if let Some(clock) = lua.app_data_ref::<Deadline>() {
        clock.library_steps.set(clock.library_steps.get() + steps);
    }
}

/// For library functions written in Rust (`json`, `string.format`, …), which the instruction hook does not see:
/// fails when the script's time is up. Called after their work, which the memory limit bounds.
pub fn check(lua: &Lua) -> mlua::Result<()> {
    let clock = lua.app_data_ref::<Deadline>().map(|clock| clock.clone());
    clock.map_or(Ok(()), |clock| clock.check(lua))
}

fn timed_out() -> mlua::Error {
    mlua::Error::runtime("timed out")
}

#[cfg(test)]
mod tests {
    use crate::lua::{EvalOptions, Limits, Printed, Script, ScriptErrorKind, Values, evaluate};
    use serde_json::json;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Runs `code` with a 100 ms limit, which it must break, and returns the message. A script
    /// still running after 5 s fails the test (its thread is left behind).
    fn times_out(code: &str) -> String {
        let limits = Limits { timeout: Duration::from_millis(100), ..Limits::default() };
        let script = Script::new("runaway.lua", code);
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let obj = std::borrow::Cow::Owned(json!({}));
            sender.send(evaluate(
                &script,
                obj,
                &limits,
                EvalOptions::CONTROLLER,
                &Printed::default(),
                Values::default(),
            ))
        });
        let outcome = receiver.recv_timeout(Duration::from_secs(5));
        let error = outcome.unwrap_or_else(|_| panic!("{code}: still running after 5 s")).unwrap_err();
        assert_eq!(error.kind, ScriptErrorKind::Timeout, "{code}: {error}");
        error.to_string()
    }

    #[test]
    fn no_error_handler_runs_on_after_the_deadline() {
        times_out("while true do pcall(function() while true do end end) end");
        times_out("return pcall(function() while true do end end)");
        times_out("local h = function() while true do end end while true do xpcall(h, h) end");
        times_out("while true do xpcall(function() while true do end end, print) end");
        times_out(
            "local t = setmetatable({}, {__index = function() while true do end end}) while true do pcall(function() return t.x end) end",
        );
        times_out(
            "local o = setmetatable({}, {__tostring = function() while true do end end}) while true do pcall(tostring, o) end",
        );
        // Holding all the memory it may does not let a script escape either.
        times_out(
            "local keep = {} pcall(function() while true do keep[#keep + 1] = {} end end)\n\
             while true do pcall(function() while true do end end) end",
        );
    }

    #[test]
    fn library_functions_stop_at_the_deadline() {
        let text = "local s = string.rep('a', 500) ";
        for call in ["s:find('.-.-.-b')", "s:match('.-.-.-b')", "s:gsub('.-.-.-b', '')", "s:gmatch('.-.-.-b')()"] {
            times_out(&format!("{text} return {{spec = {{{call}}}}}"));
        }
        // Each call is short, but would run a thousand times before the hook looks at the clock.
        times_out("local t = {} for i = 1, 50000 do t[i] = i end while true do local s = json.encode(t) end");
        times_out("local s = json.encode({string.rep('a', 2^22)}) while true do local t = json.decode(s) end");
        times_out("local keep = {} for i = 1, 200000 do keep[i] = {i} end while true do collectgarbage() end");
        times_out("while true do local s = string.format('%999999s', 'x') end");
        times_out("local s = string.rep('\\255', 2^20) while true do local t = string.upper(s) end");
        // A plain search takes time quadratic in the lengths; so does a balance with backtracking.
        times_out("local s = string.rep('a', 2^22) return {spec = {s:find(string.rep('a', 2^20) .. 'b', 1, true)}}");
        times_out("local s = string.rep('(', 200000) return {spec = {s:find('.-%b()')}}");
        let table = "local t = {} for i = 1, 100000 do t[i] = i end ";
        for call in [
            "while true do table.insert(t, 1, 0) table.remove(t, 1) end",
            "while true do table.sort(t, function(a, b) return a > b end) end",
            // Under the 2550 values or so gopher-lua's concat takes.
            "while true do local s = table.concat(t, ',', 1, 2000) end",
        ] {
            times_out(&format!("{table}{call}"));
        }
    }

    #[test]
    fn the_timeout_names_the_line_the_script_was_on() {
        assert!(times_out("local x = 1\nwhile true do end").starts_with("script runaway.lua:2: timed out after 100ms"));
        // In a library function: the line that called it.
        let message = times_out("local s = string.rep('a', 500)\nlocal x = s:find('.-.-.-b')");
        assert!(message.starts_with("script runaway.lua:2: timed out after 100ms"), "{message}");
        // In one whose argument checks are written in Lua: not a line of those.
        for call in ["string.format('%999999s', 'x')", "json.encode({1, 2, 3})"] {
            let message = times_out(&format!("local x = 1\nwhile true do\nlocal s = {call}\nend"));
            assert!(message.starts_with("script runaway.lua:3: timed out after 100ms"), "{call}: {message}");
        }
    }
}
