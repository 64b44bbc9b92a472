//! Fault injection, armed from the test through [`crate::FakeHandle`].
//!
//! Requests and writes are counted in arrival order; "the k-th from now" is 1-based, so
//! `k = 1` is the next one.

use std::collections::BTreeMap;

use crate::store::Store;

/// A mutation run against the store right before a write is handled.
pub(crate) type StoreEdit = Box<dyn FnOnce(&mut Store) + Send>;

/// What to do with one particular request instead of serving it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RequestFault {
    /// Answer with this status code and a matching Status body.
    Fail(u16),
    /// Close the connection without a response.
    Drop,
}

/// What to do with a write instead of serving it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WriteFault {
    Conflict,
    Fail(u16),
}

#[derive(Default)]
pub(crate) struct Faults {
    requests_seen: u64,
    writes_seen: u64,
    request_faults: BTreeMap<u64, RequestFault>,
    write_edits: BTreeMap<u64, Vec<StoreEdit>>,
    conflicts_left: usize,
    failures_left: usize,
    failure_code: u16,
}

impl Faults {
    pub fn request_fault(&mut self, k: usize, fault: RequestFault) {
        let index = self.requests_seen + nth(k);
        self.request_faults.insert(index, fault);
    }

    pub fn before_write(&mut self, k: usize, edit: StoreEdit) {
        let index = self.writes_seen + nth(k);
        self.write_edits.entry(index).or_default().push(edit);
    }

    pub fn conflict_next_writes(&mut self, n: usize) {
        self.conflicts_left = n;
    }

    pub fn fail_next_writes(&mut self, n: usize, code: u16) {
        self.failures_left = n;
        self.failure_code = code;
    }

    /// Counts an arriving request; returns the fault armed for it, if any.
    pub fn on_request(&mut self) -> Option<RequestFault> {
        self.requests_seen += 1;
        self.request_faults.remove(&self.requests_seen)
    }

    /// Counts an arriving write; returns the store edits to run first and the fault to
    /// answer with instead of handling the write, if any. Failures are consumed before
    /// conflicts.
    pub fn on_write(&mut self) -> (Vec<StoreEdit>, Option<WriteFault>) {
        self.writes_seen += 1;
        let edits = self.write_edits.remove(&self.writes_seen).unwrap_or_default();
        let fault = if self.failures_left > 0 {
            self.failures_left -= 1;
            Some(WriteFault::Fail(self.failure_code))
        } else if self.conflicts_left > 0 {
            self.conflicts_left -= 1;
            Some(WriteFault::Conflict)
        } else {
            None
        };
        (edits, fault)
    }
}

fn nth(k: usize) -> u64 {
    assert!(k >= 1, "fault positions are 1-based: k = 1 is the next one");
    k as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_relative_to_now() {
        let mut f = Faults::default();
        f.on_request();
        f.request_fault(2, RequestFault::Drop);
        assert_eq!(f.on_request(), None);
        assert_eq!(f.on_request(), Some(RequestFault::Drop));
        assert_eq!(f.on_request(), None);
    }

    #[test]
    fn write_faults_are_consumed_in_order() {
        let mut f = Faults::default();
        f.conflict_next_writes(1);
        f.fail_next_writes(1, 500);
        f.before_write(3, Box::new(|_| {}));
        assert_eq!(f.on_write().1, Some(WriteFault::Fail(500)));
        assert_eq!(f.on_write().1, Some(WriteFault::Conflict));
        let (edits, fault) = f.on_write();
        assert_eq!((edits.len(), fault), (1, None));
    }
}
