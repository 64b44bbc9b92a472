//! kubectl's spelling of a boolean flag with its value (pflag's): `--watch=true`, `-A=false`;
//! and of the level of `-v` (`-v 6`, `-v6`). clap takes a boolean flag alone, and `-v`'s level
//! only after `=` (`-v` alone is a level too), so the line is respelled before clap reads it.

use clap::ArgAction;
use clap::error::ErrorKind;
use std::collections::BTreeSet;
use std::ffi::OsString;

/// The command line as clap reads it: each boolean flag written with a value (`--force=true`,
/// `-w=false`) as the flag alone when the value is true, dropped when it is false, the values
/// read as Go's strconv.ParseBool reads them (kubectl's); `-v`'s level as the next word or
/// glued on, as `-v=LEVEL`. Words after `--`, and the words a shell asks to complete, are left as
/// they are.
pub fn respelled(root: &mut clap::Command, args: Vec<OsString>) -> Result<Vec<OsString>, clap::Error> {
    // Looked up only for a word that may need it: most lines have none.
    let mut flags = None;
    let mut line = Vec::with_capacity(args.len());
    let mut words = args.into_iter().peekable();
    while let Some(word) = words.next() {
        let text = word.to_str().unwrap_or_default();
        if text == "--" || text == "__complete" {
            line.push(word);
            line.extend(words);
            break;
        }
        let level = |word: &str| !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit());
        if let Some(glued) = text.strip_prefix("-v").filter(|glued| level(glued)) {
            line.push(format!("-v={glued}").into());
            continue;
        }
        if matches!(text, "-v" | "--v" | "--verbose")
            && let Some(next) = words.next_if(|next| level(next.to_str().unwrap_or_default()))
        {
            line.push(format!("-v={}", next.to_string_lossy()).into());
            continue;
        }
        let mut boolean = |flag: &str| flags.get_or_insert_with(|| boolean_flags(root)).contains(flag);
        let Some((flag, value)) = text.split_once('=').filter(|(flag, _)| flag.starts_with('-') && boolean(flag))
        else {
            line.push(word);
            continue;
        };
        match parse_bool(value) {
            Some(true) => line.push(flag.into()),
            Some(false) => {}
            None => {
                return Err(root.error(
                    ErrorKind::InvalidValue,
                    format!(
                        "invalid value '{value}' for '{flag}': a boolean flag is true or false \
                         (also 1, t, T, TRUE, True, 0, f, F, FALSE, False, as kubectl reads it)"
                    ),
                ));
            }
        }
    }
    Ok(line)
}

/// Every boolean flag of every command as written: `--watch`, `-w`.
fn boolean_flags(command: &clap::Command) -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    for arg in command.get_arguments().filter(|arg| matches!(arg.get_action(), ArgAction::SetTrue)) {
        flags.extend(arg.get_long_and_visible_aliases().into_iter().flatten().map(|long| format!("--{long}")));
        flags.extend(arg.get_short().map(|short| format!("-{short}")));
    }
    for sub in command.get_subcommands() {
        flags.extend(boolean_flags(sub));
    }
    flags
}

/// Go's strconv.ParseBool.
pub(super) fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::CommandFactory;

    fn respell(words: &[&str]) -> Result<Vec<String>, String> {
        let args = std::iter::once("kubectl-rollout_lua").chain(words.iter().copied()).map(OsString::from).collect();
        respelled(&mut Cli::command(), args)
            .map(|line| line.into_iter().skip(1).map(|w| w.into_string().unwrap()).collect())
            .map_err(|e| e.render().to_string())
    }

    #[test]
    fn a_true_value_is_the_flag_and_a_false_one_is_no_flag() {
        assert_eq!(
            respell(&["status", "-w=true", "--all-namespaces=1"]).unwrap(),
            ["status", "-w", "--all-namespaces"]
        );
        assert_eq!(respell(&["plan", "--summary=False", "--force=T", "demo"]).unwrap(), ["plan", "--force", "demo"]);
    }

    #[test]
    fn the_level_of_v_is_taken_as_kubectl_takes_it() {
        assert_eq!(respell(&["status", "-v", "6", "demo"]).unwrap(), ["status", "-v=6", "demo"]);
        assert_eq!(respell(&["status", "-v6"]).unwrap(), ["status", "-v=6"]);
        assert_eq!(respell(&["status", "--v", "8", "--verbose", "7"]).unwrap(), ["status", "-v=8", "-v=7"]);
        // Not followed by a level: -v alone, and what follows is the next word.
        assert_eq!(respell(&["status", "-v", "demo", "-v=6"]).unwrap(), ["status", "-v", "demo", "-v=6"]);
        assert_eq!(respell(&["status", "-vx"]).unwrap(), ["status", "-vx"]);
    }

    #[test]
    fn a_value_go_does_not_read_as_a_boolean_is_refused_naming_the_flag() {
        let text = respell(&["approve", "demo", "--force=yes"]).unwrap_err();
        assert!(text.contains("invalid value 'yes' for '--force': a boolean flag is true or false"), "{text}");
        assert!(respell(&["approve", "demo", "--yes=on"]).is_err());
        assert!(respell(&["approve", "demo", "--force="]).is_err());
    }

    #[test]
    fn flags_that_take_values_and_words_after_a_double_dash_are_left_alone() {
        let words = ["plan", "-f", "m", "--step=2", "-o=json", "--context=a=b"];
        assert_eq!(respell(&words).unwrap(), words);
        let words = ["test", "--", "--force=true"];
        assert_eq!(respell(&words).unwrap(), words);
        // What a shell completes is the words as typed: `--watch=t` is a word being written.
        let words = ["__complete", "status", "--watch=t"];
        assert_eq!(respell(&words).unwrap(), words);
    }

    #[test]
    fn no_flag_is_boolean_in_one_command_and_takes_a_value_in_another() {
        let root = Cli::command();
        let booleans = boolean_flags(&root);
        fn valued(command: &clap::Command, into: &mut BTreeSet<String>) {
            for arg in command.get_arguments().filter(|arg| arg.get_action().takes_values()) {
                into.extend(arg.get_long().map(|long| format!("--{long}")));
                into.extend(arg.get_short().map(|short| format!("-{short}")));
            }
            command.get_subcommands().for_each(|sub| valued(sub, into));
        }
        let mut taking_values = BTreeSet::new();
        valued(&root, &mut taking_values);
        assert!(
            booleans.contains("--watch") && booleans.contains("-A") && booleans.contains("--force"),
            "{booleans:?}"
        );
        assert_eq!(booleans.intersection(&taking_values).collect::<Vec<_>>(), Vec::<&String>::new());
    }

    #[test]
    fn parse_bool_reads_what_go_reads() {
        for yes in ["1", "t", "T", "TRUE", "true", "True"] {
            assert_eq!(parse_bool(yes), Some(true), "{yes}");
        }
        for no in ["0", "f", "F", "FALSE", "false", "False"] {
            assert_eq!(parse_bool(no), Some(false), "{no}");
        }
        for neither in ["", "yes", "on", "tRUE", "2", " true"] {
            assert_eq!(parse_bool(neither), None, "{neither}");
        }
    }
}
