//! Reaching the cluster as kubectl does: its connection flags' edge cases, TLS failures told in
//! words, and servers that are not Kubernetes API servers.

use crate::support::Test;
use crate::support::cluster::*;
use crate::support::net::{OtherServer, Proxy, test_ca};

/// A kubeconfig whose one context `c` (namespace `shop`) reaches `server`, with `cluster` and
/// `user` as the YAML of the rest of the cluster's and the user's fields (a flow mapping's
/// entries: `certificate-authority: ca.pem`).
fn kubeconfig(test: Test, server: &str, cluster: &str, user: &str) -> Test {
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n\
         clusters:\n- name: c\n  cluster: {{server: '{server}', {cluster}}}\n\
         contexts:\n- name: c\n  context: {{cluster: c, user: u, namespace: shop}}\n\
         users:\n- name: u\n  user: {{{user}}}\n"
    );
    test.file("kubeconfig", &text).file("ca.pem", &test_ca())
}

/// A Kubernetes Status refusing every request, which shows that a request got through.
const FORBIDDEN: &str = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"reached the test server","reason":"Forbidden","code":403}"#;

#[test]
fn an_empty_namespace_context_kubeconfig_or_request_timeout_is_taken_as_not_given_as_kubectl_does() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    // `-n "$NS"` with NS unset: the context's namespace, not every namespace under a blank name.
    test.run_args(["status", "-n", ""]).success().stdout_has("Rollout shop/demo\n");
    test.run_args(["plan", "demo", "-n", "", "--context", "", "--kubeconfig", "", "--request-timeout", ""])
        .success()
        .stdout_has("Rollout shop/demo\n");
    assert!(server.requests().iter().all(|r| !r.path.contains("/namespaces//")), "{:?}", server.requests());
    // Offline too: the objects without a namespace are in "default".
    let example = crate::support::repo("examples/istio-canary-ab");
    let example = example.to_str().unwrap();
    let plain = test.run_args(["plan", "-f", example]).success();
    test.run_args(["plan", "-f", example, "-n", ""]).success().stdout_is(&plain.stdout);
}

/// What each request to `server` carried in its `Authorization` header.
fn authorizations(server: &FakeHandle) -> Vec<Option<String>> {
    server.requests().iter().map(|r| r.authorization.clone()).collect()
}

/// Whether there were requests, each sent with `Authorization: expected`.
fn each_sent(sent: &[Option<String>], expected: &str) -> bool {
    !sent.is_empty() && sent.iter().all(|a| a.as_deref() == Some(expected))
}

#[test]
fn kubectls_flags_override_the_kubeconfigs_cluster_and_user_as_kubectl_does() {
    let server = shop(2, "StepPaused").start();
    let front = crate::support::net::TlsFront::to(server.address().port());
    // What the requests of `flags` carried in Authorization.
    let sent = |test: &Test, flags: &[&str]| -> Vec<Option<String>> {
        let before = server.requests().len();
        let out = test.run_args(["status", "demo", "-n", "shop"].iter().chain(flags));
        out.success().stdout_has("Rollout shop/demo\n");
        authorizations(&server)[before..].to_vec()
    };
    let all = |sent: Vec<Option<String>>, expected: &str| assert!(each_sent(&sent, expected), "{sent:?}");
    // No kubeconfig at all: the server, a CA file relative to the working directory, a token.
    let test = Test::new().file("ca.pem", &test_ca());
    all(
        sent(&test, &["-s", &front.url(), "--certificate-authority", "ca.pem", "--token", "flag-token"]),
        "Bearer flag-token",
    );
    // The context's cluster is not there, its tls-server-name for another name.
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n\
         clusters:\n- name: down\n  cluster: {{server: 'https://127.0.0.1:9', certificate-authority: ca.pem, tls-server-name: elsewhere.test}}\n\
         - name: up\n  cluster: {{server: '{}', certificate-authority: ca.pem}}\n\
         contexts:\n- name: c\n  context: {{cluster: down, user: u1}}\n\
         users:\n- name: u1\n  user: {{token: one}}\n- name: u2\n  user: {{token: two}}\n- name: u3\n  user: {{}}\n",
        front.url()
    );
    let test = test.file("kubeconfig", &text);
    all(sent(&test, &["--cluster", "up", "--user", "u2", "--token", ""]), "Bearer two");
    // --server keeps the cluster's CA, and clears its tls-server-name (for the other server).
    all(sent(&test, &["--server", &front.url()]), "Bearer one");
    // --insecure-skip-tls-verify clears the cluster's CA, which would be refused beside it.
    all(sent(&test, &["--cluster", "up", "--insecure-skip-tls-verify"]), "Bearer one");
    all(sent(&test, &["--cluster", "up", "--tls-server-name", "kube.proxy.test"]), "Bearer one");
    all(sent(&test, &["--cluster", "up", "--user", "u3", "--username", "bob", "--password", "pw"]), "Basic Ym9iOnB3");
    // Entries the kubeconfig does not define, and files that are not there, are named.
    let requests = server.requests().len();
    test.run_args(["status", "demo", "--cluster", "nope"]).status(1).stderr_has(
        "error: cluster \"nope\" (--cluster) does not exist in the kubeconfig; its clusters are: down, up\n",
    );
    test.run_args(["status", "demo", "--cluster", "up", "--client-certificate", "nope.pem", "--client-key", "ca.pem"])
        .status(1)
        .stderr_has("error: reading the --client-certificate file: nope.pem: ");
    assert_eq!(server.requests().len(), requests);
}

#[test]
fn messages_name_the_server_flag_and_no_context_where_there_is_none() {
    // Connection trial: with `-s` and no kubeconfig, messages ended in `(context )`, and told
    // to mend the kubeconfig's server where --server gave it.
    let server = shop(2, "StepPaused").start();
    // A server gone: its port refuses connections.
    let dead = shop(2, "StepPaused").start().url();
    let test = Test::new();
    let out = test.run_args(["status", "demo", "-s", &dead]).status(1).stderr_has("the connection to the server was refused (os error 111): is the server running, and is this the right host and port?\n");
    assert!(!out.stderr.contains("(context"), "{}", out.stderr);
    let https = server.url().replace("http://", "https://");
    test.run_args(["status", "demo", "-s", &https])
        .status(1)
        .stderr_has("use http:// in --server, or check the port\n");
    // Over a kubeconfig context, --server is named.
    kubeconfig(Test::new(), &server.url(), "", "")
        .args(["status", "demo", "-s", &https])
        .run()
        .status(1)
        .stderr_has("use http:// in --server, or check the port\n");
}

#[test]
fn backups_of_a_context_pointed_at_another_server_by_flags_are_kept_apart() {
    // A review of the connection flags: backups are kept by context, and `restore --ref` of a
    // context pointed at another cluster (`--server`) would have found the first's.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let other = format!("http://localhost:{}", server.address().port());
    test.run_args(["approve", "demo", "--yes", "--traffic-only", "-s", &other]).success();
    let backups = test.path("home/.local/state/kubectl-rollout-lua/backups");
    let folders: Vec<String> =
        std::fs::read_dir(&backups).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(folders, [format!("fake@localhost:{}", server.address().port())]);
    // The context's own server, given by flag, is the context's.
    test.run_args(["restore", "demo", "--yes", "-s", &server.url()]).success();
    assert!(backups.join("fake").is_dir(), "{:?}", std::fs::read_dir(&backups).unwrap().collect::<Vec<_>>());
}

#[test]
fn groups_or_a_uid_to_impersonate_need_a_user_to_impersonate_which_the_kubeconfig_may_give() {
    let server = shop(2, "StepPaused").start();
    let as_carol = "    as: carol\n    as-groups: [ops]\n";
    let test = Test::new().kubeconfig_over_tls(&server, as_carol);
    // An empty --as is not given: the user's as applies. --as-group and --as-uid need no --as
    // then, and the groups replace the user's.
    test.run_args(["status", "demo", "--as", "", "--as-group", "dev", "--as-uid", "42"]).success();
    let sent: Vec<_> = server
        .requests()
        .iter()
        .map(|r| (r.impersonate_user.clone(), r.impersonate_groups.clone(), r.impersonate_uid.clone()))
        .collect();
    let expected = (Some("carol".to_string()), vec!["dev".to_string()], Some("42".to_string()));
    assert!(!sent.is_empty() && sent.iter().all(|s| *s == expected), "{sent:?}");
    // No user to impersonate anywhere: refused before any request, in kubectl's words.
    let server = shop(2, "StepPaused").start();
    for flags in [&["--as-group", "dev"][..], &["--as-uid", "42"], &["--as", "", "--as-group", "dev"]] {
        Test::new()
            .kubeconfig(&server)
            .args(["status", "demo"].iter().chain(flags))
            .run()
            .status(1)
            .stderr_has("error: requesting uid, groups or user-extra for fake-user without impersonating a user (");
    }
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[test]
fn a_kubeconfig_file_with_two_entries_of_one_name_is_refused_as_kubectl_refuses_it() {
    let server = shop(2, "StepPaused").start();
    // A replacement appended below the entry it was to replace.
    let test =
        Test::new().kubeconfig_over_tls(&server, "    token: first\n- name: fake-user\n  user:\n    token: second\n");
    test.run_args(["status", "demo"]).status(1).stderr_has(&format!(
        "error: reading the kubeconfig: {}: duplicate name \"fake-user\" in users (kubectl refuses the file too): remove or rename one of the two\n",
        test.path("kubeconfig").display()
    ));
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[test]
fn a_username_without_a_password_is_sent_with_an_empty_one_as_kubectl_sends_it() {
    let server = shop(2, "StepPaused").start();
    Test::new().kubeconfig_over_tls(&server, "    username: admin\n").run_args(["status", "demo"]).success();
    // base64 of `admin:`.
    assert!(each_sent(&authorizations(&server), "Basic YWRtaW46"), "{:?}", authorizations(&server));
}

#[test]
fn a_refused_server_certificate_is_told_in_words_naming_the_kubeconfig_field() {
    let server = OtherServer::tls("403 Forbidden", "application/json", FORBIDDEN);
    let url = |host: &str| format!("https://{host}:{}", server.port());
    let status = |test: Test| test.args(["status", "demo"]).run().status(1);
    // Trusted: the request gets through.
    status(kubeconfig(Test::new(), &url("127.0.0.1"), "certificate-authority: ca.pem", ""))
        .stderr_has("reached the test server (403 Forbidden)");
    // No authority given: the system's do not know the test CA.
    status(kubeconfig(Test::new(), &url("127.0.0.1"), "", "")).stderr_has(&format!(
        "at {}/: the server's certificate is not signed by an authority the kubeconfig trusts (x509: certificate \
         signed by unknown authority): check certificate-authority or certificate-authority-data of the cluster of \
         context c in the kubeconfig\n",
        url("127.0.0.1")
    ));
    // A name the certificate does not hold.
    status(kubeconfig(Test::new(), &url("localhost"), "certificate-authority: ca.pem", "")).stderr_has(
        "the server's certificate is not valid for localhost (it is for kube.proxy.test, 127.0.0.1, 0.0.0.0): use \
         one of those in server, or set tls-server-name, of the cluster of context c in the kubeconfig\n",
    );
    status(kubeconfig(
        Test::new(),
        &url("localhost"),
        "certificate-authority: ca.pem, tls-server-name: kube.proxy.test",
        "",
    ))
    .stderr_has("reached the test server (403 Forbidden)");
}

#[test]
fn https_to_a_plain_http_server_says_to_use_http() {
    let server = shop(2, "StepPaused").start();
    let https = server.url().replace("http://", "https://");
    kubeconfig(Test::new(), &https, "", "").args(["status", "demo"]).run().status(1).stderr_has(&format!(
        "at {https}/: the server answered in plain HTTP (http: server gave HTTP response to HTTPS client): use \
         http:// in server of the cluster of context c in the kubeconfig, or check the port\n"
    ));
}

#[test]
fn a_server_that_is_not_a_kubernetes_api_server_is_named_with_what_it_answered() {
    let page = format!("<!DOCTYPE html>\n<html><body>{}</body></html>", "Welcome! ".repeat(40));
    let not_kubernetes = "does not answer as a Kubernetes API server (GET /version: HTTP ";
    let check = "): check server of the cluster of context c in the kubeconfig\n";
    for status in ["200 OK", "404 Not Found"] {
        let server = OtherServer::http(status, "text/html; charset=utf-8", &page);
        let url = format!("http://127.0.0.1:{}", server.port());
        let out = kubeconfig(Test::new(), &url, "", "").args(["status", "demo"]).run().status(1);
        let answered = format!(
            "error: the server at {url}/ {not_kubernetes}{status}, text/html; charset=utf-8: \"<!DOCTYPE html>\\n<html><body>Welcome! "
        );
        let out = out.stderr_has(&answered).stderr_has(&format!(" We\"…{check}"));
        // Not blamed on Kruise.
        assert!(!out.stderr.contains("OpenKruise"), "{}", out.stderr);
        // The discovery, then /version, once.
        assert_eq!(
            server.requests().iter().filter(|r| r.starts_with("GET /version ")).count(),
            1,
            "{:?}",
            server.requests()
        );
    }
    // An API server without Kruise is still told so.
    let bare = fake_apiserver::FakeApiServer::builder().resource(fake_apiserver::leases()).start();
    Test::new()
        .kubeconfig(&bare)
        .args(["status", "demo"])
        .run()
        .status(1)
        .stderr_has("error: the API server serves no rollouts.rollouts.kruise.io (is OpenKruise Rollout installed?)");
}

#[test]
fn release_claim_and_approve_at_a_server_that_is_not_an_api_server_say_so() {
    // A review (s52): release-claim took a web server's 404 page for "no claim" (exit 0), and
    // approve named neither the server nor the context.
    for (status, args) in
        [("404 Not Found", &["release-claim", "demo"][..]), ("501 Not Implemented", &["approve", "demo", "--yes"])]
    {
        let server = OtherServer::http(status, "text/html", "<html>nothing here</html>");
        let url = format!("http://127.0.0.1:{}", server.port());
        let out = kubeconfig(Test::new(), &url, "", "").args(args).run().status(1);
        out.stderr_has(&format!(
            "the server at {url}/ does not answer as a Kubernetes API server (GET /version: HTTP "
        ))
        .stderr_has("check server of the cluster of context c in the kubeconfig");
    }
}

#[test]
fn credentials_go_to_an_https_server_only_as_kubectl_sends_them() {
    // A review (s52): a token, an exec plugin's too, crossed a plain-HTTP connection readable.
    // Whom to impersonate goes all the same, as kubectl sends it (kubectl proxy passes it on).
    let server = shop(2, "StepPaused").start();
    let test = kubeconfig(Test::new(), &server.url(), "", "token: secret");
    test.run_args(["status", "demo", "--as", "jane"]).success().stderr_has(&format!(
        "warning: the server of context c is plain HTTP ({}/): the user's credentials are not sent to it (its user has a token), as kubectl sends none over HTTP; use an https:// server\n",
        server.url()
    ));
    let sent: Vec<_> =
        server.requests().iter().map(|r| (r.authorization.clone(), r.impersonate_user.clone())).collect();
    assert!(!sent.is_empty() && sent.iter().all(|s| *s == (None, Some("jane".to_string()))), "{sent:?}");
    // Impersonation alone is no credential: nothing to warn of.
    let quiet = kubeconfig(Test::new(), &server.url(), "", "").run_args(["status", "demo", "--as", "jane"]);
    assert!(!quiet.success().stderr.contains("plain HTTP"));
    // Named as kubectl names itself, for audit logs.
    let agent = format!("kubectl-rollout-lua/v{} (linux/", env!("CARGO_PKG_VERSION"));
    let agents: Vec<_> = server.requests().iter().map(|r| r.user_agent.clone()).collect();
    assert!(agents.iter().all(|a| a.as_deref().is_some_and(|a| a.starts_with(&agent))), "{agents:?}");
    // An exec plugin is not even run.
    let test = Test::new();
    let ran = test.path("ran");
    let plugin = format!("touch {}; echo '{{}}'", ran.display());
    let test = plugin_kubeconfig(test, &server.url(), &plugin);
    test.run_args(["status", "demo"]).success().stderr_has("(its user has an exec credential plugin)");
    assert!(!ran.exists(), "the plugin ran");
    // Over TLS they go.
    let server = shop(2, "StepPaused").start();
    let out =
        Test::new().kubeconfig_over_tls(&server, "    token: secret\n").run_args(["status", "demo", "--as", "jane"]);
    assert!(!out.success().stderr.contains("plain HTTP"));
    let sent: Vec<_> =
        server.requests().iter().map(|r| (r.authorization.clone(), r.impersonate_user.clone())).collect();
    let expected = (Some("Bearer secret".to_string()), Some("jane".to_string()));
    assert!(!sent.is_empty() && sent.iter().all(|s| *s == expected), "{sent:?}");
}

/// `test` with a kubeconfig for `url` whose user's credential comes from the shell command
/// `plugin` (an exec plugin).
fn plugin_kubeconfig(test: Test, url: &str, plugin: &str) -> Test {
    let test = test.file("plugin.sh", &format!("#!/bin/sh\n{plugin}\n"));
    std::fs::set_permissions(test.path("plugin.sh"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let exec = "exec: {apiVersion: client.authentication.k8s.io/v1, command: ./plugin.sh, interactiveMode: Never}";
    kubeconfig(test, url, "", exec)
}

#[test]
fn a_server_that_is_no_url_is_named_with_its_cluster_before_any_request() {
    // A regression: kube's words named neither ("failed to parse cluster url: invalid uri
    // character"), and a port past 65535 failed later, on its name.
    for (server, said) in [
        ("https://exa mple:6443", "its server \"https://exa mple:6443\" is not a URL: invalid uri character"),
        ("https://127.0.0.1:99999", "its port is no number up to 65535"),
        ("", "has no server (clusters[].cluster.server is empty)"),
    ] {
        kubeconfig(Test::new(), server, "", "")
            .args(["status", "demo"])
            .run()
            .status(1)
            .stderr_has("error: cluster \"c\" of kubeconfig context \"c\"")
            .stderr_has(said);
    }
}

#[test]
fn kubeconfig_users_kubectl_refuses_or_goes_anonymous_with_are_said_so() {
    let server = shop(2, "StepPaused").start();
    // The gcp auth-provider, which kubectl removed (kube ran gcloud without a time limit).
    let gcp = "    auth-provider: {name: gcp, config: {cmd-path: /usr/bin/gcloud}}\n";
    Test::new().kubeconfig_over_tls(&server, gcp).run_args(["status", "demo"]).status(1).stderr_has(
        "error: user fake-user of the kubeconfig has auth-provider gcp: the gcp auth plugin has been removed (kubectl refuses it too); use the \"gke-gcloud-auth-plugin\"",
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    // One kubectl does not know at all (kube's error spoke of an exec plugin).
    let mine = "    auth-provider: {name: mycorp, config: {}}\n";
    Test::new().kubeconfig_over_tls(&server, mine).run_args(["status", "demo"]).status(1).stderr_has(
        "error: user fake-user of the kubeconfig has auth-provider mycorp, which kubectl does not know either (no Auth Provider found for name \"mycorp\"): use an exec credential plugin (an exec entry) instead\n",
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    // A context naming a user the kubeconfig does not define: anonymous, and said so.
    let test = Test::new().kubeconfig(&server);
    let kubeconfig = std::fs::read_to_string(test.path("kubeconfig")).unwrap();
    let test = test.file("kubeconfig", &kubeconfig.replace("    user: fake-user\n", "    user: nosuchuser\n"));
    test.run_args(["status", "demo"]).success().stderr_has(
        "warning: kubeconfig context fake names user nosuchuser, which the kubeconfig does not define: requests are sent without credentials (anonymous)",
    );
    // A manifest given as the kubeconfig.
    let test =
        Test::new().file("ro.yaml", "apiVersion: rollouts.kruise.io/v1beta1\nkind: Rollout\nmetadata: {name: demo}\n");
    test.run_args(["status", "demo", "--kubeconfig", "ro.yaml"])
        .status(1)
        .stderr_has("error: reading the kubeconfig: ro.yaml: a Rollout, not a kubeconfig (kind: Config)");
}

/// The service account's folder in a pod, where client-go's in-cluster configuration reads it.
const SERVICE_ACCOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

#[test]
fn in_a_pod_without_a_kubeconfig_or_a_service_account_token_both_are_said() {
    if std::path::Path::new(SERVICE_ACCOUNT).join("token").exists() {
        return crate::support::skip("this machine is a pod with a service account token");
    }
    let pod = Test::new().env("KUBERNETES_SERVICE_HOST", "10.0.0.1").env("KUBERNETES_SERVICE_PORT", "443");
    pod.run_args(["status", "demo"]).status(1).stderr_has(&format!(
        "/kubeconfig: no such file, and the pod's service account token ({SERVICE_ACCOUNT}/token) is not mounted either, so there is no in-cluster configuration to use\n  tip: point KUBECONFIG or --kubeconfig at a kubeconfig file, or mount the service account's token (automountServiceAccountToken)"
    ));
}

/// The binary run with `args` as in a pod whose service account (`token`, `ca.crt` and
/// `namespace` files of the test's folder `sa/`) is mounted where client-go reads it, and whose
/// API server is `server` over TLS: in a user and mount namespace of its own (`unshare`), a
/// tmpfs over /run holds the account's folder. None (skipped, saying so) where that is refused.
fn in_a_pod(test: &Test, server: &FakeHandle, env: &[(&str, &str)], args: &[&str]) -> Option<crate::support::Output> {
    let front = crate::support::net::TlsFront::to(server.address().port());
    let port = front.url().rsplit(':').next().unwrap().to_string();
    let script = format!(
        "mount -t tmpfs none /var/run && mkdir -p {SERVICE_ACCOUNT} && cp sa/* {SERVICE_ACCOUNT}/ && exec \"$@\""
    );
    let mut command = test.command("unshare", ["--user", "--map-root-user", "--mount", "sh", "-c", &script, "sh"]);
    command.arg(crate::support::BINARY).args(args);
    command.env("KUBERNETES_SERVICE_HOST", "127.0.0.1").env("KUBERNETES_SERVICE_PORT", &port);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.starts_with("unshare:") || stderr.starts_with("mount:") {
        crate::support::skip(&format!("no user and mount namespace to mount a service account in: {}", stderr.trim()));
        return None;
    }
    Some(crate::support::Output::of(output))
}

#[test]
fn in_a_pod_without_a_kubeconfig_the_service_account_is_used_as_kubectl_uses_it() {
    let server = shop(2, "StepPaused").start();
    // A token with a line end (as a file written by echo), which is not sent.
    let test = Test::new().file("sa/token", "sa-token\n").file("sa/ca.crt", &test_ca()).file("sa/namespace", "shop\n");
    let Some(out) = in_a_pod(&test, &server, &[], &["status", "demo"]) else { return };
    out.success().stdout_has("Rollout shop/demo\n");
    let sent: Vec<Option<String>> = server.requests().iter().map(|r| r.authorization.clone()).collect();
    assert!(!sent.is_empty() && sent.iter().all(|a| a.as_deref() == Some("Bearer sa-token")), "{sent:?}");
    // POD_NAMESPACE comes before the account's namespace, and -n before both.
    let elsewhere = [("POD_NAMESPACE", "elsewhere")];
    let out = in_a_pod(&test, &server, &elsewhere, &["status", "demo"]).unwrap();
    out.status(1).stderr_has("\"demo\" not found in namespace elsewhere");
    in_a_pod(&test, &server, &elsewhere, &["status", "demo", "-n", "shop"]).unwrap().success();
    // KUBECONFIG listing files none of which exists, as kubectl takes it (a review's finding).
    in_a_pod(&test, &server, &[("KUBECONFIG", "/nope1:/nope2")], &["status", "demo"]).unwrap().success();
    // A kubeconfig, when there is one, comes first: this one's server is not there.
    let test = test.file("kubeconfig", "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:9'}\ncontexts:\n- name: c\n  context: {cluster: c}\ncurrent-context: c\n");
    let out = in_a_pod(&test, &server, &[], &["status", "demo", "--request-timeout", "2s"]).unwrap();
    out.status(1).stderr_has("127.0.0.1:9");
}

#[test]
fn an_error_reply_that_is_not_a_kubernetes_status_is_shown_bounded() {
    // A proxy's page, say.
    let page = format!("<html>{}</html>", "Access denied. ".repeat(50));
    let server = OtherServer::http("403 Forbidden", "text/html", &page);
    let url = format!("http://127.0.0.1:{}", server.port());
    let out = kubeconfig(Test::new(), &url, "", "").args(["status", "demo"]).run().status(1);
    let out =
        out.stderr_has("error: discovering rollouts.kruise.io/v1beta1: the reply is \"<html>Access denied. Access");
    out.stderr_has(" Access de\"… (403 not a Kubernetes Status)\n");
}

#[test]
fn a_token_file_ending_in_a_line_end_is_trimmed_as_kubectl_trims_it() {
    let server = shop(2, "StepPaused").start();
    // `kubectl create token … > token` leaves a line end.
    let test = Test::new().kubeconfig_over_tls(&server, "    tokenFile: token\n").file("token", "tok-from-file\n");
    test.run_args(["status", "demo"]).success();
    let sent: Vec<Option<String>> = server.requests().iter().map(|r| r.authorization.clone()).collect();
    assert!(!sent.is_empty() && sent.iter().all(|a| a.as_deref() == Some("Bearer tok-from-file")), "{sent:?}");
    // Beside a token, the file's comes first, as in client-go (a regression: the token, stale
    // next to a rotated file, was sent); the token only while the file cannot be read.
    for (file, sent_token) in [(Some("tok-from-file\n"), "Bearer tok-from-file"), (None, "Bearer inline")] {
        let server = shop(2, "StepPaused").start();
        let test = Test::new().kubeconfig_over_tls(&server, "    token: inline\n    tokenFile: token\n");
        let test = match file {
            Some(text) => test.file("token", text),
            None => test,
        };
        test.run_args(["status", "demo"]).success();
        let sent: Vec<Option<String>> = server.requests().iter().map(|r| r.authorization.clone()).collect();
        assert!(!sent.is_empty() && sent.iter().all(|a| a.as_deref() == Some(sent_token)), "{sent:?}");
    }
    // A token no header can carry: the user and the file named, nothing sent.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig_over_tls(&server, "    tokenFile: token\n").file("token", "tok\u{7}en\n");
    test.run_args(["status", "demo"]).status(1).stderr_has(&format!(
        "error: reading the kubeconfig's tokenFile (of user \"fake-user\"): {}: the token holds a control character, which \
         an HTTP header cannot carry\n",
        test.path("token").display()
    ));
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[test]
fn a_token_no_header_can_carry_is_refused_naming_it_rather_than_crashing() {
    // A regression: kube aborted the process (exit 134) on such a token.
    let server = shop(2, "StepPaused").start();
    for (user, field) in
        [("token: \"tok\\n\"", "token"), ("auth-provider: {name: oidc, config: {id-token: \"a\\u0007b\"}}", "id-token")]
    {
        // Over TLS, where the token would go (over plain HTTP it goes nowhere, unchecked).
        let test = Test::new().kubeconfig_over_tls(&server, &format!("    {user}\n"));
        test.run_args(["status", "demo"]).status(1).stderr_has(&format!(
            "error: the kubeconfig's {field} of user fake-user is not a valid HTTP header value (a line end or other control character in it"
        ));
    }
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[test]
fn a_server_without_a_scheme_is_reached_as_kubectl_reaches_it() {
    // client-go: http without a CA, a client certificate or insecure-skip-tls-verify (a
    // regression: kube aborted the process at the first request).
    let server = shop(2, "StepPaused").start();
    let bare = server.url().trim_start_matches("http://").to_string();
    kubeconfig(Test::new(), &bare, "", "").args(["status", "demo"]).run().success();
    // With a CA too (a review, s52): clientcmd decides on TLS from the server alone, before it
    // reads the CA; and the TLS settings it does not use it does not check either.
    kubeconfig(Test::new(), &bare, "certificate-authority: ca.pem, insecure-skip-tls-verify: true", "token: \"a\\nb\"")
        .args(["status", "demo"])
        .run()
        .success()
        .stderr_has(&format!("warning: the server of context c is plain HTTP (http://{bare}/)"));
}

#[test]
fn https_proxy_is_used_for_an_https_server_as_kubectl_uses_it() {
    let server = OtherServer::tls("403 Forbidden", "application/json", FORBIDDEN);
    let proxy = Proxy::http();
    // A name only the proxy can reach: it goes there, never to this host's resolver.
    let url = format!("https://kube.proxy.test:{}", server.port());
    let test = kubeconfig(Test::new(), &url, "certificate-authority: ca.pem", "");
    let out = test.env("HTTPS_PROXY", &proxy.url()).args(["status", "demo"]).run().status(1);
    out.stderr_has("reached the test server (403 Forbidden)");
    let target = format!("kube.proxy.test:{}", server.port());
    assert!(!proxy.targets().is_empty() && proxy.targets().iter().all(|t| *t == target), "{:?}", proxy.targets());
    // The lowercase spelling, and a kubeconfig's proxy-url, which wins over the environment.
    let test =
        kubeconfig(Test::new(), &url, &format!("certificate-authority: ca.pem, proxy-url: '{}'", proxy.url()), "");
    let out = test.env("https_proxy", "http://127.0.0.1:9").args(["status", "demo"]).run().status(1);
    out.stderr_has("reached the test server (403 Forbidden)");
    // A SOCKS5 proxy, which is handed the name too.
    let socks = Proxy::socks5();
    let test = kubeconfig(Test::new(), &url, "certificate-authority: ca.pem", "");
    let out = test.env("HTTPS_PROXY", &socks.url()).args(["status", "demo"]).run().status(1);
    out.stderr_has("reached the test server (403 Forbidden)");
    assert!(!socks.targets().is_empty() && socks.targets().iter().all(|t| *t == target), "{:?}", socks.targets());
    // A proxy that answers CONNECT with an error (here 502: nothing listens there) is said to,
    // where hyper-util's words were `tunnel error: unsuccessful` (a connection trial).
    let test = kubeconfig(Test::new(), "https://kube.proxy.test:9", "certificate-authority: ca.pem", "");
    test.env("HTTPS_PROXY", &proxy.url()).args(["status", "demo"]).run().status(1).stderr_has(&format!(
        "the proxy {}/ did not open a connection to the server: it answered CONNECT with an error (403 from a proxy that does not allow this host or port, 502 or 503 from one that cannot reach it) (context ",
        proxy.url()
    ));
}

#[test]
fn a_no_proxy_entry_go_skips_is_skipped_whatever_proxy_is_set() {
    // A connection trial: kube's loader read NO_PROXY itself whenever HTTPS_PROXY or a proxy-url
    // was set, and one stray comma (common in corporate settings) failed every command.
    let server = shop(2, "StepPaused").start();
    let proxy = Proxy::http();
    let test = Test::new().kubeconfig_over_tls(&server, "");
    let no_proxy = "localhost,.svc,10.0.0.0/8,,a b,";
    test.env("HTTPS_PROXY", &proxy.url()).env("NO_PROXY", no_proxy).run_args(["status", "demo"]).success();
    // A proxy-url, which ignores NO_PROXY (loopback included), as kubectl's does.
    let test = Test::new().kubeconfig_over_tls(&server, "");
    let kubeconfig = std::fs::read_to_string(test.path("kubeconfig")).unwrap();
    let with_proxy = kubeconfig.replace(
        "    certificate-authority: ca.pem\n",
        &format!("    certificate-authority: ca.pem\n    proxy-url: {}\n", proxy.url()),
    );
    assert_ne!(with_proxy, kubeconfig);
    let test = test.file("kubeconfig", &with_proxy);
    test.env("NO_PROXY", no_proxy).run_args(["status", "demo"]).success();
    assert!(!proxy.targets().is_empty(), "through the proxy-url");
}

#[test]
fn no_proxy_and_the_servers_scheme_decide_whether_the_proxy_is_used() {
    let server = shop(2, "StepPaused").start();
    let proxy = Proxy::http();
    let port = server.url().rsplit_once(':').unwrap().1.to_string();
    // 0.0.0.0 reaches this host, and Go proxies it (only localhost and loopback addresses not).
    let test = kubeconfig(Test::new(), &format!("http://0.0.0.0:{port}"), "", "");
    let status = |test: &Test| test.run_args(["status", "demo"]).success().stdout_has("Rollout shop/demo\n");
    status(&test.env("HTTP_PROXY", &proxy.url()));
    let through = proxy.targets().len();
    assert!(through > 0 && proxy.targets().iter().all(|t| *t == format!("0.0.0.0:{port}")), "{:?}", proxy.targets());
    // NO_PROXY covering the server: straight to it.
    let test = kubeconfig(Test::new(), &format!("http://0.0.0.0:{port}"), "", "");
    for no_proxy in ["0.0.0.0", "example.com, 0.0.0.0/8", "*", ",0.0.0.0:", "0.0.0.0:{port}"] {
        let test = Test::new().file("kubeconfig", &std::fs::read_to_string(test.path("kubeconfig")).unwrap());
        status(&test.env("HTTP_PROXY", &proxy.url()).env("NO_PROXY", &no_proxy.replace("{port}", &port)));
    }
    // HTTPS_PROXY is for https:// servers only, and a loopback server is never proxied (the
    // audit's case: every command failed).
    status(&Test::new().kubeconfig(&server).env("HTTPS_PROXY", "http://127.0.0.1:9").env("NO_PROXY", "127.0.0.1"));
    status(&test.env("https_proxy", "http://127.0.0.1:9"));
    status(&Test::new().kubeconfig(&server).env("HTTP_PROXY", "http://127.0.0.1:9"));
    assert_eq!(proxy.targets().len(), through, "{:?}", proxy.targets());
    // A kubeconfig's proxy-url is used for every server, loopback too (as client-go uses it).
    let url = server.url();
    let test = kubeconfig(Test::new(), &url, &format!("proxy-url: '{}'", proxy.url()), "");
    status(&test.env("NO_PROXY", "*"));
    assert_eq!(proxy.targets().last(), Some(&format!("127.0.0.1:{port}")));
}

#[test]
fn a_proxy_that_cannot_be_reached_is_named() {
    let test = kubeconfig(Test::new(), "https://kube.proxy.test:6443", "", "");
    test.env("HTTPS_PROXY", "127.0.0.1:9").args(["status", "demo"]).run().status(1).stderr_has(
        "error: discovering rollouts.kruise.io/v1beta1 at https://kube.proxy.test:6443/ through the proxy \
         http://127.0.0.1:9/: the connection to the proxy was refused (os error 111): is the proxy http://127.0.0.1:9/ running",
    );
}

#[test]
fn a_proxy_that_cannot_be_used_is_refused_naming_the_setting() {
    let server = shop(2, "StepPaused").start();
    let test = kubeconfig(Test::new(), &server.url().replace("127.0.0.1", "0.0.0.0"), "", "");
    test.env("HTTP_PROXY", "ftp://proxy.corp:21").args(["status", "demo"]).run().status(1).stderr_has(
        "error: connecting to the cluster of context c in the kubeconfig: HTTP_PROXY \"ftp://proxy.corp:21\" is not a proxy URL: give \
         http://, https:// or socks5:// with the proxy's host and port; or unset it, or name the server in NO_PROXY\n",
    );
    let test = kubeconfig(Test::new(), &server.url(), "proxy-url: 'proxy.corp:3128'", "");
    test.args(["status", "demo"]).run().status(1).stderr_has(
        "error: connecting to the cluster of context c in the kubeconfig: the cluster's proxy-url \"proxy.corp:3128\" is not a proxy \
         URL: give http://, https:// or socks5:// with the proxy's host and port\n",
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}
