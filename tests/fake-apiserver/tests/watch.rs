//! Watches over real HTTP: the changes after a resourceVersion, streamed until the watch's
//! timeout, cut off on request, and 410 Expired after a compaction.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::Duration;

use fake_apiserver::{FakeApiServer, FakeHandle};
use serde_json::{Value, json};
use support::{ROLLOUTS, rollout, rv};

fn server() -> FakeHandle {
    FakeApiServer::builder().kruise_and_istio().object(rollout("demo")).object(rollout("other")).start()
}

/// What a watch sent: its status, its events, and whether its chunked body ended properly.
struct Watched {
    status: u16,
    events: Vec<Value>,
    ended: bool,
}

/// Opens `path` (a watch), runs `meanwhile`, and reads until the server closes the stream.
fn watch(server: &FakeHandle, path: &str, meanwhile: impl FnOnce()) -> Watched {
    let mut stream = TcpStream::connect(server.address()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: fake\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    // The watch is open once the server logged it.
    while !server.requests().iter().any(|r| r.query.contains("watch")) {
        thread::sleep(Duration::from_millis(5));
    }
    meanwhile();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let raw = String::from_utf8(raw).unwrap();
    let (head, mut body) = raw.split_once("\r\n\r\n").expect("a response head");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    // Chunked transfer encoding: a hex size line, the chunk, CRLF; a last chunk of size 0.
    // A body of known length (a watch that ends at once) is as it is.
    let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
    let mut data = if chunked { String::new() } else { body.to_string() };
    let mut ended = !chunked;
    while let Some((size, rest)) = body.split_once("\r\n").filter(|_| chunked) {
        let size = usize::from_str_radix(size, 16).unwrap();
        if size == 0 {
            ended = true;
            break;
        }
        data.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
    let events = data.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    Watched { status, events, ended }
}

fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| format!("{} {}", e["type"].as_str().unwrap(), e["object"]["metadata"]["name"].as_str().unwrap_or("-")))
        .collect()
}

#[test]
fn a_watch_streams_the_changes_after_its_version_until_its_timeout() {
    let server = server();
    let version = server.resource_version();
    let path = format!("{ROLLOUTS}?watch=true&resourceVersion={version}&timeoutSeconds=1&labelSelector=app%3Ddemo");
    let watched = watch(&server, &path, || {
        let mut demo = server.object("rollouts.kruise.io", "*", "rollouts", "demo", "demo").unwrap();
        demo["status"]["phase"] = json!("Progressing");
        server.put_object(demo);
        let mut other = server.object("rollouts.kruise.io", "*", "rollouts", "demo", "other").unwrap();
        other["status"]["phase"] = json!("Progressing");
        server.put_object(other);
        server.delete_object("rollouts.kruise.io", "rollouts", "demo", "demo");
    });
    assert_eq!((watched.status, watched.ended), (200, true));
    assert_eq!(kinds(&watched.events), ["MODIFIED demo", "DELETED demo"], "the selector leaves `other` out");
    let versions: Vec<u64> = watched.events.iter().map(|e| rv(&e["object"]).parse().unwrap()).collect();
    assert!(versions[0] > version.parse().unwrap() && versions[1] > versions[0], "{versions:?}");
    assert_eq!(watched.events[0]["object"]["apiVersion"], "rollouts.kruise.io/v1beta1");
}

#[test]
fn a_watch_without_a_version_starts_with_the_objects_there() {
    let server = server();
    let watched =
        watch(&server, &format!("{ROLLOUTS}?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dother"), || {});
    assert_eq!(kinds(&watched.events), ["ADDED other"]);
}

#[test]
fn a_dropped_watch_ends_without_the_end_of_its_response() {
    let server = server();
    let path = format!("{ROLLOUTS}?watch=true&resourceVersion={}&timeoutSeconds=30", server.resource_version());
    let watched = watch(&server, &path, || server.drop_watches());
    assert_eq!((watched.status, watched.ended), (200, false));
}

#[test]
fn a_watch_from_before_a_compaction_is_told_it_expired() {
    let server = server();
    let old = server.resource_version();
    let mut demo = server.object("rollouts.kruise.io", "*", "rollouts", "demo", "demo").unwrap();
    demo["status"]["phase"] = json!("Progressing");
    server.put_object(demo);
    server.compact();
    let watched = watch(&server, &format!("{ROLLOUTS}?watch=true&resourceVersion={old}"), || {});
    assert_eq!(kinds(&watched.events), ["ERROR -"]);
    assert_eq!((watched.events[0]["object"]["code"].as_u64(), watched.ended), (Some(410), true));
    assert_eq!(watched.events[0]["object"]["reason"], "Expired");
}
