//! The one way lines reach stderr while the program runs, from any layer: around the live view
//! of a follow-up (`status -w`, `approve --until-step/--to-end`: indicatif, drawn on stderr),
//! which is taken off the screen while they are written and drawn again under them. Written
//! past it, a line ends up at the end of the view's last line, and the next frame draws over it.
//! It can also be silenced for the whole run ([`silence`]), as shell completion needs.

use indicatif::{MultiProgress, ProgressDrawTarget, TermLike};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

/// The live view on the screen, if one is.
static LIVE_VIEW: Mutex<Option<MultiProgress>> = Mutex::new(None);

/// Whether nothing is to be written to stderr any more (see [`silence`]).
static SILENCED: AtomicBool = AtomicBool::new(false);

/// From now on, to the end of the run, nothing is written to stderr through here: shell
/// completion (`__complete`) promises silence, since what kubectl or a shell shows of stderr
/// would land in the command line being typed (a busy server's retry notices, for one).
pub fn silence() {
    SILENCED.store(true, Ordering::Relaxed);
}

/// A live view drawn on stderr: lines are written around it until this is dropped.
#[must_use = "the view is no longer known once this is dropped"]
pub struct Shown(());

/// Where a live view is drawn: the terminal on stderr, at most 20 times a second (indicatif's
/// own stderr target), except that a terminal gone (a hang-up: writes fail with EIO) is drawn
/// on as nothing. indicatif unwraps what it draws around the lines written above the view
/// (`MultiProgress::suspend`), and that panic would abort the run (panic = "abort") with no
/// report and its claim left, instead of the hang-up's clean stop.
pub fn live_view_target() -> ProgressDrawTarget {
    let term = Lasting { term: console::Term::buffered_stderr(), gone: AtomicBool::new(false) };
    ProgressDrawTarget::term_like_with_hz(Box::new(term), 20)
}

/// A terminal whose failures are no failure (see [`live_view_target`]); after the first, it is
/// not written to again (its buffer, which a failed write keeps, would only grow).
#[derive(Debug)]
struct Lasting {
    term: console::Term,
    gone: AtomicBool,
}

impl Lasting {
    fn attempt(&self, write: impl FnOnce(&console::Term) -> std::io::Result<()>) -> std::io::Result<()> {
        if !self.gone.load(Ordering::Relaxed) && write(&self.term).is_err() {
            self.gone.store(true, Ordering::Relaxed);
        }
        Ok(())
    }
}

impl TermLike for Lasting {
    fn width(&self) -> u16 {
        self.term.size().1
    }

    fn height(&self) -> u16 {
        self.term.size().0
    }

    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        self.attempt(|term| term.move_cursor_up(n))
    }

    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        self.attempt(|term| term.move_cursor_down(n))
    }

    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        self.attempt(|term| term.move_cursor_right(n))
    }

    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        self.attempt(|term| term.move_cursor_left(n))
    }

    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.attempt(|term| term.write_line(s))
    }

    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.attempt(|term| term.write_str(s))
    }

    fn clear_line(&self) -> std::io::Result<()> {
        self.attempt(console::Term::clear_line)
    }

    fn flush(&self) -> std::io::Result<()> {
        self.attempt(console::Term::flush)
    }
}

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

/// Runs `write`, which writes whole lines to stderr, with the live view (if any) off the screen;
/// does not run it once stderr is [silenced](silence).
pub fn write(write: impl FnOnce()) {
    if SILENCED.load(Ordering::Relaxed) {
        return;
    }
    // Not held while writing: the view's own lock is.
    let view = LIVE_VIEW.lock().unwrap_or_else(PoisonError::into_inner).clone();
    match view {
        Some(view) => view.suspend(write),
        None => write(),
    }
}

/// `text` and a line end on stderr, made terminal-safe (`output::terminal_safe`: what a cluster
/// says is in it), its colour codes stripped where colour is off (a diff of someone else's edit
/// is coloured). A stderr that cannot be written (a closed pipe, a terminal gone after SIGHUP)
/// is no reason to fail, nor to panic as `eprintln!` would.
pub fn line(text: &str) {
    write(|| {
        let _ = writeln!(anstream::stderr(), "{}", crate::output::terminal_safe(text));
    });
}
