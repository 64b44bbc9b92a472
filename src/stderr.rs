//! The one way lines reach stderr while the program runs, from any layer: around the live view
//! of a follow-up (`status -w`, `approve --until-step/--to-end`: indicatif, drawn on stderr),
//! which is taken off the screen while they are written and drawn again under them. Written
//! past it, a line ends up at the end of the view's last line, and the next frame draws over it.

use indicatif::MultiProgress;
use std::io::Write;
use std::sync::{Mutex, PoisonError};

/// The live view on the screen, if one is.
static LIVE_VIEW: Mutex<Option<MultiProgress>> = Mutex::new(None);

/// A live view drawn on stderr: lines are written around it until this is dropped.
#[must_use = "the view is no longer known once this is dropped"]
pub struct Shown(());

/// Tells that `view` is drawn on stderr, until the returned [`Shown`] is dropped.
pub fn shown(view: &MultiProgress) -> Shown {
    *LIVE_VIEW.lock().unwrap_or_else(PoisonError::into_inner) = Some(view.clone());
    Shown(())
}

impl Drop for Shown {
    fn drop(&mut self) {
        LIVE_VIEW.lock().unwrap_or_else(PoisonError::into_inner).take();
    }
}

/// Runs `write`, which writes whole lines to stderr, with the live view (if any) off the screen.
pub fn write<T>(write: impl FnOnce() -> T) -> T {
    // Not held while writing: the view's own lock is.
    let view = LIVE_VIEW.lock().unwrap_or_else(PoisonError::into_inner).clone();
    match view {
        Some(view) => view.suspend(write),
        None => write(),
    }
}

/// `text` and a line end on stderr. A stderr that cannot be written (a closed pipe, a terminal
/// gone after SIGHUP) is no reason to fail, nor to panic as `eprintln!` would.
pub fn line(text: &str) {
    write(|| {
        let _ = writeln!(std::io::stderr(), "{text}");
    });
}
