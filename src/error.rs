//! Failures a user sees, as values: what went wrong (the kind, never the wording of a message)
//! decides the exit code, in `cli::exit_code`.

use crate::lua::ScriptError;
use crate::model::{OwnerKind, Path};
use std::fmt;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: a file, an object, a flag; the message names it.
    #[error("{0}")]
    Input(String),
    /// Bad input: a ref of a Rollout's or TrafficRouting's routing names an object that is not
    /// there. `field` is the ref's, within the owner's routing entry (`TrafficRoutingRef::field`),
    /// so that the message about a file can name its line.
    #[error("{message}")]
    Missing { owner: OwnerKind, field: Path, message: String },
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// A request the API server refused or never answered: what was being done (operation and
    /// object) and the failure.
    #[error("{doing}: {failure}")]
    Api { doing: String, failure: ApiFailure },
    /// Someone else changed an object this run reads or writes; the message shows their edit.
    #[error("{0}")]
    Conflict(String),
    /// A guard refused the operation; the message says what was (not) written.
    #[error("{0}")]
    Refused(String),
    /// SIGINT, SIGTERM or SIGHUP stopped the run; the message says what was done.
    #[error("interrupted ({signal}): {report}")]
    Interrupted { signal: Signal, report: String },
    /// A wait ran out.
    #[error("{0}")]
    TimedOut(String),
    /// Writing the output failed (a closed pipe is not a failure: see `cli::exit_code`). Not
    /// its source as well: the message says it once.
    #[error("writing the output: {0}")]
    Output(std::io::Error),
}

impl From<std::io::Error> for Error {
    fn from(error: std::io::Error) -> Error {
        Error::Output(error)
    }
}

impl Error {
    /// The failure with `prefix: ` before its message: bad input, a missing object's still
    /// naming its field.
    pub fn prefixed(self, prefix: &str) -> Error {
        match self {
            Error::Missing { owner, field, message } => {
                Error::Missing { owner, field, message: format!("{prefix}: {message}") }
            }
            error => Error::Input(format!("{prefix}: {error}")),
        }
    }

    /// Failures found for several things at once (the guards of each Rollout before anything is
    /// done, the plans of several), as one: each message on a line of its own, so that a run
    /// names them all rather than one per attempt. An error alone keeps its kind; several are a
    /// guard's refusal when all are refusals, else a failure as any bad input. None when there
    /// is none.
    pub fn together(errors: Vec<Error>) -> Option<Error> {
        if errors.len() <= 1 {
            return errors.into_iter().next();
        }
        let refused = errors.iter().all(|e| matches!(e, Error::Refused(_)));
        let message = errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
        Some(if refused { Error::Refused(message) } else { Error::Input(message) })
    }

    /// The same failure (the same exit code), with `report` (what was written, rolled back,
    /// kept) added below its message: the last thing done with an error before it is shown.
    pub fn with_report(self, report: &str) -> Error {
        if report.is_empty() {
            return self;
        }
        let add = |message: String| format!("{message}\n{report}");
        match self {
            Error::Input(m) => Error::Input(add(m)),
            error @ (Error::Missing { .. } | Error::Script(_) | Error::Api { .. } | Error::Output(_)) => {
                Error::Input(add(error.to_string()))
            }
            Error::Conflict(m) => Error::Conflict(add(m)),
            Error::Refused(m) => Error::Refused(add(m)),
            Error::Interrupted { signal, report: r } => Error::Interrupted { signal, report: add(r) },
            Error::TimedOut(m) => Error::TimedOut(add(m)),
        }
    }
}

/// Why a request failed, as the API server (or the connection) said it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiFailure {
    /// The HTTP status of the server's answer; None when no answer came (connection lost or
    /// refused, timed out, or an answer that does not parse).
    pub code: Option<u16>,
    /// The Status reason (`Conflict`, `NotFound`…), or the kind of transport failure.
    pub reason: String,
    pub message: String,
}

impl ApiFailure {
    /// 409: the object changed since it was read (or a delete precondition failed).
    pub fn is_conflict(&self) -> bool {
        self.code == Some(409)
    }

    /// Whether a write that failed this way may still have been applied: no answer, a garbled
    /// one, or a server error (5xx) say nothing about it. Any other answer (4xx) is a refusal,
    /// and a refused connection carried no request: nothing was written.
    pub fn outcome_unknown(&self) -> bool {
        !self.not_sent() && self.code.is_none_or(|code| code >= 500)
    }

    /// Whether RBAC forbade the request: a 403 in the authorizer's words (`… is forbidden: User
    /// "…" cannot …`). Admission answers 403 too (a quota, a webhook), which a Role does not mend.
    pub fn rbac_forbidden(&self) -> bool {
        self.code == Some(403) && self.message.contains(" is forbidden: User \"") && self.message.contains("\" cannot ")
    }

    /// Whether the API server said the object `name` is not there: a 404 in its words
    /// (`virtualservices.networking.istio.io "demo" not found`). A 404 for a resource it does not
    /// serve at that path (`the server could not find the requested resource`: a version no
    /// longer served) says nothing of the object.
    pub fn object_not_found(&self, name: &str) -> bool {
        self.code == Some(404) && self.message.ends_with(&format!("\"{name}\" not found"))
    }

    /// Whether the request never reached a server: its connection was refused.
    pub fn not_sent(&self) -> bool {
        self.reason == CONNECTION_REFUSED
    }

    /// What became of the reply of a request whose outcome is unknown (`outcome_unknown`), in a
    /// few words for a report that goes on to say what a fresh read showed: `the reply was
    /// lost`, `no whole reply came within 30s`, `the reply could not be read (not JSON)`, `the
    /// server answered 503 ServiceUnavailable`. `request_limit` is the one a timeout ran out.
    pub fn unheard(&self, request_limit: Option<Duration>) -> String {
        match (self.code, self.reason.as_str()) {
            (Some(code), "" | NOT_A_STATUS) => format!("the server answered {code}"),
            (Some(code), reason) => format!("the server answered {code} {reason}"),
            (None, TIMED_OUT) => match request_limit {
                Some(limit) => format!("no whole reply came within {}", crate::time::seconds(limit)),
                None => "no whole reply came in time".into(),
            },
            (None, reason @ (NOT_JSON | TOO_LARGE)) => format!("the reply could not be read ({reason})"),
            (None, _) => "the reply was lost".into(),
        }
    }
}

/// The reason of a request that failed to connect, refused: it was never sent.
pub const CONNECTION_REFUSED: &str = "connection refused";
/// The reason of a request that got no whole reply within the request timeout.
pub const TIMED_OUT: &str = "timed out";
/// The reason of a reply whose body does not parse (cut short, or not an API server's).
pub const NOT_JSON: &str = "not JSON";
/// The reason of a reply that passed the limit of one reply.
pub const TOO_LARGE: &str = "reply too large";
/// The reason of an error reply whose body is not a Kubernetes Status (a proxy's web page).
pub const NOT_A_STATUS: &str = "not a Kubernetes Status";

impl fmt::Display for ApiFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            // A Status may name no reason (a proxy's, a webhook's).
            Some(code) if self.reason.is_empty() => write!(f, "{} ({code})", self.message),
            Some(code) => write!(f, "{} ({code} {})", self.message, self.reason),
            None => write!(f, "{}", self.message),
        }
    }
}

/// The signals that stop a writing command cleanly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM (a cancelled CI job, `kill`).
    Terminate,
    /// SIGHUP (the terminal or SSH session is gone).
    Hangup,
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
            Signal::Hangup => "SIGHUP",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(code: Option<u16>) -> ApiFailure {
        ApiFailure { code, reason: "X".into(), message: "m".into() }
    }

    #[test]
    fn only_a_404_naming_the_object_says_it_is_not_there() {
        let not_found =
            |message: &str| ApiFailure { code: Some(404), reason: "NotFound".into(), message: message.into() };
        assert!(not_found("virtualservices.networking.istio.io \"demo\" not found").object_not_found("demo"));
        assert!(!not_found("virtualservices.networking.istio.io \"demo\" not found").object_not_found("dem"));
        // A version no longer served: the path, not the object.
        assert!(!not_found("the server could not find the requested resource").object_not_found("demo"));
        let gone = ApiFailure { code: Some(410), ..not_found("x \"demo\" not found") };
        assert!(!gone.object_not_found("demo"));
    }

    #[test]
    fn a_report_keeps_the_kind_of_failure() {
        let refused = Error::Refused("no".into()).with_report("  rolled back X");
        assert!(matches!(refused, Error::Refused(_)));
        assert_eq!(refused.to_string(), "no\n  rolled back X");
        let api = Error::Api { doing: "updating X".into(), failure: failure(Some(500)) }.with_report("r");
        assert!(matches!(api, Error::Input(_)), "an error like any bad input");
        assert_eq!(api.to_string(), "updating X: m (500 X)\nr");
    }

    #[test]
    fn failures_together_are_each_said_and_refused_only_when_all_are_refusals() {
        assert!(Error::together(Vec::new()).is_none());
        let one = Error::together(vec![Error::Conflict("c".into())]).unwrap();
        assert!(matches!(one, Error::Conflict(_)), "one alone is as it was");
        let refused = Error::together(vec![Error::Refused("a".into()), Error::Refused("b".into())]).unwrap();
        assert!(matches!(&refused, Error::Refused(m) if m == "a\nb"));
        let api = Error::Api { doing: "reading X".into(), failure: failure(Some(500)) };
        let mixed = Error::together(vec![Error::Refused("a".into()), api]).unwrap();
        assert!(matches!(&mixed, Error::Input(m) if m == "a\nreading X: m (500 X)"), "{mixed}");
    }

    #[test]
    fn only_the_authorizers_403_is_rbacs() {
        let failure = |code: u16, message: &str| ApiFailure {
            code: Some(code),
            reason: "Forbidden".into(),
            message: message.into(),
        };
        let rbac = "virtualservices.networking.istio.io \"demo\" is forbidden: User \"jane\" cannot update resource \"virtualservices\" in API group \"networking.istio.io\" in the namespace \"shop\"";
        assert!(failure(403, rbac).rbac_forbidden());
        assert!(!failure(403, "admission webhook \"gatekeeper\" denied the request: no canary").rbac_forbidden());
        assert!(!failure(403, "virtualservices \"demo\" is forbidden: exceeded quota: compute").rbac_forbidden());
        assert!(!failure(422, rbac).rbac_forbidden());
    }

    #[test]
    fn a_failure_names_its_code_and_reason_and_no_empty_reason() {
        let failure = |reason: &str| ApiFailure { code: Some(503), reason: reason.into(), message: "m".into() };
        assert_eq!(failure("ServiceUnavailable").to_string(), "m (503 ServiceUnavailable)");
        assert_eq!(failure("").to_string(), "m (503)");
    }

    #[test]
    fn a_prefix_keeps_the_field_of_a_missing_object() {
        let field = Path::root("ingress").field("name");
        let missing = Error::Missing { owner: OwnerKind::Rollout, field: field.clone(), message: "m".into() };
        let Error::Missing { owner, field: kept, message } = missing.prefixed("step 1") else { panic!() };
        assert_eq!((owner, kept, message.as_str()), (OwnerKind::Rollout, field, "step 1: m"));
        let other = Error::Api { doing: "reading X".into(), failure: failure(None) }.prefixed("step 1");
        assert!(matches!(&other, Error::Input(m) if m == "step 1: reading X: m"), "{other:?}");
    }

    #[test]
    fn only_refusals_say_a_write_did_not_happen() {
        assert!(failure(None).outcome_unknown());
        assert!(failure(Some(503)).outcome_unknown());
        assert!(!failure(Some(409)).outcome_unknown());
        assert!(failure(Some(409)).is_conflict());
        assert!(!failure(Some(422)).outcome_unknown());
        let refused = ApiFailure { code: None, reason: CONNECTION_REFUSED.into(), message: "m".into() };
        assert!(refused.not_sent() && !refused.outcome_unknown(), "never sent, so not written");
    }

    #[test]
    fn an_unheard_reply_is_said_as_it_was_lost_late_unreadable_or_a_server_error() {
        let failure = |code, reason: &str| ApiFailure { code, reason: reason.into(), message: "m".into() };
        let limit = Some(Duration::from_secs(2));
        assert_eq!(failure(None, "no answer").unheard(limit), "the reply was lost");
        assert_eq!(failure(None, TIMED_OUT).unheard(limit), "no whole reply came within 2s");
        assert_eq!(failure(None, TIMED_OUT).unheard(None), "no whole reply came in time");
        assert_eq!(failure(None, NOT_JSON).unheard(limit), "the reply could not be read (not JSON)");
        assert_eq!(failure(None, TOO_LARGE).unheard(limit), "the reply could not be read (reply too large)");
        assert_eq!(
            failure(Some(503), "ServiceUnavailable").unheard(limit),
            "the server answered 503 ServiceUnavailable"
        );
        assert_eq!(failure(Some(502), NOT_A_STATUS).unheard(limit), "the server answered 502");
        assert_eq!(failure(Some(500), "").unheard(limit), "the server answered 500");
    }
}
