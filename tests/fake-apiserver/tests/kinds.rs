//! Leases, Ingresses and HTTPRoutes as a real cluster serves them, and the write semantics
//! a careful writer relies on: create conflicts, delete preconditions, no-op writes.

mod support;

use fake_apiserver::{FakeApiServer, FakeHandle, gateway_ingress_and_leases, kruise_and_istio};
use serde_json::json;
use support::{call, get, rv};

const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/demo/leases";
const INGRESSES: &str = "/apis/networking.k8s.io/v1/namespaces/demo/ingresses";
const ROUTES_V1: &str = "/apis/gateway.networking.k8s.io/v1/namespaces/demo/httproutes";
const ROUTES_V1BETA1: &str = "/apis/gateway.networking.k8s.io/v1beta1/namespaces/demo/httproutes";

fn server() -> FakeHandle {
    FakeApiServer::builder().resources(kruise_and_istio()).resources(gateway_ingress_and_leases()).start()
}

fn lease(name: &str) -> serde_json::Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": { "name": name, "namespace": "demo" },
        "spec": { "holderIdentity": "alice@laptop", "leaseDurationSeconds": 60,
                  "acquireTime": "2025-01-01T00:00:00.000000Z" },
    })
}

#[test]
fn discovery_lists_the_new_kinds() {
    let server = server();
    let groups = get(&server, "/apis").body;
    let gateway = groups["groups"].as_array().unwrap().iter().find(|g| g["name"] == "gateway.networking.k8s.io");
    let gateway = gateway.expect("the gateway group");
    assert_eq!(gateway["preferredVersion"]["version"], "v1");
    assert_eq!(gateway["versions"][1]["version"], "v1beta1");
    let networking = get(&server, "/apis/networking.k8s.io/v1").body;
    assert_eq!(networking["resources"][0]["name"], "ingresses");
    assert_eq!(networking["resources"][0]["shortNames"], json!(["ing"]));
    assert_eq!(networking["resources"][1]["name"], "ingresses/status");
    let coordination = get(&server, "/apis/coordination.k8s.io/v1").body;
    let names: Vec<&str> =
        coordination["resources"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["leases"]);
}

#[test]
fn a_lease_is_created_once_and_updated_with_its_resource_version() {
    let server = server();
    let created = call(&server, "POST", LEASES).json(&lease("rollout-demo")).send();
    assert_eq!(created.status, 201);
    assert!(created.body["metadata"].get("generation").is_none(), "built-in kinds without generation");
    assert_eq!(created.body["spec"]["holderIdentity"], "alice@laptop");

    // A second claimant loses the create.
    let mut bob = lease("rollout-demo");
    bob["spec"]["holderIdentity"] = "bob@ci".into();
    let taken = call(&server, "POST", LEASES).json(&bob).send();
    assert_eq!(taken.status, 409);
    assert_eq!(taken.body["reason"], "AlreadyExists");
    assert_eq!(taken.body["message"], "leases.coordination.k8s.io \"rollout-demo\" already exists");
    assert_eq!(
        taken.body["details"],
        json!({ "name": "rollout-demo", "group": "coordination.k8s.io", "kind": "leases" })
    );

    // Leases refuse updates without a resourceVersion, and stale ones conflict.
    let path = format!("{LEASES}/rollout-demo");
    let unconditional = call(&server, "PUT", &path).json(&bob).send();
    assert_eq!(unconditional.status, 422);
    let mut renewed = created.body.clone();
    renewed["spec"]["renewTime"] = "2025-01-01T00:00:30.000000Z".into();
    let ok = call(&server, "PUT", &path).json(&renewed).send();
    assert_eq!(ok.status, 200);
    assert_eq!(call(&server, "PUT", &path).json(&renewed).send().status, 409);
    // A merge patch works too (strategic merge as well: Lease is built in).
    let patched = call(&server, "PATCH", &path)
        .body("application/strategic-merge-patch+json", r#"{"spec":{"leaseTransitions":1}}"#)
        .send();
    assert_eq!((patched.status, patched.body["spec"]["leaseTransitions"].as_i64()), (200, Some(1)));
}

#[test]
fn delete_preconditions_conflict_on_mismatch_and_missing_objects_are_404() {
    let server = server();
    let created = call(&server, "POST", LEASES).json(&lease("l")).send().body;
    let path = format!("{LEASES}/l");
    let delete = |preconditions: serde_json::Value| {
        call(&server, "DELETE", &path)
            .json(&json!({ "kind": "DeleteOptions", "apiVersion": "v1", "preconditions": preconditions }))
            .send()
    };
    let stale = delete(json!({ "resourceVersion": "1" }));
    assert_eq!(stale.status, 409);
    assert_eq!(stale.body["reason"], "Conflict");
    assert_eq!(
        stale.body["message"],
        format!(
            "Operation cannot be fulfilled on leases.coordination.k8s.io \"l\": Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: {}",
            rv(&created)
        )
    );
    let other_uid = delete(json!({ "uid": "someone-else" }));
    assert_eq!(other_uid.status, 409);
    assert!(
        other_uid.body["message"].as_str().unwrap().contains("Precondition failed: UID in precondition: someone-else")
    );
    // A dry run checks the preconditions and deletes nothing.
    let dry = call(&server, "DELETE", &format!("{path}?dryRun=All"))
        .json(&json!({ "preconditions": { "uid": created["metadata"]["uid"], "resourceVersion": rv(&created) } }))
        .send();
    assert_eq!(dry.status, 200);
    assert_eq!(get(&server, &path).status, 200);

    let deleted = delete(json!({ "uid": created["metadata"]["uid"], "resourceVersion": rv(&created) }));
    assert_eq!(deleted.status, 200);
    assert_eq!(deleted.body["status"], "Success");
    let missing = delete(json!({ "uid": created["metadata"]["uid"] }));
    assert_eq!(missing.status, 404);
    assert_eq!(missing.body["message"], "leases.coordination.k8s.io \"l\" not found");
}

#[test]
fn an_ingress_gets_its_defaults_and_tracks_generation() {
    let server = server();
    let ingress = json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": { "name": "web", "namespace": "demo",
                      "annotations": { "kubernetes.io/ingress.class": "nginx" } },
        "spec": { "rules": [{ "host": "web.example.com", "http": { "paths": [{
            "path": "/", "pathType": "Prefix",
            "backend": { "service": { "name": "web", "port": { "number": 80 } } },
        }] } }] },
    });
    let created = call(&server, "POST", INGRESSES).json(&ingress).send();
    assert_eq!(created.status, 201);
    assert_eq!(created.body["status"], json!({ "loadBalancer": {} }));
    assert_eq!(created.body["metadata"]["generation"], 1);

    // The controller's canary Ingress: a merge patch of annotations keeps the generation.
    let canary = format!("{INGRESSES}/web");
    let annotated = call(&server, "PATCH", &canary)
        .body(
            "application/merge-patch+json",
            r#"{"metadata":{"annotations":{"nginx.ingress.kubernetes.io/canary-weight":"20"}}}"#,
        )
        .send();
    assert_eq!(annotated.status, 200);
    assert_eq!(annotated.body["metadata"]["generation"], 1);
    assert_eq!(annotated.body["metadata"]["annotations"]["kubernetes.io/ingress.class"], "nginx");
    // Built in: strategic merge patch and unconditional updates are served.
    let spec = call(&server, "PATCH", &canary)
        .body("application/strategic-merge-patch+json", r#"{"spec":{"ingressClassName":"nginx"}}"#)
        .send();
    assert_eq!(spec.body["metadata"]["generation"], 2);
    let mut unconditional = spec.body.clone();
    unconditional["metadata"].as_object_mut().unwrap().remove("resourceVersion");
    assert_eq!(call(&server, "PUT", &canary).json(&unconditional).send().status, 200);
    // Status writes keep the default shape.
    let status_path = format!("{canary}/status");
    let status = call(&server, "PUT", &status_path).json(&json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": { "name": "web", "namespace": "demo" }, "status": {},
    }));
    assert_eq!(status.send().body["status"], json!({ "loadBalancer": {} }));
}

#[test]
fn an_http_route_is_one_object_at_v1_and_v1beta1_with_the_crd_defaults() {
    let server = server();
    let route = json!({
        "apiVersion": "gateway.networking.k8s.io/v1beta1", "kind": "HTTPRoute",
        "metadata": { "name": "web", "namespace": "demo" },
        "spec": {
            "parentRefs": [{ "name": "gw" }],
            "rules": [
                { "matches": [{ "headers": [{ "name": "canary", "value": "yes" }] }],
                  "backendRefs": [{ "name": "web-canary", "port": 80 }] },
                { "backendRefs": [{ "name": "web", "port": 80, "weight": 90 }] },
            ],
        },
    });
    let created = call(&server, "POST", ROUTES_V1BETA1).json(&route).send();
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created.body["spec"],
        json!({
            "parentRefs": [{ "group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw" }],
            "rules": [
                { "matches": [{ "headers": [{ "name": "canary", "type": "Exact", "value": "yes" }],
                                "path": { "type": "PathPrefix", "value": "/" } }],
                  "backendRefs": [{ "group": "", "kind": "Service", "name": "web-canary", "port": 80, "weight": 1 }] },
                { "matches": [{ "path": { "type": "PathPrefix", "value": "/" } }],
                  "backendRefs": [{ "group": "", "kind": "Service", "name": "web", "port": 80, "weight": 90 }] },
            ],
        })
    );
    let at_v1 = get(&server, &format!("{ROUTES_V1}/web")).body;
    assert_eq!(at_v1["apiVersion"], "gateway.networking.k8s.io/v1");
    assert_eq!(at_v1["spec"], created.body["spec"]);
    assert_eq!(rv(&at_v1), rv(&created.body));

    // A replace at v1 is seen at v1beta1; a spec without rules gets the catch-all rule.
    let mut replaced = at_v1.clone();
    replaced["spec"] = json!({ "parentRefs": [{ "name": "gw" }] });
    let updated = call(&server, "PUT", &format!("{ROUTES_V1}/web")).json(&replaced).send();
    assert_eq!(updated.status, 200);
    assert_eq!(updated.body["metadata"]["generation"], 2);
    let at_v1beta1 = get(&server, &format!("{ROUTES_V1BETA1}/web")).body;
    assert_eq!(
        at_v1beta1["spec"]["rules"],
        json!([{ "matches": [{ "path": { "type": "PathPrefix", "value": "/" } }] }])
    );
    // Replaying the same object (through the other version) is a no-op: the resourceVersion
    // and the generation stay.
    let again = call(&server, "PUT", &format!("{ROUTES_V1}/web")).json(&at_v1beta1).send();
    assert_eq!((again.status, rv(&again.body)), (200, rv(&at_v1beta1)));
    assert_eq!(again.body["metadata"]["generation"], 2);
    let empty_patch =
        call(&server, "PATCH", &format!("{ROUTES_V1}/web")).body("application/merge-patch+json", "{}").send();
    assert_eq!(rv(&empty_patch.body), rv(&at_v1beta1));
    // Custom resource: no strategic merge patch.
    let refused =
        call(&server, "PATCH", &format!("{ROUTES_V1}/web")).body("application/strategic-merge-patch+json", "{}").send();
    assert_eq!(refused.status, 415);
}

#[test]
fn seeded_objects_get_their_defaults_too() {
    let server = FakeApiServer::builder()
        .resources(gateway_ingress_and_leases())
        .object(json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": { "name": "r", "namespace": "demo" }, "spec": { "parentRefs": [{ "name": "gw" }] },
        }))
        .start();
    let route = server.object("gateway.networking.k8s.io", "v1", "httproutes", "demo", "r").unwrap();
    assert_eq!(route["spec"]["parentRefs"][0]["kind"], "Gateway");
    assert_eq!(route["spec"]["rules"][0]["matches"][0]["path"]["value"], "/");
}
