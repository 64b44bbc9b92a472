//! The one time limit of API requests (`--request-timeout`): from the moment a request is
//! sent, connecting, sending it and reading its whole reply must end within the limit. A
//! per-read timeout would not do: it starts again whenever data arrives, so a server (or proxy)
//! that trickles a reply byte by byte kept a request alive for as long as it liked.
//!
//! The limit is on the whole request, its retries included, as kubectl's is: the layer sits
//! outside the retry policy, which is handed the deadline ([`RequestDeadline`]) so as not to
//! wait for a retry it would not live to send. A watch is bounded too: it asks the server to
//! end it after half the limit (`super::watch`), and one the server does not end in time is cut
//! off here and resumed like any dropped watch.

use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};
use tower::{BoxError, Layer, Service};

/// When a request must be answered by, and the limit that set it: put in the request's
/// extensions for the layers it passes through (the retry policy).
#[derive(Clone, Copy, Debug)]
pub struct RequestDeadline {
    pub at: Instant,
    pub limit: Duration,
}

/// Puts the deadline on every request of the service it wraps (`None`: no limit).
#[derive(Clone, Copy)]
pub struct DeadlineLayer(pub Option<Duration>);

impl<S> Layer<S> for DeadlineLayer {
    type Service = WithDeadline<S>;

    fn layer(&self, inner: S) -> WithDeadline<S> {
        WithDeadline { inner, limit: self.0 }
    }
}

/// A service whose requests, reply bodies included, fail once their deadline passes.
#[derive(Clone)]
pub struct WithDeadline<S> {
    inner: S,
    limit: Option<Duration>,
}

/// What a request that reached its deadline fails with: an I/O time-out, as a connection that
/// timed out would (see `cluster::timed_out`).
fn elapsed() -> BoxError {
    Box::new(std::io::Error::new(std::io::ErrorKind::TimedOut, "the request's time limit passed"))
}

impl<S, R, B> Service<Request<R>> for WithDeadline<S>
where
    S: Service<Request<R>, Response = Response<B>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
{
    type Response = Response<DeadlineBody<B>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: Request<R>) -> Self::Future {
        let deadline = self.limit.map(|limit| RequestDeadline { at: Instant::now() + limit, limit });
        if let Some(deadline) = deadline {
            request.extensions_mut().insert(deadline);
        }
        let deadline = deadline.map(|deadline| deadline.at);
        let answered = self.inner.call(request);
        Box::pin(async move {
            let response = match deadline {
                Some(deadline) => tokio::time::timeout_at(deadline, answered).await.map_err(|_| elapsed())?,
                None => answered.await,
            };
            let deadline = deadline.map(|deadline| Box::pin(tokio::time::sleep_until(deadline)));
            Ok(response.map_err(Into::into)?.map(|body| DeadlineBody { body: Box::pin(body), deadline, passed: false }))
        })
    }
}

/// A reply's body that fails once the request's deadline passes.
pub struct DeadlineBody<B> {
    body: Pin<Box<B>>,
    deadline: Option<Pin<Box<Sleep>>>,
    /// The deadline has passed: the error was reported, and the body ends.
    passed: bool,
}

impl<B> Body for DeadlineBody<B>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    type Data = B::Data;
    type Error = BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<B::Data>, BoxError>>> {
        if self.passed {
            return Poll::Ready(None);
        }
        if let Some(deadline) = self.deadline.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
        {
            self.passed = true;
            return Poll::Ready(Some(Err(elapsed())));
        }
        self.body.as_mut().poll_frame(cx).map_err(Into::into)
    }

    fn is_end_stream(&self) -> bool {
        self.passed || self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use http_body_util::combinators::UnsyncBoxBody;
    use http_body_util::{BodyExt, StreamBody};
    use tower::util::BoxService;

    type Server = BoxService<Request<()>, Response<UnsyncBoxBody<Bytes, BoxError>>, BoxError>;

    /// A server whose reply's headers come after `headers`, then its body one byte each `drip`
    /// for `bytes` bytes.
    fn server(headers: Duration, drip: Duration, bytes: usize) -> Server {
        BoxService::new(tower::service_fn(move |_: Request<()>| async move {
            tokio::time::sleep(headers).await;
            let chunks = futures::stream::unfold(0, move |sent| async move {
                (sent < bytes).then_some(())?;
                tokio::time::sleep(drip).await;
                Some((Ok::<_, BoxError>(Frame::data(Bytes::from_static(b" "))), sent + 1))
            });
            Ok::<_, BoxError>(Response::new(StreamBody::new(chunks).boxed_unsync()))
        }))
    }

    /// How many bytes of the reply are read with a limit of `limit` seconds.
    async fn read(limit: Option<u64>, server: Server) -> Result<usize, String> {
        let mut service = DeadlineLayer(limit.map(Duration::from_secs)).layer(server);
        let response = service.call(Request::new(())).await.map_err(|e| e.to_string())?;
        let body = response.into_body().collect().await.map_err(|e| e.to_string())?;
        Ok(body.to_bytes().len())
    }

    #[tokio::test(start_paused = true)]
    async fn a_reply_in_time_is_read_whole() {
        let started = Instant::now();
        assert_eq!(read(Some(5), server(Duration::from_secs(1), Duration::from_millis(100), 30)).await, Ok(30));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn a_reply_that_trickles_in_fails_at_the_deadline() {
        // Each byte comes well within the limit, the whole reply never does.
        let started = Instant::now();
        let read = read(Some(5), server(Duration::ZERO, Duration::from_secs(1), 60)).await;
        assert_eq!(read, Err("the request's time limit passed".to_string()));
        assert_eq!(started.elapsed(), Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn headers_that_never_come_fail_at_the_deadline() {
        let started = Instant::now();
        let read = read(Some(5), server(Duration::from_secs(3600), Duration::ZERO, 0)).await;
        assert_eq!(read, Err("the request's time limit passed".to_string()));
        assert_eq!(started.elapsed(), Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn the_time_to_the_headers_counts() {
        // 3s to the headers, then 3s of body: 6s in all, past the 5s limit.
        let read = read(Some(5), server(Duration::from_secs(3), Duration::from_millis(100), 30)).await;
        assert_eq!(read, Err("the request's time limit passed".to_string()));
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_limit_a_reply_may_take_its_time() {
        assert_eq!(read(None, server(Duration::from_secs(3600), Duration::from_secs(60), 90)).await, Ok(90));
    }
}
