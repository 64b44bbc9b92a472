//! One `trafficRoutings` entry with all three kinds of routing (`examples/three-providers`): a
//! VirtualService (custom ref), an Ingress of class nginx and an HTTPRoute. The controller
//! drives them at every step in a fixed order, custom refs, then the Ingress, then the
//! HTTPRoute, and stops at the first that fails (docs/controller-semantics.md §8).

use crate::support::{Test, repo};
use serde_json::Value;

const EXAMPLE: &str = "examples/three-providers";

/// Each object of each stage as `Kind name: action [change, …]`.
fn stages(plan: &Value) -> Vec<Vec<String>> {
    plan["plans"][0]["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|stage| {
            stage["objects"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    let text = |v: &Value| v.as_str().unwrap().to_string();
                    let changes: Vec<String> =
                        o["changes"].as_array().unwrap().iter().map(|c| text(&c["action"])).collect();
                    format!(
                        "{} {}: {} [{}]",
                        text(&o["kind"]),
                        text(&o["name"]),
                        text(&o["action"]),
                        changes.join(", ")
                    )
                })
                .collect()
        })
        .collect()
}

#[test]
fn plan_f_plans_the_three_at_every_step_in_the_controllers_order() {
    let plan = Test::new().args(["plan", "-o", "json", "-f"]).arg(repo(EXAMPLE)).run().success().json();
    assert_eq!(
        stages(&plan),
        [
            // The original stored, then routed; the canary Ingress made at weight 0, then
            // patched; the route's rules replaced.
            [
                "VirtualService checkout: replace [replace, replace]",
                "Ingress checkout-canary: create [create, patch]",
                "HTTPRoute checkout: replace [replace]",
            ],
            [
                "VirtualService checkout: replace [replace, replace]",
                "Ingress checkout-canary: patch [patch]",
                "HTTPRoute checkout: replace [replace]",
            ],
            // The finalise: the VirtualService's original, stored by the steps before, is put
            // back, the canary Ingress goes, the route is restored from where step 2 left it.
            [
                "VirtualService checkout: replace [replace]",
                "Ingress checkout-canary: delete [delete]",
                "HTTPRoute checkout: replace [replace]",
            ],
        ]
    );
    let stage = |i: usize| &plan["plans"][0]["stages"][i]["objects"];
    assert_eq!(stage(1)[1]["planned"]["metadata"]["annotations"]["nginx.ingress.kubernetes.io/canary-weight"], "30");
    assert_eq!(stage(1)[2]["planned"]["spec"]["rules"][0]["backendRefs"][1]["weight"], 30);
    assert_eq!(stage(1)[0]["planned"]["spec"]["http"][0]["route"][1]["weight"], 30);
    // The VirtualService's first replace names what it sends: the object as it is, with its
    // original stored; the second sends `planned`.
    let [store, route] = stage(0)[0]["changes"].as_array().unwrap().as_slice() else { panic!("{plan}") };
    let original = store["object"]["metadata"]["annotations"]["rollouts.kruise.io/original-spec-configuration"]
        .as_str()
        .unwrap_or_else(|| panic!("{store}"));
    let original: Value = serde_json::from_str(original).unwrap();
    assert_eq!(original["spec"], store["object"]["spec"], "the spec as it is, stored as the original");
    assert_eq!(route.get("object"), None, "{route}");

    // The text: the same order at every step.
    let text = Test::new().args(["plan", "-f"]).arg(repo(EXAMPLE)).run().success().stdout;
    let steps: Vec<&str> = text.split("\nstep ").skip(1).collect();
    assert_eq!(steps.len(), 3, "{text}");
    for step in steps {
        let at = |what: &str| step.find(what).unwrap_or_else(|| panic!("{what} in {step}"));
        let (vs, ingress, route) = (
            at("  VirtualService demo/checkout:"),
            at("  Ingress demo/checkout-canary:"),
            at("  HTTPRoute demo/checkout:"),
        );
        assert!(vs < ingress && ingress < route, "{step}");
    }
}

#[test]
fn the_examples_readme_shows_what_plan_prints() {
    let readme = std::fs::read_to_string(repo(&format!("{EXAMPLE}/README.md"))).unwrap();
    let command = "$ kubectl-rollout_lua plan -f examples/three-providers --summary\n";
    let shown = &readme[readme.find(command).expect("the README shows the plan") + command.len()..];
    let shown = &shown[..shown.find("```").unwrap()];
    Test::new().args(["plan", "--summary", "-f"]).arg(repo(EXAMPLE)).run().success().stdout_is(shown);
}

/// The example's release against the fake API server, in namespace `demo`.
mod cluster {
    use super::EXAMPLE;
    use crate::support::cluster::{FakeHandle, Rule, claim_writes, writes};
    use crate::support::{Output, Test, repo};
    use fake_apiserver::{ReplyFault, Requests, Stage};
    use serde_json::{Value, json};

    const NAMESPACE: &str = "demo";

    /// The example's objects, the canary Service the controller makes, and the Rollout paused
    /// at step 1.
    fn serving() -> fake_apiserver::Builder {
        let mut builder = fake_apiserver::FakeApiServer::builder()
            .kruise_and_istio()
            .resource(fake_apiserver::leases())
            .resource(fake_apiserver::ingresses())
            .resource(fake_apiserver::httproutes("v1"))
            .resource(fake_apiserver::httproutes("v1beta1"))
            .resource(fake_apiserver::services())
            .resource(fake_apiserver::deployments());
        for file in ["deployment", "service", "virtualservice", "ingress", "httproute"] {
            builder = builder.object(object(file));
        }
        let mut canary_service = object("service");
        canary_service["metadata"]["name"] = json!("checkout-canary");
        let mut rollout = object("rollout");
        rollout["status"] = json!({"phase": "Progressing",
            "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused", "canaryReplicas": 1, "canaryReadyReplicas": 1}});
        builder.object(canary_service).object(rollout)
    }

    /// An object of the example, as its file holds it.
    fn object(file: &str) -> Value {
        let text = std::fs::read_to_string(repo(&format!("{EXAMPLE}/{file}.yaml"))).unwrap();
        fake_apiserver::parse_objects(&text).unwrap().remove(0)
    }

    /// A test whose kubeconfig points at `server`, namespace `demo`.
    fn on(server: &FakeHandle) -> Test {
        let test = Test::new();
        server.write_kubeconfig(test.path("kubeconfig"), NAMESPACE).unwrap();
        test
    }

    fn approve(server: &FakeHandle) -> Output {
        on(server).args(["approve", "checkout", "--yes"]).run()
    }

    fn vs(server: &FakeHandle) -> Value {
        server.object("networking.istio.io", "*", "virtualservices", NAMESPACE, "checkout").unwrap()
    }

    fn canary_ingress(server: &FakeHandle) -> Option<Value> {
        server.object("networking.k8s.io", "*", "ingresses", NAMESPACE, "checkout-canary")
    }

    fn route(server: &FakeHandle) -> Value {
        server.object("gateway.networking.k8s.io", "*", "httproutes", NAMESPACE, "checkout").unwrap()
    }

    fn step_state(server: &FakeHandle) -> Value {
        let rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "checkout").unwrap();
        rollout["status"]["canaryStatus"]["currentStepState"].clone()
    }

    /// What the controller does after an approval: the next step, paused.
    fn pause_at(server: &FakeHandle, step: i64) {
        let mut rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "checkout").unwrap();
        rollout["status"]["canaryStatus"]["currentStepIndex"] = json!(step);
        rollout["status"]["canaryStatus"]["currentStepState"] = json!("StepPaused");
        server.put_object(rollout);
    }

    /// The routing writes as `METHOD resource[/name][/status]`.
    fn written(server: &FakeHandle) -> Vec<String> {
        writes(server)
            .iter()
            .map(|w| {
                let (method, path) = w.split_once(' ').unwrap();
                let at = path.find(&format!("/namespaces/{NAMESPACE}/")).unwrap();
                format!("{method} {}", &path[at + "/namespaces//".len() + NAMESPACE.len()..])
            })
            .collect()
    }

    /// Where `status` places each object: `Kind namespace/name: position`.
    fn placed(server: &FakeHandle) -> Vec<String> {
        let out = on(server).args(["status", "checkout"]).run().success().stdout;
        out.lines()
            .map(str::trim)
            .filter(|l| ["VirtualService ", "Ingress ", "HTTPRoute "].iter().any(|k| l.starts_with(k)))
            .map(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                let position = if words[2] == "at" { &words[2..5] } else { &words[2..3] };
                format!("{} {}: {}", words[0], words[1], position.join(" "))
            })
            .collect()
    }

    #[test]
    fn approve_writes_the_three_in_the_controllers_order_then_restore_and_status() {
        let server = serving().start();
        let (original_vs, stable_ingress, original_route) =
            (vs(&server), server.object("networking.k8s.io", "*", "ingresses", NAMESPACE, "checkout"), route(&server));
        assert_eq!(
            placed(&server),
            [
                "VirtualService demo/checkout: original",
                "Ingress demo/checkout-canary: absent",
                "HTTPRoute demo/checkout: original"
            ]
        );

        let out = approve(&server).success();
        assert_eq!(
            written(&server),
            [
                "PUT virtualservices/checkout",
                "PUT virtualservices/checkout",
                "POST ingresses",
                "PATCH ingresses/checkout-canary",
                "PUT httproutes/checkout",
                "PATCH rollouts/checkout/status",
            ]
        );
        assert_eq!(
            claim_writes(&server),
            [
                "POST /apis/coordination.k8s.io/v1/namespaces/demo/leases",
                "DELETE /apis/coordination.k8s.io/v1/namespaces/demo/leases/rollout-lua.checkout",
            ],
            "the claim is taken once, for the three"
        );
        let lines: Vec<&str> =
            out.stdout.lines().filter(|l| l.contains(" (backup ") || l.contains("created")).collect();
        assert_eq!(lines.len(), 3, "{}", out.stdout);
        assert!(lines[0].starts_with("VirtualService demo/checkout updated"), "{lines:?}");
        assert!(lines[1].starts_with("Ingress demo/checkout-canary created"), "{lines:?}");
        assert!(lines[2].starts_with("HTTPRoute demo/checkout updated"), "{lines:?}");
        assert_eq!(vs(&server)["spec"]["http"][0]["route"][0]["destination"]["host"], "checkout-canary");
        assert_eq!(
            canary_ingress(&server).unwrap()["metadata"]["annotations"]["nginx.ingress.kubernetes.io/canary-by-header"],
            "x-canary"
        );
        assert_eq!(route(&server)["spec"]["rules"][1]["backendRefs"][0]["name"], "checkout-canary");
        assert_eq!(step_state(&server), "StepReady");
        assert_eq!(
            placed(&server),
            [
                "VirtualService demo/checkout: at step 1",
                "Ingress demo/checkout-canary: at step 1",
                "HTTPRoute demo/checkout: at step 1"
            ]
        );

        pause_at(&server, 2);
        server.clear_log();
        approve(&server).success();
        assert_eq!(
            written(&server),
            [
                "PUT virtualservices/checkout",
                "PATCH ingresses/checkout-canary",
                "PUT httproutes/checkout",
                "PATCH rollouts/checkout/status",
            ],
            "the original is stored already"
        );
        assert_eq!(
            placed(&server),
            [
                "VirtualService demo/checkout: at step 2",
                "Ingress demo/checkout-canary: at step 2",
                "HTTPRoute demo/checkout: at step 2"
            ]
        );

        server.clear_log();
        let out = on(&server).args(["restore", "checkout", "--yes"]).run().success();
        assert_eq!(
            written(&server),
            ["PUT virtualservices/checkout", "DELETE ingresses/checkout-canary", "PUT httproutes/checkout"],
            "the controller's finalise, in its order"
        );
        let at = |what: &str| out.stdout.find(what).unwrap_or_else(|| panic!("{what} in {}", out.stdout));
        assert!(
            at("VirtualService demo/checkout: restore the stored original")
                < at("Ingress demo/checkout-canary: delete it")
                && at("Ingress demo/checkout-canary: delete it")
                    < at("HTTPRoute demo/checkout: the controller's restore"),
            "{}",
            out.stdout
        );
        assert_eq!(claim_writes(&server).len(), 2, "one claim for the three");
        assert_eq!(vs(&server)["spec"], original_vs["spec"]);
        assert!(vs(&server)["metadata"]["annotations"].is_null(), "the stored original is gone with the restore");
        assert!(canary_ingress(&server).is_none());
        assert_eq!(
            server.object("networking.k8s.io", "*", "ingresses", NAMESPACE, "checkout"),
            stable_ingress,
            "the stable Ingress is never written"
        );
        let mut restored_rules = original_route["spec"]["rules"].clone();
        restored_rules[0]["backendRefs"][0]["weight"] = json!(1);
        assert_eq!(route(&server)["spec"]["rules"], restored_rules, "the controller's restore sets weight 1");
        assert_eq!(
            placed(&server),
            [
                "VirtualService demo/checkout: original",
                "Ingress demo/checkout-canary: absent",
                "HTTPRoute demo/checkout: original"
            ]
        );
    }

    /// The user guide's approve, restore and script ConfigMap Roles, with the rules it says to
    /// add for Ingress and Gateway API routing, grant all that the three kinds of routing need.
    #[test]
    fn approve_and_restore_need_no_more_than_the_user_guide_grants() {
        let roles = crate::docs::documented_roles();
        let names = [
            "rollout-lua-approve",
            "rollout-lua-restore",
            "rollout-lua-scripts",
            "rules for ingresses",
            "rules for httproutes",
        ];
        let granted = names.iter().flat_map(|name| roles.get(*name).unwrap_or_else(|| panic!("{name}: {roles:?}")));
        let server = granted.fold(serving(), |builder, rule| builder.grant(rule.clone())).start();
        approve(&server).success();
        pause_at(&server, 2);
        approve(&server).success();
        on(&server).args(["restore", "checkout", "--yes"]).run().success();
        assert!(canary_ingress(&server).is_none());
    }

    /// After a failed run: the VirtualService (first) rolled back to what it was, the canary
    /// Ingress (second) as the failure left it, the HTTPRoute (third) never written, the step
    /// not approved, the claim released.
    #[track_caller]
    fn stopped_at_the_ingress(server: &FakeHandle, out: &Output, original_vs: &Value) {
        let report = format!("{}\n{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("  VirtualService demo/checkout: rolled back\n"), "{report}");
        assert!(out.stderr.contains("  nothing else was written\n"), "{report}");
        let now = vs(server);
        assert_eq!((&now["spec"], &now["metadata"]["annotations"]), (&original_vs["spec"], &Value::Null), "{report}");
        assert!(
            written(server).iter().all(|w| !w.contains("httproutes")),
            "the third provider is never written: {:?}",
            written(server)
        );
        assert_eq!(step_state(server), "StepPaused", "not approved");
        assert!(server.objects("coordination.k8s.io", "leases").is_empty(), "the claim is released");
    }

    /// The canary Ingress's creation: the second provider's first write.
    fn the_create() -> Requests {
        Requests::Matching(Rule::new(["create"]).resources(["ingresses"]))
    }

    #[test]
    fn a_forbidden_ingress_write_stops_the_run_there_and_rolls_the_virtual_service_back() {
        let server = serving().start();
        let original_vs = vs(&server);
        // Allowed when asked (the permission check passes), refused when sent: a policy
        // webhook, or a role changed between the two.
        server.storm(the_create(), Some(1), 403, None);
        let out = approve(&server).status(1);
        assert!(
            out.stderr.contains("error: creating Ingress demo/checkout-canary: admission webhook \"policy.example.com\" denied the request: injected denial (403 Forbidden)"),
            "{}",
            out.stderr
        );
        stopped_at_the_ingress(&server, &out, &original_vs);
        assert!(canary_ingress(&server).is_none());
    }

    #[test]
    fn a_second_writers_canary_ingress_is_not_overwritten_and_nothing_after_it_is_written() {
        let server = serving().start();
        let original_vs = vs(&server);
        // Someone makes the canary Ingress between this run's read and its create (writes:
        // the claim, the VirtualService twice, then the create): a 409 AlreadyExists.
        server.before_write(4, |store| {
            let mut theirs = object("ingress");
            theirs["metadata"]["name"] = json!("checkout-canary");
            theirs["metadata"]["annotations"] = json!({"example.com/owner": "team-b"});
            store.put(theirs);
        });
        let out = approve(&server).status(3);
        assert!(
            out.stderr.contains(
                "Ingress demo/checkout-canary was made by someone else while this run made it; not overwriting it:"
            ),
            "{}",
            out.stderr
        );
        stopped_at_the_ingress(&server, &out, &original_vs);
        assert_eq!(
            canary_ingress(&server).unwrap()["metadata"]["annotations"]["example.com/owner"],
            "team-b",
            "theirs stays"
        );
    }

    #[test]
    fn a_lost_reply_to_the_ingress_write_is_resolved_by_reading_it_again() {
        // Not stored: the fresh read shows it as before, so the run stops there.
        let server = serving().start();
        let original_vs = vs(&server);
        server.reply_fault(the_create(), 1, Stage::BeforeStore, ReplyFault::Lost);
        let out = approve(&server).status(1);
        assert!(
            out.stderr.contains("not applied when read back (the reply was lost; the server may still apply it)"),
            "{}",
            out.stderr
        );
        stopped_at_the_ingress(&server, &out, &original_vs);
        assert!(canary_ingress(&server).is_none());

        // Stored: the fresh read shows the write, and the run goes on to the HTTPRoute.
        let server = serving().start();
        server.reply_fault(the_create(), 1, Stage::AfterStore, ReplyFault::Lost);
        let out = approve(&server).success();
        assert!(out.stdout.contains("the reply was lost; a fresh read shows the write"), "{}", out.stdout);
        assert_eq!(
            written(&server),
            [
                "PUT virtualservices/checkout",
                "PUT virtualservices/checkout",
                "POST ingresses",
                "PATCH ingresses/checkout-canary",
                "PUT httproutes/checkout",
                "PATCH rollouts/checkout/status",
            ]
        );
        assert_eq!(step_state(&server), "StepReady");
    }

    #[test]
    fn a_restore_stopped_at_the_ingress_rolls_the_virtual_service_back_and_leaves_the_route() {
        let server = serving().start();
        approve(&server).success();
        let (routed_vs, routed_route) = (vs(&server), route(&server));
        server.clear_log();
        // Unlike the controller's finalise, which goes on past a failure, a restore run stops
        // at its first failed write and undoes what it wrote: every object as the run found it.
        let the_delete = Requests::Matching(Rule::new(["delete"]).resources(["ingresses"]));
        server.storm(the_delete, Some(1), 403, None);
        let out = on(&server).args(["restore", "checkout", "--yes"]).run().status(1);
        assert!(out.stderr.contains("  VirtualService demo/checkout: rolled back\n"), "{}", out.stderr);
        assert_eq!(
            written(&server),
            ["PUT virtualservices/checkout", "DELETE ingresses/checkout-canary", "PUT virtualservices/checkout"],
            "the restore, the refused delete, the rollback; the HTTPRoute is never written"
        );
        assert_eq!(
            (&vs(&server)["spec"], &vs(&server)["metadata"]["annotations"]),
            (&routed_vs["spec"], &routed_vs["metadata"]["annotations"])
        );
        assert!(canary_ingress(&server).is_some());
        assert_eq!(route(&server), routed_route);
    }

    #[test]
    fn a_restore_stopped_at_the_route_makes_the_canary_ingress_again_even_when_that_reply_is_lost() {
        // The HTTPRoute's restore, after the canary's delete, is refused: the rollback makes the
        // canary again as it was, and puts the VirtualService back. The create's reply lost or
        // garbled is resolved by reading the canary again.
        for fault in [None, Some(ReplyFault::Lost), Some(ReplyFault::Garbled)] {
            let server = serving().start();
            approve(&server).success();
            let (routed_vs, routed_route, made) = (vs(&server), route(&server), canary_ingress(&server).unwrap());
            server.clear_log();
            server.storm(Requests::Matching(Rule::new(["update"]).resources(["httproutes"])), Some(1), 403, None);
            if let Some(fault) = fault {
                let the_create = Requests::Matching(Rule::new(["create"]).resources(["ingresses"]));
                server.reply_fault(the_create, 1, Stage::AfterStore, fault);
            }
            let out = on(&server).args(["restore", "checkout", "--yes"]).run().status(1);
            let context = format!("{fault:?}\n{}", out.stderr);
            assert!(out.stderr.contains("  Ingress demo/checkout-canary: rolled back\n"), "{context}");
            assert!(out.stderr.contains("  VirtualService demo/checkout: rolled back\n"), "{context}");
            assert!(!out.stderr.contains("someone"), "{context}");
            assert_eq!(
                written(&server),
                [
                    "PUT virtualservices/checkout",
                    "DELETE ingresses/checkout-canary",
                    "PUT httproutes/checkout",
                    "POST ingresses",
                    "PUT virtualservices/checkout"
                ],
                "{fault:?}"
            );
            let again = canary_ingress(&server).expect("made again");
            assert_eq!(
                (&again["metadata"]["annotations"], &again["metadata"]["labels"], &again["spec"]),
                (&made["metadata"]["annotations"], &made["metadata"]["labels"], &made["spec"]),
                "{fault:?}"
            );
            assert_eq!(
                (&vs(&server)["spec"], &vs(&server)["metadata"]["annotations"]),
                (&routed_vs["spec"], &routed_vs["metadata"]["annotations"])
            );
            assert_eq!(route(&server), routed_route);
        }
    }

    #[test]
    fn a_canary_ingress_its_finalizers_hold_is_said_to_be_being_deleted_and_never_made_again() {
        // An ingress controller's finalizer on the canary (AWS's load balancer controller, GKE's
        // put one on each Ingress they serve): a delete only marks it, until they remove it.
        let server = serving().start();
        approve(&server).success();
        let mut held = canary_ingress(&server).unwrap();
        held["metadata"]["finalizers"] = json!(["ingress.k8s.aws/resources"]);
        server.put_object(held);
        let routed_vs = vs(&server);
        // The HTTPRoute's restore, after the delete, is refused: the rollback cannot make the
        // canary again while it is being deleted, and says so.
        server.storm(Requests::Matching(Rule::new(["update"]).resources(["httproutes"])), Some(1), 403, None);
        let out = on(&server)
            .args(["restore", "checkout", "--yes"])
            .run()
            .status(1)
            .stderr_has("  Ingress demo/checkout-canary: could NOT roll back: it is being deleted, held by its finalizers (ingress.k8s.aws/resources); once it is gone, `kubectl rollout-lua restore --from-backup` of its state before this run makes it again (its state before this run: ")
            .stderr_has("  VirtualService demo/checkout: rolled back");
        // Its line says the way back, once it is gone: no hint that reads as "now".
        assert!(!out.stderr.contains("puts an object not rolled back"), "{}", out.stderr);
        assert!(canary_ingress(&server).unwrap()["metadata"]["deletionTimestamp"].is_string());
        assert_eq!(vs(&server)["spec"], routed_vs["spec"]);

        // Run again, the restore leaves the canary being deleted, and finishes the rest.
        server.clear_log();
        on(&server)
            .args(["restore", "checkout", "--yes"])
            .run()
            .success()
            .stdout_has("VirtualService demo/checkout restored")
            .stdout_has("HTTPRoute demo/checkout");
        assert!(!written(&server).iter().any(|w| w.contains("ingresses")), "{:?}", written(&server));
        assert!(canary_ingress(&server).unwrap()["metadata"]["deletionTimestamp"].is_string());
    }
}
