//! SIGINT, SIGTERM and SIGHUP, listened for while a command writes: the first one stops the run
//! before its next write (the step in flight is finished or rolled back), a second one stops it
//! at once. SIGHUP (a terminal or SSH session gone) is treated as SIGTERM. A signal the process
//! was started with ignored (`nohup`, a shell's `trap '' HUP`) stays ignored.

use crate::error::{Error, Signal};
use std::io::{Read, Write};
use std::time::Duration;
use tokio::signal::unix::SignalKind;
use tokio::sync::watch;

/// The signals received since [`Interrupt::listen`]; cheap to clone.
#[derive(Clone)]
pub struct Interrupt {
    received: watch::Receiver<Vec<Signal>>,
}

impl Interrupt {
    /// Listens from now on (must be called inside the runtime): SIGINT, SIGTERM and SIGHUP no
    /// longer end the process; the command notices them where it can stop cleanly. `announce`,
    /// when given, is said on stderr as the first signal arrives (what happens now), so that the
    /// user knows the signal was taken in while a request is still out.
    ///
    /// A signal that is ignored when it starts listening (nothing in this program changes their
    /// dispositions before) is not listened for: a handler would undo the `nohup` (or the
    /// `trap '' HUP`, or a non-interactive shell's ignored SIGINT for `cmd &`) it was started
    /// with, as shells and git leave such a signal ignored.
    pub fn listen(announce: Option<&'static str>) -> Result<Interrupt, Error> {
        let ignored = ignored_signals();
        let (sender, received) = watch::channel(Vec::new());
        let signals = [
            (SignalKind::interrupt(), Signal::Interrupt),
            (SignalKind::terminate(), Signal::Terminate),
            (SignalKind::hangup(), Signal::Hangup),
        ];
        for (kind, signal) in signals.into_iter().filter(|(kind, _)| !is_ignored(ignored, kind.as_raw_value())) {
            let mut stream =
                tokio::signal::unix::signal(kind).map_err(|e| Error::Input(format!("listening for signals: {e}")))?;
            let sender = sender.clone();
            tokio::spawn(async move {
                while stream.recv().await.is_some() {
                    let mut first = false;
                    sender.send_modify(|signals| {
                        signals.push(signal);
                        first = signals.len() == 1;
                    });
                    if let (Some(announce), true) = (announce, first) {
                        crate::stderr::line(&format!("{signal} received: {announce} ({signal} again stops at once)"));
                    }
                }
            });
        }
        Ok(Interrupt { received })
    }

    /// The first signal received, if any; takes in a signal that arrived while the process was
    /// busy (the runtime reads it when the task yields).
    pub async fn received(&self) -> Option<Signal> {
        tokio::task::yield_now().await;
        self.received.borrow().first().copied()
    }

    /// Waits until `count` signals have been received in all; returns the last one.
    pub async fn wait_for(&self, count: usize) -> Signal {
        let mut received = self.received.clone();
        loop {
            if let Some(signal) = received.borrow_and_update().get(count - 1).copied() {
                return signal;
            }
            if received.changed().await.is_err() {
                // The listener is gone (the runtime is shutting down): no signal will come.
                std::future::pending::<()>().await;
            }
        }
    }

    /// `future`'s output, or the second signal if it comes first: a writing command's work, or
    /// a request of its rollback or release, is dropped where it stands.
    pub async fn unless_second<T>(&self, future: impl std::future::Future<Output = T>) -> Result<T, Signal> {
        tokio::select! {
            output = future => Ok(output),
            signal = self.wait_for(2) => Err(signal),
        }
    }

    /// A yes/no question on the terminal (see `cli::confirm`), ended by a signal: the prompt
    /// reads stdin on a thread of its own (reading cannot be interrupted), left behind when a
    /// signal comes (it ends with the process), with the terminal's settings put back.
    pub async fn confirm(
        &self,
        question: &str,
        ask: impl FnOnce(&str) -> Result<(), Error> + Send + 'static,
    ) -> Result<(), Error> {
        self.confirm_until(question, ask, std::future::pending()).await
    }

    /// As [`Interrupt::confirm`], also ended by `end`, with its error: a question asked while
    /// the run holds its claims (renewed meanwhile: a renewal that fails ends it) and within
    /// its deadline.
    pub async fn confirm_until(
        &self,
        question: &str,
        ask: impl FnOnce(&str) -> Result<(), Error> + Send + 'static,
        end: impl Future<Output = Error>,
    ) -> Result<(), Error> {
        tokio::pin!(end);
        let settings = TerminalSettings::save();
        let (sender, answer) = std::sync::mpsc::channel();
        let question = question.to_string();
        std::thread::spawn(move || {
            let _ = sender.send(ask(&question));
        });
        loop {
            match answer.try_recv() {
                Ok(answer) => return answer,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    return Err(Error::Input("reading the answer failed".into()));
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
            }
            let ended = match self.received().await {
                Some(signal) => Error::Interrupted { signal, report: "stopped at the question".into() },
                None => tokio::select! {
                    error = &mut end => error,
                    () = tokio::time::sleep(Duration::from_millis(50)) => continue,
                },
            };
            settings.restore();
            let _ = writeln!(std::io::stderr());
            return Err(ended);
        }
    }
}

/// The signals this process ignores, as Linux's `/proc/self/status` gives them (its `SigIgn:`
/// mask); none where it cannot be read (another system): every signal is then listened for.
fn ignored_signals() -> u64 {
    let mut status = String::new();
    // A few KiB; bounded all the same, as every input.
    let read = std::fs::File::open("/proc/self/status").and_then(|file| file.take(1 << 20).read_to_string(&mut status));
    read.ok().and_then(|_| ignored_mask(&status)).unwrap_or(0)
}

/// The mask of a `/proc/PID/status` text's `SigIgn:` line (hexadecimal, bit n-1 for signal n).
fn ignored_mask(status: &str) -> Option<u64> {
    let mask = status.lines().find_map(|line| line.strip_prefix("SigIgn:"))?;
    u64::from_str_radix(mask.trim(), 16).ok()
}

/// Whether signal number `signal` is ignored in `mask` (see [`ignored_mask`]).
fn is_ignored(mask: u64, signal: i32) -> bool {
    (1..=64).contains(&signal) && mask >> (signal - 1) & 1 == 1
}

/// The settings of the terminal on stdin before a question: the prompt reads each key with the
/// terminal in raw mode (no echo, no line editing), and a signal that ends the question during
/// a read would leave it so for the shell.
struct TerminalSettings(Option<rustix::termios::Termios>);

impl TerminalSettings {
    fn save() -> TerminalSettings {
        TerminalSettings(rustix::termios::tcgetattr(std::io::stdin()).ok())
    }

    fn restore(&self) {
        if let Some(settings) = &self.0 {
            let _ = rustix::termios::tcsetattr(std::io::stdin(), rustix::termios::OptionalActions::Now, settings);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ignored_signals_are_read_from_the_sigign_mask() {
        // A shell under nohup that also ignores SIGINT (`cmd &`) and SIGQUIT: bits 0, 1 and 2.
        let status = "Name:\tsh\nSigQ:\t0/127368\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\nSigBlk:\t0000000000010000\nSigIgn:\t0000000000000007\nSigCgt:\t0000000000000000\n";
        let mask = ignored_mask(status).unwrap();
        let (hangup, interrupt, terminate) = (
            SignalKind::hangup().as_raw_value(),
            SignalKind::interrupt().as_raw_value(),
            SignalKind::terminate().as_raw_value(),
        );
        assert!(is_ignored(mask, hangup) && is_ignored(mask, interrupt));
        assert!(!is_ignored(mask, terminate));
        // Signal 64, the last bit; numbers outside the mask are never ignored.
        assert!(is_ignored(1 << 63, 64) && !is_ignored(u64::MAX, 0) && !is_ignored(u64::MAX, 65));
        assert_eq!(ignored_mask("SigIgn:\tfffffffe7ffbfeff\n"), Some(0xfffffffe7ffbfeff));
        // No such line (another system's format), or a mask that does not parse: none ignored.
        assert_eq!(ignored_mask("Name:\tsh\n"), None);
        assert_eq!(ignored_mask("SigIgn:\tnot hex\n"), None);
    }
}
