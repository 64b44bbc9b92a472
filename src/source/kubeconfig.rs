//! Reading the kubeconfig as kubectl does, with errors that name the file that is wrong, and
//! the contexts there are when the one asked for cannot be used. Every file is read with a
//! bound (a wrong path such as `/dev/zero` would fill the memory): the kubeconfig itself, and
//! the files its context names, which kube reads whole.

use super::files::{self, Limit};
use super::overrides::{Overrides, Selected};
use crate::error::Error;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use kube::Config;
use kube::config::{
    AuthInfo, Cluster, Context, Kubeconfig, KubeconfigError, LoadDataError, NamedAuthInfo, NamedCluster, NamedContext,
};
use secrecy::ExposeSecret;
use std::path::{Path, PathBuf};

const READ_TIP: &str = "tip: point KUBECONFIG or --kubeconfig at a kubeconfig file";

/// A kubeconfig file: one with hundreds of contexts and their certificates inline is a few MB.
const KUBECONFIG: Limit = Limit { bytes: 16 << 20, input: "a kubeconfig" };
/// A file a kubeconfig names: a token, a certificate or key is a few KB (a system's whole CA
/// bundle 0.2 MB).
pub(super) const NAMED_FILE: Limit = Limit {
    bytes: 1 << 20,
    input: "a file a kubeconfig names (tokenFile, client-certificate, client-key, certificate-authority)",
};

/// `explicit` (`--kubeconfig`), else the files KUBECONFIG lists, merged as kubectl merges them
/// (the first to set a value wins; as kubectl, one that does not exist is skipped, but not all),
/// else ~/.kube/config. With `server_given` (`--server`) and no kubeconfig, an empty one: the
/// flags say all, as in kubectl (which then uses no service account either).
pub fn read(explicit: Option<&Path>, server_given: bool) -> Result<Kubeconfig, Error> {
    let paths = match explicit {
        Some(path) => vec![path.to_path_buf()],
        None => default_paths(),
    };
    let none_exists = || paths.iter().all(|path| path.symlink_metadata().is_err());
    if explicit.is_none() && server_given && none_exists() {
        return Ok(Kubeconfig::default());
    }
    // In a pod with no kubeconfig, kubectl uses the pod's service account (client-go's
    // in-cluster configuration), and so does this tool.
    if explicit.is_none() && none_exists() {
        let env = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        let account = Path::new(SERVICE_ACCOUNT);
        if let (Some(host), Some(port)) = (env("KUBERNETES_SERVICE_HOST"), env("KUBERNETES_SERVICE_PORT")) {
            if account.join("token").is_file() {
                let namespace = env("POD_NAMESPACE").or_else(|| {
                    let text = files::read_file(&account.join("namespace"), NAMED_FILE).ok()?;
                    Some(String::from_utf8_lossy(&text).trim().to_string()).filter(|ns| !ns.is_empty())
                });
                return Ok(in_cluster(&host, &port, account, account.join("ca.crt").is_file(), namespace));
            }
            return Err(Error::Input(format!(
                "reading the kubeconfig: {}: no such file, and the pod's service account token ({}) is not mounted either, so there is no in-cluster configuration to use\n  {READ_TIP}, or mount the service account's token (automountServiceAccountToken)",
                paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
                account.join("token").display()
            )));
        }
    }
    let paths = match explicit {
        Some(_) => paths,
        None => existing(paths)?,
    };
    paths.iter().try_fold(Kubeconfig::default(), |merged, path| {
        let next = read_file(path)?;
        merged.merge(next).map_err(|e| read_error(format!("{}: {e}", path.display())))
    })
}

/// Where a pod's service account is mounted: `token`, `ca.crt` and `namespace`.
const SERVICE_ACCOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The configuration client-go's `InClusterConfig` makes, as a kubeconfig (context, cluster and
/// user `in-cluster`), so that everything else reads it as any other: the API server at
/// `host`:`port` over TLS, the service account's token file `account`/token (read again as it
/// rotates), its CA when `ca` (else the system's, as client-go falls back to), and `namespace`
/// (POD_NAMESPACE, else the account's; `-n` still comes first).
fn in_cluster(host: &str, port: &str, account: &Path, ca: bool, namespace: Option<String>) -> Kubeconfig {
    // Go's net.JoinHostPort: an IPv6 address in brackets.
    let server = match host.contains(':') {
        true => format!("https://[{host}]:{port}"),
        false => format!("https://{host}:{port}"),
    };
    let path = |name: &str| Some(account.join(name).to_string_lossy().into_owned());
    let name = "in-cluster".to_string();
    Kubeconfig {
        clusters: vec![NamedCluster {
            name: name.clone(),
            cluster: Some(kube::config::Cluster {
                server: Some(server),
                certificate_authority: path("ca.crt").filter(|_| ca),
                ..Default::default()
            }),
            other: Default::default(),
        }],
        auth_infos: vec![NamedAuthInfo {
            name: name.clone(),
            auth_info: Some(AuthInfo { token_file: path("token"), ..Default::default() }),
            other: Default::default(),
        }],
        contexts: vec![NamedContext {
            name: name.clone(),
            context: Some(Context { cluster: name.clone(), user: Some(name.clone()), namespace, ..Default::default() }),
            other: Default::default(),
        }],
        current_context: Some(name),
        ..Default::default()
    }
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

/// Those of `paths` that exist; when there are several and none does, an error naming them.
fn existing(paths: Vec<PathBuf>) -> Result<Vec<PathBuf>, Error> {
    if paths.len() < 2 {
        return Ok(paths);
    }
    let found: Vec<PathBuf> = paths.iter().filter(|p| p.symlink_metadata().is_ok()).cloned().collect();
    if found.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(read_error(format!("none of the files KUBECONFIG lists exists: {}", shown.join(", "))));
    }
    Ok(found)
}

/// One kubeconfig file, read within `KUBECONFIG`. One that holds another kind of object (a
/// manifest given by mistake) is an error naming it, as kubectl's is.
fn read_file(path: &Path) -> Result<Kubeconfig, Error> {
    let bytes = files::read_file(path, KUBECONFIG).map_err(|e| read_error(e.to_string()))?;
    let kubeconfig = parse(bytes, path)?;
    if let Some(kind) = kubeconfig.kind.as_deref().filter(|kind| !kind.is_empty() && *kind != "Config") {
        return Err(read_error(format!("{}: a {kind}, not a kubeconfig (kind: Config)", path.display())));
    }
    check_unique_names(&kubeconfig).map_err(|why| read_error(format!("{}: {why}", path.display())))?;
    Ok(kubeconfig)
}

/// Two clusters, users or contexts of one name in one file are refused, as kubectl refuses the
/// file: kube would use the first without a word, and an entry appended to replace it would be
/// ignored (kubectl and this tool acting as different users).
fn check_unique_names(kubeconfig: &Kubeconfig) -> Result<(), String> {
    let lists: [(&str, Vec<&str>); 3] = [
        ("clusters", kubeconfig.clusters.iter().map(|c| c.name.as_str()).collect()),
        ("users", kubeconfig.auth_infos.iter().map(|u| u.name.as_str()).collect()),
        ("contexts", kubeconfig.contexts.iter().map(|c| c.name.as_str()).collect()),
    ];
    for (list, names) in lists {
        if let Some((_, name)) = names.iter().enumerate().find(|(i, name)| names[..*i].contains(name)) {
            return Err(format!(
                "duplicate name {name:?} in {list} (kubectl refuses the file too): remove or rename one of the two"
            ));
        }
    }
    Ok(())
}

/// A kubeconfig file's bytes, taken as kube's `Kubeconfig::read_from` takes them (it reads the
/// file whole): UTF-8 or UTF-16 text, every document merged, the relative paths it names made
/// relative to its folder.
fn parse(bytes: Vec<u8>, path: &Path) -> Result<Kubeconfig, Error> {
    let shown = path.display().to_string();
    let text = files::text_after_bom(bytes, &shown).map_err(|e| read_error(e.to_string()))?;
    // Its first line, with the place: the parser's excerpt of the file below it would show
    // the lines around the fault, tokens and keys included.
    let mut kubeconfig = Kubeconfig::from_yaml(&text).map_err(|e| {
        let message = e.to_string();
        read_error(format!("{shown}: {}", message.lines().next().unwrap_or_default()))
    })?;
    if let Some(folder) = path.parent() {
        make_paths_absolute(&mut kubeconfig, folder);
    }
    Ok(kubeconfig)
}

/// The files a kubeconfig names, relative to `folder` (kube's `read_from` and kubectl do the
/// same): certificates, keys, token files, and an exec plugin's command when it is a path.
fn make_paths_absolute(kubeconfig: &mut Kubeconfig, folder: &Path) {
    let absolute = |path: &mut Option<String>| {
        if let Some(relative) = path.as_deref().filter(|p| Path::new(p).is_relative())
            && let Some(joined) = folder.join(relative).to_str()
        {
            *path = Some(joined.to_string());
        }
    };
    for cluster in kubeconfig.clusters.iter_mut().filter_map(|named| named.cluster.as_mut()) {
        absolute(&mut cluster.certificate_authority);
    }
    for user in kubeconfig.auth_infos.iter_mut().filter_map(|named| named.auth_info.as_mut()) {
        absolute(&mut user.client_certificate);
        absolute(&mut user.client_key);
        absolute(&mut user.token_file);
        // A bare name (`aws`) is looked up on PATH.
        if let Some(exec) = user.exec.as_mut().filter(|e| e.command.as_ref().is_some_and(|c| c.contains('/'))) {
            absolute(&mut exec.command);
        }
    }
}

/// The credentials of user `user` in the kubeconfig, if it names them.
fn auth_info<'a>(kubeconfig: &'a Kubeconfig, user: &str) -> Option<&'a AuthInfo> {
    kubeconfig.auth_infos.iter().find(|a| a.name == user).and_then(|a| a.auth_info.as_ref())
}

/// Cluster `name` of the kubeconfig, if it defines it.
fn cluster<'a>(kubeconfig: &'a Kubeconfig, name: &str) -> Option<&'a Cluster> {
    kubeconfig.clusters.iter().find(|c| c.name == name).and_then(|c| c.cluster.as_ref())
}

/// The server of the cluster `context` names, as written in the kubeconfig.
pub fn server_of_context(kubeconfig: &Kubeconfig, context: &str) -> Option<String> {
    let named = kubeconfig.contexts.iter().find(|c| c.name == context)?.context.as_ref()?;
    cluster(kubeconfig, &named.cluster)?.server.clone()
}

/// The cluster's `proxy-url`, if it sets one.
pub fn proxy_url(kubeconfig: &Kubeconfig, name: Option<&str>) -> Option<String> {
    cluster(kubeconfig, name?)?.proxy_url.clone()
}

/// Reads each file that the selected cluster and user name, and that kube would read (a file
/// that its `…-data` field does not override), within `NAMED_FILE`: kube reads them whole, and
/// reads them again itself after this. (The tokenFile is read by `super::token_file`.) A file a
/// flag gave is named by the flag.
pub fn check_named_files(kubeconfig: &Kubeconfig, selected: &Selected, overrides: &Overrides) -> Result<(), Error> {
    let Some(name) = &selected.cluster else {
        // kube says the context is missing.
        return Ok(());
    };
    let cluster = cluster(kubeconfig, name);
    let user = auth_info(kubeconfig, &selected.user);
    let named = [
        (
            "certificate-authority",
            cluster.filter(|c| c.certificate_authority_data.is_none()).and_then(|c| c.certificate_authority.as_ref()),
        ),
        (
            "client-certificate",
            user.filter(|u| u.client_certificate_data.is_none()).and_then(|u| u.client_certificate.as_ref()),
        ),
        ("client-key", user.filter(|u| u.client_key_data.is_none()).and_then(|u| u.client_key.as_ref())),
    ];
    for (field, path) in named {
        if let Some(path) = path {
            let whose = match overrides.flag_of(field) {
                Some(flag) => format!("the {flag} file"),
                None => format!("the kubeconfig's {field}"),
            };
            files::read_file(Path::new(path), NAMED_FILE).map_err(|e| Error::Input(format!("reading {whose}: {e}")))?;
        }
    }
    Ok(())
}

/// Gives a cluster `server` without a scheme (`localhost:6443`) the one kubectl reaches it with:
/// http, as clientcmd decides whether the transport is TLS from the server alone, before it
/// reads the cluster's CA (kube takes it as it is, and fails at the first request). Returns
/// whether the context's server (`cluster`'s) is https, where kubectl uses the user's
/// credentials and the cluster's TLS settings.
pub fn add_server_scheme(kubeconfig: &mut Kubeconfig, cluster: Option<&str>) -> bool {
    let named = kubeconfig.clusters.iter_mut().find(|c| Some(c.name.as_str()) == cluster);
    let Some(server) = named.and_then(|c| c.cluster.as_mut()).and_then(|c| c.server.as_mut()) else { return false };
    if !server.is_empty() && !server.contains("://") {
        *server = format!("http://{server}");
    }
    server.starts_with("https://")
}

/// The server of `cluster` (after `add_server_scheme`), refused with its value and the cluster
/// named when it is empty or no URL with a host and a port kube can use: kube's own words name
/// neither ("failed to parse cluster url: invalid uri character"), and take a port past 65535.
pub fn check_server(kubeconfig: &Kubeconfig, cluster: Option<&str>, context: &str) -> Result<(), Error> {
    let Some(name) = cluster else { return Ok(()) };
    // A cluster without a server (or missing) is kube's to name.
    let Some(server) = self::cluster(kubeconfig, name).and_then(|c| c.server.as_deref()) else { return Ok(()) };
    let whose = format!("cluster {name:?} of kubeconfig context {context:?}");
    if server.is_empty() {
        return Err(Error::Input(format!("{whose} has no server (clusters[].cluster.server is empty)")));
    }
    let why = match server.parse::<http::Uri>() {
        Err(e) => Some(e.to_string()),
        Ok(uri) if uri.host().is_none_or(str::is_empty) => Some("it has no host".to_string()),
        Ok(uri) if !valid_port(uri.authority().map_or("", |a| a.as_str())) => {
            Some("its port is no number up to 65535".into())
        }
        Ok(_) => None,
    };
    // What comes before an `@` may be a password: not shown.
    let shown = match server.split_once("://").and_then(|(scheme, rest)| Some((scheme, rest.split_once('@')?.1))) {
        Some((scheme, after)) => format!("{scheme}://…@{after}"),
        None => server.to_string(),
    };
    match why {
        Some(why) => Err(Error::Input(format!("{whose}: its server {shown:?} is not a URL: {why}"))),
        None => Ok(()),
    }
}

/// Whether the port of `authority` (`host:port`, `[v6]:port`), if it has one, is one.
fn valid_port(authority: &str) -> bool {
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, rest)| rest);
    let after_host = host_port.rsplit_once(']').map_or(host_port, |(_, rest)| rest);
    // An empty port is the scheme's, as Go's url.Parse takes it.
    after_host.rsplit_once(':').is_none_or(|(_, port)| port.is_empty() || port.parse::<u16>().is_ok())
}

/// A warning when `context` names a user the kubeconfig does not define: kubectl then sends
/// no credentials, without a word, and the server's refusals name `system:anonymous`.
pub fn missing_user(kubeconfig: &Kubeconfig, user: &str, context: &str) -> Option<String> {
    (!user.is_empty() && !kubeconfig.auth_infos.iter().any(|a| a.name == user)).then(|| {
        format!(
            "warning: kubeconfig context {context} names user {user}, which the kubeconfig does not define: requests are sent without credentials (anonymous), as kubectl sends them"
        )
    })
}

/// A cluster that both skips TLS verification and names a CA is refused, as kubectl refuses
/// it: whoever added the CA believes the server verified, and it would not be.
pub fn check_insecure(kubeconfig: &Kubeconfig, cluster: Option<&str>, context: &str) -> Result<(), Error> {
    let named = cluster.and_then(|name| self::cluster(kubeconfig, name));
    let Some(cluster) = named.filter(|c| c.insecure_skip_tls_verify == Some(true)) else { return Ok(()) };
    if cluster.certificate_authority.is_some() || cluster.certificate_authority_data.is_some() {
        return Err(Error::Input(format!(
            "the cluster of context {context} sets insecure-skip-tls-verify and a certificate-authority: specifying a root certificates file with the insecure flag is not allowed (kubectl refuses it too); remove one of them"
        )));
    }
    Ok(())
}

/// The tokens `user` holds that kube sends as they are (`token`, an oidc auth-provider's
/// `id-token`, a gcp one's `access-token`), checked as HTTP header values: kube would abort on
/// one that is not (a token pasted as a YAML block, `token: |`, ends in a line end), and kubectl
/// refuses it too.
pub fn check_tokens(kubeconfig: &Kubeconfig, user: &str) -> Result<(), Error> {
    let Some(info) = auth_info(kubeconfig, user) else {
        return Ok(());
    };
    // client-go's words: kube would send the username and password, and never the token.
    if (info.username.is_some() || info.password.is_some()) && (info.token.is_some() || info.token_file.is_some()) {
        return Err(Error::Input(format!(
            "user {user} of the kubeconfig has a username or password and a token (or tokenFile), --username, --password and --token included: \"username/password or bearer token may be set, but not both\", as kubectl refuses it; keep one"
        )));
    }
    let token = info.token.as_ref().map(|t| ("token", t.expose_secret()));
    let provided = info.auth_provider.iter().flat_map(|provider| {
        ["id-token", "access-token"].into_iter().filter_map(|key| Some((key, provider.config.get(key)?.as_str())))
    });
    for (field, value) in token.into_iter().chain(provided) {
        if http::HeaderValue::from_str(&format!("Bearer {value}")).is_err() {
            return Err(Error::Input(format!(
                "the kubeconfig's {field} of user {user} is not a valid HTTP header value (a line end or other control character in it: a token pasted as a YAML block, `{field}: |`, ends in a line end); kubectl refuses it too"
            )));
        }
    }
    Ok(())
}

/// The auth-providers kubectl no longer runs (since 1.26) are refused with its words: kube
/// would run gcp's `cmd-path` (gcloud) without a time limit, its output hidden. Of the others
/// kubectl knows oidc only; kube's error for one it does not know spoke of an exec plugin.
pub fn check_auth_provider(user_info: &AuthInfo, user: &str) -> Result<(), Error> {
    let name = user_info.auth_provider.as_ref().map(|p| p.name.clone()).unwrap_or_default();
    let replacement = match name.as_str() {
        "gcp" => "gke-gcloud-auth-plugin",
        "azure" => "kubelogin",
        "" | "oidc" => return Ok(()),
        _ => {
            return Err(Error::Input(format!(
                "user {user} of the kubeconfig has auth-provider {name}, which kubectl does not know either (no Auth Provider found for name \"{name}\"): use an exec credential plugin (an exec entry) instead"
            )));
        }
    };
    Err(Error::Input(format!(
        "user {user} of the kubeconfig has auth-provider {name}: the {name} auth plugin has been removed (kubectl refuses it too); use the \"{replacement}\" kubectl/client-go credential plugin instead (an exec entry)"
    )))
}

/// A user with a username and no password sends `username:` (basic auth with an empty
/// password), as kubectl sends it; kube would send nothing.
pub fn complete_basic_auth(user: &mut AuthInfo) {
    if user.username.is_some() && user.password.is_none() {
        user.password = Some(String::new().into());
    }
}

/// Whom to impersonate: a group, uid or extra without a user is refused before any request, in
/// kubectl's words (an API server refuses it, and kube would send it). `user` is the kubeconfig
/// user's name.
pub fn check_impersonation(info: &AuthInfo, user: &str) -> Result<(), Error> {
    let without_user = info.impersonate.is_none()
        && (info.impersonate_uid.is_some()
            || info.impersonate_groups.as_ref().is_some_and(|groups| !groups.is_empty())
            || info.impersonate_user_extra.as_ref().is_some_and(|extra| !extra.is_empty()));
    if without_user {
        return Err(Error::Input(format!(
            "requesting uid, groups or user-extra for {user} without impersonating a user (--as-group or --as-uid, or the kubeconfig user's as-groups, as-uid or as-user-extra, with neither --as nor its as); kubectl refuses it too: pass --as USER"
        )));
    }
    Ok(())
}

/// The user's tokenFile when it is the credential used: kube takes an auth-provider, then a
/// username and password, before a token file; the file comes before a token (client-go's
/// "the last successfully read value takes precedence over BearerToken": see `Cluster::connect`).
pub fn token_file(user: &AuthInfo) -> Option<&str> {
    let before = user.auth_provider.is_some() || (user.username.is_some() && user.password.is_some());
    user.token_file.as_deref().filter(|_| !before)
}

/// A kubeconfig file that cannot be read or parsed (`why` names it), with the tip on a line of
/// its own below the parser's snippet.
fn read_error(why: String) -> Error {
    Error::Input(format!("reading the kubeconfig: {why}\n  {READ_TIP}"))
}

/// kube's `Config` of the `selected` entries of `context` (`None`: the current-context), made as
/// kube's loader (`Config::from_custom_kubeconfig`) makes it but for the proxy, which
/// `super::proxy` chooses as Go does: kube's loader reads the proxy variables itself and refused
/// the whole NO_PROXY over an entry Go skips (a stray comma).
pub fn config_of(
    kubeconfig: &Kubeconfig,
    context: Option<&str>,
    selected: &Selected,
) -> Result<Config, KubeconfigError> {
    let name = context.map(str::to_string).or_else(|| kubeconfig.current_context.clone());
    let name = name.ok_or(KubeconfigError::CurrentContextNotSet)?;
    let named = kubeconfig.contexts.iter().find(|c| c.name == name).and_then(|c| c.context.as_ref());
    let named = named.ok_or_else(|| KubeconfigError::LoadContext(name.clone()))?;
    let cluster_name = selected.cluster.clone().unwrap_or_else(|| named.cluster.clone());
    let cluster = cluster(kubeconfig, &cluster_name).ok_or(KubeconfigError::LoadClusterOfContext(cluster_name))?;
    let mut user = auth_info(kubeconfig, &selected.user).cloned().unwrap_or_default();
    if let Some(exec) = &mut user.exec
        && exec.provide_cluster_info
    {
        exec.cluster = Some(cluster.try_into()?);
    }
    let server = cluster.server.as_deref().ok_or(KubeconfigError::MissingClusterUrl)?;
    let mut config = Config::new(server.parse().map_err(KubeconfigError::ParseClusterUrl)?);
    config.default_namespace = named.namespace.clone().unwrap_or_else(|| "default".into());
    config.root_cert = certificate_authority(cluster)?;
    config.accept_invalid_certs = cluster.insecure_skip_tls_verify.unwrap_or(false);
    config.disable_compression = cluster.disable_compression.unwrap_or(false);
    config.tls_server_name.clone_from(&cluster.tls_server_name);
    config.auth_info = user;
    Ok(config)
}

/// The certificates (DER) of the cluster's certificate-authority(-data), as kube reads them:
/// the data before the file, and of the PEM blocks the certificates only.
fn certificate_authority(cluster: &Cluster) -> Result<Option<Vec<Vec<u8>>>, KubeconfigError> {
    let failed = KubeconfigError::LoadCertificateAuthority;
    let pem = match (&cluster.certificate_authority_data, &cluster.certificate_authority) {
        (Some(data), _) => BASE64.decode(data).map_err(|e| failed(LoadDataError::DecodeBase64(e)))?,
        (None, Some(file)) => std::fs::read(file).map_err(|e| failed(LoadDataError::ReadFile(e, file.into())))?,
        (None, None) => return Ok(None),
    };
    let blocks = pem::parse_many(&pem).map_err(KubeconfigError::ParseCertificates)?;
    Ok(Some(blocks.into_iter().filter(|b| b.tag() == "CERTIFICATE").map(pem::Pem::into_contents).collect()))
}

/// Why the context `context` (the one asked for with --context when `given`, else the
/// kubeconfig's current-context) cannot be used, with the contexts the kubeconfig has.
pub fn context_error(contexts: &[String], context: &str, given: bool, error: KubeconfigError) -> Error {
    let choose = match (contexts.is_empty(), given) {
        (true, _) => {
            "the kubeconfig has no contexts; add one with `kubectl config set-context`, or use another file".to_string()
        }
        // --context was passed: another name is the way out.
        (false, true) => format!("pass one of the kubeconfig's contexts to --context: {}", contexts.join(", ")),
        (false, false) => format!(
            "pass --context NAME, or set the current-context with `kubectl config use-context NAME`; the \
             contexts are: {}",
            contexts.join(", ")
        ),
    };
    let missing = match given {
        true => format!("kubeconfig context {context:?} does not exist"),
        false => format!("the kubeconfig's current-context {context:?} does not exist"),
    };
    Error::Input(match error {
        KubeconfigError::CurrentContextNotSet => format!("the kubeconfig sets no current-context\n  tip: {choose}"),
        KubeconfigError::LoadContext(_) => format!("{missing}\n  tip: {choose}"),
        // Left behind by `kubectl config delete-cluster`, for one.
        KubeconfigError::LoadClusterOfContext(cluster) => format!(
            "kubeconfig context {context:?} names cluster {cluster:?}, which the kubeconfig does not define\n  tip: \
             add it (`kubectl config set-cluster {cluster} --server=URL`), or point the context at one it defines \
             (`kubectl config set-context {context} --cluster=NAME`)"
        ),
        other => format!("kubeconfig context {context:?}: {other}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_without_a_scheme_is_reached_over_http_as_kubectl_reaches_it() {
        let server = |cluster: &str| {
            let text = format!(
                "clusters:\n- name: c\n  cluster: {{server: 'h:6443', {cluster}}}\n- name: other\n  cluster: {{server: 'o:1'}}\n"
            );
            let mut kubeconfig = Kubeconfig::from_yaml(&text).unwrap();
            let tls = add_server_scheme(&mut kubeconfig, Some("c"));
            assert_eq!(
                kubeconfig.clusters[1].cluster.as_ref().unwrap().server.as_deref(),
                Some("o:1"),
                "not the context's"
            );
            (kubeconfig.clusters[0].cluster.as_ref().unwrap().server.clone().unwrap(), tls)
        };
        // clientcmd decides on TLS from the server alone, before it reads the CA.
        for cluster in ["", "certificate-authority-data: Zm9v", "insecure-skip-tls-verify: true"] {
            assert_eq!(server(cluster), ("http://h:6443".to_string(), false), "{cluster}");
        }
        let mut kubeconfig = Kubeconfig::from_yaml("clusters:\n- name: c\n  cluster: {server: 'https://h'}\n").unwrap();
        assert!(add_server_scheme(&mut kubeconfig, Some("c")));
        assert!(!add_server_scheme(&mut kubeconfig, Some("missing")));
    }

    #[test]
    fn the_in_cluster_configuration_is_client_gos() {
        let account = Path::new("/sa");
        let config = in_cluster("10.0.0.1", "443", account, true, Some("shop".into()));
        let cluster = config.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("https://10.0.0.1:443"));
        assert_eq!(cluster.certificate_authority.as_deref(), Some("/sa/ca.crt"));
        let user = config.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!((user.token_file.as_deref(), user.token.is_none()), (Some("/sa/token"), true), "read as it rotates");
        let context = config.contexts[0].context.as_ref().unwrap();
        assert_eq!((context.cluster.as_str(), context.user.as_deref()), ("in-cluster", Some("in-cluster")));
        assert_eq!(
            (context.namespace.as_deref(), config.current_context.as_deref()),
            (Some("shop"), Some("in-cluster"))
        );
        // An IPv6 address in brackets (net.JoinHostPort); no ca.crt: the system's roots.
        let config = in_cluster("fd00::1", "6443", account, false, None);
        let cluster = config.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(
            (cluster.server.as_deref(), cluster.certificate_authority.as_deref()),
            (Some("https://[fd00::1]:6443"), None)
        );
        assert_eq!(config.contexts[0].context.as_ref().unwrap().namespace, None, "then default");
    }

    #[test]
    fn a_missing_context_lists_the_contexts_there_are() {
        let contexts = ["dev".to_string(), "prod".to_string()];
        let missing = |given| context_error(&contexts, "nope", given, KubeconfigError::LoadContext("nope".into()));
        // Passed with --context: the tip is another name for it (an operator trial's P2 read
        // "pass --context NAME" after passing one).
        assert_eq!(
            missing(true).to_string(),
            "kubeconfig context \"nope\" does not exist\n  tip: pass one of the kubeconfig's contexts to --context: dev, prod"
        );
        // The kubeconfig's current-context: choose one, either way.
        let error = missing(false).to_string();
        assert!(
            error.starts_with("the kubeconfig's current-context \"nope\" does not exist\n  tip: pass --context NAME"),
            "{error}"
        );
        assert!(error.ends_with("the contexts are: dev, prod"), "{error}");
    }

    #[test]
    fn no_current_context_says_how_to_choose_one() {
        let error = context_error(&["dev".to_string()], "", false, KubeconfigError::CurrentContextNotSet).to_string();
        assert!(error.starts_with("the kubeconfig sets no current-context\n  tip: pass --context NAME"), "{error}");
        assert!(error.contains("kubectl config use-context NAME") && error.ends_with("are: dev"), "{error}");
        let error = context_error(&[], "", false, KubeconfigError::CurrentContextNotSet).to_string();
        assert!(
            error.ends_with(
                "the kubeconfig has no contexts; add one with `kubectl config set-context`, or use another file"
            ),
            "{error}"
        );
    }

    #[test]
    fn the_config_is_made_of_the_selected_entries_as_kubes_loader_makes_it() {
        let ca = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tls/ca.pem")).unwrap();
        let kubeconfig = Kubeconfig::from_yaml(&format!(
            "current-context: a\n\
             contexts:\n- name: a\n  context: {{cluster: one, user: u, namespace: shop}}\n\
             - name: b\n  context: {{cluster: gone}}\n\
             clusters:\n- name: one\n  cluster: {{server: 'https://one:6443', tls-server-name: kube.test, certificate-authority-data: {}}}\n\
             - name: two\n  cluster: {{server: 'https://two', insecure-skip-tls-verify: true, certificate-authority-data: '!!'}}\n\
             users:\n- name: u\n  user: {{token: t, exec: {{command: c, apiVersion: client.authentication.k8s.io/v1, provideClusterInfo: true}}}}\n",
            BASE64.encode(&ca)
        ))
        .unwrap();
        let selected =
            |cluster: Option<&str>, user: &str| Selected { cluster: cluster.map(String::from), user: user.into() };
        let config = config_of(&kubeconfig, None, &selected(None, "u")).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://one:6443/");
        assert_eq!((config.default_namespace.as_str(), config.tls_server_name.as_deref()), ("shop", Some("kube.test")));
        assert_eq!(config.root_cert.as_ref().map(Vec::len), Some(1), "the CA's one certificate");
        assert!(!config.accept_invalid_certs);
        let exec = config.auth_info.exec.as_ref().unwrap();
        assert_eq!(exec.cluster.as_ref().and_then(|c| c.server.as_deref()), Some("https://one:6443"));
        // Another cluster (--cluster), a user the kubeconfig does not define (anonymous).
        let error = config_of(&kubeconfig, None, &selected(Some("two"), "nobody")).unwrap_err();
        assert!(
            error.to_string().starts_with("failed to load certificate authority: failed to decode base64 data"),
            "{error}"
        );
        let error = config_of(&kubeconfig, Some("b"), &selected(None, "")).unwrap_err();
        assert!(matches!(error, KubeconfigError::LoadClusterOfContext(ref c) if c == "gone"), "{error}");
        assert!(matches!(config_of(&kubeconfig, Some("c"), &selected(None, "")), Err(KubeconfigError::LoadContext(_))));
        let none = Kubeconfig::default();
        assert!(matches!(config_of(&none, None, &selected(None, "")), Err(KubeconfigError::CurrentContextNotSet)));
    }

    #[test]
    fn a_context_naming_a_missing_cluster_says_so_and_how_to_mend_it() {
        let error = context_error(&[], "dev", true, KubeconfigError::LoadClusterOfContext("gone".into())).to_string();
        assert_eq!(
            error,
            "kubeconfig context \"dev\" names cluster \"gone\", which the kubeconfig does not define\n  tip: add it (`kubectl config set-cluster gone --server=URL`), or point the context at one it defines (`kubectl config set-context dev --cluster=NAME`)"
        );
    }

    #[test]
    fn a_server_that_is_no_url_is_named_with_its_cluster() {
        let with_server = |server: &str| -> Kubeconfig {
            serde_saphyr::from_str(&format!("clusters:\n- name: c\n  cluster: {{server: {server:?}}}\n")).unwrap()
        };
        let check = |server: &str| check_server(&with_server(server), Some("c"), "dev").map_err(|e| e.to_string());
        assert_eq!(check("https://10.0.0.1:6443/prefix"), Ok(()));
        assert_eq!(
            check(""),
            Err("cluster \"c\" of kubeconfig context \"dev\" has no server (clusters[].cluster.server is empty)".into())
        );
        assert_eq!(
            check("https://exa mple:6443"),
            Err("cluster \"c\" of kubeconfig context \"dev\": its server \"https://exa mple:6443\" is not a URL: invalid uri character".into())
        );
        assert!(check("https://host:99999").unwrap_err().ends_with("its port is no number up to 65535"));
        assert!(check("https://[::1]:99999").unwrap_err().ends_with("its port is no number up to 65535"));
        assert_eq!(check("https://[::1]:6443"), Ok(()));
        assert_eq!(check("https://user:secret@host"), Ok(()));
        assert_eq!(check("https://host:"), Ok(()), "the scheme's port, as in Go");
        let shown = check("https://user:secret@host:99999").unwrap_err();
        assert!(shown.contains("its server \"https://…@host:99999\"") && !shown.contains("secret"), "{shown}");
        // A cluster the context does not name, or one without a server, is kube's to say.
        assert_eq!(check_server(&with_server(""), Some("other"), "dev").map_err(|e| e.to_string()), Ok(()));
        assert_eq!(check_server(&with_server(""), None, "dev").map_err(|e| e.to_string()), Ok(()));
    }

    #[test]
    fn other_context_errors_keep_kubes_words() {
        let error = context_error(&[], "dev", true, KubeconfigError::MissingClusterUrl).to_string();
        assert_eq!(error, "kubeconfig context \"dev\": cluster url is missing on selected cluster");
    }

    #[test]
    fn a_parse_error_names_the_file_and_the_place_and_shows_none_of_its_lines() {
        let text = b"users:\n- user:\n    token: SECRET-TOKEN\n   bad: [b\n".to_vec();
        let error = parse(text, Path::new("/home/jane/kc.yaml")).unwrap_err().to_string();
        assert!(error.starts_with("reading the kubeconfig: /home/jane/kc.yaml: failed to parse"), "{error}");
        assert!(error.contains("line 4 column 4") && !error.contains("<input>"), "{error}");
        assert!(!error.contains("SECRET"), "the lines around the fault may hold credentials: {error}");
        assert!(error.ends_with(&format!("\n  {READ_TIP}")), "{error}");
    }

    #[test]
    fn a_kubeconfig_is_utf8_or_utf16_after_its_byte_order_mark() {
        // The decoding is `files::text_after_bom`'s, tested there.
        let utf16: Vec<u8> =
            [0xFF, 0xFE].into_iter().chain("kind: Config\n".encode_utf16().flat_map(u16::to_le_bytes)).collect();
        assert!(parse(utf16, Path::new("kc")).is_ok());
        let error = parse(b"a: \xff".to_vec(), Path::new("kc")).unwrap_err().to_string();
        assert_eq!(error, format!("reading the kubeconfig: kc:1:4: not UTF-8 text (byte 3)\n  {READ_TIP}"));
    }

    #[test]
    fn the_files_a_kubeconfig_names_are_relative_to_its_folder() {
        let text = "clusters:\n- name: c\n  cluster: {server: 'https://k', certificate-authority: ca.pem}\n\
                    users:\n- name: u\n  user:\n    client-certificate: certs/u.pem\n    client-key: /abs/u.key\n\
                    \x20   tokenFile: token\n    exec: {command: ./bin/plugin, apiVersion: v1}\n\
                    - name: v\n  user:\n    exec: {command: aws, apiVersion: v1}\n";
        let kubeconfig = parse(text.into(), Path::new("/home/jane/.kube/config")).unwrap();
        let cluster = kubeconfig.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.certificate_authority.as_deref(), Some("/home/jane/.kube/ca.pem"));
        let user = kubeconfig.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!(user.client_certificate.as_deref(), Some("/home/jane/.kube/certs/u.pem"));
        assert_eq!(user.client_key.as_deref(), Some("/abs/u.key"));
        assert_eq!(user.token_file.as_deref(), Some("/home/jane/.kube/token"));
        assert_eq!(user.exec.as_ref().unwrap().command.as_deref(), Some("/home/jane/.kube/./bin/plugin"));
        // A command without a folder is looked up on PATH.
        let other = kubeconfig.auth_infos[1].auth_info.as_ref().unwrap();
        assert_eq!(other.exec.as_ref().unwrap().command.as_deref(), Some("aws"));
    }

    /// The credentials of user `u` of a kubeconfig, from their YAML (`{token: t}`).
    fn user(yaml: &str) -> AuthInfo {
        Kubeconfig::from_yaml(&format!("users:\n- name: u\n  user: {yaml}\n")).unwrap().auth_infos[0]
            .auth_info
            .clone()
            .unwrap()
    }

    /// A kubeconfig whose context `ctx` uses `user`, and whose context `other` names /dev/zero as
    /// its cluster's certificate-authority and its user's tokenFile.
    fn with_user(user: &str) -> Kubeconfig {
        let text = format!(
            "current-context: ctx\ncontexts:\n- name: ctx\n  context: {{cluster: c, user: u}}\n\
             - name: other\n  context: {{cluster: zero, user: zero}}\n\
             clusters:\n- name: c\n  cluster: {{server: 'https://k'}}\n\
             - name: zero\n  cluster: {{server: 'https://k', certificate-authority: /dev/zero}}\n\
             users:\n- name: u\n  user: {user}\n- name: zero\n  user: {{tokenFile: /dev/zero}}\n"
        );
        Kubeconfig::from_yaml(&text).unwrap()
    }

    fn selected(cluster: &str, user: &str) -> Selected {
        Selected { cluster: Some(cluster.into()), user: user.into() }
    }

    #[test]
    fn the_files_of_the_context_are_read_within_a_bound() {
        for (field, user) in [
            ("client-certificate", "{client-certificate: /dev/zero, client-key: /dev/null}"),
            ("client-key", "{client-certificate: /dev/null, client-key: /dev/zero}"),
        ] {
            let error = check_named_files(&with_user(user), &selected("c", "u"), &Overrides::default())
                .unwrap_err()
                .to_string();
            assert_eq!(
                error,
                format!(
                    "reading the kubeconfig's {field}: /dev/zero: the input passes 1 MiB, the limit for {}",
                    NAMED_FILE.input
                )
            );
        }
        let error = check_named_files(&with_user("{}"), &selected("zero", "zero"), &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("reading the kubeconfig's certificate-authority: /dev/zero: the input passes 1 MiB"));
        // A file given by flag is named by the flag.
        let overrides = Overrides { client_key: Some("/dev/zero".into()), ..Default::default() };
        let mut kubeconfig = with_user("{client-certificate: /dev/null}");
        let selected = overrides.apply(&mut kubeconfig, "ctx", false).unwrap();
        let error = check_named_files(&kubeconfig, &selected, &overrides).unwrap_err().to_string();
        assert!(error.starts_with("reading the --client-key file: /dev/zero: the input passes 1 MiB"), "{error}");
    }

    #[test]
    fn two_entries_of_one_name_in_a_file_are_refused_as_kubectl_refuses_them() {
        let check = |text: &str| check_unique_names(&Kubeconfig::from_yaml(text).unwrap());
        assert_eq!(check("users:\n- name: u\n- name: v\n"), Ok(()));
        assert_eq!(
            check("users:\n- name: u\n  user: {token: first}\n- name: v\n- name: u\n  user: {token: second}\n"),
            Err("duplicate name \"u\" in users (kubectl refuses the file too): remove or rename one of the two".into())
        );
        let error = check("clusters:\n- name: c\n- name: c\ncontexts:\n- name: x\n- name: x\n").unwrap_err();
        assert!(error.starts_with("duplicate name \"c\" in clusters"), "the first list, as kubectl: {error}");
        assert!(
            check("contexts:\n- name: x\n- name: x\n").unwrap_err().starts_with("duplicate name \"x\" in contexts")
        );
        // Across files they are not: the first file's wins (the merge).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kc");
        std::fs::write(&path, "users:\n- name: u\n- name: u\n").unwrap();
        let error = read(Some(&path), false).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("reading the kubeconfig: {}: duplicate name \"u\" in users", path.display())),
            "{error}"
        );
    }

    #[test]
    fn a_username_without_a_password_is_sent_with_an_empty_one_as_kubectl_sends_it() {
        let mut info = user("{username: admin}");
        complete_basic_auth(&mut info);
        assert_eq!(info.password.as_ref().map(|p| p.expose_secret().to_string()), Some(String::new()));
        let mut info = user("{username: admin, password: pw}");
        complete_basic_auth(&mut info);
        assert_eq!(info.password.as_ref().map(|p| p.expose_secret().to_string()), Some("pw".into()));
        let mut info = user("{token: t}");
        complete_basic_auth(&mut info);
        assert!(info.password.is_none());
    }

    #[test]
    fn groups_uid_or_extra_to_impersonate_need_a_user_to_impersonate() {
        let check = |yaml: &str| check_impersonation(&user(yaml), "u").map_err(|e| e.to_string());
        for fine in ["{}", "{as: carol}", "{as: carol, as-groups: [g], as-uid: '7'}", "{as-groups: []}"] {
            assert_eq!(check(fine), Ok(()), "{fine}");
        }
        for without in ["{as-groups: [g]}", "{as-uid: '7'}", "{as-user-extra: {reason: [x]}}"] {
            let error = check(without).unwrap_err();
            assert!(
                error.starts_with("requesting uid, groups or user-extra for u without impersonating a user ("),
                "{without}: {error}"
            );
        }
    }

    #[test]
    fn a_username_and_password_beside_a_token_is_refused_as_kubectl_refuses_it() {
        for both in ["{username: u, password: p, token: t}", "{username: u, password: p, tokenFile: /t}"] {
            let error = check_tokens(&with_user(both), "u").unwrap_err().to_string();
            assert!(error.contains("\"username/password or bearer token may be set, but not both\""), "{error}");
        }
        // A username or a password alone is basic auth too, for kubectl ("more than one
        // authentication method found").
        for either in ["{username: u, token: t}", "{password: p, tokenFile: /t}"] {
            assert!(check_tokens(&with_user(either), "u").is_err(), "{either}");
        }
        for one in ["{username: u, password: p}", "{token: t, tokenFile: /t}", "{username: u}"] {
            assert!(check_tokens(&with_user(one), "u").is_ok(), "{one}");
        }
    }

    #[test]
    fn the_token_file_is_used_unless_kube_takes_another_credential_first() {
        assert_eq!(token_file(&user("{tokenFile: /t}")), Some("/t"));
        assert_eq!(token_file(&user("{username: u, tokenFile: /t}")), Some("/t"));
        assert_eq!(token_file(&user("{token: t, tokenFile: /t}")), Some("/t"), "the file first, as client-go");
        assert_eq!(token_file(&user("{username: u, password: p, tokenFile: /t}")), None);
        assert_eq!(token_file(&user("{auth-provider: {name: gcp}, tokenFile: /t}")), None);
        assert_eq!(token_file(&user("{}")), None);
    }

    #[test]
    fn a_manifest_given_as_the_kubeconfig_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ro.yaml");
        std::fs::write(&path, "apiVersion: rollouts.kruise.io/v1beta1\nkind: Rollout\nmetadata: {name: demo}\n")
            .unwrap();
        let error = read(Some(&path), false).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!(
                "reading the kubeconfig: {}: a Rollout, not a kubeconfig (kind: Config)",
                path.display()
            )),
            "{error}"
        );
    }

    #[test]
    fn a_context_naming_a_user_not_defined_is_warned_of() {
        let kubeconfig = with_user("{token: t}");
        assert_eq!(missing_user(&kubeconfig, "u", "ctx"), None);
        // No user: anonymous on purpose.
        assert_eq!(missing_user(&kubeconfig, "", "ctx"), None);
        assert_eq!(
            missing_user(&kubeconfig, "nosuchuser", "ctx").unwrap(),
            "warning: kubeconfig context ctx names user nosuchuser, which the kubeconfig does not define: requests are sent without credentials (anonymous), as kubectl sends them"
        );
    }

    #[test]
    fn the_auth_providers_kubectl_removed_or_never_knew_are_refused() {
        let check = |yaml: &str| check_auth_provider(&user(yaml), "u").map_err(|e| e.to_string());
        assert!(check("{auth-provider: {name: oidc, config: {id-token: t}}}").is_ok());
        assert!(check("{token: t}").is_ok());
        assert_eq!(
            check("{auth-provider: {name: gcp, config: {cmd-path: /usr/bin/gcloud}}}").unwrap_err(),
            "user u of the kubeconfig has auth-provider gcp: the gcp auth plugin has been removed (kubectl refuses it too); use the \"gke-gcloud-auth-plugin\" kubectl/client-go credential plugin instead (an exec entry)"
        );
        assert!(check("{auth-provider: {name: azure}}").unwrap_err().contains("use the \"kubelogin\""));
        assert!(
            check("{auth-provider: {name: mycorp}}")
                .unwrap_err()
                .contains("(no Auth Provider found for name \"mycorp\")")
        );
    }

    #[test]
    fn a_cluster_that_skips_tls_verification_may_name_no_ca() {
        let cluster =
            |yaml: &str| Kubeconfig::from_yaml(&format!("clusters:\n- name: c\n  cluster: {yaml}\n")).unwrap();
        let check = |yaml: &str| check_insecure(&cluster(yaml), Some("c"), "ctx").map_err(|e| e.to_string());
        assert!(check("{server: 'https://k', insecure-skip-tls-verify: true}").is_ok());
        assert!(check("{server: 'https://k', certificate-authority-data: Q0E=}").is_ok());
        for ca in ["certificate-authority: ca.pem", "certificate-authority-data: Q0E="] {
            let error = check(&format!("{{server: 'https://k', insecure-skip-tls-verify: true, {ca}}}")).unwrap_err();
            assert!(error.starts_with("the cluster of context ctx sets insecure-skip-tls-verify and a certificate-authority: specifying a root certificates file with the insecure flag is not allowed"), "{error}");
        }
    }

    #[test]
    fn only_the_files_kube_reads_are_read() {
        // Another context's files, a file that data overrides, a missing context.
        let data = "{client-certificate-data: Q0VSVA==, client-certificate: /dev/zero, client-key-data: S0VZ, client-key: /dev/zero}";
        assert!(check_named_files(&with_user(data), &selected("c", "u"), &Overrides::default()).is_ok());
        assert!(check_named_files(&with_user("{}"), &selected("c", "u"), &Overrides::default()).is_ok());
        assert!(check_named_files(&with_user("{}"), &Selected::default(), &Overrides::default()).is_ok());
    }
}
