//! The local files it writes besides backups and recordings: `lua-obj --output-file`, whole or
//! not at all; the external diff's folders, for their owner only.

use crate::support::{BINARY, Test, repo};

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
    // Never over the case it reads (audit s33 test F11), however named.
    test.run_args(["lua-obj", "case.yaml", "--output-file", "./case.yaml"])
        .status(1)
        .stderr_has("error: --output-file ./case.yaml is the test case read: it would be replaced by the objs; write them elsewhere");
    assert_eq!(std::fs::read_to_string(test.path("case.yaml")).unwrap(), big);
}

#[test]
fn the_external_diffs_folders_and_files_are_for_their_owner_only() {
    // A regression (audit s25-code #1): they were 0755 and 0644 under the usual umask, and hold
    // whole objects for as long as the program (a graphical diff) stays open.
    let test = Test::new().file("mydiff", "ls -ld \"${1%/*}\" \"$1\" \"$2\" \"$1\"/* \"$2\"/* >> modes.txt; exit 1\n");
    let tmp = test.path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // umask 0: what the folders and files get is what the binary asks for, nothing taken off.
    let examples = repo("examples/istio-canary-ab");
    let out = test
        .command("sh", ["-c", "umask 0; exec \"$0\" \"$@\"", BINARY, "plan", "-f", examples.to_str().unwrap()])
        .env("KUBECTL_EXTERNAL_DIFF", "sh mydiff")
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let modes = std::fs::read_to_string(test.path("modes.txt")).unwrap();
    let lines: Vec<&str> = modes.lines().collect();
    assert!(lines.len() >= 5 && lines.len().is_multiple_of(5), "{modes}");
    assert!(modes.contains("/LIVE/networking.istio.io.v1beta1.VirtualService.demo.echoserver"), "{modes}");
    for line in lines {
        let mode = line.split_whitespace().next().unwrap();
        assert!(mode == "drwx------" || mode == "-rw-------", "{modes}");
    }
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "the folders are removed after");
}
