//! The Lua C API, for the JSON conversion (`convert`) only, and every `unsafe` block of it.
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
//!    returned left as they are, `lua_gettop` and `lua_settop` below the top. So Rust values
//!    that need dropping may live across these calls.
//! 3. **Building raises only through plain frames.** `build` allocates (`lua_createtable`,
//!    `lua_pushlstring`, `lua_rawset`, `lua_rawseti`), and a memory error raises to the
//!    protected call of `exec_raw` by `longjmp`. The frames it crosses own nothing that needs
//!    dropping: references and borrowing iterators only.
//! 4. **Strings are borrowed while on the stack.** `Stack::string` lends the bytes for as long
//!    as the `Stack` is not changed, and a walk never pops a value it still reads.

use super::KeyOrder;
use mlua::{Lua, Value as LuaValue, ffi};
use serde_json::Value;
use std::ffi::c_int;

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

/// Lets `walk` read `value` from the stack, with room for `levels` levels of tables (two
/// slots each), and returns what it returns; an error of Lua's (none is expected: invariant 2)
/// as its message.
pub fn read<R>(
    lua: &Lua,
    value: LuaValue,
    levels: usize,
    walk: impl FnOnce(&mut Stack, Index) -> R,
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
            let mut stack = Stack { state, limit: top + 2 * levels as c_int + 4 };
            result = Some(walk(&mut stack, top));
        })
    };
    outcome.map_err(|e| e.to_string())?;
    result.ok_or_else(|| "cannot encode: not enough Lua stack".to_string())
}

/// The stack while `read` walks it (invariant 2: nothing here allocates or raises).
pub struct Stack {
    state: *mut ffi::lua_State,
    /// The highest slot reserved.
    limit: Index,
}

impl Stack {
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
    pub fn string(&self, index: Index) -> Option<&[u8]> {
        if self.kind(index) != Kind::String {
            return None;
        }
        let mut length = 0;
        // SAFETY: invariants 2 and 4: on a string, lua_tolstring neither allocates nor changes
        // the value, and the bytes stay while the value is on the stack, which it is while
        // `self` is borrowed.
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

    /// Calls `each` with the stack indices of every key and value of the table at `table`, in
    /// Lua's order; `each` may leave things on the stack above them. Stops at the first error.
    pub fn for_each<E>(
        &mut self,
        table: Index,
        mut each: impl FnMut(&mut Stack, Index, Index) -> Result<(), E>,
        no_room: E,
    ) -> Result<(), E> {
        if self.top() + 2 > self.limit {
            return Err(no_room);
        }
        // SAFETY: invariants 1 and 2: two slots are free; lua_next gets back the key it gave,
        // as `each` cannot reach below the key and the value.
        unsafe {
            let base = self.top();
            ffi::lua_pushnil(self.state);
            while ffi::lua_next(self.state, table) != 0 {
                let result = each(self, base + 1, base + 2);
                ffi::lua_settop(self.state, base + 1);
                if result.is_err() {
                    ffi::lua_settop(self.state, base);
                    return result;
                }
            }
        }
        Ok(())
    }

    fn top(&self) -> Index {
        // SAFETY: invariant 2.
        unsafe { ffi::lua_gettop(self.state) }
    }
}
