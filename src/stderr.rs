//! The one way lines reach stderr while the program runs, from any layer: around the live view
//! of a follow-up (`status -w`, `approve --until-step/--to-end`: rows drawn in place on
//! stderr), which is taken off the screen while they are written and drawn again under them.
//! Written past it, a line ends up at the end of the view's last row, and the next frame draws
//! over it. It can also be silenced for the whole run ([`silence`]), as shell completion needs.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

/// The live view on the screen, if one is: its rows as last drawn.
static LIVE_VIEW: Mutex<Option<Vec<String>>> = Mutex::new(None);

/// Whether nothing is to be written to stderr any more (see [`silence`]).
static SILENCED: AtomicBool = AtomicBool::new(false);

/// Whether the terminal of the live view is gone (a hang-up: writes fail with EIO): it is not
/// drawn on again, and that is no failure, so that the hang-up's clean stop goes on.
static GONE: AtomicBool = AtomicBool::new(false);

/// From now on, to the end of the run, nothing is written to stderr through here: shell
/// completion (`__complete`) promises silence, since what kubectl or a shell shows of stderr
/// would land in the command line being typed (a busy server's retry notices, for one).
pub fn silence() {
    SILENCED.store(true, Ordering::Relaxed);
}

/// The terminal's rows and columns (24 by 79 when it does not say).
pub fn terminal_size() -> (usize, usize) {
    let (rows, columns) = console::Term::stderr().size();
    (rows.into(), columns.into())
}

/// Draws the live view as `rows` (each fitted to the terminal: see [`fit_row`]), over the one
/// drawn before, if any, unless it is that one; lines written meanwhile go above it.
pub fn draw_live_view(rows: &[String]) {
    let rows = fitted(rows);
    let mut view = LIVE_VIEW.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(frame) = frame(view.as_deref(), &rows) {
        put(&frame);
        *view = Some(rows);
    }
}

/// Draws the live view a last time as `rows`, and leaves it there: what follows starts on a
/// line of its own.
pub fn leave_live_view(rows: &[String]) {
    let drawn = LIVE_VIEW.lock().unwrap_or_else(PoisonError::into_inner).take().map_or(0, |v| v.len());
    put(&format!("{}\n", redraw(drawn, &fitted(rows))));
}

/// Takes the live view off the screen: what follows is written where it started.
pub fn erase_live_view() {
    if let Some(rows) = LIVE_VIEW.lock().unwrap_or_else(PoisonError::into_inner).take() {
        put(&redraw(rows.len(), &[]));
    }
}

/// `row` on one screen line: made terminal-safe (`output::terminal_safe`), its line ends and
/// tabs shown as `\n`, `\r` and `\t` (a match value may hold them: a regex written as a YAML
/// block scalar), since the cursor is moved back over the view by its count of rows; and cut
/// (with `…`) to leave the terminal's last two columns free: the cursor then never waits at the
/// last column to wrap, where the `^C` the terminal echoes on Ctrl-C would take it to the next
/// line (under the view, which the next frame would draw one line too low).
fn fit_row(row: &str, columns: usize) -> String {
    let line = row.replace('\n', "\\n").replace('\r', "\\r").replace('\t', "\\t");
    console::truncate_str(&crate::output::terminal_safe(&line, true), columns.saturating_sub(2), "…").into_owned()
}

/// `rows`, each fitted to the terminal's width (`fit_row`).
fn fitted(rows: &[String]) -> Vec<String> {
    let (_, columns) = terminal_size();
    rows.iter().map(|row| fit_row(row, columns)).collect()
}

/// What draws `rows` over the view `drawn` (None: no view on the screen): nothing when they are
/// the rows drawn, so that a view is written only when what it shows changes (a redraw of 40
/// Rollouts 10 times a second was 70 KB/s, over SSH or into a tmux log). A resize needs no
/// frame of its own: the rows are cut to the terminal's size, and change when it does.
fn frame(drawn: Option<&[String]>, rows: &[String]) -> Option<String> {
    (drawn != Some(rows)).then(|| redraw(drawn.map_or(0, <[String]>::len), rows))
}

/// What moves the cursor back to the first row of a view of `drawn` rows (it waits at the end
/// of the last one) and draws `rows` there instead: each row cleared to its end, each but the
/// last ended by a new line (never a wrap), and the screen under the last cleared.
fn redraw(drawn: usize, rows: &[String]) -> String {
    let mut out = match drawn {
        0 => String::new(),
        1 => "\r".into(),
        n => format!("\r\x1b[{}A", n - 1),
    };
    for (index, row) in rows.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        out.push_str(row);
        out.push_str("\x1b[K");
    }
    out.push_str("\x1b[J");
    out
}

/// Writes `text` to stderr at once, unless the terminal is gone.
fn put(text: &str) {
    if GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut stderr = std::io::stderr().lock();
    if stderr.write_all(text.as_bytes()).and_then(|()| stderr.flush()).is_err() {
        GONE.store(true, Ordering::Relaxed);
    }
}

/// Runs `write`, which writes whole lines to stderr, with the live view (if any) off the screen
/// and drawn again under them; does not run it once stderr is [silenced](silence).
pub fn write(write: impl FnOnce()) {
    if SILENCED.load(Ordering::Relaxed) {
        return;
    }
    // Held while writing: a frame drawn meanwhile would land among the lines.
    let view = LIVE_VIEW.lock().unwrap_or_else(PoisonError::into_inner);
    match view.as_deref() {
        Some(rows) => {
            put(&redraw(rows.len(), &[]));
            write();
            put(&redraw(0, rows));
        }
        None => write(),
    }
}

/// `text` and a line end on stderr, made terminal-safe (`output::terminal_safe`: what a cluster
/// says is in it), its colour codes stripped where colour is off (a diff of someone else's edit
/// is coloured). A stderr that cannot be written (a closed pipe, a terminal gone after SIGHUP)
/// is no reason to fail, nor to panic as `eprintln!` would.
pub fn line(text: &str) {
    write(|| {
        let _ = writeln!(anstream::stderr(), "{}", crate::output::terminal_safe(text, true));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_goes_back_to_the_first_row_and_never_relies_on_a_wrap() {
        let rows = ["a".to_string(), "b".to_string()];
        // The first frame starts where the cursor is; each row cleared to its end, a new line
        // between rows, and the screen under the last cleared (a shorter frame leaves nothing).
        assert_eq!(redraw(0, &rows), "a\x1b[K\nb\x1b[K\x1b[J");
        assert_eq!(redraw(1, &rows), "\ra\x1b[K\nb\x1b[K\x1b[J");
        assert_eq!(redraw(3, &rows[..1]), "\r\x1b[2Aa\x1b[K\x1b[J");
        // Erased: back to the first row, and cleared from there.
        assert_eq!(redraw(2, &[]), "\r\x1b[1A\x1b[J");
    }

    #[test]
    fn a_frame_the_same_as_the_one_drawn_is_not_written() {
        let rows = ["a".to_string(), "b".to_string()];
        assert_eq!(frame(Some(&rows), &rows), None);
        // A row changed, one more or one less: drawn over the view.
        let changed = ["a".to_string(), "c".to_string()];
        assert_eq!(frame(Some(&rows), &changed).as_deref(), Some("\r\x1b[1Aa\x1b[K\nc\x1b[K\x1b[J"));
        assert_eq!(frame(Some(&rows), &rows[..1]).as_deref(), Some("\r\x1b[1Aa\x1b[K\x1b[J"));
        // No view on the screen: the first frame is drawn.
        assert_eq!(frame(None, &rows).as_deref(), Some("a\x1b[K\nb\x1b[K\x1b[J"));
    }

    #[test]
    fn a_row_leaves_the_last_two_columns_free() {
        assert_eq!(fit_row("12345678", 10), "12345678");
        assert_eq!(fit_row("123456789", 10), "1234567…");
        // Colour codes take no column, and are kept.
        assert_eq!(fit_row("\x1b[33m12345678\x1b[0m", 10), "\x1b[33m12345678\x1b[0m");
    }

    #[test]
    fn a_row_is_one_screen_line_whatever_its_values_hold() {
        // A match value with a line end or a tab (a regex written as a YAML block scalar) made
        // its row two screen lines, and each frame one line lower than the one before.
        assert_eq!(fit_row("[header x~a\nb]\tc\rd", 80), "[header x~a\\nb]\\tc\\rd");
        // Any other control character is escaped, as `terminal_safe` does; counted escaped.
        assert_eq!(fit_row("a\u{7}b\u{9b}2Jc", 80), "a\\u{7}b\\u{9b}2Jc");
        assert_eq!(fit_row("a\nbcdefgh", 10), "a\\nbcde…");
    }
}
