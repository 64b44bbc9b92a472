//! A kubeconfig user's `tokenFile`, read as client-go reads it: the token trimmed of the
//! whitespace around it (`echo "$TOKEN" > token` leaves a line end, which no header may hold),
//! and read again at most once a minute, so that a token rotated on disk (a projected service
//! account token) is used for the rest of a long run. kube reads it untrimmed, so it is taken
//! out of kube's hands (see `Cluster::connect`) and put on each request here.

use super::files;
use crate::error::Error;
use http::HeaderValue;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a token read stays in use before the file is read again (client-go's and kube's).
const READ_AGAIN_AFTER: Duration = Duration::from_secs(60);

pub struct TokenFile {
    path: PathBuf,
    /// The `Authorization` header made of the latest token read, and when it was read.
    latest: Mutex<(HeaderValue, Instant)>,
}

impl TokenFile {
    /// Reads the file of kubeconfig user `user` now; an error names the user and the file when
    /// it cannot be read or holds no token that a header can carry.
    pub fn read(path: &Path, user: &str) -> Result<TokenFile, Error> {
        let header = bearer(path).map_err(|why| {
            Error::Input(format!("reading the kubeconfig's tokenFile (of user {user:?}): {}: {why}", path.display()))
        })?;
        Ok(TokenFile { path: path.to_path_buf(), latest: Mutex::new((header, Instant::now())) })
    }

    /// The `Authorization` header for a request: the token read again when the latest read is
    /// a minute old, the latest one kept while the file cannot be read or holds no valid token
    /// (as client-go and kube keep it: a file may be removed once read, to limit its exposure).
    pub fn header(&self) -> HeaderValue {
        let mut latest = self.latest.lock().expect("not poisoned");
        if latest.1.elapsed() >= READ_AGAIN_AFTER {
            if let Ok(header) = bearer(&self.path) {
                latest.0 = header;
            }
            latest.1 = Instant::now();
        }
        latest.0.clone()
    }
}

/// `Bearer <token>` from the file at `path`, or why it cannot be made.
fn bearer(path: &Path) -> Result<HeaderValue, String> {
    let bytes = files::read_file(path, super::kubeconfig::NAMED_FILE).map_err(|e| {
        // read_file's message starts with the path, which the caller names already.
        let message = e.to_string();
        message.strip_prefix(&format!("{}: ", path.display())).unwrap_or(&message).to_string()
    })?;
    let text = String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())?;
    let token = text.trim();
    if token.is_empty() {
        return Err("it holds no token".into());
    }
    let mut header = HeaderValue::from_str(&format!("Bearer {token}"))
        .map_err(|_| "the token holds a control character, which an HTTP header cannot carry".to_string())?;
    header.set_sensitive(true);
    Ok(header)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token_file(contents: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, contents).unwrap();
        (dir, path)
    }

    #[test]
    fn the_token_is_trimmed_as_client_go_trims_it() {
        for contents in [&b"tok-en\n"[..], b"  tok-en \r\n\t", b"tok-en"] {
            let (_dir, path) = token_file(contents);
            assert_eq!(TokenFile::read(&path, "u").unwrap().header(), "Bearer tok-en");
        }
        let (_dir, path) = token_file(b"tok-en\n");
        assert!(TokenFile::read(&path, "u").unwrap().header().is_sensitive());
    }

    #[test]
    fn a_file_without_a_token_a_header_can_carry_names_the_user_and_the_file() {
        let refused = |contents: &[u8]| {
            let (_dir, path) = token_file(contents);
            let error = TokenFile::read(&path, "jane").err().expect("refused").to_string();
            let named = format!("reading the kubeconfig's tokenFile (of user \"jane\"): {}: ", path.display());
            error.strip_prefix(&named).unwrap_or_else(|| panic!("{error}")).to_string()
        };
        assert_eq!(refused(b"tok\x01en"), "the token holds a control character, which an HTTP header cannot carry");
        assert_eq!(
            refused(b"first\nsecond\n"),
            "the token holds a control character, which an HTTP header cannot carry"
        );
        assert_eq!(refused(b" \n"), "it holds no token");
        assert_eq!(refused(b"tok\xff"), "it is not UTF-8 text");
        let error = TokenFile::read(Path::new("/nonexistent/token"), "jane").err().unwrap().to_string();
        assert!(
            error
                .starts_with("reading the kubeconfig's tokenFile (of user \"jane\"): /nonexistent/token: No such file"),
            "{error}"
        );
    }

    #[test]
    fn the_file_is_read_again_a_minute_later_keeping_the_last_token_when_it_holds_none() {
        let (_dir, path) = token_file(b"first\n");
        let file = TokenFile::read(&path, "u").unwrap();
        let a_minute_ago = || Instant::now().checked_sub(READ_AGAIN_AFTER).expect("the clock is past a minute");
        std::fs::write(&path, "second\n").unwrap();
        assert_eq!(file.header(), "Bearer first", "read again only after a minute");
        file.latest.lock().unwrap().1 = a_minute_ago();
        assert_eq!(file.header(), "Bearer second");
        for gone in ["", "bad\x01"] {
            std::fs::write(&path, gone).unwrap();
            file.latest.lock().unwrap().1 = a_minute_ago();
            assert_eq!(file.header(), "Bearer second");
        }
        std::fs::remove_file(&path).unwrap();
        file.latest.lock().unwrap().1 = a_minute_ago();
        assert_eq!(file.header(), "Bearer second");
    }
}
