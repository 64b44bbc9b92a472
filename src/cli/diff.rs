//! How this run shows object diffs: the program `KUBECTL_EXTERNAL_DIFF` names, run as
//! `kubectl diff` runs it, else the built-in unified diff (`output::unified`).

use crate::output::{self, Sides};
use crate::source::files::{self, Existing};

/// The differ for this run, read from the environment once per call.
pub(crate) fn differ() -> impl Fn(&Sides) -> Result<String, String> + Sync {
    let command = std::env::var("KUBECTL_EXTERNAL_DIFF").ok().filter(|c| !c.trim().is_empty());
    move |sides: &Sides| match &command {
        None => output::unified(sides),
        Some(command) => external_diff(command, sides),
    }
}

/// Runs `command` on two folders, `LIVE` and `MERGED`, each holding the object's file (named as
/// kubectl diff names it) with one side; exit 0 or 1 is a diff, anything else an error.
fn external_diff(command: &str, sides: &Sides) -> Result<String, String> {
    static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let root = std::env::temp_dir().join(format!("kubectl-rollout-lua-diff-{}-{run}", std::process::id()));
    let (live, merged) = (root.join("LIVE"), root.join("MERGED"));
    // Folders and files only their owner may read, as kubectl diff's `os.MkdirTemp`, and as
    // backups are: they hold objects, every annotation included, for as long as the
    // program runs. A fresh root of our own: one that already exists (made by someone else in
    // the shared temp folder) is refused, and left alone.
    let mut folder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut folder, 0o700);
    folder.create(&root).map_err(|e| format!("creating {}: {e}", root.display()))?;
    let result = (|| {
        for (dir, text) in [(&live, &sides.old), (&merged, &sides.new)] {
            folder
                .create(dir)
                .and_then(|_| {
                    files::write_whole(&dir.join(&sides.file_name), text.as_bytes(), Existing::Keep, files::OWNER_ONLY)
                })
                .map_err(|e| format!("writing {}: {e}", dir.display()))?;
        }
        // No time bound, as in kubectl diff: it is the user's own program (a graphical diff
        // stays open while they read it), and Ctrl-C stops it (user-guide.md, Limits).
        let mut words = command.split_whitespace();
        let program = words.next().unwrap_or("diff");
        let output = std::process::Command::new(program)
            .args(words)
            .arg(&live)
            .arg(&merged)
            .output()
            .map_err(|e| format!("running KUBECTL_EXTERNAL_DIFF ({command}): {e}"))?;
        match output.status.code() {
            // Without the program's own colour codes (`colordiff`, `--color=always`): what is
            // printed is made terminal-safe, which would show them escaped.
            Some(0 | 1) => Ok(anstream::adapter::strip_str(&String::from_utf8_lossy(&output.stdout)).to_string()),
            code => Err(format!(
                "KUBECTL_EXTERNAL_DIFF ({command}) failed ({}): {}",
                code.map_or("killed by a signal".into(), |c| format!("exit {c}")),
                what_it_said(&output.stderr, &output.stdout)
            )),
        }
    })();
    let _ = std::fs::remove_dir_all(&root);
    result
}

/// What a failed diff program said: its stderr, else its stdout (where some report), else that
/// it said nothing.
fn what_it_said(stderr: &[u8], stdout: &[u8]) -> String {
    [stderr, stdout]
        .iter()
        .map(|text| String::from_utf8_lossy(text).trim().to_string())
        .find(|text| !text.is_empty())
        .unwrap_or_else(|| "it printed nothing".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_told_in_the_programs_words_wherever_it_wrote_them() {
        assert_eq!(what_it_said(b"bad flag\n", b"some diff"), "bad flag");
        assert_eq!(what_it_said(b"  \n", b"usage: mydiff A B\n"), "usage: mydiff A B");
        assert_eq!(what_it_said(b"", b""), "it printed nothing");
    }
}
