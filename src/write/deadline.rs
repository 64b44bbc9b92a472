//! The bound on a run's waiting (`approve --timeout`): when it passes, and the timeout it was
//! counted from, for the message that says what was awaited.

use crate::error::Error;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    at: Instant,
    timeout: Duration,
}

impl Deadline {
    /// `timeout` from now; None for none (0, or a time too far to count).
    pub fn after(timeout: Duration) -> Option<Deadline> {
        let at = Instant::now().checked_add(timeout).filter(|_| !timeout.is_zero())?;
        Some(Deadline { at, timeout })
    }

    /// `timed out after 3s {waiting}` (`waiting for …`, what was awaited).
    pub fn timed_out(&self, waiting: &str) -> Error {
        Error::TimedOut(format!("timed out after {} {waiting}", crate::time::go_duration(self.timeout)))
    }
}

/// Ends when `deadline` passes (never without one), with it.
pub async fn passed(deadline: Option<Deadline>) -> Deadline {
    match deadline {
        Some(deadline) => {
            tokio::time::sleep_until(deadline.at.into()).await;
            deadline
        }
        None => std::future::pending().await,
    }
}

/// `work`, dropped where it stands when `deadline` passes first: then the error says what was
/// awaited (`waiting`, as [`Deadline::timed_out`] takes it). Work done at once (a renewal not
/// due yet) is done, also past the deadline.
pub async fn within<T>(
    deadline: Option<Deadline>,
    waiting: &str,
    work: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    tokio::select! {
        biased;
        result = work => result,
        deadline = passed(deadline) => Err(deadline.timed_out(waiting)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_timeout_or_one_too_long_to_count_is_no_deadline() {
        assert!(Deadline::after(Duration::ZERO).is_none());
        assert!(Deadline::after(Duration::MAX).is_none());
        let deadline = Deadline::after(Duration::from_secs(90)).unwrap();
        assert_eq!(deadline.timed_out("waiting for x").to_string(), "timed out after 1m30s waiting for x");
    }
}
