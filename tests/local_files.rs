//! The local files it writes besides backups and recordings: `lua-obj --output-file`, whole or
//! not at all.

use crate::support::{Test, repo};

#[test]
fn a_lua_obj_file_that_cannot_be_written_whole_keeps_the_file_it_would_replace() {
    // A regression (audit s25-code #2): a plain write left a cut file and lost the old one.
    let case = repo("lua_configuration/networking.istio.io/VirtualService/testdata/rollout_with_three_steps.yaml");
    let case = std::fs::read_to_string(case).unwrap();
    // Past the 32 KiB that `run_on_a_full_disk` leaves: the annotation is in every step's obj.
    let original = "original:\n  apiVersion: networking.istio.io/v1alpha3\n  kind: VirtualService\n  metadata:\n";
    assert!(case.contains(original));
    let big = case.replace(original, &format!("{original}    annotations:\n      big: {}\n", "x".repeat(64 << 10)));
    let test = Test::new().file("case.yaml", &big).file("objs.lua", "an earlier file\n");
    test.run_on_a_full_disk(&["lua-obj", "case.yaml", "--output-file", "objs.lua"])
        .status(1)
        .stderr_has("error: writing objs.lua: File too large");
    let kept = std::fs::read_to_string(test.path("objs.lua")).unwrap();
    assert!(kept == "an earlier file\n", "objs.lua is not the earlier file: {} bytes", kept.len());
    let mut names: Vec<String> =
        std::fs::read_dir(test.path(".")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["case.yaml", "home", "objs.lua"], "no temporary file left");
    // With room, it is replaced.
    let printed = test.run_args(["lua-obj", "case.yaml"]).success().stdout;
    test.run_args(["lua-obj", "case.yaml", "--output-file", "objs.lua"]).success();
    assert_eq!(std::fs::read_to_string(test.path("objs.lua")).unwrap(), printed);
}
