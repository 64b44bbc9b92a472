//! `-v=6` and above, as kubectl's: each request to the API server on stderr, with its answer's
//! status and the time to it (`GET https://…/apis/… 200 OK in 4 milliseconds`). Each attempt
//! is a line: the layer sits inside the retry policy, so a retried request shows each time.

use http::{Request, Response};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;
use tower::{BoxError, Layer, Service};

/// Whether requests are logged in this run (set once, from `-v`, before any client is made).
static LOGGING: AtomicBool = AtomicBool::new(false);

/// From now on, the clients made log their requests.
pub fn enable() {
    LOGGING.store(true, Ordering::Relaxed);
}

/// The layer that logs requests, when they are logged in this run; `server` is put in front
/// of each request's path (kube puts it there further in).
pub fn layer(server: &str) -> Option<RequestLogLayer> {
    LOGGING.load(Ordering::Relaxed).then(|| RequestLogLayer { server: server.trim_end_matches('/').to_string() })
}

#[derive(Clone)]
pub struct RequestLogLayer {
    server: String,
}

impl<S> Layer<S> for RequestLogLayer {
    type Service = RequestLog<S>;

    fn layer(&self, inner: S) -> RequestLog<S> {
        RequestLog { inner, server: self.server.clone() }
    }
}

#[derive(Clone)]
pub struct RequestLog<S> {
    inner: S,
    server: String,
}

impl<S, R, B> Service<Request<R>> for RequestLog<S>
where
    S: Service<Request<R>, Response = Response<B>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
{
    type Response = Response<B>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<B>, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<R>) -> Self::Future {
        let asked = format!("{} {}{}", request.method(), self.server, request.uri());
        let sent = Instant::now();
        let answered = self.inner.call(request);
        Box::pin(async move {
            let answer = answered.await.map_err(Into::into);
            let status = match &answer {
                Ok(response) => response.status().to_string(),
                Err(_) => "(no answer)".into(),
            };
            crate::stderr::line(&line(&asked, &status, sent.elapsed().as_millis()));
            answer
        })
    }
}

/// A request's line, in kubectl's words.
fn line(asked: &str, status: &str, milliseconds: u128) -> String {
    format!("{asked} {status} in {milliseconds} milliseconds")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_said_as_kubectl_says_it() {
        assert_eq!(
            line("GET https://10.0.0.1:6443/version", &http::StatusCode::OK.to_string(), 4),
            "GET https://10.0.0.1:6443/version 200 OK in 4 milliseconds"
        );
    }
}
