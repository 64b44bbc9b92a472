//! A kubeconfig's exec credential plugin (`users[].user.exec`, e.g. `aws eks get-token`), run
//! by us rather than by kube: kube runs it without a time limit, blocking the client (twice
//! for a TLS server), so a plugin that hangs hung the command. We run it once, bounded, and
//! hand its token or client certificate to the client. (The credential is not refreshed:
//! commands are short, and a `status -w` longer than the credential's lifetime ends with an
//! authentication error naming the server.)

use crate::error::Error;
use kube::config::{ExecConfig, ExecInteractiveMode};
use serde_json::{Value, json};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a plugin proves who we are with.
#[derive(Debug, PartialEq, Eq)]
pub enum Credential {
    Token(String),
    /// PEM texts.
    Certificate {
        certificate: String,
        key: String,
    },
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
    // Read its output on a thread, so that a plugin filling the pipe cannot block the wait.
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let (sender, output) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = sender.send(stdout.read_to_end(&mut text).map(|_| text));
    });
    let deadline = limit.map(|limit| Instant::now() + limit);
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| Error::Input(format!("waiting for {named}: {e}")))? {
            break status;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            let _ = child.kill();
            let _ = child.wait();
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
    let stdout = output
        .recv_timeout(Duration::from_secs(1))
        .map_err(|_| Error::Input(format!("{named} exited, but its output did not end")))?
        .map_err(|e| Error::Input(format!("reading the output of {named}: {e}")))?;
    credential(&stdout).map_err(|e| Error::Input(format!("{named}: {e}")))
}

/// The credential in a plugin's output: an `ExecCredential` in JSON (or YAML, which client-go
/// accepts too).
fn credential(stdout: &[u8]) -> Result<Credential, String> {
    let output: Value =
        serde_saphyr::from_slice(stdout).map_err(|e| format!("its output is not an ExecCredential: {e}"))?;
    let status = &output["status"];
    let text = |field: &str| status[field].as_str().filter(|s| !s.is_empty()).map(str::to_string);
    match (text("token"), text("clientCertificateData"), text("clientKeyData")) {
        (Some(token), _, _) => Ok(Credential::Token(token)),
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
        assert_eq!(credential(token), Ok(Credential::Token("t0k".into())));
        let yaml = b"kind: ExecCredential\nstatus:\n  clientCertificateData: CERT\n  clientKeyData: KEY\n";
        assert_eq!(credential(yaml), Ok(Credential::Certificate { certificate: "CERT".into(), key: "KEY".into() }));
        assert!(credential(br#"{"status":{"clientCertificateData":"CERT"}}"#).unwrap_err().contains("neither"));
        assert!(credential(b"{").unwrap_err().contains("not an ExecCredential"));
    }
}
