//! A minimal blocking HTTP/1.1 client over `std::net::TcpStream`, enough to drive the
//! fake server without pulling an HTTP client into the tests.

// Each test binary uses part of this module.
#![allow(dead_code)]

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use fake_apiserver::FakeHandle;
use serde_json::{Value, json};

pub const ROLLOUTS: &str = "/apis/rollouts.kruise.io/v1beta1/namespaces/demo/rollouts";
pub const GROUP: &str = "rollouts.kruise.io";

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub content_type: String,
    /// Response headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// A request under construction: `call(&server, "GET", path).send()`.
pub struct Call<'a> {
    server: &'a FakeHandle,
    method: &'a str,
    path: &'a str,
    content_type: Option<&'a str>,
    headers: Vec<(&'a str, &'a str)>,
    body: String,
    timeout: Duration,
}

pub fn call<'a>(server: &'a FakeHandle, method: &'a str, path: &'a str) -> Call<'a> {
    Call {
        server,
        method,
        path,
        content_type: None,
        headers: vec![("Authorization", "Bearer fake-token")],
        body: String::new(),
        timeout: Duration::from_secs(10),
    }
}

impl<'a> Call<'a> {
    pub fn json(mut self, body: &Value) -> Self {
        self.content_type = Some("application/json");
        self.body = body.to_string();
        self
    }

    pub fn body(mut self, content_type: &'a str, body: impl Into<String>) -> Self {
        self.content_type = Some(content_type);
        self.body = body.into();
        self
    }

    pub fn header(mut self, name: &'a str, value: &'a str) -> Self {
        self.headers.push((name, value));
        self
    }

    /// How long to wait for the response (default 10 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    #[track_caller]
    pub fn send(self) -> Response {
        self.try_send().expect("request failed")
    }

    /// Sends the request; an error means the connection closed without a response, or none
    /// came within the timeout (`WouldBlock` or `TimedOut`).
    pub fn try_send(self) -> io::Result<Response> {
        let mut stream = TcpStream::connect(self.server.address())?;
        stream.set_read_timeout(Some(self.timeout))?;
        let mut head = format!(
            "{} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.method,
            self.path,
            self.server.address(),
            self.body.len()
        );
        if let Some(content_type) = self.content_type {
            head.push_str(&format!("Content-Type: {content_type}\r\n"));
        }
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        stream.write_all(format!("{head}\r\n{}", self.body).as_bytes())?;
        let mut raw = String::new();
        stream.read_to_string(&mut raw)?;
        let (head, body) = raw
            .split_once("\r\n\r\n")
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, format!("no response: {raw:?}")))?;
        let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("status line");
        let headers: Vec<(String, String)> = head
            .lines()
            .skip(1)
            .filter_map(|l| l.split_once(": ").map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned())))
            .collect();
        let content_type =
            headers.iter().find(|(n, _)| n == "content-type").map(|(_, v)| v.clone()).unwrap_or_default();
        let body = serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.to_owned()));
        Ok(Response { status, content_type, headers, body })
    }
}

pub fn get(server: &FakeHandle, path: &str) -> Response {
    call(server, "GET", path).send()
}

pub fn rollout(name: &str) -> Value {
    json!({
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": { "name": name, "namespace": "demo", "labels": { "app": name } },
        "spec": { "workloadRef": { "apiVersion": "apps/v1", "kind": "Deployment", "name": name } },
        "status": { "phase": "Healthy" },
    })
}

pub fn rv(object: &Value) -> &str {
    object["metadata"]["resourceVersion"].as_str().unwrap()
}
