//! Where the plan follows what the controller really does (docs/controller-semantics.md §11):
//! steps it does not route, what its webhook refuses, stored originals it misreads, its
//! harness's reading of test cases, Go's number format, and durations and sizes as kubectl
//! reads them. Offline with `plan -f` and `test`; against the fake API server where the
//! cluster's state matters.

use crate::support::Test;
use crate::support::cluster::*;
use serde_json::json;

#[test]
fn durations_and_sizes_are_bounded_and_read_as_kubectl_reads_them() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["status", "demo", "-w", "--timeout", "99999999999999999999h"]).status(1).stderr_has(
        "invalid duration \"99999999999999999999h\": too long (at most 2562047h, about 292 years, as in Go)",
    );
    test.run_args(["plan", "demo", "--lua-memory", "17179869184Gi"])
        .status(1)
        .stderr_has("\"17179869184Gi\" is too large");
    test.run_args(["plan", "demo", "--lua-timeout", "0"])
        .status(1)
        .stderr_has("the script time limit must be more than 0 (the controller's is 1s)");
    test.run_args(["plan", "demo", "--request-timeout", "1m30s", "--lua-timeout", "1.5s"]).success();
    // The longest timeout there is: the release is over, so the watch ends at once.
    let mut done = rollout(3, "Completed");
    done["status"] = json!({"phase": "Healthy", "conditions": [{"type": "Succeeded", "status": "True"}]});
    Test::new()
        .kubeconfig(&serving(done).start())
        .args(["status", "demo", "-w", "--timeout", "2562047h47m16.854775807s"])
        .run()
        .success();
}
