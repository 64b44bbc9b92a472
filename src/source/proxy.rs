//! Which proxy, if any, the connection to the API server goes through, decided as kubectl
//! decides it (client-go: the cluster's `proxy-url`, else Go's `http.ProxyFromEnvironment`, whose
//! rules are golang.org/x/net/http/httpproxy's). kube is then told the proxy to use: its own
//! choice reads only `HTTPS_PROXY` (for http:// servers too) and matches `NO_PROXY` against the
//! proxy's URL instead of the server's.
//!
//! Where this differs from Go (documented in the user guide): a proxy variable that is not a
//! proxy URL is refused rather than silently ignored; a non-ASCII host in `NO_PROXY` or the
//! server's URL is compared as written (Go compares their punycode).

use http::Uri;
use std::net::IpAddr;

/// The environment's proxy settings, as Go's `httpproxy.FromEnvironment` reads them: each the
/// first non-empty of its two spellings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxyEnv {
    /// `HTTPS_PROXY`, else `https_proxy`, with the name it came from.
    pub https: Option<(&'static str, String)>,
    /// `HTTP_PROXY`, else `http_proxy`.
    pub http: Option<(&'static str, String)>,
    /// `NO_PROXY`, else `no_proxy`.
    pub no_proxy: String,
    /// Whether `REQUEST_METHOD` is set (a CGI program, where Go refuses `HTTP_PROXY`: a client
    /// could set it with a `Proxy:` header).
    pub cgi: bool,
}

impl ProxyEnv {
    pub fn read() -> ProxyEnv {
        let first = |names: [&'static str; 2]| {
            names.into_iter().find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()).map(|v| (name, v)))
        };
        ProxyEnv {
            https: first(["HTTPS_PROXY", "https_proxy"]),
            http: first(["HTTP_PROXY", "http_proxy"]),
            no_proxy: first(["NO_PROXY", "no_proxy"]).map(|(_, v)| v).unwrap_or_default(),
            cgi: std::env::var_os("REQUEST_METHOD").is_some_and(|v| !v.is_empty()),
        }
    }
}

/// The proxy for requests to `server`: the kubeconfig cluster's `proxy_url` when it is set (for
/// every server, as client-go uses it), else the environment's for the server's scheme unless
/// the server is `localhost`, a loopback address, or matched by `NO_PROXY`. The error says
/// which setting is wrong.
pub fn proxy_for(server: &Uri, proxy_url: Option<&str>, env: &ProxyEnv) -> Result<Option<Uri>, String> {
    if let Some(url) = proxy_url.filter(|u| !u.is_empty()) {
        // client-go takes it as a URL, never as host:port.
        return match url.parse::<Uri>() {
            Ok(uri) if PROXY_SCHEMES.contains(&uri.scheme_str().unwrap_or_default()) => Ok(Some(uri)),
            _ => Err(format!("the cluster's proxy-url {url:?} is not a proxy URL: {MUST_BE}")),
        };
    }
    let chosen = match server.scheme_str() {
        Some("https") => env.https.as_ref(),
        Some("http") => env.http.as_ref(),
        _ => None,
    };
    let Some((name, value)) = chosen else { return Ok(None) };
    if server.scheme_str() == Some("http") && env.cgi {
        return Err(format!("{name} is not used where REQUEST_METHOD is set (a CGI environment), as in Go; unset one"));
    }
    let proxy = parse_env_proxy(value).ok_or_else(|| {
        format!("{name} {value:?} is not a proxy URL: {MUST_BE}; or unset it, or name the server in NO_PROXY")
    })?;
    Ok(uses_proxy(server, &env.no_proxy).then_some(proxy))
}

const PROXY_SCHEMES: [&str; 3] = ["http", "https", "socks5"];
const MUST_BE: &str = "give http://, https:// or socks5:// with the proxy's host and port";

/// A proxy variable's value as Go takes it: a URL with the scheme http, https or socks5, else
/// `host:port` (http assumed). (Go would also make `http://ftp://proxy` of `ftp://proxy`.)
fn parse_env_proxy(value: &str) -> Option<Uri> {
    let uri = match value.contains("://") {
        true => value.parse::<Uri>().ok().filter(|uri| PROXY_SCHEMES.contains(&uri.scheme_str().unwrap_or_default())),
        false => format!("http://{value}").parse::<Uri>().ok(),
    };
    uri.filter(|uri| uri.host().is_some_and(|h| !h.is_empty()))
}

/// Whether requests to `server` go through the environment's proxy: Go's `useProxy` on the
/// server's host and port (the scheme's when it names none).
fn uses_proxy(server: &Uri, no_proxy: &str) -> bool {
    let host = server.host().unwrap_or_default();
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    let port = server.port_u16().unwrap_or(if server.scheme_str() == Some("http") { 80 } else { 443 }).to_string();
    if host == "localhost" {
        return false;
    }
    let ip = host.parse::<IpAddr>().ok().map(|ip| ip.to_canonical());
    if ip.is_some_and(|ip| ip.is_loopback()) {
        return false;
    }
    let host = host.trim().to_lowercase();
    !no_proxy_rules(no_proxy).iter().any(|rule| rule.matches(&host, &port, ip))
}

/// One entry of `NO_PROXY`, as Go's httpproxy parses it.
#[derive(Debug, PartialEq, Eq)]
enum Rule {
    /// `*`: no proxy at all.
    All,
    /// An address range: `10.0.0.0/8`.
    Cidr(IpAddr, u8),
    /// An address, with a port or for any port (`""`): `10.0.0.1`, `[::1]:6443`.
    Ip(IpAddr, String),
    /// A domain and its subdomains (`.example.com`, with `exact`: `example.com` itself too),
    /// with a port or for any port.
    Domain { suffix: String, port: String, exact: bool },
}

impl Rule {
    fn matches(&self, host: &str, port: &str, ip: Option<IpAddr>) -> bool {
        let port_matches = |rule_port: &str| rule_port.is_empty() || rule_port == port;
        match self {
            Rule::All => true,
            Rule::Cidr(network, bits) => ip.is_some_and(|ip| in_network(ip, *network, *bits)),
            Rule::Ip(address, rule_port) => ip == Some(*address) && port_matches(rule_port),
            // Go applies these to an address's text too.
            Rule::Domain { suffix, port: rule_port, exact } => {
                (host.ends_with(suffix.as_str()) || (*exact && host == &suffix[1..])) && port_matches(rule_port)
            }
        }
    }
}

/// `NO_PROXY`'s entries (comma-separated, trimmed, lowercased; empty or malformed ones skipped,
/// as Go skips them). A `*` anywhere is every host.
fn no_proxy_rules(no_proxy: &str) -> Vec<Rule> {
    let mut rules = Vec::new();
    for entry in no_proxy.split(',').map(|e| e.trim().to_lowercase()).filter(|e| !e.is_empty()) {
        if entry == "*" {
            return vec![Rule::All];
        }
        if let Some((address, bits)) = cidr(&entry) {
            rules.push(Rule::Cidr(address, bits));
            continue;
        }
        let (host, port) = match split_host_port(&entry) {
            Some(("", _)) => continue,
            Some((host, port)) => (host, port),
            None => (entry.as_str(), ""),
        };
        if let Ok(ip) = host.parse::<IpAddr>() {
            rules.push(Rule::Ip(ip.to_canonical(), port.to_string()));
            continue;
        }
        let host = host.strip_prefix('*').filter(|h| h.starts_with('.')).unwrap_or(host);
        let exact = !host.starts_with('.');
        let suffix = if exact { format!(".{host}") } else { host.to_string() };
        rules.push(Rule::Domain { suffix, port: port.to_string(), exact });
    }
    rules
}

/// `address/bits`, as Go's `net.ParseCIDR` reads it.
fn cidr(entry: &str) -> Option<(IpAddr, u8)> {
    let (address, bits) = entry.split_once('/')?;
    let address = address.parse::<IpAddr>().ok()?;
    // Digits only: u8's parse would take a sign, which Go's does not.
    if !bits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let bits = bits.parse::<u8>().ok().filter(|b| *b <= if address.is_ipv4() { 32 } else { 128 })?;
    Some((address, bits))
}

/// Whether `ip` is in `network/bits`; an IPv4 address (or one mapped into IPv6) only in an IPv4
/// network, as Go's `IPNet.Contains`.
fn in_network(ip: IpAddr, network: IpAddr, bits: u8) -> bool {
    match (ip, network) {
        (IpAddr::V4(ip), IpAddr::V4(network)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(network) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(network)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(network) & mask
        }
        _ => false,
    }
}

/// `host:port` or `[host]:port` split as Go's `net.SplitHostPort` splits it; `None` where Go
/// fails (no port, too many colons).
fn split_host_port(entry: &str) -> Option<(&str, &str)> {
    let (host, port) = entry.rsplit_once(':')?;
    let host = match host.strip_prefix('[') {
        Some(inside) => inside.strip_suffix(']')?,
        None if host.contains(':') => return None,
        None => host,
    };
    (!host.contains(['[', ']']) && !port.contains(['[', ']'])).then_some((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(https: Option<&str>, http: Option<&str>, no_proxy: &str) -> ProxyEnv {
        ProxyEnv {
            https: https.map(|v| ("HTTPS_PROXY", v.to_string())),
            http: http.map(|v| ("HTTP_PROXY", v.to_string())),
            no_proxy: no_proxy.into(),
            cgi: false,
        }
    }

    fn proxy(server: &str, proxy_url: Option<&str>, env: &ProxyEnv) -> Result<Option<String>, String> {
        proxy_for(&server.parse().unwrap(), proxy_url, env).map(|p| p.map(|p| p.to_string()))
    }

    /// Whether `server` goes through the proxy with this NO_PROXY.
    fn proxied(server: &str, no_proxy: &str) -> bool {
        let env = env(Some("http://proxy:3128"), Some("http://proxy:3128"), no_proxy);
        proxy(server, None, &env).unwrap().is_some()
    }

    #[test]
    fn the_variable_of_the_servers_scheme_is_used() {
        let both = env(Some("http://secure:1"), Some("http://plain:2"), "");
        assert_eq!(proxy("https://api.example.com", None, &both).unwrap().as_deref(), Some("http://secure:1/"));
        assert_eq!(proxy("http://api.example.com:8080", None, &both).unwrap().as_deref(), Some("http://plain:2/"));
        // No fallback from one to the other (Go has none).
        assert_eq!(proxy("http://api.example.com", None, &env(Some("http://secure:1"), None, "")), Ok(None));
        assert_eq!(proxy("https://api.example.com", None, &env(None, Some("http://plain:2"), "")), Ok(None));
        assert_eq!(proxy("https://api.example.com", None, &ProxyEnv::default()), Ok(None));
    }

    #[test]
    fn a_proxy_variable_is_a_url_or_host_and_port() {
        let via = |value: &str| proxy("https://api.example.com", None, &env(Some(value), None, ""));
        assert_eq!(via("proxy.corp:3128").unwrap().as_deref(), Some("http://proxy.corp:3128/"));
        assert_eq!(via("https://proxy.corp").unwrap().as_deref(), Some("https://proxy.corp/"));
        assert_eq!(via("socks5://127.0.0.1:1080").unwrap().as_deref(), Some("socks5://127.0.0.1:1080/"));
        assert_eq!(via("http://user:pa%40ss@proxy:3128").unwrap().as_deref(), Some("http://user:pa%40ss@proxy:3128/"));
        let error = via("ftp://proxy:21").unwrap_err();
        assert_eq!(
            error,
            "HTTPS_PROXY \"ftp://proxy:21\" is not a proxy URL: give http://, https:// or socks5:// with the proxy's \
             host and port; or unset it, or name the server in NO_PROXY"
        );
        assert!(via("http://bad host").is_err());
    }

    #[test]
    fn the_clusters_proxy_url_wins_for_every_server() {
        let environment = env(Some("http://env:1"), None, "*");
        let url = Some("socks5://kc:1080");
        for server in ["https://api.example.com", "http://localhost:8001", "https://127.0.0.1:6443"] {
            assert_eq!(proxy(server, url, &environment).unwrap().as_deref(), Some("socks5://kc:1080/"), "{server}");
        }
        assert_eq!(proxy("https://api.example.com", Some(""), &environment), Ok(None), "empty: not set");
        assert_eq!(
            proxy("https://api.example.com", Some("kc:3128"), &environment).unwrap_err(),
            "the cluster's proxy-url \"kc:3128\" is not a proxy URL: give http://, https:// or socks5:// with the \
             proxy's host and port"
        );
    }

    #[test]
    fn localhost_and_loopback_addresses_are_never_proxied() {
        for server in [
            "https://localhost:6443",
            "https://127.0.0.1",
            "https://127.1.2.3:1",
            "https://[::1]:6443",
            "https://[::ffff:127.0.0.1]",
        ] {
            assert!(!proxied(server, ""), "{server}");
        }
        // Go compares the name before lowercasing it; 0.0.0.0 is no loopback address.
        assert!(proxied("https://LOCALHOST", ""));
        assert!(proxied("https://0.0.0.0:6443", ""));
        assert!(proxied("https://localhost.example.com", ""));
    }

    #[test]
    fn no_proxy_matches_domains_and_their_subdomains() {
        assert!(!proxied("https://api.example.com", "example.com"));
        assert!(!proxied("https://example.com", "example.com"));
        assert!(!proxied("https://api.example.com", ".example.com"));
        assert!(proxied("https://example.com", ".example.com"), "a leading dot: subdomains only");
        assert!(!proxied("https://api.example.com", "*.example.com"));
        assert!(proxied("https://example.com", "*.example.com"));
        assert!(proxied("https://notexample.com", "example.com"));
        assert!(!proxied("https://API.Example.COM", " Example.com "), "trimmed, any case");
        assert!(!proxied("https://api.example.com", "other.org,,example.com,"), "empty entries skipped");
        assert!(!proxied("https://anything", "a.org,*,b.org"));
        assert!(proxied("https://anything", "*.*"));
    }

    #[test]
    fn no_proxy_ports_must_match_the_servers_or_its_schemes() {
        assert!(!proxied("https://api.example.com:6443", "example.com:6443"));
        assert!(proxied("https://api.example.com:6443", "example.com:443"));
        assert!(!proxied("https://api.example.com", "example.com:443"));
        assert!(!proxied("http://api.example.com", "example.com:80"));
        assert!(!proxied("https://10.0.0.1:6443", "10.0.0.1:6443"));
        assert!(proxied("https://10.0.0.1:6443", "10.0.0.1:443"));
        assert!(!proxied("https://[2001:db8::1]:6443", "[2001:db8::1]:6443"));
        assert!(!proxied("https://api.example.com:6443", "example.com:"), "an empty port: any");
        assert!(proxied("https://api.example.com:6443", ":6443"), "no host: skipped");
    }

    #[test]
    fn no_proxy_matches_addresses_and_ranges() {
        assert!(!proxied("https://10.0.0.1:6443", "10.0.0.1"));
        assert!(proxied("https://10.0.0.2:6443", "10.0.0.1"));
        assert!(!proxied("https://10.1.2.3", "10.0.0.0/8"));
        assert!(proxied("https://11.1.2.3", "10.0.0.0/8"));
        assert!(!proxied("https://192.168.1.7", "192.168.1.7/32"));
        assert!(!proxied("https://[2001:db8::7]", "2001:db8::/32"));
        assert!(proxied("https://10.1.2.3", "::/0"), "an IPv4 address is in no IPv6 range");
        assert!(!proxied("https://[::ffff:10.1.2.3]", "10.0.0.0/8"), "one mapped into IPv6 is its IPv4 address");
        assert!(!proxied("https://0.0.0.0", "0.0.0.0/0"));
        // Go matches an address's text against the domain rules too.
        assert!(!proxied("https://10.0.0.1", "0.0.1"));
        // A range needs a length Go takes.
        assert!(proxied("https://10.1.2.3", "10.0.0.0/33"));
        assert!(proxied("https://10.1.2.3", "10.0.0.0/+8"));
    }

    #[test]
    fn host_and_port_split_as_go_splits_them() {
        assert_eq!(split_host_port("example.com:80"), Some(("example.com", "80")));
        assert_eq!(split_host_port("[::1]:80"), Some(("::1", "80")));
        assert_eq!(split_host_port("[::1]:"), Some(("::1", "")));
        assert_eq!(split_host_port("example.com"), None);
        assert_eq!(split_host_port("::1"), None);
        assert_eq!(split_host_port("[::1]"), None);
        assert_eq!(split_host_port("a[b]:80"), None);
    }

    #[test]
    fn http_proxy_is_refused_in_a_cgi_environment_as_go_refuses_it() {
        let cgi = ProxyEnv { cgi: true, ..env(Some("http://secure:1"), Some("http://plain:2"), "") };
        assert!(
            proxy("http://api.example.com", None, &cgi)
                .unwrap_err()
                .starts_with("HTTP_PROXY is not used where REQUEST_METHOD is set")
        );
        assert_eq!(proxy("https://api.example.com", None, &cgi).unwrap().as_deref(), Some("http://secure:1/"));
    }
}
