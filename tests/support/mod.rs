//! A builder that runs the real `kubectl-rollout_lua` binary in a scrubbed environment.

#![allow(dead_code)] // each test module uses a different part of the builder

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tempfile::TempDir;

pub const BINARY: &str = env!("CARGO_BIN_EXE_kubectl-rollout_lua");

/// The repository root, for bundled examples and scripts.
pub fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

pub struct Test {
    dir: TempDir,
    args: Vec<OsString>,
    env: Vec<(String, String)>,
    stdin: Option<String>,
}

impl Test {
    pub fn new() -> Test {
        Test { dir: tempfile::tempdir().expect("temp dir"), args: Vec::new(), env: Vec::new(), stdin: None }
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
        let home = self.path("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut command = Command::new(BINARY);
        command
            .args(&self.args)
            .current_dir(self.dir.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("KUBECONFIG", self.path("kubeconfig"))
            .env("NO_COLOR", "1")
            .stdin(if self.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in &self.env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("run the binary");
        if let Some(text) = &self.stdin {
            child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        }
        let output = child.wait_with_output().unwrap();
        Output {
            status: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

#[derive(Debug)]
pub struct Output {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
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

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}
