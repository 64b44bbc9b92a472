//! Ingress scripts offline: `eval --ingress` and `test` on `trafficrouting_ingress/` folders.

use crate::support::{Test, repo};

const OBJ: &str = r#"{"annotations": {"a<": "x", "nginx.ingress.kubernetes.io/canary-by-header": "old"},
  "weight": "20", "canaryService": "web-canary",
  "matches": [{"headers": [{"type": "Exact", "name": "canary-by-cookie", "value": "beta"}]}]}"#;

#[test]
fn eval_ingress_prints_the_annotations_as_the_controller_decodes_them() {
    Test::new()
        .file("obj.json", OBJ)
        .arg("eval")
        .arg(repo("lua_configuration/trafficrouting_ingress/nginx.lua"))
        .args(["--ingress", "--obj"])
        .arg("obj.json")
        .run()
        .success()
        .stdout_is(concat!(
            r#"{"a\u003c":"x","nginx.ingress.kubernetes.io/canary":"true","#,
            r#""nginx.ingress.kubernetes.io/canary-by-cookie":"beta","nginx.ingress.kubernetes.io/canary-weight":"20"}"#,
            "\n"
        ));
    let test = Test::new().file("obj.json", OBJ).file("empty.lua", "return {}").file("number.lua", "return {a = 1}");
    test.run_args(["eval", "empty.lua", "--ingress", "--obj", "obj.json"]).success().stdout_is("null\n");
    test.run_args(["eval", "number.lua", "--ingress", "--obj", "obj.json"])
        .status(1)
        .stdout_is("")
        .stderr_has("script number.lua: json: cannot unmarshal number into Go value of type string");
}

#[test]
fn eval_ingress_reproduces_the_mse_script_failing_without_annotations() {
    Test::new()
        .file("obj.yaml", "weight: '0'\ncanaryService: web-canary\n")
        .arg("eval")
        .arg(repo("lua_configuration/trafficrouting_ingress/mse.lua"))
        .args(["--ingress", "--obj", "obj.yaml"])
        .run()
        .status(1)
        .stderr_has("mse.lua:8: attempt to index local 'annotations' (a nil value)");
}

#[test]
fn built_in_ingress_scripts_pass_their_test_cases() {
    Test::new()
        .arg("test")
        .run()
        .success()
        .stdout_has("ok   trafficrouting_ingress/nginx header_step_then_weight_then_finish.yaml (3 steps)")
        .stdout_has("ok   trafficrouting_ingress/aliyun-alb header_step_then_weight.yaml (2 steps)")
        .stdout_has("ok   trafficrouting_ingress/higress weight_steps_then_header.yaml (3 steps)")
        .stdout_has("ok   trafficrouting_ingress/mse query_and_header_keys_survive.yaml (2 steps)")
        .stdout_has("warning: step 1: matches[0]: the nginx Ingress script ignores header ignored");
}

#[test]
fn test_runs_ingress_cases_of_a_folder_and_reports_failures() {
    let case = std::fs::read_to_string(repo(
        "lua_configuration/trafficrouting_ingress/testdata/nginx/header_step_then_weight_then_finish.yaml",
    ))
    .unwrap();
    // A script that forgets the weight: the header step passes, the weight step differs.
    let script = std::fs::read_to_string(repo("lua_configuration/trafficrouting_ingress/nginx.lua"))
        .unwrap()
        .replace("annotations[\"nginx.ingress.kubernetes.io/canary-weight\"] = obj.weight", "");
    let test = Test::new()
        .file("lua/trafficrouting_ingress/nginx.lua", &script)
        .file("lua/trafficrouting_ingress/testdata/nginx/case.yaml", &case);
    test.run_args(["test", "lua"])
        .status(1)
        .stdout_has("FAIL trafficrouting_ingress/nginx case.yaml (3 steps)")
        .stdout_has("step 2: the result differs from expected (its entry 2)")
        .stdout_has("-  nginx.ingress.kubernetes.io/canary-weight: \"30\"\n")
        .stdout_has("0 passed, 1 failed\n");
    let json = test.run_args(["test", "lua/trafficrouting_ingress/nginx.lua", "-o", "json"]).status(1).json();
    let statuses: Vec<&str> =
        json["cases"][0]["steps"].as_array().unwrap().iter().map(|s| s["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["pass", "fail", "pass"]);
}
