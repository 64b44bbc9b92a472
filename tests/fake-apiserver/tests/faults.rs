//! Injected faults, over real HTTP: lost, garbled, withheld and dripping replies before and after a
//! write is stored, storms, hangs, pauses, edits by a second writer, random latency.

mod support;

use std::thread;
use std::time::{Duration, Instant};

use fake_apiserver::{FakeApiServer, FakeHandle, ReplyFault, Requests, Rule, Stage};
use serde_json::{Value, json};
use support::{GROUP, ROLLOUTS, call, get, rollout, rv};

fn kruise() -> FakeHandle {
    FakeApiServer::builder().kruise_and_istio().object(rollout("demo")).start()
}

fn demo_path() -> String {
    format!("{ROLLOUTS}/demo")
}

fn pause_demo(server: &FakeHandle) -> support::Call<'_> {
    call(server, "PATCH", "/apis/rollouts.kruise.io/v1beta1/namespaces/demo/rollouts/demo")
        .body("application/merge-patch+json", r#"{"spec":{"paused":true}}"#)
}

fn paused(server: &FakeHandle) -> bool {
    server.object(GROUP, "*", "rollouts", "demo", "demo").unwrap()["spec"]["paused"] == true
}

#[test]
fn a_lost_reply_before_or_after_the_write_is_stored() {
    let server = kruise();
    server.reply_fault(Requests::Writes, 1, Stage::BeforeStore, ReplyFault::Lost);
    assert!(pause_demo(&server).try_send().is_err());
    assert!(!paused(&server), "lost before store: nothing stored");

    server.reply_fault(Requests::Writes, 1, Stage::AfterStore, ReplyFault::Lost);
    assert!(pause_demo(&server).try_send().is_err());
    assert!(paused(&server), "lost after store: the write landed");
    let log = server.requests();
    assert_eq!(log.iter().map(|r| r.status).collect::<Vec<_>>(), [None, None]);
    // Spent faults leave later requests alone.
    assert_eq!(get(&server, &demo_path()).status, 200);
}

#[test]
fn a_garbled_reply_is_a_200_with_truncated_json() {
    let server = kruise();
    server.reply_fault(Requests::Writes, 1, Stage::AfterStore, ReplyFault::Garbled);
    let reply = pause_demo(&server).send();
    assert_eq!(reply.status, 200);
    let Value::String(text) = &reply.body else { panic!("the body parsed as JSON: {}", reply.body) };
    assert!(text.starts_with("{\"apiVersion\"") && serde_json::from_str::<Value>(text).is_err(), "{text}");
    assert!(paused(&server));

    let server = kruise();
    server.reply_fault(Requests::Writes, 1, Stage::BeforeStore, ReplyFault::Garbled);
    assert_eq!(pause_demo(&server).send().status, 200);
    assert!(!paused(&server));
}

#[test]
fn a_failure_after_the_write_is_stored_answers_its_status() {
    let server = kruise();
    server.fail_after_store(Requests::Writes, 1, 503);
    let reply = pause_demo(&server).send();
    assert_eq!((reply.status, &reply.body["reason"]), (503, &json!("ServiceUnavailable")));
    assert!(paused(&server), "the write was stored");
}

#[test]
fn a_reply_never_sent_hangs_until_the_client_gives_up() {
    let server = kruise();
    server.reply_fault(Requests::Writes, 1, Stage::AfterStore, ReplyFault::NeverSent);
    let started = Instant::now();
    let error = pause_demo(&server).timeout(Duration::from_millis(300)).try_send().unwrap_err();
    assert!(matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut), "{error}");
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(paused(&server), "the write was stored");
    let hung = &server.requests()[0];
    assert_eq!((hung.method.as_str(), hung.status), ("PATCH", None));
    // Other requests are served meanwhile.
    assert_eq!(get(&server, &demo_path()).status, 200);
}

#[test]
fn a_dripping_reply_sends_a_byte_at_a_time_for_a_minute() {
    use std::io::{Read, Write};
    let server = kruise();
    server.reply_fault(Requests::Writes, 1, Stage::AfterStore, ReplyFault::Drip);
    let mut stream = std::net::TcpStream::connect(server.address()).unwrap();
    let body = r#"{"spec":{"paused":true}}"#;
    let head = format!(
        "PATCH {ROLLOUTS}/demo HTTP/1.1\r\nHost: x\r\nContent-Type: application/merge-patch+json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(format!("{head}{body}").as_bytes()).unwrap();
    // Every read gets data well within its timeout; the reply still has no end after 2 s.
    stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let (started, mut received) = (Instant::now(), Vec::new());
    while started.elapsed() < Duration::from_secs(2) {
        let mut chunk = [0; 256];
        let n = stream.read(&mut chunk).unwrap();
        assert!(n > 0, "the connection closed: {:?}", String::from_utf8_lossy(&received));
        received.extend_from_slice(&chunk[..n]);
    }
    let received = String::from_utf8(received).unwrap();
    assert!(received.starts_with("HTTP/1.1 200 OK\r\n"), "{received}");
    let spaces = received.split_once("\r\n\r\n").unwrap().1.matches("1\r\n \r\n").count();
    assert!((3..=12).contains(&spaces), "{spaces} bytes in 2 s: {received:?}");
    assert!(paused(&server), "the write was stored");
    assert_eq!(server.requests()[0].status, Some(200));
}

#[test]
fn an_oversized_reply_sends_its_size_chunked_or_with_its_length() {
    let server = kruise();
    let size = 200_000;
    let body_of = |body: &Value| body.as_str().expect("not JSON").to_string();
    let expected = format!("{{{}", " ".repeat(size - 1));

    server.reply_fault(
        Requests::All,
        1,
        Stage::BeforeStore,
        ReplyFault::Oversized { bytes: size as u64, content_length: true },
    );
    let reply = get(&server, &demo_path());
    assert_eq!((reply.status, reply.header("content-length")), (200, Some("200000")));
    assert!(body_of(&reply.body) == expected, "{} bytes", body_of(&reply.body).len());

    server.reply_fault(
        Requests::All,
        1,
        Stage::BeforeStore,
        ReplyFault::Oversized { bytes: size as u64, content_length: false },
    );
    let reply = get(&server, &demo_path());
    assert_eq!((reply.header("content-length"), reply.header("transfer-encoding")), (None, Some("chunked")));
    // Each chunk: its size in hex, CRLF, its bytes, CRLF; a chunk of size 0 ends the body.
    let (mut chunked, mut body) = (body_of(&reply.body), String::new());
    loop {
        let (size, rest) = chunked.split_once("\r\n").expect("a chunk's size");
        let size = usize::from_str_radix(size, 16).unwrap();
        if size == 0 {
            break;
        }
        body.push_str(&rest[..size]);
        chunked = rest[size + 2..].to_string();
    }
    assert!(body == expected, "{} bytes", body.len());
}

#[test]
fn hang_all_withholds_every_reply_until_cleared() {
    let server = kruise();
    server.hang_all();
    for path in ["/version", "/apis", &demo_path()] {
        assert!(call(&server, "GET", path).timeout(Duration::from_millis(200)).try_send().is_err(), "{path}");
    }
    server.clear_faults();
    assert_eq!(get(&server, "/version").status, 200);
}

#[test]
fn storms_answer_with_retry_after_for_n_requests_or_until_cleared() {
    let server = kruise();
    server.storm(Requests::All, Some(2), 503, Some(2));
    for _ in 0..2 {
        let busy = get(&server, &demo_path());
        assert_eq!(busy.status, 503);
        assert_eq!(busy.header("retry-after"), Some("2"));
        assert_eq!(
            busy.body,
            json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "the server is currently unable to handle the request",
                "reason": "ServiceUnavailable", "details": { "retryAfterSeconds": 2 }, "code": 503,
            })
        );
    }
    assert_eq!(get(&server, &demo_path()).status, 200);

    // Writes only, until cleared; reads go through; nothing is stored.
    server.storm(Requests::Writes, None, 429, Some(1));
    for _ in 0..5 {
        let refused = pause_demo(&server).send();
        assert_eq!((refused.status, refused.header("retry-after")), (429, Some("1")));
        assert_eq!(refused.body["reason"], "TooManyRequests");
        assert_eq!(get(&server, &demo_path()).status, 200);
    }
    assert!(!paused(&server));
    server.clear_faults();
    assert_eq!(pause_demo(&server).send().status, 200);

    // Without Retry-After: no header, no details.
    server.storm(Requests::All, Some(1), 503, None);
    let busy = get(&server, &demo_path());
    assert_eq!((busy.status, busy.header("retry-after")), (503, None));
    assert!(busy.body.get("details").is_none());
}

#[test]
fn faults_can_select_requests_by_verb_and_resource() {
    let server = kruise();
    let status_patch = Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"]));
    server.reply_fault(status_patch, 2, Stage::AfterStore, ReplyFault::Lost);
    let status_path = format!("{}/status", demo_path());
    let patch_status = |message: &str| {
        call(&server, "PATCH", &status_path)
            .body("application/merge-patch+json", json!({ "status": { "message": message } }).to_string())
            .try_send()
    };
    assert!(patch_status("first").is_ok());
    // Requests the rule does not select are not counted.
    assert!(pause_demo(&server).try_send().is_ok());
    assert!(get(&server, &status_path).status == 200);
    assert!(patch_status("second").is_err());
    assert_eq!(server.object(GROUP, "*", "rollouts", "demo", "demo").unwrap()["status"]["message"], "second");
    assert!(patch_status("third").is_ok());
}

#[test]
fn a_pause_holds_a_write_until_released() {
    for stage in [Stage::BeforeStore, Stage::AfterStore] {
        let server = kruise();
        let pause = server.pause(Requests::Writes, 2, stage);
        pause_demo(&server).send();
        assert!(!pause.wait_until_held(Duration::from_millis(50)), "the first write is not held");
        let client = thread::scope(|scope| {
            let client = scope.spawn(|| {
                call(&server, "PATCH", &demo_path())
                    .body("application/merge-patch+json", r#"{"spec":{"held":true}}"#)
                    .send()
                    .status
            });
            assert!(pause.wait_until_held(Duration::from_secs(10)), "{stage:?}");
            let stored = server.object(GROUP, "*", "rollouts", "demo", "demo").unwrap()["spec"]["held"] == true;
            assert_eq!(stored, stage == Stage::AfterStore, "{stage:?}");
            assert!(!client.is_finished());
            // Other requests go on while one is held.
            assert_eq!(get(&server, "/version").status, 200);
            pause.release();
            client.join().unwrap()
        });
        assert_eq!(client, 200);
        assert_eq!(server.object(GROUP, "*", "rollouts", "demo", "demo").unwrap()["spec"]["held"], true);
    }
}

#[test]
fn dropping_a_pause_releases_it() {
    let server = kruise();
    let pause = server.pause(Requests::All, 1, Stage::BeforeStore);
    thread::scope(|scope| {
        let client = scope.spawn(|| get(&server, "/version").status);
        assert!(pause.wait_until_held(Duration::from_secs(10)));
        drop(pause);
        assert_eq!(client.join().unwrap(), 200);
    });
}

#[test]
fn a_second_writer_edits_between_two_writes() {
    let server = kruise();
    let label = |value: &'static str| {
        move |store: &mut fake_apiserver::Store| {
            store.modify(GROUP, "rollouts", "demo", "demo", |r| r["metadata"]["labels"]["by"] = value.into());
        }
    };
    // Right after the first write: the client's next read already sees the other edit.
    server.after_write(1, label("after-first"));
    // Right before the second write (after the client's reads): that write conflicts.
    server.before_write(2, label("before-second"));
    let first = pause_demo(&server).send();
    assert_eq!(first.body["metadata"]["labels"].get("by"), None, "the reply is the client's own write");
    let read = get(&server, &demo_path()).body;
    assert_eq!(read["metadata"]["labels"]["by"], "after-first");
    assert_ne!(rv(&read), rv(&first.body));
    let mut second = read.clone();
    second["spec"]["paused"] = false.into();
    let conflict = call(&server, "PUT", &demo_path()).json(&second).send();
    assert_eq!((conflict.status, conflict.body["reason"].as_str()), (409, Some("Conflict")));
    assert_eq!(get(&server, &demo_path()).body["metadata"]["labels"]["by"], "before-second");
}

#[test]
fn a_controller_writes_the_status_after_each_write_it_is_armed_for() {
    let server = kruise();
    let spec_writes = Requests::Matching(Rule::new(["update", "patch"]).resources(["rollouts"]));
    server.controller_writes_status(spec_writes, json!({"observedGeneration": 2}));
    let stored = |server: &FakeHandle| server.object(GROUP, "*", "rollouts", "demo", "demo").unwrap();
    let written = pause_demo(&server).send().body;
    assert!(written["status"].get("observedGeneration").is_none(), "the reply is the client's own write");
    let now = stored(&server);
    assert_eq!(now["status"]["observedGeneration"], 2);
    assert_eq!(now["spec"]["paused"], true);
    assert_ne!(rv(&now), rv(&written), "a write of its own");
    // So the client's next write, conditional on its own, conflicts; after a read it goes.
    let mut again = written.clone();
    again["spec"]["paused"] = false.into();
    assert_eq!(call(&server, "PUT", &demo_path()).json(&again).send().status, 409);
    again["metadata"]["resourceVersion"] = rv(&now).into();
    let replaced = call(&server, "PUT", &demo_path()).json(&again).send().body;
    assert_ne!(rv(&stored(&server)), rv(&replaced), "after every write");
    // Not after a dry run, a write it is not armed for, or a refused one; not once cleared.
    let before = rv(&stored(&server)).to_string();
    let status_path = format!("{}/status", demo_path());
    call(&server, "PATCH", &format!("{}?dryRun=All", demo_path()))
        .body("application/merge-patch+json", r#"{"spec":{"paused":true}}"#)
        .send();
    call(&server, "PATCH", &status_path).body("application/merge-patch+json", r#"{"status":{"message":"m"}}"#).send();
    server.conflict_next_writes(1);
    assert_eq!(pause_demo(&server).send().status, 409);
    let version = |server: &FakeHandle| rv(&stored(server)).parse::<u64>().unwrap();
    assert_eq!(version(&server), before.parse::<u64>().unwrap() + 1, "only the status patch");
    server.clear_faults();
    let paused = pause_demo(&server).send().body;
    assert_eq!(rv(&stored(&server)), rv(&paused), "cleared");
    assert_eq!(stored(&server)["status"]["message"], "m");
}

#[test]
fn injected_faults_apply_in_the_order_armed() {
    let server = kruise();
    server.conflict_next_writes(1);
    server.fail_next_writes(1, 500);
    // Both hit the next write: the conflict, armed first, answers; both are spent.
    assert_eq!(pause_demo(&server).send().status, 409);
    assert_eq!(pause_demo(&server).send().status, 200);
}

#[test]
fn random_latency_stays_in_its_range_and_varies() {
    let delays = |seed: u64| {
        let server = FakeApiServer::builder()
            .kruise_and_istio()
            .latency_between(Duration::from_millis(20), Duration::from_millis(60), seed)
            .start();
        for _ in 0..8 {
            get(&server, "/version");
        }
        server.requests().iter().map(|r| r.finished - r.started).collect::<Vec<_>>()
    };
    let first = delays(7);
    assert!(first.iter().all(|d| *d >= Duration::from_millis(20)), "{first:?}");
    // Loose upper bound: the machine is shared and busy.
    assert!(first.iter().all(|d| *d < Duration::from_secs(5)), "{first:?}");
    let spread = first.iter().max().unwrap().saturating_sub(*first.iter().min().unwrap());
    assert!(spread >= Duration::from_millis(5), "the delays vary: {first:?}");
}
