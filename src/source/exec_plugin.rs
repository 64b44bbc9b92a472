//! A kubeconfig's exec credential plugin (`users[].user.exec`, e.g. `aws eks get-token`), run
//! by us rather than by kube: kube runs it without a time limit, blocking the client (twice
//! for a TLS server), so a plugin that hangs hung the command. We run it bounded, and hand its
//! token or client certificate to the client. A token is refreshed: the plugin runs again
//! (bounded as its first run) shortly before the token's `expirationTimestamp`, and when the
//! API server refuses the token (401; the request is then sent once more), so that a long
//! `approve --to-end` or `status -w` outlives a 15-minute EKS token and can still release its
//! claim. A client certificate is not refreshed (the TLS connection is made with it).

use super::retry::copy_request;
use crate::error::Error;
use http::{HeaderValue, Request, Response, StatusCode, header};
use kube::client::Body;
use kube::config::{ExecConfig, ExecInteractiveMode};
use serde_json::{Value, json};
use std::future::Future;
use std::io::{IsTerminal, Read};
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};
use tower::{BoxError, Layer, Service, ServiceExt};

/// How long a plugin may take when `--request-timeout` does not say: a minute, or five for one
/// that may prompt (it may be logging the user in through a browser, or waiting for a code).
const LIMIT: Duration = Duration::from_secs(60);
const PROMPTING_LIMIT: Duration = Duration::from_secs(300);

/// The time limit of a plugin run (`None`: none): `--request-timeout` when given (0: none),
/// else [`LIMIT`] or [`PROMPTING_LIMIT`].
fn limit(request_timeout: Option<Duration>, interactive: bool) -> Option<Duration> {
    match request_timeout {
        Some(given) => Some(given).filter(|t| !t.is_zero()),
        None if interactive => Some(PROMPTING_LIMIT),
        None => Some(LIMIT),
    }
}

/// The most a plugin may print: an ExecCredential is a few KB, a client certificate and key
/// included.
const MAX_OUTPUT: usize = 1 << 20;

/// How much of an output that is not an ExecCredential a message quotes (characters).
const EXCERPT: usize = 60;

/// What a plugin proves who we are with.
#[derive(Debug, PartialEq, Eq)]
pub enum Credential {
    /// A bearer token, and when it expires (`None`: the plugin did not say).
    Token { token: String, expires: Option<SystemTime> },
    /// PEM texts.
    Certificate { certificate: String, key: String },
}

/// Where the plugin may talk to the user.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Terminal {
    /// This command's, as kubectl hands it: its stderr, and its stdin when that is a terminal
    /// and the plugin may prompt.
    #[default]
    Shared,
    /// None: shell completion runs us in the middle of a command line being typed. The plugin
    /// runs as without a terminal (an `interactiveMode: Always` one is refused), its stderr
    /// discarded.
    Withheld,
}

/// Runs the plugin, stopping it at its limit (see [`limit`]; `request_timeout`: the flag as
/// given), and reads its credential. The plugin runs on a blocking thread, so that a timeout
/// around the caller can fire; a caller that stops waiting (drops the future) has the plugin
/// stopped at once, not left to its limit.
pub async fn run(
    exec: &ExecConfig,
    request_timeout: Option<Duration>,
    terminal: Terminal,
) -> Result<Credential, Error> {
    let exec = exec.clone();
    let abandoned = AbandonedOnDrop(Arc::default());
    let watched = Arc::clone(&abandoned.0);
    let ran = tokio::task::spawn_blocking(move || run_bounded(&exec, request_timeout, terminal, &watched)).await;
    // The plugin has ended (or was stopped): nothing is left to stop when the guard drops.
    abandoned.0.group.lock().unwrap_or_else(|e| e.into_inner()).take();
    ran.map_err(|e| Error::Input(format!("running the exec credential plugin: {e}")))?
}

/// What the waiting future and the plugin's thread share.
#[derive(Default)]
struct Abandoned {
    /// The future waiting for the plugin is gone.
    flag: AtomicBool,
    /// The plugin's process group, when it has one of its own.
    group: Mutex<Option<u32>>,
}

/// Marks the plugin abandoned when dropped, and stops its process group then and there: the
/// run may end right after (completion's budget), before the plugin's thread looks at the flag.
struct AbandonedOnDrop(Arc<Abandoned>);

impl Drop for AbandonedOnDrop {
    fn drop(&mut self) {
        self.0.flag.store(true, Ordering::Relaxed);
        if let Some(group) = self.0.group.lock().unwrap_or_else(|e| e.into_inner()).take() {
            kill_group(group);
        }
    }
}

/// The ExecCredential versions client-go takes (v1alpha1 is gone since Kubernetes 1.24); v1's
/// plugins must name their interactiveMode.
const V1: &str = "client.authentication.k8s.io/v1";
const V1BETA1: &str = "client.authentication.k8s.io/v1beta1";

fn run_bounded(
    exec: &ExecConfig,
    request_timeout: Option<Duration>,
    terminal: Terminal,
    abandoned: &Abandoned,
) -> Result<Credential, Error> {
    let Some(program) = exec.command.as_deref().filter(|c| !c.is_empty()) else {
        return Err(Error::Input("the kubeconfig's exec credential plugin (users[].user.exec) has no command".into()));
    };
    let named = format!("the exec credential plugin {program:?} (users[].user.exec in the kubeconfig)");
    let Some(api_version) = exec.api_version.as_deref().filter(|v| !v.is_empty()) else {
        return Err(Error::Input(format!(
            "{named} has no apiVersion, which kubectl requires too (apiVersion must be specified): give the ExecCredential version the plugin prints, such as {V1}"
        )));
    };
    if ![V1, V1BETA1].contains(&api_version) {
        return Err(Error::Input(format!(
            "{named} has apiVersion {api_version}, which kubectl refuses too (exec plugin: invalid apiVersion): use {V1} (or {V1BETA1}) if the plugin prints that version"
        )));
    }
    if api_version == V1 && exec.interactive_mode.is_none() {
        return Err(Error::Input(format!(
            "{named} has no interactiveMode, which apiVersion {V1} requires (kubectl refuses it too): add interactiveMode: IfAvailable (or Never, or Always)"
        )));
    }
    let stdin_is_terminal = terminal == Terminal::Shared && std::io::stdin().is_terminal();
    let interactive = interactive(exec.interactive_mode.as_ref(), stdin_is_terminal)
        .map_err(|e| Error::Input(format!("{named} {e}")))?;
    let mut command = Command::new(program);
    command.args(exec.args.iter().flatten());
    for pair in exec.env.iter().flatten() {
        if let (Some(name), Some(value)) = (pair.get("name"), pair.get("value")) {
            command.env(name, value);
        }
    }
    for name in exec.drop_env.iter().flatten() {
        command.env_remove(name);
    }
    let mut spec = json!({ "interactive": interactive });
    if exec.provide_cluster_info {
        spec["cluster"] = serde_json::to_value(&exec.cluster).unwrap_or(Value::Null);
    }
    let info = json!({ "apiVersion": api_version, "kind": "ExecCredential", "spec": spec });
    command
        .env("KUBERNETES_EXEC_INFO", info.to_string())
        .stdin(if interactive { Stdio::inherit() } else { Stdio::null() })
        .stdout(Stdio::piped())
        // Its messages (a login prompt, say) are for the user, as with kubectl.
        .stderr(if terminal == Terminal::Shared { Stdio::inherit() } else { Stdio::null() });
    // A plugin that cannot reach a terminal gets a process group of its own, so that at its limit
    // the processes it started are stopped with it: left running, they would hold our stderr
    // open, and `$(kubectl rollout-lua … 2>&1)` would wait for them. Where a terminal could send
    // Ctrl-C, the plugin stays in its foreground group: Ctrl-C ends this process at once (no
    // handler is installed yet), and only a shared group lets it end the plugin too. During
    // completion the group is its own: the 1 s budget stops it.
    let own_group = terminal == Terminal::Withheld || !any_terminal();
    #[cfg(unix)]
    if own_group {
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
    }
    let mut child = command.spawn().map_err(|e| {
        let hint = exec.install_hint.as_deref().map(|h| format!("\n{}", h.trim_end())).unwrap_or_default();
        Error::Input(format!("cannot run {named}: {e}{hint}"))
    })?;
    if own_group {
        *abandoned.group.lock().unwrap_or_else(|e| e.into_inner()) = Some(child.id());
    }
    // Read its output on a thread, so that a plugin filling the pipe cannot block the wait. One
    // byte more than the limit tells that it was passed; the pipe is then closed.
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let (sender, output) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = sender.send((&mut stdout).take(MAX_OUTPUT as u64 + 1).read_to_end(&mut text).map(|_| text));
    });
    let too_much = |stopped: &str| {
        Error::Input(format!(
            "{named} printed more than {} MiB (the limit of its output; an ExecCredential is a few KB){stopped}",
            MAX_OUTPUT >> 20
        ))
    };
    let passes_limit = |read: &std::io::Result<Vec<u8>>| read.as_ref().is_ok_and(|text| text.len() > MAX_OUTPUT);
    let limit = limit(request_timeout, interactive);
    let deadline = limit.map(|limit| Instant::now() + limit);
    let mut read = None;
    let status = loop {
        let exited = child.try_wait().map_err(|e| Error::Input(format!("waiting for {named}: {e}")))?;
        // Looked at after the exit: a plugin that the closed pipe stopped exits only after its
        // output was sent here.
        read = read.or_else(|| output.try_recv().ok());
        if read.as_ref().is_some_and(passes_limit) {
            stop(&mut child, own_group);
            return Err(too_much(" and was stopped"));
        }
        if let Some(status) = exited {
            break status;
        }
        if abandoned.flag.load(Ordering::Relaxed) {
            stop(&mut child, own_group);
            return Err(Error::Input(format!("{named} was stopped: its credential is no longer waited for")));
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            stop(&mut child, own_group);
            let limit = crate::time::go_duration(limit.unwrap_or_default());
            return Err(Error::Input(format!(
                "{named} did not finish within {limit} and was stopped (the limit is --request-timeout's when \
                 given, 0 for none; else 60s, or 5m for a plugin that may prompt)"
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    if !status.success() {
        return Err(Error::Input(format!("{named} failed ({status})")));
    }
    // The plugin has exited: its output is complete unless a child of it holds the pipe (that
    // child is stopped, with its group, when the plugin has one of its own).
    let read = match read {
        Some(read) => read,
        None => output.recv_timeout(Duration::from_secs(1)).map_err(|_| {
            stop(&mut child, own_group);
            Error::Input(format!("{named} exited, but its output did not end"))
        })?,
    };
    if passes_limit(&read) {
        return Err(too_much(""));
    }
    let stdout = read.map_err(|e| Error::Input(format!("reading the output of {named}: {e}")))?;
    credential(&stdout, api_version).map_err(|e| Error::Input(format!("{named}: {e}")))
}

/// Whether the plugin is told that it may prompt (`spec.interactive`), as client-go decides:
/// never for `Never`; for `IfAvailable` (v1beta1's default when unset) when stdin is a terminal;
/// for `Always` too, which without a terminal is refused rather than left to wait for input
/// that cannot come.
fn interactive(mode: Option<&ExecInteractiveMode>, stdin_is_terminal: bool) -> Result<bool, &'static str> {
    match mode {
        Some(ExecInteractiveMode::Never) => Ok(false),
        Some(ExecInteractiveMode::IfAvailable) | None => Ok(stdin_is_terminal),
        Some(ExecInteractiveMode::Always) if stdin_is_terminal => Ok(true),
        Some(ExecInteractiveMode::Always) => {
            Err("cannot support interactive mode: standard input is not a terminal (its interactiveMode is Always)")
        }
    }
}

/// Whether one of the standard streams is a terminal, from which Ctrl-C may come.
fn any_terminal() -> bool {
    std::io::stdin().is_terminal() || std::io::stdout().is_terminal() || std::io::stderr().is_terminal()
}

/// Stops the plugin, and the processes it started when it has a process group of its own.
fn stop(child: &mut std::process::Child, own_group: bool) {
    if own_group {
        kill_group(child.id());
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Kills every process of the process group `group` (a plugin's, led by it).
fn kill_group(group: u32) {
    #[cfg(unix)]
    if let Some(group) = rustix::process::Pid::from_raw(group as i32) {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
}

/// A token from the plugin, for every request; the plugin runs again when it is about to expire
/// or the API server refused it. Cheap to clone (requests share it).
#[derive(Clone)]
pub struct PluginToken {
    exec: Arc<ExecConfig>,
    request_timeout: Option<Duration>,
    terminal: Terminal,
    current: Arc<tokio::sync::Mutex<Token>>,
}

struct Token {
    value: String,
    expires: Option<SystemTime>,
}

impl PluginToken {
    /// The token the plugin handed out (`run`), with how to run it again.
    pub fn new(
        exec: ExecConfig,
        request_timeout: Option<Duration>,
        terminal: Terminal,
        value: String,
        expires: Option<SystemTime>,
    ) -> PluginToken {
        let current = Arc::new(tokio::sync::Mutex::new(Token { value, expires }));
        PluginToken { exec: Arc::new(exec), request_timeout, terminal, current }
    }

    /// The token to send now: the plugin runs again first once it has expired, as client-go
    /// runs it (requests wait for that one run). A token that expires on the way is refused
    /// (401), and the request sent again with a new one (`after_refusal`).
    async fn for_request(&self) -> Result<String, Error> {
        let mut current = self.current.lock().await;
        if current.expires.is_some_and(|expires| SystemTime::now() >= expires) {
            *current = self.run_again().await?;
        }
        Ok(current.value.clone())
    }

    /// After the API server refused `refused` (401): a new token, unless another request got
    /// one meanwhile; None when the plugin hands out the token that was refused.
    async fn after_refusal(&self, refused: &str) -> Result<Option<String>, Error> {
        let mut current = self.current.lock().await;
        if current.value == refused {
            *current = self.run_again().await?;
        }
        Ok(Some(current.value.clone()).filter(|value| value != refused))
    }

    async fn run_again(&self) -> Result<Token, Error> {
        match run(&self.exec, self.request_timeout, self.terminal).await? {
            Credential::Token { token, expires } => Ok(Token { value: token, expires }),
            Credential::Certificate { .. } => Err(Error::Input(
                "the exec credential plugin handed out a client certificate instead of a new token".into(),
            )),
        }
    }
}

/// Puts the plugin's token on every request ([`Authenticated`]).
pub struct Authenticate(pub PluginToken);

impl<S> Layer<S> for Authenticate {
    type Service = Authenticated<S>;

    fn layer(&self, inner: S) -> Authenticated<S> {
        Authenticated { inner, token: self.0.clone() }
    }
}

/// A service that sends each request with the plugin's current token, and once more with a
/// new one when the API server answers 401.
#[derive(Clone)]
pub struct Authenticated<S> {
    inner: S,
    token: PluginToken,
}

impl<S, B> Service<Request<Body>> for Authenticated<S>
where
    S: Service<Request<Body>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Send + 'static,
{
    type Response = Response<B>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<B>, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: Request<Body>) -> Self::Future {
        // The service polled ready is the one to call; a clone takes its place.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let token = self.token.clone();
        Box::pin(async move {
            let again = copy_request(&request);
            let sent = token.for_request().await?;
            request.headers_mut().insert(header::AUTHORIZATION, bearer(&sent)?);
            let response = inner.call(request).await.map_err(Into::into)?;
            if response.status() != StatusCode::UNAUTHORIZED {
                return Ok(response);
            }
            let (Some(mut again), Some(fresh)) = (again, token.after_refusal(&sent).await?) else {
                return Ok(response);
            };
            again.headers_mut().insert(header::AUTHORIZATION, bearer(&fresh)?);
            inner.ready().await.map_err(Into::into)?.call(again).await.map_err(Into::into)
        })
    }
}

fn bearer(token: &str) -> Result<HeaderValue, Error> {
    let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
        .map_err(|_| Error::Input("the exec credential plugin's token is not a valid HTTP header value".into()))?;
    value.set_sensitive(true);
    Ok(value)
}

/// The credential in a plugin's output: an `ExecCredential` of the configured `api_version`, in
/// JSON (or YAML, which client-go's decoder takes too).
fn credential(stdout: &[u8], api_version: &str) -> Result<Credential, String> {
    if stdout.iter().all(u8::is_ascii_whitespace) {
        return Err("it printed nothing, where an ExecCredential was expected".into());
    }
    // The place only: the parser's excerpt of the output could hold a credential.
    let output: Value = serde_saphyr::from_slice(stdout)
        .map_err(|e| format!("its output is not an ExecCredential: {}", e.without_snippet()))?;
    if !output.is_object() {
        // Text before the JSON (a "Login succeeded" line) makes the whole output one string.
        return Err(format!("its output is not an ExecCredential object: it starts with {}", start_of(stdout)));
    }
    match output["kind"].as_str() {
        Some("ExecCredential") => {}
        Some(kind) => return Err(format!("its output is not an ExecCredential: its kind is {kind}")),
        None => return Err("its output is not an ExecCredential: it has no kind".into()),
    }
    // client-go's check, in its words.
    let configured = format!("it is configured to use API version {api_version} (users[].user.exec.apiVersion)");
    match output["apiVersion"].as_str() {
        Some(version) if version == api_version => {}
        Some(version) => return Err(format!("{configured}, but it returned version {version}")),
        None => return Err(format!("{configured}, but it returned no apiVersion")),
    }
    let status = &output["status"];
    let text = |field: &str| status[field].as_str().filter(|s| !s.is_empty()).map(str::to_string);
    match (text("token"), text("clientCertificateData"), text("clientKeyData")) {
        (Some(token), _, _) => {
            let expires = match text("expirationTimestamp") {
                None => None,
                Some(time) => Some(
                    crate::time::parse_rfc3339(&time)
                        .and_then(|seconds| u64::try_from(seconds).ok())
                        .map(|seconds| SystemTime::UNIX_EPOCH + Duration::from_secs(seconds))
                        .ok_or(format!("its status.expirationTimestamp {time:?} is not an RFC 3339 time"))?,
                ),
            };
            Ok(Credential::Token { token, expires })
        }
        (None, Some(certificate), Some(key)) => Ok(Credential::Certificate { certificate, key }),
        _ => {
            Err("its ExecCredential has neither status.token nor status.clientCertificateData and clientKeyData".into())
        }
    }
}

/// The first line of the output, cut at `EXCERPT` characters, quoted for a message when it
/// has a space (a message such as `Login succeeded`); a line without one may be a credential
/// (a token printed bare), and only its length is said.
fn start_of(output: &[u8]) -> String {
    let text = String::from_utf8_lossy(output);
    let line = text.trim_start().lines().next().unwrap_or_default();
    if !line.contains(char::is_whitespace) {
        return format!(
            "a line of {} characters without a space (not shown: it may be a credential)",
            line.chars().count()
        );
    }
    match line.char_indices().nth(EXCERPT) {
        Some((cut, _)) => format!("{:?}", format!("{}…", &line[..cut])),
        None => format!("{line:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugins_limit_is_the_request_timeouts_when_given_else_longer_for_one_that_may_prompt() {
        let secs = Duration::from_secs;
        assert_eq!(limit(None, false), Some(secs(60)));
        assert_eq!(limit(None, true), Some(secs(300)));
        assert_eq!(limit(Some(secs(5)), true), Some(secs(5)));
        assert_eq!(limit(Some(Duration::ZERO), false), None);
    }

    /// An ExecCredential of `V1` with this `status`.
    fn output(status: &str) -> Vec<u8> {
        format!(r#"{{"apiVersion":"{V1}","kind":"ExecCredential","status":{status}}}"#).into_bytes()
    }

    #[test]
    fn the_credential_is_a_token_or_a_certificate_and_key() {
        let token = output(r#"{"token":"t0k"}"#);
        assert_eq!(credential(&token, V1), Ok(Credential::Token { token: "t0k".into(), expires: None }));
        let expiring = output(r#"{"token":"t0k","expirationTimestamp":"2026-01-01T00:15:00Z"}"#);
        let expires = Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_226_500));
        assert_eq!(credential(&expiring, V1), Ok(Credential::Token { token: "t0k".into(), expires }));
        let garbled = output(r#"{"token":"t0k","expirationTimestamp":"soon"}"#);
        assert!(credential(&garbled, V1).unwrap_err().contains("is not an RFC 3339 time"));
        let yaml = format!(
            "apiVersion: {V1}\nkind: ExecCredential\nstatus:\n  clientCertificateData: CERT\n  clientKeyData: KEY\n"
        );
        let certificate = Credential::Certificate { certificate: "CERT".into(), key: "KEY".into() };
        assert_eq!(credential(yaml.as_bytes(), V1), Ok(certificate));
        assert!(credential(&output(r#"{"clientCertificateData":"CERT"}"#), V1).unwrap_err().contains("neither"));
        let broken = credential(b"{", V1).unwrap_err();
        assert_eq!(broken, "its output is not an ExecCredential: unclosed bracket '{' at line 1, column 1");
        assert!(!broken.contains('\n') && !broken.contains("<input>"), "the place, not an excerpt: {broken}");
        let leaked = credential(b"{\"status\": {\"token\": \"SECRET-TOKEN\"", V1).unwrap_err();
        assert!(!leaked.contains("SECRET"), "{leaked}");
    }

    #[test]
    fn an_output_that_is_not_an_exec_credential_object_is_quoted() {
        // A line before the JSON makes the whole output one YAML string.
        let mut chatty = b"Login succeeded\n".to_vec();
        chatty.extend(output(r#"{"token":"t0k"}"#));
        assert_eq!(
            credential(&chatty, V1),
            Err(r#"its output is not an ExecCredential object: it starts with "Login succeeded""#.into())
        );
        // The excerpt is bounded.
        let long = format!("\n  é {}\n", "é".repeat(100));
        let quoted = credential(long.as_bytes(), V1).unwrap_err();
        assert_eq!(
            quoted,
            format!("its output is not an ExecCredential object: it starts with \"é {}…\"", "é".repeat(58))
        );
        // A bare token is not shown.
        assert_eq!(
            credential(b"ya29.SECRET-ACCESS-TOKEN\n", V1),
            Err("its output is not an ExecCredential object: it starts with a line of 24 characters without a space (not shown: it may be a credential)".into())
        );
        assert_eq!(credential(b" \n", V1), Err("it printed nothing, where an ExecCredential was expected".into()));
        assert_eq!(
            credential(br#"["a list"]"#, V1),
            Err(r#"its output is not an ExecCredential object: it starts with "[\"a list\"]""#.into())
        );
    }

    #[test]
    fn the_kind_and_the_configured_api_version_are_checked() {
        let status = r#""status":{"token":"t0k"}"#;
        let without_kind = format!(r#"{{"apiVersion":"{V1}",{status}}}"#);
        assert_eq!(
            credential(without_kind.as_bytes(), V1),
            Err("its output is not an ExecCredential: it has no kind".into())
        );
        let other_kind = format!(r#"{{"apiVersion":"{V1}","kind":"Status",{status}}}"#);
        assert_eq!(
            credential(other_kind.as_bytes(), V1),
            Err("its output is not an ExecCredential: its kind is Status".into())
        );
        let beta = output(r#"{"token":"t0k"}"#);
        assert_eq!(
            credential(&beta, "client.authentication.k8s.io/v1beta1"),
            Err("it is configured to use API version client.authentication.k8s.io/v1beta1 \
                 (users[].user.exec.apiVersion), but it returned version client.authentication.k8s.io/v1"
                .into())
        );
        let without_version = format!(r#"{{"kind":"ExecCredential",{status}}}"#);
        assert!(credential(without_version.as_bytes(), V1).unwrap_err().ends_with("but it returned no apiVersion"));
    }

    #[test]
    fn the_plugin_is_interactive_as_client_go_decides() {
        use ExecInteractiveMode::*;
        for terminal in [false, true] {
            assert_eq!(interactive(Some(&Never), terminal), Ok(false));
            assert_eq!(interactive(Some(&IfAvailable), terminal), Ok(terminal));
            // Unset (v1beta1; v1 requires it) is IfAvailable.
            assert_eq!(interactive(None, terminal), Ok(terminal));
        }
        assert_eq!(interactive(Some(&Always), true), Ok(true));
        assert_eq!(
            interactive(Some(&Always), false),
            Err("cannot support interactive mode: standard input is not a terminal (its interactiveMode is Always)")
        );
    }
}
