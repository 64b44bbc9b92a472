//! Build steps:
//! - compiles the vendored Lua 5.1 with the controller's (gopher-lua's) number formatting;
//!   mlua-sys runs in `external` mode, so this script compiles Lua and emits the link lines;
//! - embeds the built-in scripts and their test cases from `lua_configuration/` (custom refs'
//!   `<group>/<Kind>/trafficRouting.lua`, Ingress classes' `trafficrouting_ingress/<classType>.lua`).

use std::{env, fs, path::Path, path::PathBuf};

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    build_lua(&manifest);
    embed_builtin_scripts(&manifest);
    embed_builtin_ingress_scripts(&manifest);
    record_git_commit();
}

/// `--version` names the commit; builds outside a git checkout say so.
fn record_git_commit() {
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown commit".into());
    println!("cargo:rustc-env=GIT_COMMIT={commit}");
    // Where HEAD and the branch it names live: in a worktree `.git` is a file and they are
    // elsewhere; a watched path that does not exist would rerun this script on every build.
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    let watched = ["HEAD", branch.as_deref().unwrap_or("HEAD"), "packed-refs"];
    for path in watched.iter().filter_map(|name| git(&["rev-parse", "--git-path", name])) {
        if Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

/// Compiles the vendored Lua 5.1.5 (`build/lua-5.1.5/`, patched where its README says) with
/// gopher-lua's number formatting forced into every file, as the static library mlua links.
fn build_lua(manifest: &Path) {
    let source = manifest.join("build/lua-5.1.5");
    let header = manifest.join("build/lua_go_numbers.h");
    println!("cargo:rerun-if-changed=build/lua-5.1.5");
    println!("cargo:rerun-if-changed=build/lua_go_numbers.h");
    println!("cargo:rerun-if-changed=build.rs");
    let mut build = cc::Build::new();
    let target = env::var("TARGET").unwrap();
    // The platform switches lua-src set for Lua 5.1 (they matter only to the io, os and package
    // libraries, which the sandbox does not open).
    if ["linux", "bsd", "apple-darwin"].iter().any(|os| target.contains(os)) {
        build.define("LUA_USE_LINUX", None);
    }
    if env::var("PROFILE").as_deref() == Ok("debug") {
        build.define("LUA_USE_APICHECK", None);
    }
    for entry in fs::read_dir(&source).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "c") {
            build.file(path);
        }
    }
    build
        .include(&source)
        .flag("-include")
        .flag(header.to_str().unwrap())
        .flag_if_supported("-fno-common")
        .warnings(false)
        .compile("lua5.1");
}

/// Writes `builtin_scripts.rs`: one entry per `lua_configuration/<group>/<Kind>/trafficRouting.lua`
/// with its `testdata/*.yaml` cases, all included at compile time.
fn embed_builtin_scripts(manifest: &Path) {
    let root = manifest.join("lua_configuration");
    println!("cargo:rerun-if-changed=lua_configuration");
    let mut entries = String::new();
    for group in sorted_dirs(&root) {
        for kind in sorted_dirs(&group) {
            let script = kind.join("trafficRouting.lua");
            if !script.is_file() {
                continue;
            }
            let cases = included_cases(&kind.join("testdata"));
            entries.push_str(&format!(
                "BuiltinScript {{ group: {:?}, kind: {:?}, code: include_str!({:?}), testdata: &[{cases}] }},\n",
                name_of(&group),
                name_of(&kind),
                script.display().to_string(),
            ));
        }
    }
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("builtin_scripts.rs");
    fs::write(out, format!("pub static BUILTIN_SCRIPTS: &[BuiltinScript] = &[\n{entries}];\n")).unwrap();
}

/// Writes `builtin_ingress_scripts.rs`: one entry per
/// `lua_configuration/trafficrouting_ingress/<classType>.lua` with its
/// `testdata/<classType>/*.yaml` cases.
fn embed_builtin_ingress_scripts(manifest: &Path) {
    let root = manifest.join("lua_configuration/trafficrouting_ingress");
    let mut scripts: Vec<PathBuf> = match fs::read_dir(&root) {
        Ok(entries) => {
            entries.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "lua")).collect()
        }
        Err(_) => Vec::new(),
    };
    scripts.sort();
    let mut entries = String::new();
    for script in scripts {
        let class_type = script.file_stem().unwrap().to_str().unwrap();
        let cases = included_cases(&root.join("testdata").join(class_type));
        entries.push_str(&format!(
            "BuiltinIngressScript {{ class_type: {class_type:?}, code: include_str!({:?}), testdata: &[{cases}] }},\n",
            script.display().to_string(),
        ));
    }
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("builtin_ingress_scripts.rs");
    fs::write(out, format!("pub static BUILTIN_INGRESS_SCRIPTS: &[BuiltinIngressScript] = &[\n{entries}];\n")).unwrap();
}

/// `(file name, include_str!(path)), ` for each `*.yaml|yml` in `testdata`, in name order.
fn included_cases(testdata: &Path) -> String {
    let mut files: Vec<PathBuf> = match fs::read_dir(testdata) {
        Ok(entries) => entries
            .map(|e| e.unwrap().path())
            .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
            .collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    files
        .iter()
        .map(|file| {
            let name = file.file_name().unwrap().to_str().unwrap();
            format!("({name:?}, include_str!({:?})), ", file.display().to_string())
        })
        .collect()
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = match fs::read_dir(dir) {
        Ok(entries) => entries.map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect(),
        Err(_) => Vec::new(),
    };
    dirs.sort();
    dirs
}

fn name_of(path: &Path) -> String {
    path.file_name().unwrap().to_str().unwrap().to_string()
}
