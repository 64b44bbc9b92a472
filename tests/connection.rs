//! Reaching the cluster as kubectl does: its connection flags' edge cases.

use crate::support::Test;
use crate::support::cluster::*;

#[test]
fn an_empty_namespace_or_context_is_taken_as_not_given_as_kubectl_does() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    // `-n "$NS"` with NS unset: the context's namespace, not every namespace under a blank name.
    test.run_args(["status", "-n", ""]).success().stdout_has("Rollout shop/demo\n");
    test.run_args(["plan", "demo", "-n", "", "--context", ""]).success().stdout_has("Rollout shop/demo\n");
    assert!(server.requests().iter().all(|r| !r.path.contains("/namespaces//")), "{:?}", server.requests());
    // Offline too: the objects without a namespace are in "default".
    let example = crate::support::repo("examples/istio-canary-ab");
    let example = example.to_str().unwrap();
    let plain = test.run_args(["plan", "-f", example]).success();
    test.run_args(["plan", "-f", example, "-n", ""]).success().stdout_is(&plain.stdout);
}

#[test]
fn a_group_to_impersonate_without_a_user_is_refused_before_any_request_as_kubectl_does() {
    let server = shop(2, "StepPaused").start();
    Test::new()
        .kubeconfig(&server)
        .args(["status", "demo", "--as-group", "dev"])
        .run()
        .status(1)
        .stderr_has("the following required arguments were not provided:\n  --as <USER>");
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}
