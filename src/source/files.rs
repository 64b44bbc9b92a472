//! Reading input files: manifests (`-f`, `-k`, stdin), scripts, `--lua-dir`, test cases, an
//! `obj`. Every read is bounded: an input over its limit is an error naming the input and the
//! limit, and is never read past it. Directories are walked in name order, each real folder
//! once (a symbolic link back to a folder above is not followed again), hidden entries left out.
//! And the one way local files are written (`write_whole`: backups, recordings, `lua-obj`'s
//! file, the discovery cache, the external diff's files): whole or not at all.

use crate::error::Error;
use crate::gojson;
use crate::scripts::{self, ScriptKey, ingress_key, parse_script_flag};
use crate::snapshot;
use crate::yaml::{self, Document};
use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A size limit, and the input it applies to (for the message when it is passed).
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    pub bytes: usize,
    pub input: &'static str,
}

/// Manifests: every `-f` file, stdin and `kubectl kustomize`'s output together. A 3,000-object
/// cluster export is 13.6 MB (see `yaml::YAML_LIMITS`).
pub const MANIFESTS: Limit = Limit { bytes: 64 << 20, input: "manifests (-f, -k and stdin together)" };
/// A script file (`--script`, `--lua-dir`, `test`, `eval`); a ConfigMap holds 1 MiB at most.
pub const SCRIPT: Limit = Limit { bytes: scripts::MAX_SCRIPT_BYTES, input: "a script" };
/// An `obj` (`eval --obj`) or an object file (`restore --from-backup`): the API server stores an
/// object of 1.5 MiB at most, and its YAML takes more room than its JSON.
pub const OBJECT: Limit = Limit { bytes: 8 << 20, input: "an obj or object file" };
/// A test case: a Rollout, the original object, and one expected object per step.
pub const TEST_CASE: Limit = Limit { bytes: 16 << 20, input: "a test case" };
/// What `kubectl kustomize` writes to stderr is kept up to this size, for the error message.
const KUSTOMIZE_STDERR: usize = 64 << 10;
/// How long `kubectl kustomize DIR` may run: it may fetch remote bases.
pub const KUSTOMIZE_TIMEOUT: Duration = Duration::from_secs(120);

/// Stdin (`-`) given as two inputs: the first would read it all, and the second nothing.
pub const STDIN_TWICE: &str = "stdin (-) given twice: it can be read once";
/// What stdin (`-f -`) is called in messages, as a file is by its path.
pub const STDIN: &str = "<stdin>";

/// A file's text, or stdin's when `path` is `-`.
pub fn read_text(path: &Path, limit: Limit) -> Result<String, Error> {
    if path == Path::new("-") {
        return read_bounded(std::io::stdin().lock(), STDIN, limit.bytes, limit);
    }
    utf8(read_file(path, limit)?, &path.display().to_string())
}

/// A file's bytes (not stdin's: `-` is a file's name here).
pub fn read_file(path: &Path, limit: Limit) -> Result<Vec<u8>, Error> {
    // A directory opens, and fails only when read, in the OS's words.
    if path.is_dir() {
        return Err(not_a(path, &path.display().to_string(), limit.input));
    }
    let file = fs::File::open(path).map_err(|e| Error::Input(format!("{}: {e}", path.display())))?;
    read_bounded_bytes(file, &path.display().to_string(), limit.bytes, limit)
}

/// At most `max` bytes of UTF-8 text: one byte more is an error naming `limit`.
fn read_bounded(reader: impl Read, source: &str, max: usize, limit: Limit) -> Result<String, Error> {
    utf8(read_bounded_bytes(reader, source, max, limit)?, source)
}

/// At most `max` bytes: one byte more is an error naming `limit`.
fn read_bounded_bytes(reader: impl Read, source: &str, max: usize, limit: Limit) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    reader.take(max as u64 + 1).read_to_end(&mut bytes).map_err(|e| Error::Input(format!("{source}: {e}")))?;
    if bytes.len() > max {
        return Err(over_limit(source, limit));
    }
    Ok(bytes)
}

/// A file's bytes as kubectl's and kube's readers take them: UTF-16 after its byte-order mark
/// (what Windows PowerShell 5.1's `>` writes), else UTF-8 (without its byte-order mark). For
/// manifests and kubeconfigs.
pub fn text_after_bom(bytes: Vec<u8>, source: &str) -> Result<String, Error> {
    let utf16 = |bytes: &[u8], unit: fn([u8; 2]) -> u16| {
        let not_utf16 = |why: &str| Error::Input(format!("{source}: not UTF-16 text{why}"));
        if bytes.len() % 2 == 1 {
            return Err(not_utf16(" (an odd number of bytes)"));
        }
        let units: Vec<u16> = bytes.chunks_exact(2).map(|pair| unit([pair[0], pair[1]])).collect();
        String::from_utf16(&units).map_err(|_| not_utf16(""))
    };
    match bytes.as_slice() {
        [0xFF, 0xFE, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, u16::from_be_bytes),
        [0xEF, 0xBB, 0xBF, rest @ ..] => utf8(rest.to_vec(), source),
        _ => utf8(bytes, source),
    }
}

/// `bytes` as UTF-8 text, or an error naming `source` and the line and column (in bytes) of the
/// first byte that is not.
fn utf8(bytes: Vec<u8>, source: &str) -> Result<String, Error> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..at];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let column = at - before.iter().rposition(|b| *b == b'\n').map_or(0, |newline| newline + 1) + 1;
        Error::Input(format!("{source}:{line}:{column}: not UTF-8 text (byte {at})"))
    })
}

fn over_limit(source: &str, limit: Limit) -> Error {
    let hint = if limit.input == MANIFESTS.input {
        ": read only what the plan needs (Rollouts, TrafficRoutings, their gateway objects and the script ConfigMap)"
    } else {
        ""
    };
    Error::Input(format!("{source}: the input passes {} MiB, the limit for {}{hint}", limit.bytes >> 20, limit.input))
}

/// Manifests read, with what was left out.
#[derive(Debug, Default)]
pub struct Manifests {
    /// Each document with the file (or `<stdin>`, `kustomize DIR`) it came from.
    pub documents: Vec<(String, Document)>,
    /// The files read.
    pub files: usize,
    /// What was not read, one line each (shown with -v): hidden entries, subdirectories without
    /// -R, a folder met again through a symbolic link.
    pub skipped: Vec<String>,
    /// Whether a directory had subdirectories that were not read (no -R).
    pub subdirectories_left: bool,
    /// The bytes read so far, all under `MANIFESTS`.
    bytes: usize,
}

impl Manifests {
    /// Reads one more file (or stdin), within what is left of `MANIFESTS`.
    fn read(&mut self, reader: impl Read, source: &str) -> Result<(), Error> {
        let bytes = read_bounded_bytes(reader, source, MANIFESTS.bytes - self.bytes, MANIFESTS)?;
        self.bytes += bytes.len();
        let text = text_after_bom(bytes, source)?;
        let mut documents = yaml::parse_documents_keeping(&text, source, snapshot::keeps_text).map_err(Error::Input)?;
        // As the API server would store them: `replicas: 1.0` is 1.
        documents.iter_mut().for_each(|d| gojson::as_go_reads_yaml(&mut d.value));
        self.documents.extend(documents.into_iter().map(|d| (source.to_string(), d)));
        self.files += 1;
        Ok(())
    }
}

/// Reads `-f` arguments as kubectl does: files, directories (their `.yaml`, `.yml` and `.json`
/// files in name order; with `recursive`, those of their subdirectories too) and `-` for stdin.
pub fn read_manifests(paths: &[String], recursive: bool) -> Result<Manifests, Error> {
    if paths.iter().filter(|path| *path == "-").count() > 1 {
        return Err(Error::Input(STDIN_TWICE.to_string()));
    }
    let mut manifests = Manifests::default();
    for path in paths {
        if path.is_empty() {
            return Err(Error::Input("-f \"\": an empty path (an unset variable?)".into()));
        }
        if path == "-" {
            let stdin = std::io::stdin();
            if std::io::IsTerminal::is_terminal(&stdin) {
                crate::stderr::line("note: reading manifests from the terminal (-f -): end them with Ctrl-D");
            }
            manifests.read(stdin.lock(), STDIN)?;
            continue;
        }
        let path = Path::new(path);
        let files = if path.is_dir() {
            let walk = walk(path, recursive, |_| true)?;
            manifests.skipped.extend(walk.skipped);
            manifests.subdirectories_left |= walk.subdirectories_left;
            let (read, passed_over): (Vec<PathBuf>, Vec<PathBuf>) =
                walk.files.into_iter().partition(|f| has_extension(f, &["yaml", "yml", "json"]));
            manifests.skipped.extend(
                passed_over
                    .iter()
                    .map(|f| format!("skipped {}: not .yaml, .yml or .json, as kubectl reads a folder", f.display())),
            );
            read
        } else {
            vec![path.to_path_buf()]
        };
        for file in files {
            let source = file.display().to_string();
            let handle = fs::File::open(&file).map_err(|e| Error::Input(format!("{source}: {e}")))?;
            manifests.read(handle, &source)?;
        }
    }
    Ok(manifests)
}

/// `-k DIR`: the manifests `kubectl kustomize DIR` builds, as kubectl's own `-k` reads them.
/// Its output is bounded by `MANIFESTS`, its run by `KUSTOMIZE_TIMEOUT`.
pub fn kustomize(dir: &Path) -> Result<Manifests, Error> {
    let command = format!("kubectl kustomize {}", dir.display());
    let mut child = Command::new("kubectl")
        .arg("kustomize")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::Input(format!(
                "-k runs `{command}`, but kubectl is not on PATH: install kubectl, or build the manifests with kustomize and pass them with -f -"
            )),
            _ => Error::Input(format!("running `{command}`: {e}")),
        })?;
    let (mut stdout, mut stderr) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
    let (sender, output) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let read = (&mut stdout).take(MANIFESTS.bytes as u64 + 1).read_to_end(&mut bytes);
        let _ = sender.send(read.map(|_| bytes));
    });
    let errors = std::thread::spawn(move || {
        let mut kept = Vec::new();
        let _ = (&mut stderr).take(KUSTOMIZE_STDERR as u64).read_to_end(&mut kept);
        // The rest is drained, so that kubectl never blocks on a full pipe.
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        String::from_utf8_lossy(&kept).trim().to_string()
    });
    let finished = finish(&mut child, &output, &command);
    if finished.is_err() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let (bytes, status) = finished?;
    if !status.success() {
        let errors = errors.join().unwrap_or_default();
        return Err(Error::Input(format!("`{command}` failed ({status}): {errors}")));
    }
    let mut manifests = Manifests::default();
    manifests.read(bytes.as_slice(), &format!("kustomize {}", dir.display()))?;
    Ok(manifests)
}

/// `kubectl kustomize`'s output and exit status, within `KUSTOMIZE_TIMEOUT` and `MANIFESTS`.
fn finish(
    child: &mut std::process::Child,
    output: &std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    command: &str,
) -> Result<(Vec<u8>, std::process::ExitStatus), Error> {
    let deadline = Instant::now() + KUSTOMIZE_TIMEOUT;
    let timed_out = || Error::Input(format!("`{command}` did not finish within {}s", KUSTOMIZE_TIMEOUT.as_secs()));
    let bytes = output
        .recv_timeout(KUSTOMIZE_TIMEOUT)
        .map_err(|_| timed_out())?
        .map_err(|e| Error::Input(format!("reading the output of `{command}`: {e}")))?;
    if bytes.len() > MANIFESTS.bytes {
        return Err(over_limit(command, MANIFESTS));
    }
    loop {
        match child.try_wait().map_err(|e| Error::Input(format!("waiting for `{command}`: {e}")))? {
            Some(status) => return Ok((bytes, status)),
            None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            None => return Err(timed_out()),
        }
    }
}

fn has_extension(path: &Path, extensions: &[&str]) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| extensions.contains(&e))
}

/// What a directory walk found.
#[derive(Debug, Default)]
struct Walk {
    /// Every directory walked, the root first, in the order met.
    directories: Vec<PathBuf>,
    /// Every file met, in name order, depth first.
    files: Vec<PathBuf>,
    skipped: Vec<String>,
    subdirectories_left: bool,
}

/// Walks `root`'s entries in name order, and with `recursive` those of each subdirectory
/// `descend` accepts, depth first. Each real directory is walked once, however symbolic links
/// lead back to it; hidden entries (`.git`, `.github/`) are left out.
fn walk(root: &Path, recursive: bool, descend: impl Fn(&Path) -> bool) -> Result<Walk, Error> {
    let mut found = Walk::default();
    let mut seen = HashSet::new();
    walk_into(root, recursive, &descend, &mut seen, &mut found)?;
    Ok(found)
}

fn walk_into(
    dir: &Path,
    recursive: bool,
    descend: &dyn Fn(&Path) -> bool,
    seen: &mut HashSet<PathBuf>,
    found: &mut Walk,
) -> Result<(), Error> {
    let real = fs::canonicalize(dir).map_err(|e| Error::Input(format!("{}: {e}", dir.display())))?;
    if !seen.insert(real.clone()) {
        found.skipped.push(format!("skipped {}: the folder {} again, already read", dir.display(), real.display()));
        return Ok(());
    }
    found.directories.push(dir.to_path_buf());
    for entry in sorted_entries(dir)? {
        if entry.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')) {
            found.skipped.push(format!("skipped {}: hidden", entry.display()));
        } else if special_file(&entry) {
            found.skipped.push(format!("skipped {}: {SPECIAL_FILE}", entry.display()));
        } else if !entry.is_dir() {
            found.files.push(entry);
        } else if !recursive {
            found.skipped.push(format!("skipped {}: a subdirectory (-R reads subdirectories)", entry.display()));
            found.subdirectories_left = true;
        } else if descend(&entry) {
            walk_into(&entry, recursive, descend, seen, found)?;
        }
    }
    Ok(())
}

/// Why a folder's named pipe, socket or device is not read: opening a pipe without a writer
/// would wait for one.
const SPECIAL_FILE: &str = "not a regular file (a named pipe, a socket or a device), not read";

/// Whether `path` is there and neither a regular file nor a folder (a link is followed; one
/// that leads nowhere is read, to say so).
fn special_file(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|found| !found.is_file() && !found.is_dir())
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let read = fs::read_dir(dir).map_err(|e| Error::Input(format!("{}: {e}", dir.display())))?;
    let mut entries: Vec<PathBuf> = read.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    Ok(entries)
}

/// `--script Kind.group=FILE` flags, read.
pub fn read_script_flags(flags: &[String]) -> Result<BTreeMap<ScriptKey, (String, String)>, Error> {
    let mut scripts: BTreeMap<ScriptKey, (String, String)> = BTreeMap::new();
    for flag in flags {
        let (key, file) = parse_script_flag(flag).map_err(Error::Input)?;
        // One would silently replace the other.
        if let Some((first, _)) = scripts.get(&key) {
            return Err(Error::Input(format!(
                "--script {flag:?}: a second script for {}.{} (the first is {first}): give one per kind",
                key.1, key.0
            )));
        }
        let code = read_text(Path::new(&file), SCRIPT).map_err(|e| match e {
            Error::Input(message) => Error::Input(format!("--script {flag:?}: {message}")),
            other => other,
        })?;
        scripts.insert(key, (file, code));
    }
    Ok(scripts)
}

/// `--lua-dir DIR`: every `DIR/<group>/<Kind>/trafficRouting.lua`, and every
/// `DIR/trafficrouting_ingress/<classType>.lua`.
pub fn read_lua_dir(dir: &Path) -> Result<BTreeMap<ScriptKey, (String, String)>, Error> {
    // A file would be taken as a script whose group and kind are its parent folders' names.
    if !dir.is_dir() {
        return Err(not_a(dir, &format!("--lua-dir {}", dir.display()), "a directory"));
    }
    let scripts = script_dirs(dir)?;
    for misnamed in &scripts.misnamed {
        crate::stderr::line(&format!(
            "warning: --lua-dir {}: {} is not read: a kind's script is read from a file named {SCRIPT_FILE} (the name is case-sensitive); rename it, or another script runs in its place",
            dir.display(),
            misnamed.display()
        ));
    }
    let custom = scripts.found.into_iter().map(|found| (found.key, (found.script.display().to_string(), found.code)));
    let ingress = ingress_scripts_in(&dir.join(INGRESS_DIR))?
        .into_iter()
        .map(|found| (ingress_key(&found.class_type), (found.script.display().to_string(), found.code)));
    Ok(custom.chain(ingress).collect())
}

/// Where Ingress scripts live, as in the controller's `lua_configuration/`.
pub const INGRESS_DIR: &str = "trafficrouting_ingress";

/// A `trafficrouting_ingress/<classType>.lua` found on disk.
pub struct IngressScriptFile {
    pub class_type: String,
    pub script: PathBuf,
    pub code: String,
    /// Its `testdata/<classType>/*.yaml|yml` cases: (path, contents).
    pub testdata: Vec<(String, String)>,
}

/// Whether the file at `path` is in a `trafficrouting_ingress` folder, as an Ingress script is.
fn in_ingress_dir(path: &Path) -> bool {
    path.parent().and_then(Path::file_name).is_some_and(|n| n == INGRESS_DIR)
}

/// Finds every Ingress script at or below `path`: a `trafficrouting_ingress/<classType>.lua`
/// file, or the ones in each `trafficrouting_ingress` folder under a directory.
pub fn ingress_scripts(path: &Path) -> Result<Vec<IngressScriptFile>, Error> {
    if path.is_file() {
        return match in_ingress_dir(path) && path.extension().is_some_and(|e| e == "lua") {
            true => Ok(vec![ingress_script(path)?]),
            false => Ok(Vec::new()),
        };
    }
    if !path.is_dir() {
        return Err(not_a(path, &path.display().to_string(), "a file or directory"));
    }
    // The folder itself, or every `trafficrouting_ingress` folder below it (each walked once).
    let walk = walk(path, true, |dir| dir.file_name().is_some_and(|n| n != "testdata"))?;
    let mut found = Vec::new();
    for dir in walk.directories.iter().filter(|d| d.file_name().is_some_and(|n| n == INGRESS_DIR)) {
        found.extend(ingress_scripts_in(dir)?);
    }
    Ok(found)
}

/// The `*.lua` files directly in a `trafficrouting_ingress` folder (none when it is missing).
fn ingress_scripts_in(dir: &Path) -> Result<Vec<IngressScriptFile>, Error> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    // A hidden name is no class's (an editor's lock, `.#nginx.lua`, is a link that leads nowhere).
    let hidden = |p: &Path| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
    let mut found = Vec::new();
    for script in sorted_entries(dir)?.iter().filter(|p| !hidden(p) && p.extension().is_some_and(|e| e == "lua")) {
        if is_script_file(script)? {
            found.push(ingress_script(script)?);
        }
    }
    Ok(found)
}

fn ingress_script(script: &Path) -> Result<IngressScriptFile, Error> {
    let class_type = script.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
    let testdata_dir = script.parent().unwrap_or(Path::new(".")).join("testdata").join(&class_type);
    Ok(IngressScriptFile {
        testdata: yaml_files(&testdata_dir)?,
        code: read_text(script, SCRIPT)?,
        script: script.into(),
        class_type,
    })
}

/// The `*.yaml|yml` files in `dir` and in its subfolders, read in their names' order (none when
/// it is missing): (path, contents). As the controller's `go test` walks a testdata folder
/// (`filepath.Walk`): hidden ones too, and a link to a folder is not followed (so no folder is
/// read twice).
fn yaml_files(dir: &Path) -> Result<Vec<(String, String)>, Error> {
    let mut found = Vec::new();
    if dir.is_dir() {
        yaml_files_into(dir, &mut found)?;
    }
    Ok(found)
}

fn yaml_files_into(dir: &Path, found: &mut Vec<(String, String)>) -> Result<(), Error> {
    for entry in sorted_entries(dir)? {
        if fs::symlink_metadata(&entry).is_ok_and(|found| found.is_dir()) {
            yaml_files_into(&entry, found)?;
        } else if matches!(entry.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")) {
            // A case file `go test` would wait on or read without end: said, not passed over.
            if special_file(&entry) {
                return Err(Error::Input(format!(
                    "{}: not a regular file (a named pipe, a socket or a device): a test case is read from a file; put the case there or remove it",
                    entry.display()
                )));
            }
            found.push((entry.display().to_string(), read_text(&entry, TEST_CASE)?));
        }
    }
    Ok(())
}

/// Where HTTPRoute test cases live: the Gateway API provider has no script, only cases.
const HTTP_ROUTE_DIR: [&str; 2] = [crate::model::http_route::GROUP, crate::model::http_route::KIND];

/// The script of a custom ref's folder, as the controller names it.
const SCRIPT_FILE: &str = "trafficRouting.lua";

/// Whether `dir` is a `gateway.networking.k8s.io/HTTPRoute` folder.
fn is_http_route_dir(dir: &Path) -> bool {
    let names = [dir.parent().and_then(Path::file_name), dir.file_name()];
    names.map(|n| n.and_then(|n| n.to_str())) == HTTP_ROUTE_DIR.map(Some)
}

/// Test cases no script is next to, which `test` would otherwise pass over without a word.
pub struct UnscriptedCases {
    /// `<group>/<Kind>` or `trafficrouting_ingress/<classType>`.
    pub label: String,
    /// The script that was looked for (and what `.lua` files the folder has instead).
    pub looked_for: String,
    /// Its cases: (path, contents).
    pub cases: Vec<(String, String)>,
}

/// Finds the test cases at or below the folder `path` that no script is next to: a
/// `testdata/*.yaml|yml` whose folder has no `trafficRouting.lua` (and is no
/// `trafficrouting_ingress` or HTTPRoute folder), and a `trafficrouting_ingress/testdata/<classType>`
/// with no `trafficrouting_ingress/<classType>.lua`.
pub fn unscripted_cases(path: &Path) -> Result<Vec<UnscriptedCases>, Error> {
    if !path.is_dir() {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    let mut look = |label: String, script: PathBuf, testdata: &Path| -> Result<(), Error> {
        let cases = yaml_files(testdata)?;
        if script.is_file() || cases.is_empty() {
            return Ok(());
        }
        let folder = script.parent().unwrap_or(Path::new("."));
        let others: Vec<String> = sorted_entries(folder)?
            .iter()
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "lua"))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        let wanted = script.file_name().unwrap_or_default().to_string_lossy();
        let mut looked_for = script.display().to_string();
        if !others.is_empty() {
            let case = others.iter().any(|o| o.eq_ignore_ascii_case(&wanted));
            let why = if case { ": the name is case-sensitive" } else { "" };
            looked_for.push_str(&format!(" (the folder has {}{why})", others.join(", ")));
        }
        found.push(UnscriptedCases { label, looked_for, cases });
        Ok(())
    };
    let name = |p: Option<&Path>| p.and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
    let walk = walk(path, true, |dir| dir.file_name().is_some_and(|n| n != "testdata"))?;
    for dir in &walk.directories {
        if name(Some(dir)).as_deref() == Some(INGRESS_DIR) {
            let testdata = dir.join("testdata");
            let classes = if testdata.is_dir() { sorted_entries(&testdata)? } else { Vec::new() };
            for class in classes.iter().filter(|c| c.is_dir()) {
                let class_type = name(Some(class)).unwrap_or_default();
                look(format!("{INGRESS_DIR}/{class_type}"), dir.join(format!("{class_type}.lua")), class)?;
            }
        } else if !is_http_route_dir(dir) {
            let label = format!("{}/{}", name(dir.parent()).unwrap_or_default(), name(Some(dir)).unwrap_or_default());
            look(label, dir.join(SCRIPT_FILE), &dir.join("testdata"))?;
        }
    }
    Ok(found)
}

/// Finds the HTTPRoute test cases at or below the folder `path`: the
/// `gateway.networking.k8s.io/HTTPRoute/testdata/*.yaml|yml` files, read: (path, contents). A
/// folder with a `trafficRouting.lua` holds a custom script's cases instead (an HTTPRoute can
/// be a `customNetworkRefs` object too).
pub fn http_route_cases(path: &Path) -> Result<Vec<(String, String)>, Error> {
    if !path.is_dir() {
        return Ok(Vec::new());
    }
    // The folder itself, or every `gateway.networking.k8s.io/HTTPRoute` folder below it (each
    // walked once); one with a `trafficRouting.lua` holds that script's cases instead.
    let is_route_dir = |dir: &Path| is_http_route_dir(dir) && !dir.join(SCRIPT_FILE).exists();
    let walk = walk(path, true, |dir| dir.file_name().is_some_and(|n| n != "testdata"))?;
    let mut found = Vec::new();
    for dir in walk.directories.iter().filter(|d| is_route_dir(d)) {
        found.extend(yaml_files(&dir.join("testdata"))?);
    }
    Ok(found)
}

/// The error for `path` (shown as `shown`), which is not `wanted`: missing, or what it is.
fn not_a(path: &Path, shown: &str, wanted: &str) -> Error {
    use std::os::unix::fs::FileTypeExt;
    let is = match fs::metadata(path).map(|metadata| metadata.file_type()) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        Err(e) => e.to_string(),
        Ok(kind) if kind.is_file() => format!("a file, not {wanted}"),
        Ok(kind) if kind.is_dir() => format!("a directory, not {wanted}"),
        Ok(kind) if kind.is_fifo() => format!("a FIFO, not {wanted}"),
        Ok(kind) if kind.is_socket() => format!("a socket, not {wanted}"),
        Ok(kind) if kind.is_char_device() || kind.is_block_device() => format!("a device, not {wanted}"),
        Ok(_) => format!("not {wanted}"),
    };
    Error::Input(format!("{shown}: {is}"))
}

/// The script that `record --dir` keeps beside its test cases.
pub struct ScriptBesideCase {
    /// The folder laid out as `lua_configuration/` (what `--lua-dir` takes).
    pub tree: PathBuf,
    pub key: ScriptKey,
    pub script: PathBuf,
    pub code: String,
}

/// The script beside the test case file `case`, laid out as `record --dir` and
/// `lua_configuration/` lay them out: `<group>/<Kind>/testdata/x.yaml` beside
/// `<group>/<Kind>/trafficRouting.lua`, `trafficrouting_ingress/testdata/<classType>/x.yaml`
/// beside `trafficrouting_ingress/<classType>.lua`. None for a case laid out otherwise, or
/// without that script (or one that cannot be read within the limit of a script).
pub fn script_beside_case(case: &Path) -> Option<ScriptBesideCase> {
    let absolute = fs::canonicalize(case).ok()?;
    let name = |n: usize| absolute.ancestors().nth(n).and_then(Path::file_name).and_then(|n| n.to_str());
    // The folder `n` levels up, as given when the path goes up that far (`rec/…`), else absolute.
    let up = |n: usize| match case.ancestors().nth(n) {
        Some(p) if p.as_os_str().is_empty() => PathBuf::from("."),
        Some(p) => p.to_path_buf(),
        None => absolute.ancestors().nth(n).unwrap_or(Path::new("/")).to_path_buf(),
    };
    let (key, script) = match [name(1), name(2), name(3)] {
        [Some(class_type), Some("testdata"), Some(INGRESS_DIR)] => {
            (ingress_key(class_type), up(3).join(format!("{class_type}.lua")))
        }
        [Some("testdata"), Some(kind), Some(group)] => {
            ((group.to_string(), kind.to_string()), up(2).join("trafficRouting.lua"))
        }
        _ => return None,
    };
    let code = read_text(&script, SCRIPT).ok()?;
    Some(ScriptBesideCase { tree: up(4), key, code, script })
}

/// A `<group>/<Kind>/trafficRouting.lua` found on disk.
pub struct ScriptDir {
    pub key: ScriptKey,
    pub script: PathBuf,
    pub code: String,
    /// Its `testdata/*.yaml|yml` cases: (path, contents).
    pub testdata: Vec<(String, String)>,
}

/// The `<group>/<Kind>/trafficRouting.lua` scripts at or below a path (see `script_dirs`).
pub struct ScriptDirs {
    pub found: Vec<ScriptDir>,
    /// The files outside testdata folders that the controller's `go test` also runs as scripts
    /// though they are not `trafficRouting.lua`: it takes every path that contains that name (a
    /// backup `trafficRouting.lua.orig`, `old-trafficRouting.lua`), and runs the cases of the
    /// testdata folder beside it with it.
    pub go_test_also_runs: Vec<PathBuf>,
    /// The files named as a script but for their case (`trafficrouting.lua`), with no script of
    /// the right name beside them, which neither the controller nor this tool reads.
    pub misnamed: Vec<PathBuf>,
}

/// Finds every `<group>/<Kind>/trafficRouting.lua` at or below `path` (a script file is taken
/// as is, its group and kind from its parent folders; none for an Ingress script).
pub fn script_dirs(path: &Path) -> Result<ScriptDirs, Error> {
    if path.is_file() {
        // An Ingress script's cases are in class folders, which `ingress_scripts` reads.
        let found = if in_ingress_dir(path) { Vec::new() } else { vec![script_dir(path)?] };
        return Ok(ScriptDirs { found, go_test_also_runs: Vec::new(), misnamed: Vec::new() });
    }
    if !path.is_dir() {
        return Err(not_a(path, &path.display().to_string(), "a file or directory"));
    }
    let walk = walk(path, true, |dir| dir.file_name().is_some_and(|n| n != "testdata"))?;
    let mut found = Vec::new();
    for script in walk.directories.iter().map(|dir| dir.join(SCRIPT_FILE)) {
        if is_script_file(&script)? {
            found.push(script_dir(&script)?);
        }
    }
    let named =
        |file: &PathBuf, test: &dyn Fn(&str) -> bool| file.file_name().and_then(|n| n.to_str()).is_some_and(test);
    let also = |file: &&PathBuf| named(file, &|n| n != SCRIPT_FILE && n.contains(SCRIPT_FILE));
    // Beside a script of the right name, it is no script that was meant (a backup, say).
    let misnamed = |file: &&PathBuf| {
        named(file, &|n| n != SCRIPT_FILE && n.eq_ignore_ascii_case(SCRIPT_FILE))
            && !file.with_file_name(SCRIPT_FILE).is_file()
    };
    Ok(ScriptDirs {
        found,
        go_test_also_runs: walk.files.iter().filter(also).cloned().collect(),
        misnamed: walk.files.iter().filter(misnamed).cloned().collect(),
    })
}

/// Whether a script is at `path`, where one is looked for: a regular file (through links), or
/// nothing. Anything else there is an error, so that another script (the built-in one) never
/// runs in its place without a word.
fn is_script_file(path: &Path) -> Result<bool, Error> {
    if path.is_file() {
        return Ok(true);
    }
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        _ => Err(Error::Input(format!(
            "{}: not a regular file (a folder, a named pipe, a socket, a device or a link that leads nowhere): a script is read from a file; put the script there or remove it",
            path.display()
        ))),
    }
}

fn script_dir(script: &Path) -> Result<ScriptDir, Error> {
    let absolute = fs::canonicalize(script).map_err(|e| Error::Input(format!("{}: {e}", script.display())))?;
    let name = |p: Option<&Path>| p.and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or_default().to_string();
    let kind_dir = absolute.parent();
    let key = (name(kind_dir.and_then(Path::parent)), name(kind_dir));
    let testdata = yaml_files(&script.parent().unwrap_or(Path::new(".")).join("testdata"))?;
    Ok(ScriptDir { key, script: script.to_path_buf(), code: read_text(script, SCRIPT)?, testdata })
}

/// An XDG base directory: `$VAR`, else `$HOME/<fallback>` (e.g. `XDG_CACHE_HOME`, `.cache`).
/// An empty or relative value counts as unset, as the XDG spec says (a relative one would put
/// the files wherever the command runs).
pub fn xdg_dir(var: &str, fallback: &str) -> Option<PathBuf> {
    let absolute = |name: &str| std::env::var_os(name).map(PathBuf::from).filter(|path| path.is_absolute());
    absolute(var).or_else(|| absolute("HOME").map(|home| home.join(fallback)))
}

/// What [`write_whole`] does about a file already at its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Replace it: a regular file's permissions carry over; a symbolic link stays, and the file
    /// it points at is replaced.
    Replace,
    /// Keep it: the write fails with `AlreadyExists` (a backup never replaces another).
    Keep,
}

/// The permissions of a file only its owner may read (Unix): a backup holds a whole object,
/// every annotation included.
pub const OWNER_ONLY: u32 = 0o600;
/// The permissions of any other new file, before the umask (Unix), as `std::fs::write` gives.
pub const ORDINARY: u32 = 0o666;

/// Writes a file the user named (`record --output-file` and `--dir`, `lua-obj --output-file`)
/// whole or not at all: a failed write keeps the file it would replace. A pipe or a device
/// (`/dev/stdout`, `>(gzip > cases.gz)`) is written to as it is: there is no file to keep, and
/// none to rename over it.
pub fn write_output(path: &Path, text: &str) -> Result<(), Error> {
    let written = match fs::metadata(path) {
        Ok(found) if !found.is_file() => fs::write(path, text),
        // One the user may not write is refused, as the shell's `>` refuses it: a rename would
        // replace it all the same (its folder's permission is what a rename asks).
        Ok(_) => fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|_| write_whole(path, text.as_bytes(), Existing::Replace, ORDINARY)),
        Err(_) => write_whole(path, text.as_bytes(), Existing::Replace, ORDINARY),
    };
    written.map_err(|e| Error::Input(format!("writing {}: {e}", path.display())))
}

/// How many symbolic links `write_whole` follows, one to the next, before it gives up (as
/// Linux does, `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// Writes `bytes` to `path` whole or not at all, so that a full disk, a crash or a signal never
/// leaves part of a file under its name nor loses the file it replaces: the bytes go to a new
/// temporary file next to it (`.<name>.<pid>.<random>.partial`, made with `mode`), flushed to
/// the disk, which is then moved into place as `existing` says. On any failure the temporary
/// file is removed and `path` is as it was.
pub fn write_whole(path: &Path, bytes: &[u8], existing: Existing, mode: u32) -> std::io::Result<()> {
    let target = match existing {
        Existing::Replace => link_target(path)?,
        Existing::Keep => path.to_path_buf(),
    };
    let Some(name) = target.file_name() else {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"));
    };
    let dir = target.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let replaced = match existing {
        Existing::Replace => fs::metadata(&target).ok().map(|found| found.permissions()),
        Existing::Keep => None,
    };
    let (temporary, file) = new_temporary(dir, &name.to_string_lossy(), mode)?;
    let placed = write_synced(file, bytes, replaced).and_then(|()| match existing {
        Existing::Replace => fs::rename(&temporary, &target),
        // A link, unlike a rename, never replaces what is there.
        Existing::Keep => fs::hard_link(&temporary, &target),
    });
    // This run's own temporary file: after a link the file is also at `target`; after a
    // failure it is a part. (After a rename it is gone, and the name may be someone else's.)
    if placed.is_err() || existing == Existing::Keep {
        let _ = fs::remove_file(&temporary);
    }
    placed?;
    // The new name is on the disk too, not only the bytes (a filesystem that cannot sync a
    // folder keeps it as it can).
    if let Ok(dir) = fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// The file that writing to `path` writes: `path` itself, or where the symbolic link at `path`
/// leads, through a chain of links (at most `MAX_LINKS`), even when the last one leads nowhere
/// yet (as `std::fs::write` and a shell's `>` create the missing file). A relative link is
/// relative to the folder it is in. The caller's error names `path`.
fn link_target(path: &Path) -> std::io::Result<PathBuf> {
    let mut target = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        match fs::symlink_metadata(&target) {
            Ok(found) if found.file_type().is_symlink() => {
                let next = fs::read_link(&target)?;
                target = target.parent().unwrap_or(Path::new("")).join(next);
            }
            _ => return Ok(target),
        }
    }
    Err(std::io::Error::other(format!("more than {MAX_LINKS} symbolic links, one to the next (a loop?)")))
}

/// A new, empty file in `dir` for the bytes of `name`, made with `mode`. Its name holds the pid
/// and 64 random bits: pids repeat across PID namespaces (containers writing to a shared
/// volume), and a file already at the name (another run's) is never opened nor removed. The
/// error names the temporary file.
fn new_temporary(dir: &Path, name: &str, mode: u32) -> std::io::Result<(PathBuf, fs::File)> {
    use std::hash::BuildHasher;
    // Each `RandomState::new()` hashes with keys of its own: a thread's first drawn from the
    // system's random source, counted on from there.
    let random = std::collections::hash_map::RandomState::new().hash_one(name);
    let temporary = dir.join(format!(".{name}.{}.{random:016x}.partial", std::process::id()));
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    match options.open(&temporary) {
        Ok(file) => Ok((temporary, file)),
        // Not `AlreadyExists` itself, whatever the cause: to callers that says the file at
        // `path` was kept.
        Err(e) => Err(std::io::Error::other(format!("making {}: {e}", temporary.display()))),
    }
}

/// Fills the new `file` with `bytes`, flushed to the disk, and gives it the permissions of the
/// file it is to replace, if any.
fn write_synced(mut file: fs::File, bytes: &[u8], permissions: Option<fs::Permissions>) -> std::io::Result<()> {
    if let Some(permissions) = permissions {
        file.set_permissions(permissions)?;
    }
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_test_also_runs_every_file_whose_name_holds_the_scripts() {
        let dir = tempfile::tempdir().unwrap();
        let kind = dir.path().join("example.com/Thing");
        std::fs::create_dir_all(kind.join("testdata")).unwrap();
        for name in ["trafficRouting.lua", "trafficRouting.lua.orig", "old-trafficRouting.lua", "other.lua"] {
            std::fs::write(kind.join(name), "return obj.data").unwrap();
        }
        std::fs::write(kind.join("testdata/trafficRouting.lua.yaml"), "").unwrap();
        let names: Vec<String> = script_dirs(dir.path())
            .unwrap()
            .go_test_also_runs
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["old-trafficRouting.lua", "trafficRouting.lua.orig"]);
        assert!(script_dirs(&kind.join("trafficRouting.lua")).unwrap().go_test_also_runs.is_empty(), "a file");
    }

    #[test]
    fn script_flags_name_the_flag_and_refuse_a_second_script_for_a_kind() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.lua"), dir.path().join("b.lua"));
        std::fs::write(&a, "return obj.data").unwrap();
        std::fs::write(&b, "return obj.data").unwrap();
        let flag = |file: &Path| format!("VirtualService.networking.istio.io={}", file.display());
        let read = read_script_flags(&[flag(&a)]).unwrap();
        assert_eq!(read[&("networking.istio.io".into(), "VirtualService".into())].1, "return obj.data");
        let twice = read_script_flags(&[flag(&a), flag(&b)]).unwrap_err().to_string();
        assert_eq!(
            twice,
            format!(
                "--script {:?}: a second script for VirtualService.networking.istio.io (the first is {}): give one per kind",
                flag(&b),
                a.display()
            )
        );
        let missing = read_script_flags(&[flag(&dir.path().join("none.lua"))]).unwrap_err().to_string();
        assert!(missing.starts_with(&format!("--script {:?}: ", flag(&dir.path().join("none.lua")))), "{missing}");
    }

    #[test]
    fn an_empty_manifest_path_is_named() {
        let Err(error) = read_manifests(&[String::new()], false) else { panic!("an empty path read") };
        assert_eq!(error.to_string(), "-f \"\": an empty path (an unset variable?)");
    }

    #[test]
    fn reads_are_bounded_and_say_which_limit() {
        let limit = Limit { bytes: 4 << 20, input: "a thing" };
        assert_eq!(read_bounded(&b"abc"[..], "f", 3, limit).unwrap(), "abc");
        let err = read_bounded(&b"abcd"[..], "f", 3, limit).unwrap_err().to_string();
        assert_eq!(err, "f: the input passes 4 MiB, the limit for a thing");
        // Never more than the limit and one byte is read.
        let mut endless = std::io::repeat(b'a');
        assert!(read_bounded(&mut endless, "<stdin>", 10, limit).is_err());
        let err = read_bounded(&b"a\xffb"[..], "f", 3, limit).unwrap_err().to_string();
        assert_eq!(err, "f:1:2: not UTF-8 text (byte 1)");
        let err = read_bounded(&b"a: 1\n# \xe9\n"[..], "f", 10, limit).unwrap_err().to_string();
        assert_eq!(err, "f:2:3: not UTF-8 text (byte 7)");
    }

    #[test]
    fn text_is_utf8_or_utf16_after_its_byte_order_mark() {
        let text = "kind: Config # é\n";
        let utf16 = |unit: fn(u16) -> [u8; 2], bom: [u8; 2]| {
            bom.into_iter().chain(text.encode_utf16().flat_map(unit)).collect::<Vec<u8>>()
        };
        let decode = |bytes: Vec<u8>| text_after_bom(bytes, "kc").map_err(|e| e.to_string());
        assert_eq!(decode(text.into()).unwrap(), text);
        assert_eq!(decode([&[0xEF, 0xBB, 0xBF], text.as_bytes()].concat()).unwrap(), text);
        assert_eq!(decode(utf16(u16::to_le_bytes, [0xFF, 0xFE])).unwrap(), text);
        assert_eq!(decode(utf16(u16::to_be_bytes, [0xFE, 0xFF])).unwrap(), text);
        assert_eq!(decode(vec![0xFF, 0xFE, b'k']).unwrap_err(), "kc: not UTF-16 text (an odd number of bytes)");
        assert_eq!(decode(vec![0xFF, 0xFE, 0x00, 0xD8]).unwrap_err(), "kc: not UTF-16 text");
        assert_eq!(decode(b"kind: \xff".to_vec()).unwrap_err(), "kc:1:7: not UTF-8 text (byte 6)");
        // Without the mark, UTF-16 is no UTF-8.
        assert!(decode(utf16(u16::to_le_bytes, [0xFF, 0xFE])[2..].to_vec()).is_err());
    }

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        names
    }

    #[test]
    fn a_file_written_whole_keeps_or_replaces_what_is_there_and_leaves_no_part() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.yaml");
        write_whole(&path, b"one", Existing::Keep, OWNER_ONLY).unwrap();
        let kept = write_whole(&path, b"two", Existing::Keep, OWNER_ONLY).unwrap_err();
        assert_eq!(kept.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&path).unwrap(), b"one");
        write_whole(&path, b"three", Existing::Replace, ORDINARY).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"three");
        assert_eq!(names(dir.path()), ["a.yaml"], "no temporary file left");
        // A failure (here: no such folder) leaves nothing behind, and names the temporary file.
        let gone = write_whole(&dir.path().join("gone/b.yaml"), b"x", Existing::Replace, ORDINARY).unwrap_err();
        let message = gone.to_string();
        assert!(message.starts_with(&format!("making {}/gone/.b.yaml.", dir.path().display())), "{message}");
        assert!(message.ends_with(".partial: No such file or directory (os error 2)"), "{message}");
        assert_eq!(names(dir.path()), ["a.yaml"]);
    }

    #[test]
    fn a_file_written_whole_leaves_other_runs_temporary_files_alone() {
        // A regression (audit s25-code #3b): the temporary name was `.<name>.<pid>.partial`, so a
        // file of that name (a run with the same pid in another container, on a shared volume)
        // failed the write with "File exists", and was then deleted.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.yaml");
        let theirs = dir.path().join(format!(".out.yaml.{}.partial", std::process::id()));
        fs::write(&theirs, b"another run's part").unwrap();
        write_whole(&path, b"ours", Existing::Replace, ORDINARY).unwrap();
        write_whole(&path, b"ours again", Existing::Replace, ORDINARY).unwrap();
        assert_eq!(
            write_whole(&path, b"kept", Existing::Keep, ORDINARY).unwrap_err().kind(),
            std::io::ErrorKind::AlreadyExists
        );
        assert_eq!(fs::read(&path).unwrap(), b"ours again");
        assert_eq!(fs::read(&theirs).unwrap(), b"another run's part");
        assert_eq!(names(dir.path()).len(), 2, "{:?}", names(dir.path()));
        // Each write gets a temporary name of its own: the same file twice at once in one run.
        let paths = std::thread::scope(|scope| {
            let writes: Vec<_> =
                (0..8).map(|_| scope.spawn(|| write_whole(&path, b"racing", Existing::Replace, ORDINARY))).collect();
            writes.into_iter().map(|write| write.join().unwrap()).collect::<Result<Vec<()>, _>>()
        });
        paths.unwrap();
        assert_eq!(names(dir.path()).len(), 2, "{:?}", names(dir.path()));
    }

    #[cfg(unix)]
    #[test]
    fn a_file_written_whole_through_a_link_whose_target_is_not_there_yet_makes_the_target() {
        // A regression (audit s25-code #3a): a dangling link was replaced by a regular file.
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let is_link = |name: &str| fs::symlink_metadata(dir.path().join(name)).unwrap().file_type().is_symlink();
        fs::create_dir(dir.path().join("keep")).unwrap();
        symlink("keep/cases.yaml", dir.path().join("link.yaml")).unwrap();
        write_whole(&dir.path().join("link.yaml"), b"one", Existing::Replace, ORDINARY).unwrap();
        assert!(is_link("link.yaml"));
        assert_eq!(fs::read(dir.path().join("keep/cases.yaml")).unwrap(), b"one");
        // A chain: each relative link is relative to its own folder; an absolute one is not.
        symlink("keep/next.yaml", dir.path().join("chain.yaml")).unwrap();
        symlink("../far.yaml", dir.path().join("keep/next.yaml")).unwrap();
        symlink(dir.path().join("keep/last.yaml"), dir.path().join("far.yaml")).unwrap();
        write_whole(&dir.path().join("chain.yaml"), b"two", Existing::Replace, ORDINARY).unwrap();
        assert!(is_link("chain.yaml") && is_link("keep/next.yaml") && is_link("far.yaml"));
        assert_eq!(fs::read(dir.path().join("keep/last.yaml")).unwrap(), b"two");
        // A loop is an error, and nothing is written.
        symlink("loop-b.yaml", dir.path().join("loop-a.yaml")).unwrap();
        symlink("loop-a.yaml", dir.path().join("loop-b.yaml")).unwrap();
        let looped = write_whole(&dir.path().join("loop-a.yaml"), b"x", Existing::Replace, ORDINARY).unwrap_err();
        assert_eq!(looped.to_string(), "more than 40 symbolic links, one to the next (a loop?)");
        assert!(is_link("loop-a.yaml") && is_link("loop-b.yaml"));
        assert_eq!(names(&dir.path().join("keep")), ["cases.yaml", "last.yaml", "next.yaml"]);
        assert_eq!(names(dir.path()), ["chain.yaml", "far.yaml", "keep", "link.yaml", "loop-a.yaml", "loop-b.yaml"]);
        // A backup never writes through a link: a dangling one is kept as it is.
        let kept = write_whole(&dir.path().join("link.yaml"), b"x", Existing::Keep, OWNER_ONLY).unwrap_err();
        assert_eq!(kept.kind(), std::io::ErrorKind::AlreadyExists);
    }

    #[cfg(unix)]
    #[test]
    fn a_file_written_whole_has_its_mode_or_the_one_it_replaces_and_a_link_stays_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let private = dir.path().join("private.yaml");
        write_whole(&private, b"secret", Existing::Keep, OWNER_ONLY).unwrap();
        assert_eq!(mode(&private), 0o600);
        let shared = dir.path().join("shared.yaml");
        fs::write(&shared, b"old").unwrap();
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o640)).unwrap();
        write_whole(&shared, b"new", Existing::Replace, ORDINARY).unwrap();
        assert_eq!(mode(&shared), 0o640, "the permissions of the file it replaced");
        let link = dir.path().join("link.yaml");
        std::os::unix::fs::symlink("shared.yaml", &link).unwrap();
        write_whole(&link, b"through the link", Existing::Replace, ORDINARY).unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(&shared).unwrap(), b"through the link");
        assert_eq!(names(dir.path()), ["link.yaml", "private.yaml", "shared.yaml"]);
    }
}
