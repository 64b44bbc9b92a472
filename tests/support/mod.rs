//! A builder that runs the real `kubectl-rollout_lua` binary in a scrubbed environment.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tempfile::TempDir;

pub mod net;

pub const BINARY: &str = env!("CARGO_BIN_EXE_kubectl-rollout_lua");

/// The repository root, for bundled examples and scripts.
pub fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

pub struct Test {
    dir: TempDir,
    args: Vec<OsString>,
    env: Vec<(String, String)>,
    removed: Vec<String>,
    stdin: Option<String>,
    terminal: bool,
    /// The pseudo-terminal's rows and columns (`script` leaves them 0, which programs take as
    /// 24 by 79).
    terminal_size: Option<(usize, usize)>,
    /// TLS in front of the fake API server, for a kubeconfig with credentials
    /// (`kubeconfig_over_tls`): served as long as the test is.
    front: Option<net::TlsFront>,
}

impl Test {
    pub fn new() -> Test {
        Test {
            dir: tempfile::tempdir().expect("temp dir"),
            args: Vec::new(),
            env: Vec::new(),
            removed: Vec::new(),
            stdin: None,
            terminal: false,
            terminal_size: None,
            front: None,
        }
    }

    pub fn args<I, S>(mut self, args: I) -> Test
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn arg(self, arg: impl Into<OsString>) -> Test {
        self.args([arg])
    }

    pub fn env(mut self, key: &str, value: &str) -> Test {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Leaves a variable of the scrubbed environment out (NO_COLOR, to test colour).
    pub fn without_env(mut self, key: &str) -> Test {
        self.removed.push(key.into());
        self
    }

    /// Runs the binary on a pseudo-terminal (util-linux `script`): stdout and stderr both arrive
    /// in `stdout`, with `\r\n` line ends. Check [`terminal_available`] first.
    pub fn on_terminal(mut self) -> Test {
        self.terminal = true;
        self
    }

    /// Gives the pseudo-terminal `rows` and `columns` (`stty`, before the binary starts).
    pub fn terminal_size(mut self, rows: usize, columns: usize) -> Test {
        self.terminal_size = Some((rows, columns));
        self
    }

    pub fn stdin(mut self, text: &str) -> Test {
        self.stdin = Some(text.into());
        self
    }

    /// Writes a file under the test's temp dir (parents created) and returns the builder.
    pub fn file(self, relative: &str, contents: &str) -> Test {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        self
    }

    /// A path under the test's temp dir.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    #[track_caller]
    pub fn run(&self) -> Output {
        self.execute(&self.args)
    }

    /// Runs with other arguments in the same temp dir (same HOME, backups and kubeconfig).
    #[track_caller]
    pub fn run_args<I, S>(&self, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.execute(&args.into_iter().map(Into::into).collect::<Vec<_>>())
    }

    /// `program` with `args`, run as every test runs the binary: in the temp dir, with only
    /// PATH from the caller's environment, a temp HOME, XDG dirs and KUBECONFIG, NO_COLOR, and
    /// piped stdin, stdout and stderr.
    pub fn command<I, S>(&self, program: &str, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let home = self.path("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut command = Command::new(program);
        command
            .args(args)
            .current_dir(self.dir.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("KUBECONFIG", self.path("kubeconfig"))
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// The binary with `args` on a pseudo-terminal (util-linux `script`), then the shell
    /// commands `then` (if any) on the same terminal.
    fn terminal_command(&self, args: &[OsString], then: Option<&str>) -> Command {
        let line: Vec<String> =
            std::iter::once(BINARY.into()).chain(args.iter().map(|a| a.to_string_lossy().into_owned())).collect();
        let mut line = line.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ");
        if let Some((rows, columns)) = self.terminal_size {
            line = format!("stty rows {rows} cols {columns}; {line}");
        }
        if let Some(then) = then {
            line = format!("{line}; {then}");
        }
        self.command("script", ["-qec", line.as_str(), "/dev/null"])
    }

    /// Starts the binary with `args` on a pseudo-terminal, then `then` (shell commands) when it
    /// has ended; the screen is read as it comes.
    pub fn on_terminal_session(&self, args: &[&str], then: Option<&str>) -> TerminalSession {
        let args: Vec<OsString> = args.iter().map(Into::into).collect();
        let mut command = self.terminal_command(&args, then);
        for key in &self.removed {
            command.env_remove(key);
        }
        for (key, value) in &self.env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("run the binary");
        let screen = Arc::new(Mutex::new(String::new()));
        let reader = read_into(child.stdout.take().unwrap(), screen.clone());
        let stdin = child.stdin.take();
        TerminalSession { child, stdin, screen, reader, kubeconfig: self.path("kubeconfig") }
    }

    /// Runs the binary with `args` on a pseudo-terminal and, at each step, waits for the screen
    /// to show the text (if any; else half a second) then types the keys. Returns how it ended
    /// (None: not within 30 s, then killed) and the screen.
    pub fn interact(&self, args: &[&str], steps: &[(Option<&str>, &[u8])]) -> (Option<ExitStatus>, String) {
        let mut session = self.on_terminal_session(args, None);
        for (shown, keys) in steps {
            match shown {
                Some(text) => session.wait_for(text),
                None => std::thread::sleep(Duration::from_millis(500)),
            }
            session.type_keys(keys);
        }
        session.finish()
    }

    #[track_caller]
    fn execute(&self, args: &[OsString]) -> Output {
        let mut command = if self.terminal { self.terminal_command(args, None) } else { self.command(BINARY, args) };
        if self.stdin.is_none() {
            command.stdin(Stdio::null());
        }
        for key in &self.removed {
            command.env_remove(key);
        }
        for (key, value) in &self.env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("run the binary");
        if let Some(text) = &self.stdin {
            // A run that stops before reading its input (a refused argument) closes the pipe.
            if let Err(e) = child.stdin.take().unwrap().write_all(text.as_bytes()) {
                assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "writing stdin: {e}");
            }
        }
        Output::of(child.wait_with_output().unwrap())
    }

    /// Runs the binary with `args` as on a full disk: no file it writes may grow past 32 KiB
    /// (`ulimit -f`, with SIGXFSZ ignored, so that a write past it fails with EFBIG as one
    /// fails with ENOSPC when the disk is full).
    #[track_caller]
    pub fn run_on_a_full_disk(&self, args: &[&str]) -> Output {
        let line = "trap '' XFSZ; ulimit -f 64; exec \"$0\" \"$@\"";
        let words = ["-c", line, BINARY].into_iter().chain(args.iter().copied());
        Output::of(self.command("sh", words).stdin(Stdio::null()).output().expect("run sh"))
    }
}

/// The binary running on a pseudo-terminal (see [`Test::on_terminal_session`]).
pub struct TerminalSession {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    screen: Arc<Mutex<String>>,
    reader: std::thread::JoinHandle<()>,
    kubeconfig: PathBuf,
}

impl TerminalSession {
    /// Waits until the screen shows `text` (30 s at most).
    #[track_caller]
    pub fn wait_for(&self, text: &str) {
        wait_for(&self.screen, text, "the screen");
    }

    pub fn type_keys(&mut self, keys: &[u8]) {
        let _ = self.stdin.as_mut().unwrap().write_all(keys);
    }

    /// The binary's process (under `script` and its shell): the one running with this test's
    /// KUBECONFIG.
    pub fn binary_pid(&self) -> Option<u32> {
        let kubeconfig = format!("KUBECONFIG={}", self.kubeconfig.display());
        std::fs::read_dir("/proc").ok()?.flatten().find_map(|entry| {
            let pid = entry.file_name().to_str()?.parse().ok()?;
            let command = std::fs::read(entry.path().join("cmdline")).ok()?;
            let environment = std::fs::read(entry.path().join("environ")).ok()?;
            let ours = environment.split(|b| *b == 0).any(|v| v == kubeconfig.as_bytes());
            (command.starts_with(BINARY.as_bytes()) && ours).then_some(pid)
        })
    }

    /// Closes the terminal, as a window closed or an SSH session dropped does: `script`, which
    /// holds it, is killed, and the binary on it gets SIGHUP (and EIO for what it writes).
    pub fn close_terminal(&mut self) {
        let _ = self.child.kill();
    }

    /// How it ended (None: not within 30 s, then killed) and the screen.
    pub fn finish(mut self) -> (Option<ExitStatus>, String) {
        let status = (0..600).find_map(|_| {
            std::thread::sleep(Duration::from_millis(50));
            self.child.try_wait().unwrap()
        });
        if status.is_none() {
            let _ = self.child.kill();
        }
        drop(self.stdin.take());
        self.reader.join().unwrap();
        let screen = self.screen.lock().unwrap().clone();
        (status, screen)
    }
}

/// Says that the running test is skipped, and why (`…: skipped: zsh not installed`). Written to
/// stderr itself, which the test harness does not capture (it captures only `print!` and
/// `eprint!`), so that a skip shows in `cargo test`'s output instead of passing silently.
pub fn skip(why: &str) {
    let test = std::thread::current().name().unwrap_or("a test").to_string();
    let _ = writeln!(std::io::stderr(), "{test}: skipped: {why}");
}

impl Test {
    /// Starts the binary with `args` in the background (stdin empty), its stdout and stderr
    /// read as they come: for signals and faults timed against what it has done.
    pub fn spawn(&self, args: &[&str]) -> Running {
        self.start(self.command(BINARY, args))
    }

    /// As [`Test::spawn`], with the signals `ignored` (`"HUP"`, `"INT HUP"`) ignored from the
    /// start, as `nohup` or a shell's `trap '' HUP` start a program: `sh` ignores them, then
    /// execs the binary (which keeps its process).
    pub fn spawn_ignoring(&self, ignored: &str, args: &[&str]) -> Running {
        let line = format!("trap '' {ignored}; exec \"$0\" \"$@\"");
        self.start(self.command("sh", ["-c", line.as_str(), BINARY].into_iter().chain(args.iter().copied())))
    }

    fn start(&self, mut command: Command) -> Running {
        let mut child = command.stdin(Stdio::null()).spawn().expect("run the binary");
        let (stdout, stderr) = (Arc::new(Mutex::new(String::new())), Arc::new(Mutex::new(String::new())));
        let readers = vec![
            read_into(child.stdout.take().unwrap(), stdout.clone()),
            read_into(child.stderr.take().unwrap(), stderr.clone()),
        ];
        Running { child, stdout, stderr, readers }
    }
}

/// The binary running in the background ([`Test::spawn`]).
pub struct Running {
    child: std::process::Child,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

fn read_into(mut from: impl Read + Send + 'static, into: Arc<Mutex<String>>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buffer = [0; 4096];
        while let Ok(n @ 1..) = from.read(&mut buffer) {
            into.lock().unwrap().push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
    })
}

impl Running {
    /// Sends signal `name` (INT, TERM, HUP).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill").args([&format!("-{name}"), &self.child.id().to_string()]).status().unwrap();
        assert!(status.success(), "kill -{name}");
    }

    /// Sends the first signal `name` and waits until the run has taken it in (a writing command
    /// says so on stderr), so that a later signal, or a held request released, cannot overtake it.
    pub fn first_signal(&self, name: &str) {
        self.signal(name);
        self.wait_for_stderr(&format!("SIG{name} received: "));
    }

    /// Waits (at most 30 s) until stderr shows `text`.
    #[track_caller]
    pub fn wait_for_stderr(&self, text: &str) {
        wait_for(&self.stderr, text, "stderr");
    }

    /// Waits (at most 30 s) until stdout shows `text`.
    #[track_caller]
    pub fn wait_for_stdout(&self, text: &str) {
        wait_for(&self.stdout, text, "stdout");
    }

    /// Waits at most `limit` for the end (then kills it and fails the test), and returns how it
    /// ended and all it printed.
    #[track_caller]
    pub fn finish_within(mut self, limit: Duration) -> Output {
        let deadline = std::time::Instant::now() + limit;
        while self.child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("still running after {limit:?}: {}", self.stderr.lock().unwrap());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.finish()
    }

    /// Waits for the end, and returns how it ended and all it printed.
    pub fn finish(mut self) -> Output {
        let status = self.child.wait().unwrap();
        for reader in self.readers.drain(..) {
            reader.join().unwrap();
        }
        let text = |s: &Arc<Mutex<String>>| s.lock().unwrap().clone();
        Output { status: status.code().unwrap_or(-1), stdout: text(&self.stdout), stderr: text(&self.stderr) }
    }
}

/// strace attached to a running binary, holding each file removal (`unlink`) the run starts
/// for a minute before the kernel makes it, as a stalled network home would: a signal can then
/// be timed into a removal. A thread it holds holds the end of the process too: drop it once
/// the run said how it stopped.
pub struct StalledRemovals {
    strace: std::process::Child,
    log: PathBuf,
}

impl Running {
    /// Stalls the run's file removals from now on (see [`StalledRemovals`]), strace's log and
    /// stderr kept in `dir`; else why not, for the test's skip: strace not installed, or its
    /// attach refused (ptrace not allowed: Yama, a container, a tracer already there).
    pub fn stall_removals(&self, dir: &Path) -> Result<StalledRemovals, String> {
        if !on_path("strace") {
            return Err("strace not installed".into());
        }
        std::fs::create_dir_all(dir).unwrap();
        let (log, stderr) = (dir.join("log"), dir.join("stderr"));
        let pid = self.child.id().to_string();
        let delay =
            ["-e", "trace=unlink,unlinkat", "-e", "inject=unlink,unlinkat:delay_enter=60s", "-e", "signal=none"];
        let strace = Command::new("strace")
            .args(["-f", "-qq"])
            .args(delay)
            .arg("-o")
            .arg(&log)
            .args(["-p", &pid])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .map_err(|e| format!("strace could not be started: {e}"))?;
        let mut stalled = StalledRemovals { strace, log };
        // Attached once each of the run's threads is traced by this strace (later ones are
        // followed, `-f`): another tracer (a debugger, an outer `strace -f`) holds no removal.
        let ours = format!("TracerPid:\t{}\n", stalled.strace.id());
        let traced = || {
            let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
            let tracers = tasks.map(|task| std::fs::read_to_string(task.ok()?.path().join("status")).ok());
            let mut tracers = tracers.collect::<Option<Vec<_>>>()?.into_iter();
            Some(tracers.all(|status| status.contains(&ours)))
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if stalled.strace.try_wait().unwrap().is_some() {
                let said = std::fs::read_to_string(&stderr).unwrap_or_default();
                let said = said.lines().collect::<Vec<_>>().join("; ");
                return Err(format!(
                    "strace could not attach to the run: {said}{}",
                    hindrances(&pid, stalled.strace.id())
                ));
            }
            if traced() == Some(true) {
                return Ok(stalled);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err(format!("strace did not attach to the run within 10 s{}", hindrances(&pid, stalled.strace.id())))
    }
}

/// What may keep strace (process `strace`) from attaching to process `pid`, for the skip's
/// reason: a tracer already there (a debugger, an outer `strace -f`), and Yama's restriction
/// (`/proc/sys/kernel/yama/ptrace_scope` above 0, Ubuntu's default 1).
fn hindrances(pid: &str, strace: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let tracer = status.lines().find_map(|line| line.strip_prefix("TracerPid:\t"));
    let tracer = tracer.filter(|tracer| !["0", &strace.to_string()].contains(tracer));
    let tracer = tracer.map(|tracer| format!("; the run is traced already, by process {tracer}"));
    let scope = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope").unwrap_or_default();
    let allowed = match scope.trim() {
        "" | "0" => None,
        "1" => Some("only to its own descendants"),
        "2" => Some("only with CAP_SYS_PTRACE"),
        _ => Some("to no process"),
    };
    let scope =
        allowed.map(|allowed| format!("; kernel.yama.ptrace_scope is {}: a tracer may attach {allowed}", scope.trim()));
    tracer.into_iter().chain(scope).collect()
}

/// Whether `tool` is on `PATH`.
pub fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|p| p.join(tool).is_file()))
}

impl StalledRemovals {
    /// Waits (at most 30 s) until the removal of a path containing `path` is held: strace logs
    /// a call as it enters it.
    #[track_caller]
    pub fn wait_until_held(&self, path: &str) {
        let held = |log: &str| log.lines().any(|line| line.contains("unlink") && line.contains(path));
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !held(&std::fs::read_to_string(&self.log).unwrap_or_default()) {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            assert!(std::time::Instant::now() < deadline, "no removal of {path:?} was held: {log}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for StalledRemovals {
    fn drop(&mut self) {
        let _ = self.strace.kill();
        let _ = self.strace.wait();
    }
}

#[track_caller]
fn wait_for(shown: &Mutex<String>, text: &str, name: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !shown.lock().unwrap().contains(text) {
        assert!(std::time::Instant::now() < deadline, "{name} never showed {text:?}: {}", shown.lock().unwrap());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The screen a terminal of `rows` by `columns` shows after `output` (what was written to it,
/// and its echo of what was typed), each row without its trailing blanks: the characters (the
/// cursor waits at the last column, and wraps at the next one), CR, LF (scrolling at the
/// bottom), and the moves and clears a live view makes (`ESC[nA`, `ESC[K`, `ESC[2K`, `ESC[J`);
/// other escape sequences are skipped.
pub fn screen(output: &str, rows: usize, columns: usize) -> Vec<String> {
    let mut screen = vec![vec![' '; columns]; rows];
    let (mut row, mut column, mut waiting) = (0, 0, false);
    let line_feed = |screen: &mut Vec<Vec<char>>, row: &mut usize| match *row + 1 < rows {
        true => *row += 1,
        false => {
            screen.remove(0);
            screen.push(vec![' '; columns]);
        }
    };
    let mut chars = output.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => (column, waiting) = (0, false),
            '\n' => {
                line_feed(&mut screen, &mut row);
                waiting = false;
            }
            '\x1b' if chars.peek() == Some(&'[') => {
                chars.next();
                let mut parameters = String::new();
                let command = loop {
                    match chars.next() {
                        Some(c) if c.is_ascii_digit() || c == ';' || c == '?' => parameters.push(c),
                        other => break other,
                    }
                };
                let n: usize = parameters.parse().unwrap_or(0);
                match command {
                    Some('A') => row = row.saturating_sub(n.max(1)),
                    Some('K') if n == 2 => screen[row].fill(' '),
                    Some('K') => screen[row][column..].fill(' '),
                    Some('J') => {
                        screen[row][column..].fill(' ');
                        screen[row + 1..].iter_mut().for_each(|line| line.fill(' '));
                    }
                    _ => {}
                }
                waiting = false;
            }
            c if c.is_control() => {}
            c => {
                if waiting {
                    column = 0;
                    line_feed(&mut screen, &mut row);
                    waiting = false;
                }
                screen[row][column] = c;
                match column + 1 < columns {
                    true => column += 1,
                    false => waiting = true,
                }
            }
        }
    }
    screen.iter().map(|line| line.iter().collect::<String>().trim_end().to_string()).collect()
}

/// Whether util-linux `script` is there to run a command on a pseudo-terminal.
pub fn terminal_available() -> bool {
    Command::new("script").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Whether the process whose pid a test's shell script wrote to `file` has ended, or ends within
/// 5 s: a kill is delivered asynchronously, and on a busy machine the killed process may not
/// have run to its end yet when the run that killed it exits. A zombie, ended but not yet
/// reaped, has ended.
pub fn process_ended(file: &Path) -> bool {
    let pid = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let running = || {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
        // `PID (COMMAND) STATE …`; the command may hold spaces and parentheses.
        stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z'))
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while running() {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[derive(Debug)]
pub struct Output {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn of(output: std::process::Output) -> Output {
        Output {
            status: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    #[track_caller]
    pub fn status(self, code: i32) -> Output {
        assert_eq!(self.status, code, "exit status\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }

    #[track_caller]
    pub fn success(self) -> Output {
        self.status(0)
    }

    #[track_caller]
    pub fn stdout_has(self, text: &str) -> Output {
        assert!(
            self.stdout.contains(text),
            "stdout lacks {text:?}\nstdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn stderr_has(self, text: &str) -> Output {
        assert!(self.stderr.contains(text), "stderr lacks {text:?}\nstderr:\n{}", self.stderr);
        self
    }

    #[track_caller]
    pub fn stdout_is(self, text: &str) -> Output {
        pretty_assertions::assert_eq!(self.stdout, text, "\nstderr:\n{}", self.stderr);
        self
    }

    #[track_caller]
    pub fn stderr_is(self, text: &str) -> Output {
        pretty_assertions::assert_eq!(self.stderr, text, "\nstdout:\n{}", self.stdout);
        self
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

/// The fake API server, with the kubeconfig of a test pointing at it.
pub mod cluster {
    use super::Test;
    pub use fake_apiserver::{FakeApiServer, FakeHandle, Rule};
    use serde_json::{Value, json};

    pub const NAMESPACE: &str = "shop";

    impl Test {
        /// Points the test's KUBECONFIG at `server`, namespace `shop`.
        pub fn kubeconfig(self, server: &FakeHandle) -> Test {
            server.write_kubeconfig(self.path("kubeconfig"), NAMESPACE).unwrap();
            self
        }

        /// A kubeconfig for `server` through TLS in front of it (https, the test CA trusted),
        /// whose user has `user` (kubeconfig YAML indented 4, e.g. `    token: t\n`): a user's
        /// credentials go to an https:// server only.
        pub fn kubeconfig_over_tls(mut self, server: &FakeHandle, user: &str) -> Test {
            let front = super::net::TlsFront::to(server.address().port());
            let text = server
                .kubeconfig(NAMESPACE)
                .replace(
                    &format!("    server: {}\n", server.url()),
                    &format!("    server: {}\n    certificate-authority: ca.pem\n", front.url()),
                )
                .replace("  user: {}\n", &format!("  user:\n{user}"));
            self.front = Some(front);
            self.file("kubeconfig", &text).file("ca.pem", &super::net::test_ca())
        }
    }

    /// What a report says became of the reply `fault` hit, the run's `--request-timeout` being
    /// `limit` (`2s`): the words before `; a fresh read shows …`.
    pub fn unheard(fault: fake_apiserver::ReplyFault, limit: &str) -> String {
        use fake_apiserver::ReplyFault;
        match fault {
            ReplyFault::Lost => "the reply was lost".into(),
            ReplyFault::Garbled => "the reply could not be read (not JSON)".into(),
            ReplyFault::NeverSent | ReplyFault::Drip => format!("no whole reply came within {limit}"),
            ReplyFault::Oversized { .. } => "the reply could not be read (reply too large)".into(),
        }
    }

    /// `args` run against `server`, held after write `k` was stored, then `name` (INT, TERM or
    /// HUP).
    pub fn signalled_after_write(server: &FakeHandle, args: &[&str], k: usize, name: &str) -> super::Output {
        let pause = server.pause(fake_apiserver::Requests::Writes, k, fake_apiserver::Stage::AfterStore);
        let test = Test::new().kubeconfig(server);
        let child = test.spawn(args);
        assert!(pause.wait_until_held(std::time::Duration::from_secs(30)), "write {k} reached");
        // The signal is taken in while the write is out; then the write's reply comes.
        child.first_signal(name);
        pause.release();
        child.finish()
    }

    /// The requests `server` never answered, as `METHOD NAME` (the path's last segment).
    pub fn unanswered(server: &FakeHandle) -> Vec<String> {
        let requests = server.requests().into_iter().filter(|r| r.status.is_none());
        requests.map(|r| format!("{} {}", r.method, r.path.rsplit('/').next().unwrap())).collect()
    }

    /// A kubeconfig for `server` whose user gets its credential from `command`, an exec plugin
    /// with this `interactiveMode`.
    pub fn exec_kubeconfig(test: Test, server: &FakeHandle, command: &str, interactive_mode: &str) -> Test {
        let exec = format!(
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {command}\n      \
             interactiveMode: {interactive_mode}\n      installHint: install it with the cloud CLI\n"
        );
        test.kubeconfig_over_tls(server, &exec)
    }

    /// The shell script `plugin.sh` in the test's dir, executable.
    pub fn plugin(test: Test, script: &str) -> Test {
        let test = test.file("plugin.sh", &format!("#!/bin/sh\n{script}\n"));
        let path = test.path("plugin.sh");
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        test
    }

    /// A v1beta1 canary Rollout `demo` routing through VirtualService and DestinationRule
    /// `demo`: step 1 matches a header, step 2 sends 50%, step 3 is replicas only.
    pub fn rollout(step: i64, state: &str) -> Value {
        json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "demo", "namespace": NAMESPACE, "labels": {"app": "demo"}},
            "spec": {
                "workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "demo"},
                "strategy": {"canary": {
                    "steps": [
                        {"replicas": 1, "matches": [{"headers": [{"type": "Exact", "name": "user-agent", "value": "pc"}]}]},
                        {"replicas": "50%", "traffic": "50%"},
                        {"replicas": "100%"}
                    ],
                    "trafficRoutings": [{"service": "demo", "gracePeriodSeconds": 3, "customNetworkRefs": [
                        {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "demo"},
                        {"apiVersion": "networking.istio.io/v1beta1", "kind": "DestinationRule", "name": "demo"}
                    ]}]
                }}
            },
            "status": {
                "phase": "Progressing",
                "message": format!("Rollout is in step({step}/3), and you need manually confirm to enter the next step"),
                "currentStepIndex": step, "currentStepState": state,
                "canaryStatus": {"currentStepIndex": step, "currentStepState": state, "canaryReplicas": 1, "canaryReadyReplicas": 1}
            }
        })
    }

    pub fn virtual_service() -> Value {
        json!({
            "apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService",
            "metadata": {"name": "demo", "namespace": NAMESPACE, "labels": {"app": "demo"}},
            "spec": {"hosts": ["demo"], "http": [{"route": [{"destination": {"host": "demo"}}]}]}
        })
    }

    pub fn destination_rule() -> Value {
        json!({
            "apiVersion": "networking.istio.io/v1beta1", "kind": "DestinationRule",
            "metadata": {"name": "demo", "namespace": NAMESPACE},
            "spec": {"host": "demo", "subsets": [{"name": "stable", "labels": {"version": "v1"}}]}
        })
    }

    /// The workload of `rollout()`: Deployment `demo` with `replicas` pods, all ready.
    pub fn deployment(replicas: i64) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "demo", "namespace": NAMESPACE},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "demo"}}},
            "status": {"replicas": replicas, "readyReplicas": replicas}
        })
    }

    /// Service `name` of namespace `shop`.
    pub fn service(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": NAMESPACE},
               "spec": {"ports": [{"port": 80}]}})
    }

    /// Kruise and Istio served, with the Rollout at `step`/`state` and its two gateway objects.
    pub fn shop(step: i64, state: &str) -> fake_apiserver::Builder {
        serving(rollout(step, state))
    }

    /// Kruise, Istio, Services and Deployments served, with this Rollout, the two gateway
    /// objects of `rollout()`, its Services `demo` and `demo-canary` (the controller makes the
    /// canary one in a release) and its workload (4 replicas: every step is routed).
    pub fn serving(rollout: Value) -> fake_apiserver::Builder {
        FakeApiServer::builder()
            .kruise_and_istio()
            .resource(fake_apiserver::leases())
            .resource(fake_apiserver::services())
            .resource(fake_apiserver::deployments())
            .object(rollout)
            .object(virtual_service())
            .object(destination_rule())
            .object(service("demo"))
            .object(service("demo-canary"))
            .object(deployment(4))
    }

    /// From now on each write of a `plural` object (create, update, patch) is followed by a
    /// status write of its controller, as on a real cluster: a Gateway API implementation
    /// writes an HTTPRoute's `status.parents`, an ingress controller an Ingress's
    /// `status.loadBalancer`. A write conditional on this run's own last write then conflicts.
    pub fn a_controller_writes_the_status_of(server: &FakeHandle, plural: &str) {
        let writes = Rule::new(["create", "update", "patch"]).resources([plural]);
        let status = json!({"controlledBy": "example.com/controller", "observed": true});
        server.controller_writes_status(fake_apiserver::Requests::Matching(writes), status);
    }

    /// An object of namespace `shop` as the fake server stores it: API group, plural, name.
    #[derive(Clone, Copy, Debug)]
    pub struct Stored<'a> {
        pub group: &'a str,
        pub plural: &'a str,
        pub name: &'a str,
    }

    pub const VIRTUAL_SERVICE: Stored =
        Stored { group: "networking.istio.io", plural: "virtualservices", name: "demo" };
    pub const DESTINATION_RULE: Stored =
        Stored { group: "networking.istio.io", plural: "destinationrules", name: "demo" };
    pub const ROLLOUT: Stored = Stored { group: "rollouts.kruise.io", plural: "rollouts", name: "demo" };
    pub const HTTP_ROUTE: Stored = Stored { group: "gateway.networking.k8s.io", plural: "httproutes", name: "store" };
    /// The claim on Rollout `demo`.
    pub const CLAIM: Stored = Stored { group: "coordination.k8s.io", plural: "leases", name: "rollout-lua.demo" };

    /// When someone else's edit lands, counting the writes from the moment it is armed (1 = the
    /// next): right before the server handles that write, or right after it, before its reply.
    #[derive(Clone, Copy, Debug)]
    pub enum When {
        Before(usize),
        After(usize),
    }

    /// Someone else edits `object` at `when`: `edit` on a copy of it, stored unconditionally
    /// under a new resourceVersion (see [`fake_apiserver::Store::modify`]). When the object does
    /// not exist by then, nothing happens.
    pub fn someone_edits(
        server: &FakeHandle,
        when: When,
        object: Stored,
        edit: impl FnOnce(&mut Value) + Send + 'static,
    ) {
        let (group, plural, name) = (object.group.to_owned(), object.plural.to_owned(), object.name.to_owned());
        let modify = move |store: &mut fake_apiserver::Store| {
            store.modify(&group, &plural, NAMESPACE, &name, edit);
        };
        match when {
            When::Before(write) => server.before_write(write, modify),
            When::After(write) => server.after_write(write, modify),
        }
    }

    /// Every backup that runs of `test` left, as `Kind/name/file`, sorted.
    pub fn backups_left(test: &Test) -> Vec<String> {
        let root = test.path("home/.local/state/kubectl-rollout-lua/backups/fake/shop");
        let mut found = Vec::new();
        let Ok(kinds) = std::fs::read_dir(&root) else { return found };
        for object in kinds.flat_map(|kind| std::fs::read_dir(kind.unwrap().path()).unwrap()) {
            for file in std::fs::read_dir(object.unwrap().path()).unwrap() {
                found.push(file.unwrap().path().strip_prefix(&root).unwrap().display().to_string());
            }
        }
        found.sort();
        found
    }

    /// The newest backup of VirtualService `demo` that a run of `test` made.
    pub fn newest_backup_of_the_virtual_service(test: &Test) -> std::path::PathBuf {
        let dir = test.path("home/.local/state/kubectl-rollout-lua/backups/fake/shop/VirtualService/demo");
        let files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.into_iter().max().expect("a backup")
    }

    pub fn vs(server: &FakeHandle) -> Value {
        server.object("networking.istio.io", "*", "virtualservices", NAMESPACE, "demo").expect("the VirtualService")
    }

    pub fn dr(server: &FakeHandle) -> Value {
        server.object("networking.istio.io", "*", "destinationrules", NAMESPACE, "demo").expect("the DestinationRule")
    }

    pub fn rollout_status(server: &FakeHandle) -> Value {
        server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo").expect("the Rollout")["status"].clone()
    }

    /// `approve demo --yes`, from a fresh temp folder.
    pub fn approve_demo(server: &FakeHandle) -> super::Output {
        Test::new().kubeconfig(server).args(["approve", "demo", "--yes"]).run()
    }

    /// `approve demo --yes` with `script` as the VirtualService's script.
    pub fn approve_with_script(server: &FakeHandle, script: &str) -> super::Output {
        Test::new()
            .kubeconfig(server)
            .file("vs.lua", script)
            .args(["approve", "demo", "--yes", "--script", "VirtualService.networking.istio.io=vs.lua"])
            .run()
    }

    /// A backup file's text of `object`, as read from `server`.
    pub fn backup_text(server: &FakeHandle, object: &Value) -> String {
        rollout_lua::for_tests::backup_text(object, &format!("{}/", server.url()))
    }

    /// The requests that changed something, other than the claim on a Rollout (a Lease) and
    /// SelfSubjectAccessReviews.
    pub fn writes(server: &FakeHandle) -> Vec<String> {
        routing_writes(server).iter().map(|r| format!("{} {}", r.method, r.path)).collect()
    }

    /// `approve demo --yes`, then with `--force`: each refused (exit 3) saying `said` after
    /// `error: nothing was written: `, and nothing written to the routing.
    pub fn approve_refused_forced_or_not(test: &Test, server: &FakeHandle, said: &str) {
        for args in [&["approve", "demo", "--yes"][..], &["approve", "demo", "--yes", "--force"]] {
            test.run_args(args).status(3).stderr_has(&format!("error: nothing was written: {said}"));
        }
        assert_eq!(writes(server), Vec::<String>::new());
    }

    /// The logged writes other than the claim on a Rollout (a Lease).
    pub fn routing_writes(server: &FakeHandle) -> Vec<fake_apiserver::LoggedRequest> {
        server.writes().into_iter().filter(|r| !r.path.contains("/leases")).collect()
    }

    /// The writes to the claims (Leases).
    pub fn claim_writes(server: &FakeHandle) -> Vec<String> {
        server
            .writes()
            .iter()
            .filter(|r| r.path.contains("/leases"))
            .map(|r| format!("{} {}", r.method, r.path))
            .collect()
    }

    /// A v1beta1 canary Rollout `store` routing through HTTPRoute `store`: a header step, a path
    /// step, 30%, then 100%.
    pub fn store_rollout(step: i64, state: &str) -> Value {
        json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "store", "namespace": NAMESPACE},
            "spec": {
                "workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "store"},
                "strategy": {"canary": {
                    "steps": [
                        {"replicas": 1, "matches": [{"headers": [{"type": "Exact", "name": "x-canary", "value": "true"}]}]},
                        {"replicas": 2, "matches": [{"path": {"type": "PathPrefix", "value": "/beta"}}]},
                        {"replicas": "30%", "traffic": "30%"},
                        {"replicas": "100%"}
                    ],
                    "trafficRoutings": [{"service": "store", "gateway": {"httpRouteName": "store"}}]
                }}
            },
            "status": {
                "phase": "Progressing",
                "canaryStatus": {"currentStepIndex": step, "currentStepState": state, "canaryReplicas": 1, "canaryReadyReplicas": 1}
            }
        })
    }

    /// HTTPRoute `store`: `/` to Service `store`, `/old` redirected. As a user writes it; the fake server adds the CRD's defaults (kind, group, weight).
    pub fn http_route(version: &str) -> Value {
        json!({
            "apiVersion": format!("gateway.networking.k8s.io/{version}"), "kind": "HTTPRoute",
            "metadata": {"name": "store", "namespace": NAMESPACE},
            "spec": {
                "parentRefs": [{"name": "public"}],
                "rules": [
                    {"matches": [{"path": {"type": "PathPrefix", "value": "/"}}], "backendRefs": [{"name": "store", "port": 80}]},
                    {"matches": [{"path": {"type": "Exact", "value": "/old"}}],
                     "filters": [{"type": "RequestRedirect", "requestRedirect": {"path": {"type": "ReplaceFullPath", "replaceFullPath": "/"}}}]}
                ]
            }
        })
    }

    /// Kruise, Services and HTTPRoutes (at `versions`, the first the route's own) served, with
    /// Rollout `store` at `step`/`state`, its Deployment (4 replicas), Services `store` and
    /// `store-canary` and HTTPRoute `store`, served at `versions`.
    pub fn store(step: i64, state: &str, versions: &[&str]) -> fake_apiserver::Builder {
        let mut workload = deployment(4);
        workload["metadata"]["name"] = json!("store");
        let mut builder = fake_apiserver::FakeApiServer::builder()
            .kruise_and_istio()
            .resource(fake_apiserver::leases())
            .resource(fake_apiserver::services())
            .resource(fake_apiserver::deployments())
            .object(store_rollout(step, state))
            .object(workload)
            .object(service("store"))
            .object(service("store-canary"));
        for version in versions {
            builder = builder.resource(fake_apiserver::httproutes(version));
        }
        builder.object(http_route(versions[0]))
    }

    pub fn route(server: &FakeHandle) -> Value {
        server.object("gateway.networking.k8s.io", "*", "httproutes", NAMESPACE, "store").expect("the HTTPRoute")
    }

    /// The route's rules, each as `path [header…] -> backend weight, …`.
    pub fn rules(server: &FakeHandle) -> Vec<String> {
        route(server)["spec"]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|rule| {
                let matches: Vec<String> = rule["matches"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|m| {
                        let headers: String = m["headers"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|h| format!(" {}={}", h["name"].as_str().unwrap(), h["value"].as_str().unwrap()))
                            .collect();
                        format!("{}{headers}", m["path"]["value"].as_str().unwrap_or("-"))
                    })
                    .collect();
                let backends: Vec<String> = rule["backendRefs"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|b| format!("{} {}", b["name"].as_str().unwrap(), b["weight"]))
                    .collect();
                format!("{} -> {}", matches.join(" | "), backends.join(", "))
            })
            .collect()
    }
}
