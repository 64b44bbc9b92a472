//! The Lua C API, for the JSON conversion (`convert`), for marking the sandbox's library
//! (`library_chunk`) and for reading the count of string keys (`string_keys`) only, and every
//! `unsafe` block of it; and the two functions the C core calls back
//! (`rollout_lua_parse_number`, `rollout_lua_number2str`).
//!
//! mlua's safe API hands each value out through a registry reference of its own, which makes
//! converting a large object several times slower than these direct stack operations (measured
//! in docs/benchmarks.md).
//!
//! The invariants:
//! 1. **Room first.** Every stack slot a build or a walk can use is reserved with
//!    `lua_checkstack` before it starts, so no call below grows the stack. `Stack` keeps to the
//!    room reserved and reports running out of it as an error.
//! 2. **Reading never raises.** A walk (`read`, `Stack`) calls only functions that neither
//!    allocate nor raise: `lua_type`, `lua_toboolean`, `lua_tonumber`, `lua_topointer`,
//!    `lua_tolstring` on strings (which returns them as they are), `lua_next` with the keys it
//!    returned left as they are, `lua_rawget` and `lua_rawgeti`, `lua_pushlstring` of a key the
//!    walk has met (so Lua finds the string, and makes none) with the collector stopped for the
//!    read (so pushing runs no collection step), `lua_gettop` and `lua_settop` below the top. So
//!    Rust values that need dropping may live across these calls.
//! 3. **Building raises only through plain frames.** `build` allocates (`lua_createtable`,
//!    `lua_pushlstring`, `lua_rawset`, `lua_rawseti`), and a memory error raises to the
//!    protected call of `exec_raw` by `longjmp`. The frames it crosses own nothing that needs
//!    dropping: references and borrowing iterators only.
//! 4. **Strings live as long as the read.** Every string a walk sees is the value read or a
//!    key or value of one of its tables, which nothing changes while the read lasts and the
//!    collector, stopped, does not free; so `Stack::string` lends the bytes for the whole read.
//! 5. **Building from text raises nothing.** `build_from_json` runs inside serde_json's frames,
//!    which own memory, so no `longjmp` may cross them: it lifts the memory limit while it
//!    builds (checking the memory used itself), the collector is stopped (the caller's part),
//!    mlua's allocator aborts the process rather than fail an allocation, every push is
//!    preceded by `lua_checkstack`, table sizes stay below Lua's stack limit (a longer list
//!    grows as it is filled, which only allocates), and keys are strings (which `lua_rawset`
//!    takes without raising).

use super::KeyOrder;
use mlua::{FromLuaMulti, IntoLuaMulti, Lua, Value as LuaValue, ffi};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::cell::Cell;
use std::ffi::c_int;
use std::fmt;
use std::marker::PhantomData;

/// An absolute stack index.
pub type Index = c_int;

/// What a stack slot holds, as Lua's `type()` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Nil,
    Boolean,
    Number,
    String,
    Table,
    Function,
    Thread,
    Userdata,
}

/// Builds the Lua value for a JSON value as gopher-lua's `decodeValue` does: lists append
/// their non-null items (so they close up around nulls), maps set their non-null entries, each
/// map's keys inserted in `order`. `None` when lists and maps nest deeper than `levels`.
pub fn build(lua: &Lua, value: &Value, order: KeyOrder, levels: usize) -> mlua::Result<Option<LuaValue>> {
    let (mut reserved, mut within) = (false, false);
    // SAFETY: invariants 1 and 3; `push` uses two of the slots reserved here a level.
    let built = unsafe {
        lua.exec_raw::<LuaValue>((), |state| {
            reserved = ffi::lua_checkstack(state, 2 * levels as c_int + 4) != 0;
            if reserved {
                let top = ffi::lua_gettop(state);
                within = push(state, value, order, levels);
                if !within {
                    ffi::lua_settop(state, top);
                }
            }
        })
    }?;
    if !reserved {
        return Err(mlua::Error::runtime("cannot hand the value to Lua: not enough Lua stack"));
    }
    Ok(within.then_some(built))
}

/// Pushes `value` (see `build`), with `levels` levels of lists and maps left; false (with
/// what was pushed left on the stack) when it nests deeper.
///
/// # Safety
/// `state` is the state of the running Lua, with room on its stack for what is pushed (the
/// invariants at the top of this file).
unsafe fn push(state: *mut ffi::lua_State, value: &Value, order: KeyOrder, levels: usize) -> bool {
    if levels == 0 && matches!(value, Value::Array(_) | Value::Object(_)) {
        return false;
    }
    // SAFETY: invariants 1 and 3: this frame holds references and borrowing iterators only.
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
                    if !push(state, item, order, levels - 1) {
                        return false;
                    }
                    ffi::lua_rawseti_(state, -2, index as c_int + 1);
                }
            }
            Value::Object(map) => {
                ffi::lua_createtable(state, 0, map.len() as c_int);
                let mut set = |(key, item): (&String, &Value)| {
                    ffi::lua_pushlstring(state, key.as_ptr().cast(), key.len());
                    let within = push(state, item, order, levels - 1);
                    if within {
                        ffi::lua_rawset(state, -3);
                    }
                    within
                };
                let mut entries = map.iter().filter(|(_, v)| !v.is_null());
                let within = match order {
                    KeyOrder::Sorted => entries.all(&mut set),
                    KeyOrder::Reversed => entries.rev().all(&mut set),
                };
                if !within {
                    return false;
                }
            }
        }
    }
    true
}

/// What `build_from_json` made of a text.
#[derive(Debug)]
pub enum FromJson {
    Built(LuaValue),
    /// Not read this way (nothing is left of it in Lua): the caller reads the text as a `Value`,
    /// which names what is wrong, or builds from that.
    Unread,
    /// Its tables take more than the memory limit.
    TooLarge,
}

/// Builds, from the text of a JSON object, the Lua value `build` would build from the `Value`
/// the project's JSON reader makes of it (non-finite numbers as null, as `Number::from_f64`
/// does), without making the `Value`. `Unread` when the text is not one JSON object, repeats a
/// key in a map, has one of `refused` among its top-level keys, nests deeper than `levels`, or
/// needs more of the stack than Lua allows (about 8000 values pending at once).
pub fn build_from_json(
    lua: &Lua,
    text: &str,
    order: KeyOrder,
    levels: usize,
    refused: &[&str],
) -> mlua::Result<FromJson> {
    // Invariant 5: no memory error may raise while serde's frames are on the stack.
    let limit = lua.set_memory_limit(0)?;
    let mut outcome = Stop::Unread;
    // SAFETY: invariant 5; `Build` checks room before each push.
    let built = unsafe {
        lua.exec_raw::<LuaValue>((), |state| {
            let top = ffi::lua_gettop(state);
            let build = Build { state, order, limit, refused, stop: Cell::new(Stop::Unread) };
            let mut deserializer = serde_json::Deserializer::from_str(text);
            let push = Push { build: &build, levels, top: true };
            match deserializer.deserialize_map(push).and_then(|()| deserializer.end()) {
                Ok(()) => outcome = Stop::Built,
                Err(_) => {
                    outcome = build.stop.get();
                    ffi::lua_settop(state, top);
                }
            }
        })
    };
    lua.set_memory_limit(limit)?;
    let built = built?;
    Ok(match outcome {
        Stop::Built => FromJson::Built(built),
        Stop::Unread => FromJson::Unread,
        Stop::TooLarge => FromJson::TooLarge,
    })
}

/// How a build from text ended, or why it stopped.
#[derive(Clone, Copy)]
enum Stop {
    Built,
    Unread,
    TooLarge,
}

/// One build from text (invariant 5).
struct Build<'a> {
    state: *mut ffi::lua_State,
    order: KeyOrder,
    /// The memory limit (bytes; 0 for none), checked as each table is finished.
    limit: usize,
    refused: &'a [&'a str],
    /// Why the build stopped, when serde reports an error of the build's making.
    stop: Cell<Stop>,
}

impl Build<'_> {
    /// An error that stops the build, and why.
    fn stop<E: de::Error>(&self, why: Stop) -> E {
        self.stop.set(why);
        E::custom("stopped")
    }

    /// Room for `slots` more values on the stack, or an error that stops the build unread.
    fn room<E: de::Error>(&self, slots: c_int) -> Result<(), E> {
        // SAFETY: invariant 5: growing the stack allocates without a limit.
        match unsafe { ffi::lua_checkstack(self.state, slots) } {
            0 => Err(self.stop(Stop::Unread)),
            _ => Ok(()),
        }
    }

    /// After a table is finished: an error if Lua now uses more than the limit.
    fn within_limit<E: de::Error>(&self) -> Result<(), E> {
        // SAFETY: invariant 5: counting neither allocates nor raises.
        let used_kib = unsafe { ffi::lua_gc(self.state, ffi::LUA_GCCOUNT, 0) } as usize;
        match self.limit != 0 && used_kib << 10 > self.limit {
            true => Err(self.stop(Stop::TooLarge)),
            false => Ok(()),
        }
    }
}

/// Pushes one JSON value (nil for null) with `levels` levels of lists and maps left.
#[derive(Clone, Copy)]
struct Push<'b, 'a> {
    build: &'b Build<'a>,
    levels: usize,
    /// The top-level object, whose keys are checked against `Build::refused`.
    top: bool,
}

impl<'de> DeserializeSeed<'de> for Push<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Push<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<(), E> {
        self.build.room(1)?;
        // SAFETY: invariant 5: room was made.
        unsafe { ffi::lua_pushboolean(self.build.state, c_int::from(value)) };
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<(), E> {
        self.visit_f64(value as f64)
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<(), E> {
        self.visit_f64(value as f64)
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<(), E> {
        if !value.is_finite() {
            return self.visit_unit();
        }
        self.build.room(1)?;
        // SAFETY: invariant 5: room was made.
        unsafe { ffi::lua_pushnumber(self.build.state, value) };
        Ok(())
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<(), E> {
        self.build.room(1)?;
        // SAFETY: invariant 5: room was made; interning allocates without a limit.
        unsafe { ffi::lua_pushlstring(self.build.state, value.as_ptr().cast(), value.len()) };
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.build.room(1)?;
        // SAFETY: invariant 5: room was made.
        unsafe { ffi::lua_pushnil(self.build.state) };
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Some(levels) = self.levels.checked_sub(1) else { return Err(self.build.stop(Stop::Unread)) };
        let state = self.build.state;
        // SAFETY: invariant 5: the items are pushed above `base` by `Push`, which makes room.
        let base = unsafe { ffi::lua_gettop(state) };
        // The items wait on the stack and go into the table LIST_CHUNK at a time, so a long list
        // takes no more of the stack than that (and is built here, not read as a `Value`).
        let (mut table, mut filled) = (None, 0);
        loop {
            let more = seq.next_element_seed(Push { build: self.build, levels, top: false })?.is_some();
            // SAFETY: invariant 5: reading the top neither allocates nor raises.
            let waiting = unsafe { ffi::lua_gettop(state) } - base - c_int::from(table.is_some());
            if more && waiting < LIST_CHUNK {
                continue;
            }
            let list = match table {
                Some(list) => list,
                None => {
                    self.build.room(1)?;
                    // SAFETY: invariant 5: room was made for the table, which goes below the
                    // items; a list that is longer grows as it is filled (which only allocates).
                    unsafe {
                        ffi::lua_createtable(state, waiting, 0);
                        ffi::lua_insert(state, base + 1);
                    }
                    *table.insert(base + 1)
                }
            };
            // SAFETY: invariant 5: the items above the table go into it, off the stack.
            unsafe { append_items(state, list, &mut filled) };
            if !more {
                return self.build.within_limit();
            }
            self.build.within_limit()?;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some(levels) = self.levels.checked_sub(1) else { return Err(self.build.stop(Stop::Unread)) };
        let state = self.build.state;
        // SAFETY: invariant 5: the keys and values are pushed above `base` by `Push`, which
        // makes room.
        let base = unsafe { ffi::lua_gettop(state) };
        // JSON's keys are strings, which `Push` pushes as any string.
        while map.next_key_seed(Push { build: self.build, levels: 0, top: false })?.is_some() {
            map.next_value_seed(Push { build: self.build, levels, top: false })?;
        }
        // SAFETY: invariants 4 and 5: the keys' bytes are read while they are on the stack,
        // below what is pushed after; room is made for the table and an entry.
        unsafe {
            let count = (ffi::lua_gettop(state) - base) / 2;
            let key = |slot: c_int| {
                let mut length = 0;
                let data = ffi::lua_tolstring(state, slot, &mut length);
                std::slice::from_raw_parts(data.cast::<u8>(), length)
            };
            let mut keys: Vec<c_int> = (0..count).map(|i| base + 1 + 2 * i).collect();
            keys.sort_unstable_by(|a, b| key(*a).cmp(key(*b)));
            let repeated = keys.windows(2).any(|pair| key(pair[0]) == key(pair[1]));
            let refused = self.top && keys.iter().any(|&k| self.build.refused.iter().any(|r| r.as_bytes() == key(k)));
            if repeated || refused {
                return Err(self.build.stop(Stop::Unread));
            }
            self.build.room(3)?;
            ffi::lua_createtable(state, 0, count);
            let table = ffi::lua_gettop(state);
            let mut set = |slot: c_int| {
                if ffi::lua_isnil(state, slot + 1) == 0 {
                    ffi::lua_pushvalue(state, slot);
                    ffi::lua_pushvalue(state, slot + 1);
                    ffi::lua_rawset(state, table);
                }
            };
            match self.build.order {
                KeyOrder::Sorted => keys.into_iter().for_each(&mut set),
                KeyOrder::Reversed => keys.into_iter().rev().for_each(&mut set),
            }
            ffi::lua_insert(state, base + 1);
            ffi::lua_settop(state, base + 1);
        }
        self.build.within_limit()
    }
}

/// How many items of a list wait on the stack before they go into its table.
const LIST_CHUNK: c_int = 1024;

/// Moves the values on the stack above the list at `list` into it, after its `filled` items,
/// closing up around the nils (the nulls) as `build` does; `filled` counts what it now holds.
///
/// # Safety
/// `list` is the index of a table with nothing but its items' values above it (invariant 5).
unsafe fn append_items(state: *mut ffi::lua_State, list: Index, filled: &mut c_int) {
    // SAFETY: the caller's; popping and `lua_rawseti` into a table only allocate.
    unsafe {
        let count = ffi::lua_gettop(state) - list;
        *filled += (list + 1..=list + count).filter(|&i| ffi::lua_isnil(state, i) == 0).count() as c_int;
        let mut index = *filled;
        for _ in 0..count {
            if ffi::lua_isnil(state, -1) != 0 {
                ffi::lua_settop(state, -2);
            } else {
                ffi::lua_rawseti_(state, list, index);
                index -= 1;
            }
        }
    }
}

/// Lets `walk` read `value` from the stack, with room for `levels` levels of tables (two
/// slots each), and returns what it returns; an error of Lua's (none is expected: invariant 2)
/// as its message.
pub fn read<R>(
    lua: &Lua,
    value: LuaValue,
    levels: usize,
    walk: impl for<'r> FnOnce(&mut Stack<'r>, Index) -> R,
) -> Result<R, String> {
    let mut result = None;
    // SAFETY: invariants 1 and 2: the room is reserved before the walk starts, and the walk
    // reads through `Stack` only.
    let outcome = unsafe {
        lua.exec_raw::<()>(value, |state| {
            if ffi::lua_checkstack(state, 2 * levels as c_int + 4) == 0 {
                return;
            }
            let top = ffi::lua_gettop(state);
            let mut stack = Stack { state, limit: top + 2 * levels as c_int + 4, read: PhantomData };
            // Invariant 2 needs the collector stopped. It is started again after, as it runs in
            // every state here (gopher-lua's `collectgarbage` cannot stop it).
            ffi::lua_gc(state, ffi::LUA_GCSTOP, 0);
            result = Some(walk(&mut stack, top));
            ffi::lua_gc(state, ffi::LUA_GCRESTART, 0);
        })
    };
    outcome.map_err(|e| e.to_string())?;
    result.ok_or_else(|| "cannot encode: not enough Lua stack".to_string())
}

/// The stack while `read` walks it (invariant 2: nothing here allocates or raises), for the
/// read `'r`.
pub struct Stack<'r> {
    state: *mut ffi::lua_State,
    /// The highest slot reserved.
    limit: Index,
    read: PhantomData<&'r [u8]>,
}

impl<'r> Stack<'r> {
    pub fn kind(&self, index: Index) -> Kind {
        // SAFETY: invariant 2.
        match unsafe { ffi::lua_type(self.state, index) } {
            ffi::LUA_TNIL => Kind::Nil,
            ffi::LUA_TBOOLEAN => Kind::Boolean,
            ffi::LUA_TNUMBER => Kind::Number,
            ffi::LUA_TSTRING => Kind::String,
            ffi::LUA_TTABLE => Kind::Table,
            ffi::LUA_TFUNCTION => Kind::Function,
            ffi::LUA_TTHREAD => Kind::Thread,
            _ => Kind::Userdata,
        }
    }

    pub fn boolean(&self, index: Index) -> bool {
        // SAFETY: invariant 2.
        unsafe { ffi::lua_toboolean(self.state, index) != 0 }
    }

    pub fn number(&self, index: Index) -> f64 {
        // SAFETY: invariant 2.
        unsafe { ffi::lua_tonumber(self.state, index) }
    }

    /// The bytes of the string at `index`; `None` for anything else (which lua_tolstring
    /// would convert, allocating).
    pub fn string(&self, index: Index) -> Option<&'r [u8]> {
        if self.kind(index) != Kind::String {
            return None;
        }
        let mut length = 0;
        // SAFETY: invariants 2 and 4: on a string, lua_tolstring neither allocates nor changes
        // the value, and the bytes stay while the read lasts.
        unsafe {
            let data = ffi::lua_tolstring(self.state, index, &mut length);
            Some(std::slice::from_raw_parts(data.cast::<u8>(), length))
        }
    }

    /// What identifies the table at `index` while it exists.
    pub fn pointer(&self, index: Index) -> usize {
        // SAFETY: invariant 2.
        unsafe { ffi::lua_topointer(self.state, index) as usize }
    }

    /// Calls `each` with the stack index of every key of the table at `table`, in Lua's order;
    /// `each` may leave things on the stack above it. Stops at the first error.
    pub fn for_each<E>(
        &mut self,
        table: Index,
        mut each: impl FnMut(&mut Stack<'r>, Index) -> Result<(), E>,
        no_room: E,
    ) -> Result<(), E> {
        if self.top() + 2 > self.limit {
            return Err(no_room);
        }
        // SAFETY: invariants 1 and 2: two slots are free; lua_next gets back the key it gave,
        // as `each` cannot reach below the key.
        unsafe {
            let base = self.top();
            ffi::lua_pushnil(self.state);
            while ffi::lua_next(self.state, table) != 0 {
                let result = each(self, base + 1);
                ffi::lua_settop(self.state, base + 1);
                if result.is_err() {
                    ffi::lua_settop(self.state, base);
                    return result;
                }
            }
        }
        Ok(())
    }

    /// Pushes item `n` of the list at `table` and returns where; `None` without room.
    pub fn push_item(&mut self, table: Index, n: usize) -> Option<Index> {
        if self.top() + 1 > self.limit {
            return None;
        }
        // SAFETY: invariants 1 and 2: a slot is free; `n` is below the 2^26 a list may have.
        unsafe { ffi::lua_rawgeti_(self.state, table, n as c_int) };
        Some(self.top())
    }

    /// Pushes the value of `key`, a string key of the table at `table` that `for_each` gave, and
    /// returns where; `None` without room.
    pub fn push_field(&mut self, table: Index, key: &[u8]) -> Option<Index> {
        if self.top() + 1 > self.limit {
            return None;
        }
        // SAFETY: invariants 1 and 2: a slot is free; the key exists, so pushing it finds it,
        // and the collector is stopped.
        unsafe {
            ffi::lua_pushlstring(self.state, key.as_ptr().cast(), key.len());
            ffi::lua_rawget(self.state, table);
        }
        Some(self.top())
    }

    /// Pops the value on top.
    pub fn pop(&mut self) {
        // SAFETY: invariant 2.
        unsafe { ffi::lua_settop(self.state, -2) };
    }

    fn top(&self) -> Index {
        // SAFETY: invariant 2.
        unsafe { ffi::lua_gettop(self.state) }
    }
}

unsafe extern "C" {
    /// Marks a function (a Lua one with the functions it defines) as the sandbox's library
    /// (`build/lua-5.1.5/lapi.c`).
    fn lua_golibrary(state: *mut ffi::lua_State, index: c_int);
    /// The string keys set in tables since the state was made (`build/lua-5.1.5/lapi.c`).
    fn lua_gostringkeys(state: *mut ffi::lua_State) -> usize;
}

/// The string keys set in tables of `lua` since it was made: new keys only (a key moved when
/// its table grows is not counted again, and one set to nil and set again counts again only
/// once the collector or the table's growth has dropped it; gopher-lua pays for these each
/// time, and for updates). Lifts the memory limit for the read, which a state that holds all
/// the memory it may could not otherwise make.
pub fn string_keys(lua: &Lua) -> mlua::Result<u64> {
    let limit = lua.set_memory_limit(0)?;
    let mut count = 0;
    // SAFETY: reads a counter of the global state; neither allocates nor raises.
    let read = unsafe { lua.exec_raw::<()>((), |state| count = lua_gostringkeys(state)) };
    lua.set_memory_limit(limit)?;
    read.map(|()| count as u64)
}

/// Runs a chunk of the sandbox's library with `args`, marking it and the (Rust) functions among
/// `args` as the library, which gopher-lua writes in Go: what they call is part of one frame of
/// gopher-lua's call stack, and `setfenv` cannot change their environment (the C core reads
/// the mark).
pub fn library_chunk<R: FromLuaMulti>(lua: &Lua, code: &str, name: &str, args: impl IntoLuaMulti) -> mlua::Result<R> {
    let chunk = lua.load(code).set_name(name).into_function()?;
    let args = args.into_lua_multi(lua)?;
    for function in std::iter::once(&chunk).chain(args.iter().filter_map(LuaValue::as_function)) {
        // SAFETY: the function is the one value pushed, at the top; marking it neither allocates
        // nor raises.
        unsafe { lua.exec_raw::<()>(function, |state| lua_golibrary(state, -1))? };
    }
    chunk.call(args)
}

/// gopher-lua's text of a number (`gofmt::number_text`) for the C core's `lua_number2str`
/// (`build/lua_go_numbers.h`): `tostring`, `..`, a number where a string is wanted.
/// NUL-terminated in `out`.
///
/// # Safety
/// `out` points to `size` (at least 1) writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rollout_lua_number2str(number: f64, out: *mut std::ffi::c_char, size: usize) {
    let mut text = Vec::with_capacity(24);
    super::gofmt::number_text(&mut text, number);
    // SAFETY: the C caller passes a buffer of `size` bytes (LUAI_MAXNUMBER2STR, 32; the longest
    // text, "-1.2345678901234567e-308", is 24).
    let out = unsafe { std::slice::from_raw_parts_mut(out.cast::<u8>(), size) };
    let length = text.len().min(size - 1);
    out[..length].copy_from_slice(&text[..length]);
    out[length] = 0;
}

/// gopher-lua's `parseNumber` for the C core (declared in `build/lua_go_numbers.h`): the VM's
/// coercion of a string to a number and the lexer's numerals. 1 with `*number` set, or 0.
///
/// # Safety
/// `text` points to `length` readable bytes and `number` to a writable `f64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rollout_lua_parse_number(
    text: *const std::ffi::c_char,
    length: usize,
    number: *mut f64,
) -> c_int {
    // SAFETY: the C callers pass a Lua string's or the lexer buffer's bytes with their length,
    // and a number to write, each valid for the call.
    let text = unsafe { std::slice::from_raw_parts(text.cast::<u8>(), length) };
    match super::gostrconv::parse_number(text) {
        Some(parsed) => {
            // SAFETY: as above.
            unsafe { *number = parsed };
            1
        }
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_lua_cannot_give_is_an_error_not_an_overflow() {
        // The conversion asks for 100 levels; Lua gives a call at most 8000 slots, which 4000
        // levels (two slots each) pass.
        let lua = Lua::new();
        let value = serde_json::json!({"a": [1]});
        assert!(build(&lua, &value, KeyOrder::Sorted, 100).unwrap().is_some());
        let err = build(&lua, &value, KeyOrder::Sorted, 4000).unwrap_err();
        assert!(err.to_string().contains("cannot hand the value to Lua: not enough Lua stack"), "{err}");
        let table = LuaValue::Table(lua.create_table().unwrap());
        assert_eq!(read(&lua, table.clone(), 100, |_, _| "read"), Ok("read"));
        assert_eq!(read(&lua, table, 4000, |_, _| "read"), Err("cannot encode: not enough Lua stack".into()));
    }
}
