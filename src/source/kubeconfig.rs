//! Reading the kubeconfig as kubectl does, with errors that name the file that is wrong, and
//! the contexts there are when the one asked for cannot be used.

use crate::error::Error;
use kube::config::{Kubeconfig, KubeconfigError};
use std::path::{Path, PathBuf};

const READ_TIP: &str = "tip: point KUBECONFIG or --kubeconfig at a kubeconfig file";

/// `explicit` (`--kubeconfig`), else the files KUBECONFIG lists, merged as kubectl merges them
/// (the first to set a value wins), else ~/.kube/config.
pub fn read(explicit: Option<&Path>) -> Result<Kubeconfig, Error> {
    let paths = match explicit {
        Some(path) => vec![path.to_path_buf()],
        None => default_paths(),
    };
    paths.iter().try_fold(Kubeconfig::default(), |merged, path| {
        Kubeconfig::read_from(path).and_then(|next| merged.merge(next)).map_err(|e| read_error(path, e))
    })
}

fn default_paths() -> Vec<PathBuf> {
    let listed: Vec<PathBuf> = std::env::var_os("KUBECONFIG")
        .map(|value| std::env::split_paths(&value).filter(|p| !p.as_os_str().is_empty()).collect())
        .unwrap_or_default();
    if !listed.is_empty() {
        return listed;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    vec![home.join(".kube").join("config")]
}

/// A kubeconfig file that cannot be read or parsed, named (the parser calls it `<input>`),
/// with the tip on a line of its own below the parser's snippet.
fn read_error(path: &Path, error: KubeconfigError) -> Error {
    let why = match error {
        // kube's own text quotes the path twice ('"/path"').
        KubeconfigError::ReadConfig(io, _) => io.to_string(),
        other => other.to_string().replace("<input>", &path.display().to_string()),
    };
    Error::Input(format!("reading the kubeconfig: {}: {why}\n  {READ_TIP}", path.display()))
}

/// Why the context `context` (the one asked for, else the kubeconfig's current-context) cannot
/// be used, with the contexts the kubeconfig has.
pub fn context_error(contexts: &[String], context: &str, error: KubeconfigError) -> Error {
    let choose = if contexts.is_empty() {
        "the kubeconfig has no contexts; add one with `kubectl config set-context`, or use another file".to_string()
    } else {
        format!(
            "pass --context NAME, or set the current-context with `kubectl config use-context NAME`; the \
             contexts are: {}",
            contexts.join(", ")
        )
    };
    Error::Input(match error {
        KubeconfigError::CurrentContextNotSet => format!("the kubeconfig sets no current-context\n  tip: {choose}"),
        KubeconfigError::LoadContext(_) => format!("kubeconfig context {context:?} does not exist\n  tip: {choose}"),
        other => format!("kubeconfig context {context:?}: {other}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_context_lists_the_contexts_there_are() {
        let contexts = ["dev".to_string(), "prod".to_string()];
        let error = context_error(&contexts, "nope", KubeconfigError::LoadContext("nope".into())).to_string();
        assert!(error.starts_with("kubeconfig context \"nope\" does not exist\n  tip: pass --context NAME"), "{error}");
        assert!(error.ends_with("the contexts are: dev, prod"), "{error}");
    }

    #[test]
    fn no_current_context_says_how_to_choose_one() {
        let error = context_error(&["dev".to_string()], "", KubeconfigError::CurrentContextNotSet).to_string();
        assert!(error.starts_with("the kubeconfig sets no current-context\n  tip: pass --context NAME"), "{error}");
        assert!(error.contains("kubectl config use-context NAME") && error.ends_with("are: dev"), "{error}");
        let error = context_error(&[], "", KubeconfigError::CurrentContextNotSet).to_string();
        assert!(
            error.ends_with(
                "the kubeconfig has no contexts; add one with `kubectl config set-context`, or use another file"
            ),
            "{error}"
        );
    }

    #[test]
    fn other_context_errors_keep_kubes_words() {
        let error = context_error(&[], "dev", KubeconfigError::MissingClusterUrl).to_string();
        assert_eq!(error, "kubeconfig context \"dev\": cluster url is missing on selected cluster");
    }

    #[test]
    fn a_parse_error_names_the_file_and_puts_the_tip_below_the_snippet() {
        let parse = Kubeconfig::from_yaml("a: [b").unwrap_err();
        let error = read_error(Path::new("/home/jane/kc.yaml"), parse).to_string();
        assert!(error.starts_with("reading the kubeconfig: /home/jane/kc.yaml: failed to parse"), "{error}");
        assert!(error.contains("/home/jane/kc.yaml:1:") && !error.contains("<input>"), "{error}");
        assert!(error.ends_with(&format!("\n  {READ_TIP}")), "{error}");
    }
}
