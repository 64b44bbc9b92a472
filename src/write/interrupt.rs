//! SIGINT, SIGTERM and SIGHUP, listened for while a command writes: the first one stops the run
//! before its next write (the step in flight is finished or rolled back), a second one stops it
//! at once. SIGHUP (a terminal or SSH session gone) is treated as SIGTERM.

use crate::error::{Error, Signal};
use std::io::Write;
use std::time::Duration;
use tokio::signal::unix::{SignalKind, signal};
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
    pub fn listen(announce: Option<&'static str>) -> Result<Interrupt, Error> {
        let install = |kind| signal(kind).map_err(|e| Error::Input(format!("listening for signals: {e}")));
        let mut sigint = install(SignalKind::interrupt())?;
        let mut sigterm = install(SignalKind::terminate())?;
        let mut sighup = install(SignalKind::hangup())?;
        let (sender, received) = watch::channel(Vec::new());
        tokio::spawn(async move {
            loop {
                let signal = tokio::select! {
                    _ = sigint.recv() => Signal::Interrupt,
                    _ = sigterm.recv() => Signal::Terminate,
                    _ = sighup.recv() => Signal::Hangup,
                };
                sender.send_modify(|signals| signals.push(signal));
                if let (Some(announce), 1) = (announce, sender.borrow().len()) {
                    // After a SIGHUP stderr may be gone: nothing to do about a failed write.
                    let _ = writeln!(std::io::stderr(), "{signal} received: {announce} ({signal} again stops at once)");
                }
            }
        });
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
            if let Some(signal) = self.received().await {
                settings.restore();
                let _ = writeln!(std::io::stderr());
                return Err(Error::Interrupted { signal, report: "stopped at the question".into() });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
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
