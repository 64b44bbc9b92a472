//! Small servers on 127.0.0.1 for the connection tests: one that is not a Kubernetes API server
//! (the same reply to every request, over plain HTTP or TLS with the test certificate of
//! `tests/fixtures/tls`), TLS in front of the fake API server, and an HTTP (CONNECT) or SOCKS5 proxy. Each serves on its own thread until dropped, and
//! only ever connects to 127.0.0.1.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The test CA (PEM) that signed the test server's certificate: for DNS `kube.proxy.test` and
/// the IPs 127.0.0.1 and 0.0.0.0.
pub fn test_ca() -> String {
    std::fs::read_to_string(super::repo("tests/fixtures/tls/ca.pem")).unwrap()
}

/// A thread accepting connections on 127.0.0.1 and handing each to `serve` (on a thread of its
/// own), until dropped.
struct Listening {
    port: u16,
    stopped: Arc<AtomicBool>,
}

impl Listening {
    fn start(serve: impl Fn(TcpStream) + Send + Sync + 'static) -> Listening {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stopped = Arc::new(AtomicBool::new(false));
        let (serve, stop) = (Arc::new(serve), stopped.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
                let serve = serve.clone();
                std::thread::spawn(move || serve(stream));
            }
        });
        Listening { port, stopped }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees that it is stopped.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// An HTTP server that answers every request with the same reply, the request lines it was sent
/// logged.
pub struct OtherServer {
    listening: Listening,
    requests: Arc<Mutex<Vec<String>>>,
}

impl OtherServer {
    /// Over plain HTTP: `status` (`404 Not Found`), `content_type` and `body`.
    pub fn http(status: &str, content_type: &str, body: &str) -> OtherServer {
        OtherServer::start(status, content_type, body, false)
    }

    /// Over TLS, with the test server's certificate (see [`test_ca`]).
    pub fn tls(status: &str, content_type: &str, body: &str) -> OtherServer {
        OtherServer::start(status, content_type, body, true)
    }

    fn start(status: &str, content_type: &str, body: &str, tls: bool) -> OtherServer {
        let reply = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let requests = Arc::new(Mutex::new(Vec::new()));
        let logged = requests.clone();
        let config = tls.then(server_config);
        let listening = Listening::start(move |stream| {
            let answer = |stream: &mut dyn ReadWrite| {
                if let Some(head) = read_head(stream) {
                    logged.lock().unwrap().push(head.lines().next().unwrap_or_default().to_string());
                    let _ = stream.write_all(reply.as_bytes()).and_then(|_| stream.flush());
                }
            };
            match &config {
                // A client that refuses the certificate ends the handshake: nothing to answer.
                Some(config) => {
                    let connection = rustls::ServerConnection::new(config.clone()).unwrap();
                    let mut tls = rustls::StreamOwned::new(connection, stream);
                    answer(&mut tls);
                    tls.conn.send_close_notify();
                    let _ = tls.flush();
                }
                None => answer(&mut { stream }),
            }
        });
        OtherServer { listening, requests }
    }

    pub fn port(&self) -> u16 {
        self.listening.port
    }

    /// The request lines received (`GET /version HTTP/1.1`).
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

/// TLS with the test server's certificate (see [`test_ca`]) in front of a plain-HTTP server on
/// 127.0.0.1 (the fake API server): what a client sends over TLS is passed on to it, and its
/// replies back. A user's credentials go to an https:// server only, as kubectl sends them.
pub struct TlsFront {
    listening: Listening,
}

impl TlsFront {
    pub fn to(port: u16) -> TlsFront {
        let config = server_config();
        let listening = Listening::start(move |client| {
            let Ok(mut server) = TcpStream::connect(("127.0.0.1", port)) else { return };
            // One thread a connection reads each side in turn, briefly: a TLS stream does not
            // split into a reading and a writing half.
            let turn = Some(Duration::from_millis(2));
            if client.set_read_timeout(turn).is_err() || server.set_read_timeout(turn).is_err() {
                return;
            }
            let mut tls = rustls::StreamOwned::new(rustls::ServerConnection::new(config.clone()).unwrap(), client);
            let mut buffer = [0; 16 << 10];
            loop {
                match tls.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) if server.write_all(&buffer[..n]).is_err() => break,
                    Err(e) if !idle(&e) => break,
                    _ => {}
                }
                match server.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) if tls.write_all(&buffer[..n]).and_then(|()| tls.flush()).is_err() => break,
                    Err(e) if !idle(&e) => break,
                    _ => {}
                }
            }
            tls.conn.send_close_notify();
            let _ = tls.flush();
        });
        TlsFront { listening }
    }

    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.listening.port)
    }
}

/// Whether a read with a timeout found nothing to read yet.
fn idle(error: &std::io::Error) -> bool {
    matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

fn server_config() -> Arc<rustls::ServerConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certificates = CertificateDer::pem_file_iter(super::repo("tests/fixtures/tls/server.pem"))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(super::repo("tests/fixtures/tls/server-key.pem")).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certificates, key)
        .unwrap();
    Arc::new(config)
}

/// A request's head (up to its blank line, 64 KiB at most); `None` when the client left first.
fn read_head(stream: &mut dyn Read) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 64 << 10 || stream.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// What a proxy's handshake read: the target asked for, and the reply to send once connecting to
/// it succeeded (true) or failed.
type Asked = (String, fn(bool) -> &'static [u8]);

/// A proxy that tunnels each connection asked for to 127.0.0.1 at the port asked for, whatever
/// the host (so a name that does not resolve reaches the test's server), logging each target:
/// an HTTP proxy (`CONNECT host:port`) or a SOCKS5 one (RFC 1928, without authentication).
pub struct Proxy {
    listening: Listening,
    scheme: &'static str,
    targets: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    pub fn http() -> Proxy {
        Proxy::start("http", |client| {
            let head = read_head(client)?;
            let target = head.strip_prefix("CONNECT ")?.split(' ').next()?.to_string();
            let reply = |ok: bool| {
                if ok {
                    &b"HTTP/1.1 200 Connection established\r\n\r\n"[..]
                } else {
                    b"HTTP/1.1 502 Bad Gateway\r\n\r\n"
                }
            };
            Some((target, reply))
        })
    }

    pub fn socks5() -> Proxy {
        Proxy::start("socks5", |client| {
            let mut greeting = [0; 2];
            client.read_exact(&mut greeting).ok()?;
            let mut methods = vec![0; usize::from(greeting[1])];
            client.read_exact(&mut methods).ok()?;
            // No authentication.
            client.write_all(&[5, 0]).ok()?;
            let mut request = [0; 4];
            client.read_exact(&mut request).ok()?;
            let host = match request[3] {
                1 => {
                    let mut ip = [0; 4];
                    client.read_exact(&mut ip).ok()?;
                    std::net::Ipv4Addr::from(ip).to_string()
                }
                3 => {
                    let mut length = [0];
                    client.read_exact(&mut length).ok()?;
                    let mut name = vec![0; usize::from(length[0])];
                    client.read_exact(&mut name).ok()?;
                    String::from_utf8(name).ok()?
                }
                _ => return None,
            };
            let mut port = [0; 2];
            client.read_exact(&mut port).ok()?;
            let target = format!("{host}:{}", u16::from_be_bytes(port));
            let reply =
                |ok: bool| if ok { &[5, 0, 0, 1, 0, 0, 0, 0, 0, 0][..] } else { &[5, 1, 0, 1, 0, 0, 0, 0, 0, 0] };
            Some((target, reply))
        })
    }

    /// `handshake` reads what the client asks for.
    fn start(scheme: &'static str, handshake: fn(&mut TcpStream) -> Option<Asked>) -> Proxy {
        let targets = Arc::new(Mutex::new(Vec::new()));
        let logged = targets.clone();
        let listening = Listening::start(move |mut client| {
            let Some((target, reply)) = handshake(&mut client) else { return };
            logged.lock().unwrap().push(target.clone());
            let port = target.rsplit_once(':').and_then(|(_, port)| port.parse::<u16>().ok());
            let server = port.and_then(|port| TcpStream::connect(("127.0.0.1", port)).ok());
            if client.write_all(reply(server.is_some())).is_err() {
                return;
            }
            let Some(server) = server else { return };
            let (mut from_client, mut to_server) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let upstream = std::thread::spawn(move || {
                let _ = std::io::copy(&mut from_client, &mut to_server);
                let _ = to_server.shutdown(Shutdown::Write);
            });
            let (mut from_server, mut to_client) = (server, client);
            let _ = std::io::copy(&mut from_server, &mut to_client);
            let _ = to_client.shutdown(Shutdown::Write);
            let _ = upstream.join();
        });
        Proxy { listening, scheme, targets }
    }

    pub fn url(&self) -> String {
        format!("{}://127.0.0.1:{}", self.scheme, self.listening.port)
    }

    /// The `host:port` of each tunnel asked for.
    pub fn targets(&self) -> Vec<String> {
        self.targets.lock().unwrap().clone()
    }
}
