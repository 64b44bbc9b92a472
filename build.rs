//! Builds the vendored Lua 5.1 with the controller's (gopher-lua's) number formatting.
//! mlua-sys runs in `external` mode, so this script compiles Lua and emits the link lines.

use std::{env, path::PathBuf};

fn main() {
    let header = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("build/lua_go_numbers.h");
    println!("cargo:rerun-if-changed=build/lua_go_numbers.h");
    println!("cargo:rerun-if-changed=build.rs");

    // cc reads C flags from the environment, the target-specific variable first; setting it in
    // this build script's own process scopes the forced include to the Lua sources.
    let target = env::var("TARGET").unwrap();
    let key = format!("CFLAGS_{target}");
    let flags = format!("{} -include {}", env::var(&key).unwrap_or_default(), header.display());
    // SAFETY: the build script is single-threaded at this point.
    unsafe { env::set_var(&key, flags.trim()) };

    lua_src::Build::new().build(lua_src::Lua51).print_cargo_metadata();
}
