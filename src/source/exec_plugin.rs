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
use std::io::Read;
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};
use tower::{BoxError, Layer, Service, ServiceExt};

/// How long before its expiry a token is replaced, so that a request sent with it arrives while
/// it is still good.
const REFRESH_BEFORE: Duration = Duration::from_secs(10);

/// The most a plugin may print: an ExecCredential is a few KB, a client certificate and key
/// included.
const MAX_OUTPUT: usize = 1 << 20;

/// What a plugin proves who we are with.
#[derive(Debug, PartialEq, Eq)]
pub enum Credential {
    /// A bearer token, and when it expires (`None`: the plugin did not say).
    Token { token: String, expires: Option<SystemTime> },
    /// PEM texts.
    Certificate { certificate: String, key: String },
}

/// Runs the plugin, stopping it after `limit` (`None`: no limit), and reads its credential.
pub fn run(exec: &ExecConfig, limit: Option<Duration>) -> Result<Credential, Error> {
    let Some(program) = exec.command.as_deref().filter(|c| !c.is_empty()) else {
        return Err(Error::Input("the kubeconfig's exec credential plugin (users[].user.exec) has no command".into()));
    };
    let named = format!("the exec credential plugin {program:?} (users[].user.exec in the kubeconfig)");
    let interactive = exec.interactive_mode != Some(ExecInteractiveMode::Never);
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
    let api_version = exec.api_version.as_deref().unwrap_or("client.authentication.k8s.io/v1");
    let info = json!({ "apiVersion": api_version, "kind": "ExecCredential", "spec": spec });
    command
        .env("KUBERNETES_EXEC_INFO", info.to_string())
        .stdin(if interactive { Stdio::inherit() } else { Stdio::null() })
        .stdout(Stdio::piped())
        // Its messages (a login prompt, say) are for the user, as with kubectl.
        .stderr(Stdio::inherit());
    let mut child = command.spawn().map_err(|e| {
        let hint = exec.install_hint.as_deref().map(|h| format!("\n{}", h.trim_end())).unwrap_or_default();
        Error::Input(format!("cannot run {named}: {e}{hint}"))
    })?;
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
    let deadline = limit.map(|limit| Instant::now() + limit);
    let mut read = None;
    let status = loop {
        let exited = child.try_wait().map_err(|e| Error::Input(format!("waiting for {named}: {e}")))?;
        // Looked at after the exit: a plugin that the closed pipe stopped exits only after its
        // output was sent here.
        read = read.or_else(|| output.try_recv().ok());
        if read.as_ref().is_some_and(passes_limit) {
            stop(&mut child);
            return Err(too_much(" and was stopped"));
        }
        if let Some(status) = exited {
            break status;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            stop(&mut child);
            let limit = crate::time::human(limit.unwrap_or_default());
            return Err(Error::Input(format!(
                "{named} did not finish within {limit} and was stopped (the limit is --request-timeout's, \
                 60s by default; 0 for none)"
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    if !status.success() {
        return Err(Error::Input(format!("{named} failed ({status})")));
    }
    // The plugin has exited: its output is complete unless a child of it holds the pipe.
    let read = match read {
        Some(read) => read,
        None => output
            .recv_timeout(Duration::from_secs(1))
            .map_err(|_| Error::Input(format!("{named} exited, but its output did not end")))?,
    };
    if passes_limit(&read) {
        return Err(too_much(""));
    }
    let stdout = read.map_err(|e| Error::Input(format!("reading the output of {named}: {e}")))?;
    credential(&stdout).map_err(|e| Error::Input(format!("{named}: {e}")))
}

fn stop(child: &mut std::process::Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// A token from the plugin, for every request; the plugin runs again when it is about to expire
/// or the API server refused it. Cheap to clone (requests share it).
#[derive(Clone)]
pub struct PluginToken {
    exec: Arc<ExecConfig>,
    limit: Option<Duration>,
    current: Arc<tokio::sync::Mutex<Token>>,
}

struct Token {
    value: String,
    expires: Option<SystemTime>,
}

impl PluginToken {
    /// The token the plugin handed out (`run`), with the plugin and its time limit to run again.
    pub fn new(exec: ExecConfig, limit: Option<Duration>, value: String, expires: Option<SystemTime>) -> PluginToken {
        let current = Arc::new(tokio::sync::Mutex::new(Token { value, expires }));
        PluginToken { exec: Arc::new(exec), limit, current }
    }

    /// The token to send now: the plugin runs again first when it expires within
    /// `REFRESH_BEFORE` (requests wait for that one run).
    async fn for_request(&self) -> Result<String, Error> {
        let mut current = self.current.lock().await;
        if current.expires.is_some_and(|expires| SystemTime::now() + REFRESH_BEFORE >= expires) {
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
        let (exec, limit) = (self.exec.clone(), self.limit);
        let ran = tokio::task::spawn_blocking(move || run(&exec, limit))
            .await
            .map_err(|e| Error::Input(format!("running the exec credential plugin: {e}")))??;
        match ran {
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

/// The credential in a plugin's output: an `ExecCredential` in JSON (or YAML, which client-go
/// accepts too).
fn credential(stdout: &[u8]) -> Result<Credential, String> {
    let output: Value = serde_saphyr::from_slice(stdout).map_err(|e| {
        // The parser calls what it read `<input>`.
        format!("its output is not an ExecCredential: {}", e.to_string().replace("<input>", "its output"))
    })?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_credential_is_a_token_or_a_certificate_and_key() {
        let token =
            br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t0k"}}"#;
        assert_eq!(credential(token), Ok(Credential::Token { token: "t0k".into(), expires: None }));
        let expiring = br#"{"status":{"token":"t0k","expirationTimestamp":"2026-01-01T00:15:00Z"}}"#;
        let expires = Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_226_500));
        assert_eq!(credential(expiring), Ok(Credential::Token { token: "t0k".into(), expires }));
        let garbled = br#"{"status":{"token":"t0k","expirationTimestamp":"soon"}}"#;
        assert!(credential(garbled).unwrap_err().contains("is not an RFC 3339 time"));
        let yaml = b"kind: ExecCredential\nstatus:\n  clientCertificateData: CERT\n  clientKeyData: KEY\n";
        assert_eq!(credential(yaml), Ok(Credential::Certificate { certificate: "CERT".into(), key: "KEY".into() }));
        assert!(credential(br#"{"status":{"clientCertificateData":"CERT"}}"#).unwrap_err().contains("neither"));
        let broken = credential(b"{").unwrap_err();
        assert!(broken.starts_with("its output is not an ExecCredential: error: line 1 column 1"), "{broken}");
        assert!(broken.contains("--> its output:1:1") && !broken.contains("<input>"), "{broken}");
    }
}
