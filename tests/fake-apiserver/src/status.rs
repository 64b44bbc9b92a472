//! `metav1.Status` error bodies with the wording kube-apiserver uses, so clients (kube's
//! `Error::Api`, kubectl's `Error from server (...)`) see exactly what a cluster would send.

use serde_json::{Map, Value, json};

use crate::resource::ApiResourceDef;

/// An error response: HTTP status code plus a `Status` body.
#[derive(Debug, Clone)]
pub(crate) struct ApiError {
    pub code: u16,
    pub body: Value,
    /// Seconds for a `Retry-After` header.
    pub retry_after: Option<u64>,
}

impl ApiError {
    fn new(code: u16, reason: &str, message: String, details: Option<Value>) -> Self {
        let mut body = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "code": code,
        });
        // An empty reason is StatusReasonUnknown, which the apiserver omits.
        if !reason.is_empty() {
            body["reason"] = reason.into();
        }
        if let Some(details) = details {
            body["details"] = details;
        }
        Self { code, body, retry_after: None }
    }

    pub fn not_found(def: &ApiResourceDef, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{} \"{name}\" not found", def.qualified_plural()), Some(details(def, name)))
    }

    /// A path that names no served resource.
    pub fn unknown_path() -> Self {
        Self::new(404, "NotFound", "the server could not find the requested resource".into(), Some(json!({})))
    }

    pub fn already_exists(def: &ApiResourceDef, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", def.qualified_plural()),
            Some(details(def, name)),
        )
    }

    /// The optimistic-concurrency failure every stale write gets.
    pub fn modified(def: &ApiResourceDef, name: &str) -> Self {
        Self::conflict(
            def,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    pub fn conflict(def: &ApiResourceDef, name: &str, cause: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {} \"{name}\": {cause}", def.qualified_plural()),
            Some(details(def, name)),
        )
    }

    /// `qualified` is `plural.group` or `plural` (core); `message` is the authorizer's text.
    pub fn forbidden(group: &str, plural: &str, name: &str, message: &str) -> Self {
        let qualified = if group.is_empty() { plural.to_owned() } else { format!("{plural}.{group}") };
        let subject = if name.is_empty() { qualified } else { format!("{qualified} \"{name}\"") };
        Self::new(
            403,
            "Forbidden",
            format!("{subject} is forbidden: {message}"),
            Some(raw_details(group, plural, name)),
        )
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message.into(), None)
    }

    /// Field validation failure: `Kind.group "name" is invalid: <field>: <detail>`.
    pub fn invalid(def: &ApiResourceDef, name: &str, field: &str, detail: &str) -> Self {
        let mut details = details(def, name);
        details["kind"] = def.kind.clone().into();
        details["causes"] = json!([{ "reason": "FieldValueInvalid", "message": detail, "field": field }]);
        Self::new(
            422,
            "Invalid",
            format!("{} \"{name}\" is invalid: {field}: {detail}", def.qualified_kind()),
            Some(details),
        )
    }

    /// A JSON patch that does not apply (e.g. a failed `test` op). kube-apiserver answers
    /// with a generic 422 that drops the patch library's explanation.
    pub fn patch_failed() -> Self {
        Self::new(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request".into(),
            Some(json!({})),
        )
    }

    pub fn admission_denied(def: &ApiResourceDef, name: &str, webhook: &str, msg: &str) -> Self {
        Self::new(
            422,
            "Invalid",
            format!("admission webhook \"{webhook}\" denied the request: {msg}"),
            Some(details(def, name)),
        )
    }

    pub fn unsupported_media_type(accepted: &[&str]) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
            None,
        )
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource".into(),
            Some(json!({})),
        )
    }

    /// A storage-level failure the apiserver reports without a reason (StatusReasonUnknown).
    pub fn internal_unknown(message: &str) -> Self {
        Self::new(500, "", message.into(), None)
    }

    /// A request without a valid bearer token.
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized".into(), None)
    }

    /// The response an injected failure sends for `code`, telling the client to retry after
    /// `retry_after` seconds when given (header and `details.retryAfterSeconds`, as
    /// kube-apiserver's max-in-flight filter and priority-and-fairness do).
    pub fn injected(code: u16, retry_after: Option<u64>) -> Self {
        let (reason, message) = match code {
            // What a policy webhook's denial looks like (the API server's default code for it).
            403 => ("Forbidden", "admission webhook \"policy.example.com\" denied the request: injected denial"),
            // What a path the API server does not serve answers (a version no longer served).
            404 => ("NotFound", "the server could not find the requested resource"),
            409 => ("Conflict", "injected conflict"),
            429 => ("TooManyRequests", "Too many requests, please try again later."),
            500 => ("InternalError", "Internal error occurred: injected failure"),
            503 => ("ServiceUnavailable", "the server is currently unable to handle the request"),
            504 => (
                "Timeout",
                "the server was unable to return a response in the time allotted, but may still be processing the request",
            ),
            _ => ("", "injected failure"),
        };
        let details = retry_after.map(|seconds| json!({ "retryAfterSeconds": seconds }));
        Self { retry_after, ..Self::new(code, reason, message.into(), details) }
    }
}

/// `{"kind":"Status", "status":"Success"}` that deleting a custom resource or ConfigMap returns.
pub(crate) fn delete_success(def: &ApiResourceDef, name: &str, uid: &Value) -> Value {
    let mut details = details(def, name);
    details["uid"] = uid.clone();
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    })
}

fn details(def: &ApiResourceDef, name: &str) -> Value {
    raw_details(&def.group, &def.plural, name)
}

/// `StatusDetails`: the apiserver puts the resource (not the kind) into `kind` and omits
/// empty fields.
fn raw_details(group: &str, plural: &str, name: &str) -> Value {
    let mut d = Map::new();
    for (key, value) in [("name", name), ("group", group), ("kind", plural)] {
        if !value.is_empty() {
            d.insert(key.into(), value.into());
        }
    }
    Value::Object(d)
}
