//! The cause of a failed request, looked for among an error's causes.

/// The first of `error` and its causes that is an `E` and `matches`. An io::Error's own error is
/// looked at too, and that one's if it is an io::Error again: io::Error's source() skips its own
/// error, and hyper-rustls hands rustls's error on inside two of them (tokio-rustls's, wrapped).
pub fn find_cause<'a, E: std::error::Error + 'static>(
    error: &'a (dyn std::error::Error + 'static),
    matches: impl Fn(&E) -> bool,
) -> Option<&'a E> {
    let mut source = Some(error);
    while let Some(cause) = source {
        let mut carried = Some(cause);
        while let Some(candidate) = carried {
            if let Some(found) = candidate.downcast_ref::<E>().filter(|e| matches(e)) {
                return Some(found);
            }
            let inner = candidate.downcast_ref::<std::io::Error>().and_then(|e| e.get_ref());
            carried = inner.map(|e| e as &(dyn std::error::Error + 'static));
        }
        source = cause.source();
    }
    None
}
