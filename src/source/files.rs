//! Reading input files: manifests (`-f`), scripts, `--lua-dir`, test cases.

use crate::error::Error;
use crate::scripts::{ScriptKey, ingress_key, parse_script_flag};
use crate::yaml::{self, Document};
use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

pub fn read_text(path: &Path) -> Result<String, Error> {
    fs::read_to_string(path).map_err(|e| Error::Input(format!("{}: {e}", path.display())))
}

/// Reads `-f` arguments: files, directories (their `.yaml`, `.yml` and `.json` files, recursively,
/// in name order) and `-` for stdin. Returns each document with the file it came from.
pub fn read_manifests(paths: &[String]) -> Result<Vec<(String, Document)>, Error> {
    let mut documents = Vec::new();
    for path in paths {
        if path == "-" {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(|e| Error::Input(format!("reading stdin: {e}")))?;
            documents.extend(parse(&text, "<stdin>")?);
            continue;
        }
        let path = Path::new(path);
        let files = if path.is_dir() { manifest_files(path)? } else { vec![path.to_path_buf()] };
        for file in files {
            let source = file.display().to_string();
            documents.extend(parse(&read_text(&file)?, &source)?);
        }
    }
    Ok(documents)
}

fn parse(text: &str, source: &str) -> Result<Vec<(String, Document)>, Error> {
    let documents = yaml::parse_documents(text, source).map_err(Error::Input)?;
    Ok(documents.into_iter().map(|d| (source.to_string(), d)).collect())
}

fn manifest_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for entry in sorted_entries(dir)? {
        if entry.is_dir() {
            files.extend(manifest_files(&entry)?);
        } else if matches!(entry.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json")) {
            files.push(entry);
        }
    }
    Ok(files)
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let read = fs::read_dir(dir).map_err(|e| Error::Input(format!("{}: {e}", dir.display())))?;
    let mut entries: Vec<PathBuf> = read.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    Ok(entries)
}

/// `--script Kind.group=FILE` flags, read.
pub fn read_script_flags(flags: &[String]) -> Result<BTreeMap<ScriptKey, (String, String)>, Error> {
    flags
        .iter()
        .map(|flag| {
            let (key, file) = parse_script_flag(flag).map_err(Error::Input)?;
            let code = read_text(Path::new(&file))?;
            Ok((key, (file, code)))
        })
        .collect()
}

/// `--lua-dir DIR`: every `DIR/<group>/<Kind>/trafficRouting.lua`, and every
/// `DIR/trafficrouting_ingress/<classType>.lua`.
pub fn read_lua_dir(dir: &Path) -> Result<BTreeMap<ScriptKey, (String, String)>, Error> {
    let custom =
        script_dirs(dir)?.into_iter().map(|found| (found.key, (found.script.display().to_string(), found.code)));
    let ingress = ingress_scripts_in(&dir.join(INGRESS_DIR))?
        .into_iter()
        .map(|found| (ingress_key(&found.class_type), (found.script.display().to_string(), found.code)));
    Ok(custom.chain(ingress).collect())
}

/// Where Ingress scripts live, as in the controller's `lua_configuration/`.
const INGRESS_DIR: &str = "trafficrouting_ingress";

/// A `trafficrouting_ingress/<classType>.lua` found on disk.
pub struct IngressScriptFile {
    pub class_type: String,
    pub script: PathBuf,
    pub code: String,
    /// Its `testdata/<classType>/*.yaml|yml` cases: (path, contents).
    pub testdata: Vec<(String, String)>,
}

/// Finds every Ingress script at or below `path`: a `trafficrouting_ingress/<classType>.lua`
/// file, or the ones in each `trafficrouting_ingress` folder under a directory.
pub fn ingress_scripts(path: &Path) -> Result<Vec<IngressScriptFile>, Error> {
    if path.is_file() {
        let in_ingress_dir = path.parent().and_then(Path::file_name).is_some_and(|n| n == INGRESS_DIR);
        return match in_ingress_dir && path.extension().is_some_and(|e| e == "lua") {
            true => Ok(vec![ingress_script(path)?]),
            false => Ok(Vec::new()),
        };
    }
    if path.file_name().is_some_and(|n| n == INGRESS_DIR) {
        return ingress_scripts_in(path);
    }
    let mut found = Vec::new();
    if path.is_dir() {
        for entry in sorted_entries(path)? {
            if entry.is_dir() && entry.file_name().is_some_and(|n| n != "testdata") {
                found.extend(ingress_scripts(&entry)?);
            }
        }
    }
    Ok(found)
}

/// The `*.lua` files directly in a `trafficrouting_ingress` folder (none when it is missing).
fn ingress_scripts_in(dir: &Path) -> Result<Vec<IngressScriptFile>, Error> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    sorted_entries(dir)?
        .iter()
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "lua"))
        .map(|p| ingress_script(p))
        .collect()
}

fn ingress_script(script: &Path) -> Result<IngressScriptFile, Error> {
    let class_type = script.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
    let testdata_dir = script.parent().unwrap_or(Path::new(".")).join("testdata").join(&class_type);
    Ok(IngressScriptFile {
        testdata: yaml_files(&testdata_dir)?,
        code: read_text(script)?,
        script: script.into(),
        class_type,
    })
}

/// The `*.yaml|yml` files directly in `dir`, read (none when it is missing): (path, contents).
fn yaml_files(dir: &Path) -> Result<Vec<(String, String)>, Error> {
    let mut found = Vec::new();
    if dir.is_dir() {
        for file in sorted_entries(dir)? {
            if matches!(file.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")) {
                found.push((file.display().to_string(), read_text(&file)?));
            }
        }
    }
    Ok(found)
}

/// Where HTTPRoute test cases live: the Gateway API provider has no script, only cases.
const HTTP_ROUTE_DIR: [&str; 2] = ["gateway.networking.k8s.io", "HTTPRoute"];

/// Finds the HTTPRoute test cases at or below the folder `path`: the
/// `gateway.networking.k8s.io/HTTPRoute/testdata/*.yaml|yml` files, read: (path, contents). A
/// folder with a `trafficRouting.lua` holds a custom script's cases instead (an HTTPRoute can
/// be a `customNetworkRefs` object too).
pub fn http_route_cases(path: &Path) -> Result<Vec<(String, String)>, Error> {
    if !path.is_dir() {
        return Ok(Vec::new());
    }
    let parents = [path.parent().and_then(Path::file_name), path.file_name()];
    if parents.map(|n| n.and_then(|n| n.to_str())) == HTTP_ROUTE_DIR.map(Some) {
        return match path.join("trafficRouting.lua").exists() {
            true => Ok(Vec::new()),
            false => yaml_files(&path.join("testdata")),
        };
    }
    let mut found = Vec::new();
    for entry in sorted_entries(path)? {
        if entry.is_dir() && entry.file_name().is_some_and(|n| n != "testdata") {
            found.extend(http_route_cases(&entry)?);
        }
    }
    Ok(found)
}

/// A `<group>/<Kind>/trafficRouting.lua` found on disk.
pub struct ScriptDir {
    pub key: ScriptKey,
    pub script: PathBuf,
    pub code: String,
    /// Its `testdata/*.yaml|yml` cases: (path, contents).
    pub testdata: Vec<(String, String)>,
}

/// Finds every `<group>/<Kind>/trafficRouting.lua` at or below `path` (a script file is taken
/// as is, its group and kind from its parent folders).
pub fn script_dirs(path: &Path) -> Result<Vec<ScriptDir>, Error> {
    if path.is_file() {
        return Ok(vec![script_dir(path)?]);
    }
    if !path.is_dir() {
        return Err(Error::Input(format!("{}: no such file or directory", path.display())));
    }
    let mut found = Vec::new();
    collect_scripts(path, &mut found)?;
    Ok(found)
}

fn collect_scripts(dir: &Path, found: &mut Vec<ScriptDir>) -> Result<(), Error> {
    let script = dir.join("trafficRouting.lua");
    if script.is_file() {
        found.push(script_dir(&script)?);
    }
    for entry in sorted_entries(dir)? {
        if entry.is_dir() && entry.file_name().is_some_and(|n| n != "testdata") {
            collect_scripts(&entry, found)?;
        }
    }
    Ok(())
}

fn script_dir(script: &Path) -> Result<ScriptDir, Error> {
    let absolute = fs::canonicalize(script).map_err(|e| Error::Input(format!("{}: {e}", script.display())))?;
    let name = |p: Option<&Path>| p.and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or_default().to_string();
    let kind_dir = absolute.parent();
    let key = (name(kind_dir.and_then(Path::parent)), name(kind_dir));
    let testdata = yaml_files(&script.parent().unwrap_or(Path::new(".")).join("testdata"))?;
    Ok(ScriptDir { key, script: script.to_path_buf(), code: read_text(script)?, testdata })
}

/// An XDG base directory: `$VAR`, else `$HOME/<fallback>` (e.g. `XDG_CACHE_HOME`, `.cache`).
pub fn xdg_dir(var: &str, fallback: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(fallback)))
}
