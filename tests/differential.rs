//! Differential tests: this project's engine (`kubectl-rollout_lua eval`) against the controller's
//! (`tests/oracle/`, gopher-lua with the controller's conversion rules) on the same script and
//! obj. Both must print the same bytes, or both must fail; error texts are not compared.
//!
//! Known divergences, kept out of the corpus because they are documented rather than bugs:
//! - output that depends on `pairs()` order: gopher-lua walks tables a script builds in insertion
//!   order and input maps in Go's random map order, PUC Lua walks both in hash order;
//! - `string.format` of a table or function with a verb where Go prints gopher-lua's internal
//!   struct (`%d`, `%#v`; this engine fails), addresses (`%p`, "table: 0x…"), and integer verbs
//!   of NaN or numbers beyond int64 on a controller built for arm64 (this engine and the oracle
//!   convert as amd64 does);
//! - the last bit of `^` and the math functions against a controller on an x86-64 CPU without AVX
//!   and FMA or built for arm64: this engine computes as Go does on amd64 with FMA, so the math
//!   corpus runs only where the oracle's CPU is such a one;
//! - `goto`;
//! - a back-reference to a position capture made at the end of the subject (`"()%1"`): gopher-lua
//!   slices past the subject there, which Go allows or not depending on how it allocated the
//!   subject's bytes (this engine fails, as gopher-lua's `find` does);
//! - error message texts (Go's json wording differs), hence only success or failure is compared;
//! - `print` (gopher-lua writes to stdout, this engine to stderr), and `_printregs` (gopher-lua
//!   prints its registers; this engine prints that it has none);
//! - a `break` out of a block in a loop's body after a function captured its local (gopher-lua
//!   leaves it open), and a generic `for`'s body that starts with a jump (`if false then … end`,
//!   `if nil and x then`, `while nil do`, a `break`: gopher-lua's jump-to-jump pass goes astray):
//!   this engine warns of both;
//! - a nil loaded right after an instruction that loaded nil into registers A..B, into register
//!   A+B (`x = nil` then `local y` or `if v == nil`): gopher-lua merges the two, clearing the
//!   registers between them, or across a jump target (this engine warns of it);
//! - more values than targets after a clobbered local or reading a target (`x = a and 2 or x,
//!   3`; `a, b = 5, 6, b or f(b)`): not warned of;
//! - `local f = (function() … f … end)` (gopher-lua drops the parentheses and compiles a local
//!   function), a numeric `for`'s operand reading a local a later call changes, and
//!   `local a, b = x or nil` (gopher-lua merges b's nil into the `or`'s, so b keeps a stale value);
//! - an assignment of several values with a table field (`n, t.last = n + 1, item`): gopher-lua's
//!   compiler stores some from the wrong registers (this engine warns of it, `lua/mod.rs`);
//! - `next(t, k)` with a key not in `t`: gopher-lua goes on from where the key would be in its
//!   own order (its array part, then its keys' insertion order), this engine fails;
//! - an `xpcall` handler that raises an error (gopher-lua returns nothing and leaves its stack so
//!   that the script returns no table; this engine returns false and "error in error handling"),
//!   and `(1 and 5) * -0`, which this engine folds to a constant -0;
//! - the edges of gopher-lua's call and value limits (both engines keep them: 256 frames, 5120
//!   values): a stack overflow within `xpcall` (gopher-lua crashes running the handler past the
//!   limit), a push past the values after one `pcall` caught (gopher-lua holds a value more from
//!   then on), and a push within a value or two of the limit after a tail call (its compiler
//!   places such frames a slot otherwise);
//! - `dofile`, `loadfile`, `load`, `loadstring`, `require`, `module` and `newproxy`: the
//!   controller has them, this engine raises for each (it loads no code, reads no file and makes
//!   no userdata for a script);
//! - runaway library calls: gopher-lua's pattern matching and `string.rep` never look at the
//!   deadline (`string.rep("x", 2^31)` builds 2 GB first), so the oracle runs them for minutes
//!   where this engine stops at the time limit; they are tested here (`tests/sandbox.rs`), not
//!   against the oracle;
//! - a script past the memory limit (`--lua-memory`; the controller has none) fails here, and
//!   `pcall` cannot catch that (tested in `src/lua/mod.rs`), nor a request for more than it
//!   (`pcall(string.rep, "x", 2^53)`), which Go refuses at once with an error `pcall` catches;
//! - `math.random`'s numbers (C's `rand()` here, Go's `math/rand` there; a result built on them
//!   never settles in the controller);
//! - script text that is not UTF-8 (refused here; gopher-lua reads the bytes), and `json.decode`
//!   of text nested past 100 levels (raised here; Go decodes it), a result or an `eval --obj`
//!   nested past 100 levels likewise;
//! - an `eval --obj` file that Go's `json.Unmarshal` reads otherwise: lone surrogate escapes,
//!   duplicate keys and bytes that are not UTF-8 refused here, a byte-order mark accepted (the
//!   controller's obj comes from its own encoder, which writes none of these).
//!
//! The oracle builds against the gopher-lua the controller pins when `../shared` is next to the
//! checkout (CI), and otherwise against Debian's, a 2017 snapshot (tests/oracle/build.sh); each
//! test prints which one ran. The snapshot differs from the pin:
//! - its `LTable.Append` keeps nils, so the oracle drops nulls inside input lists itself there, as
//!   the controller's gopher-lua does (tests/oracle/append_2017.go);
//! - its `CheckString` rejects numbers where the controller's converts them, so the corpus never
//!   calls `json.decode` with a number;
//! - its table library appends after trailing nils and does not check `concat`'s values, so the
//!   table corpus (`tests/fixtures/lua/tables/`) is skipped against it, saying so.
//!
//! Inputs: the built-in scripts on their test cases; generated VirtualService and DestinationRule
//! objs from a fixed seed; the stress scripts `tests/fixtures/lua/*.lua` on every obj in
//! `tests/fixtures/lua/obj/`; gopher-lua's table semantics (`tables/`); the library functions
//! gopher-lua leaves to Go's fmt, strings and strconv (`go_functions/`); and scripts that never end
//! (`runaway/`), which both engines must stop. The `regression_*` tests run
//! `tests/fixtures/lua/regression/`: cases where the engine once disagreed with the controller,
//! one test per fixed bug.

use crate::support::{self, Test};
use rollout_lua::for_tests::TestCase;
use serde_json::{Map, Value, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use tempfile::TempDir;

const VIRTUAL_SERVICE: &str = "lua_configuration/networking.istio.io/VirtualService";
const DESTINATION_RULE: &str = "lua_configuration/networking.istio.io/DestinationRule";
const STRESS: &str = "tests/fixtures/lua";

#[test]
fn builtin_scripts_agree_on_their_test_cases() {
    let mut corpus = Corpus::new("builtin scripts on their test cases");
    for kind in [VIRTUAL_SERVICE, DESTINATION_RULE] {
        let script = support::repo(&format!("{kind}/trafficRouting.lua"));
        for path in files(&support::repo(&format!("{kind}/testdata")), "yaml") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            let case = TestCase::parse(&name, &text).unwrap_or_else(|e| panic!("{e}"));
            for (step, obj) in case.steps.iter().enumerate() {
                corpus.add_obj(&format!("{name} step {step}"), &script, obj, Expect::Success);
            }
        }
    }
    corpus.check();
}

#[test]
fn virtual_service_script_agrees_on_generated_inputs() {
    agrees_on_generated_inputs("VirtualService", VIRTUAL_SERVICE, 0x5eed_0000_0000_0001, 600, virtual_service);
}

#[test]
fn destination_rule_script_agrees_on_generated_inputs() {
    agrees_on_generated_inputs("DestinationRule", DESTINATION_RULE, 0x5eed_0000_0000_0002, 120, destination_rule);
}

/// `count` random steps over random objects of a kind, through its built-in script in `dir`.
fn agrees_on_generated_inputs(
    kind: &str,
    dir: &str,
    seed: u64,
    count: usize,
    object: fn(&mut SplitMix64, &str) -> Value,
) {
    let script = support::repo(&format!("{dir}/trafficRouting.lua"));
    let mut rng = SplitMix64(seed);
    let mut corpus = Corpus::new(format!("{kind} script on generated inputs"));
    for i in 0..count {
        let obj = step_obj(&mut rng, object);
        corpus.add_obj(&format!("generated {kind} #{i}"), &script, &obj, Expect::Success);
    }
    corpus.check();
}

/// Every stress script on every stress obj; scripts named `error_*` must fail in the controller.
#[test]
fn stress_scripts_agree_on_conversion_and_number_formatting() {
    let mut corpus = Corpus::new("stress scripts");
    let objs = files(&support::repo(&format!("{STRESS}/obj")), "json");
    for script in files(&support::repo(STRESS), "lua") {
        let expect = if script.file_name().unwrap().to_string_lossy().starts_with("error_") {
            Expect::Failure
        } else {
            Expect::Success
        };
        for obj in &objs {
            corpus.add(&format!("{} on {}", file_name(&script), file_name(obj)), &script, obj, expect);
        }
    }
    corpus.check();
}

/// gopher-lua's array part (lengths, the table library, sorting) and the encoder's sparse-array
/// errors it leads to; scripts named `error_*` must fail in the controller.
#[test]
fn table_semantics_agree() {
    if !pinned_or_skip("the table corpus") {
        return;
    }
    let mut corpus = Corpus::new("gopher-lua tables");
    let obj = support::repo(&format!("{STRESS}/obj/minimal.json"));
    for script in files(&support::repo(&format!("{STRESS}/tables")), "lua") {
        let expect = if file_name(&script).starts_with("error_") { Expect::Failure } else { Expect::Success };
        corpus.add(&file_name(&script), &script, &obj, expect);
    }
    corpus.check();
}

/// Scripts that never end, however they catch the timeout: both engines stop them.
#[test]
fn runaway_scripts_fail_in_both_engines() {
    let mut corpus = Corpus::new("runaway scripts");
    let obj = support::repo(&format!("{STRESS}/obj/minimal.json"));
    for script in files(&support::repo(&format!("{STRESS}/runaway")), "lua") {
        corpus.add(&file_name(&script), &script, &obj, Expect::Failure);
    }
    corpus.check();
}

#[test]
fn regression_negative_zero() {
    regression_cases(&[("identity.lua", "regression/negative_zero.json", Expect::Success)]);
}

#[test]
fn regression_large_integral_doubles() {
    regression_cases(&[
        ("regression/large_integral_doubles.lua", "regression/large_integral_doubles.json", Expect::Success),
        ("identity.lua", "regression/large_integral_doubles.json", Expect::Success),
    ]);
}

#[test]
fn regression_doubles_read_correctly_rounded() {
    regression_cases(&[
        (
            "regression/doubles_read_correctly_rounded.lua",
            "regression/doubles_read_correctly_rounded.json",
            Expect::Success,
        ),
        ("identity.lua", "regression/doubles_read_correctly_rounded.json", Expect::Success),
    ]);
}

#[test]
fn regression_math_random_takes_its_first_two_arguments() {
    regression_cases(&[("regression/math_random_arguments.lua", "obj/minimal.json", Expect::Success)]);
}

#[test]
fn regression_json_module_calling_convention() {
    regression_cases(&[
        ("regression/json_decode_as_last_value.lua", "obj/minimal.json", Expect::Success),
        ("regression/json_value_counts.lua", "obj/minimal.json", Expect::Success),
        ("regression/json_encode_without_argument.lua", "obj/minimal.json", Expect::Failure),
        ("regression/library_errors_are_strings.lua", "obj/minimal.json", Expect::Success),
    ]);
}

#[test]
fn regression_library_error_texts() {
    regression_cases(&[
        ("regression/assert_without_an_argument.lua", "obj/minimal.json", Expect::Success),
        ("regression/table_concat_error_text.lua", "obj/minimal.json", Expect::Success),
    ]);
}

#[test]
fn regression_constructor_batch_before_a_call() {
    regression_cases(&[("regression/constructor_batch_before_a_call.lua", "obj/minimal.json", Expect::Success)]);
}

#[test]
fn regression_del_character() {
    regression_cases(&[
        ("identity.lua", "regression/del_character.json", Expect::Success),
        ("regression/del_character.lua", "regression/del_character.json", Expect::Success),
    ]);
}

#[test]
fn regression_returned_key_matching() {
    regression_cases(&[
        ("regression/case_variant_labels_merge.lua", "obj/minimal.json", Expect::Success),
        ("regression/case_variant_with_bad_labels.lua", "obj/minimal.json", Expect::Failure),
        ("regression/unicode_folded_keys.lua", "obj/minimal.json", Expect::Success),
    ]);
}

#[test]
fn regression_invalid_utf8() {
    regression_cases(&[
        ("regression/truncated_utf8.lua", "obj/minimal.json", Expect::Success),
        ("regression/json_invalid_unicode.lua", "obj/minimal.json", Expect::Success),
        ("regression/keys_made_equal_by_utf8_replacement.lua", "obj/minimal.json", Expect::Success),
    ]);
}

#[test]
fn regression_string_format_is_gos_sprintf() {
    if pinned_or_skip("string.format's corpus") {
        regression_cases(&[("regression/string_format_operands.lua", "obj/minimal.json", Expect::Success)]);
    }
}

/// gopher-lua's CheckNumber, CheckInt, OptInt and OptString take no numeric string and no number
/// for an optional string, its `select` takes "#" alone, `xpcall` two functions, `error` a value,
/// `collectgarbage` and `rawset` return nothing, and `%` and `math.mod` are its `luaModulo`.
#[test]
fn regression_argument_types() {
    if pinned_or_skip("the argument corpus") {
        regression_cases(&[("regression/argument_types.lua", "obj/minimal.json", Expect::Success)]);
    }
}

/// gopher-lua's pattern matching (pm.go) and string functions: patterns parsed its way, `match`
/// without a match returning no value, gsub's replacements and counts, `byte`, `sub`.
#[test]
fn regression_string_library_is_gopher_luas() {
    // The 2017 snapshot's string library differs from the pinned one's in places.
    if pinned_or_skip("the string library corpus") {
        regression_cases(&[
            ("regression/patterns.lua", "obj/minimal.json", Expect::Success),
            ("regression/match_without_a_match.lua", "obj/minimal.json", Expect::Failure),
            ("regression/string_positions.lua", "obj/minimal.json", Expect::Success),
        ]);
    }
}

#[test]
fn regression_concat_on_gopher_luas_value_stack() {
    regression_cases(&[
        ("regression/concat_past_the_value_stack.lua", "obj/minimal.json", Expect::Failure),
        ("regression/concat_within_the_value_stack.lua", "obj/minimal.json", Expect::Success),
    ]);
}

/// gopher-lua's `^` and math functions are Go's math package, as it computes on amd64 (see
/// `build/lua-5.1.5/lgomath.c`): the oracle agrees only on such a CPU with AVX and FMA.
#[test]
fn regression_math_is_gos() {
    if amd64_with_fma_or_skip("the math corpus") && pinned_or_skip("the math corpus") {
        regression_cases(&[("regression/go_math.lua", "obj/minimal.json", Expect::Success)]);
    }
}

/// gopher-lua's chunk name and `error` positions, seen in what `pcall` catches.
#[test]
fn regression_error_positions() {
    regression_cases(&[("regression/error_positions.lua", "obj/minimal.json", Expect::Success)]);
}

/// Every rune below U+1F000 (no cased letter lies above), 4096 to an evaluation: both engines
/// stop a script at 1 s, and the machine may be busy.
#[test]
fn regression_unicode_case_mapping() {
    if !pinned_or_skip("the case-mapping corpus") {
        return;
    }
    let mut corpus = Corpus::new("regressions");
    let script = support::repo(&format!("{STRESS}/regression/unicode_case_mapping.lua"));
    for from in (0..0x1F000).step_by(0x1000) {
        let obj = json!({"data": {"from": from, "to": from + 0xFFF}, "canaryWeight": 0, "stableWeight": 100});
        corpus.add_obj(&format!("unicode_case_mapping.lua from {from:#x}"), &script, &obj, Expect::Success);
    }
    corpus.check();
}

#[test]
fn regression_tonumber_as_go_parses() {
    if pinned_or_skip("tonumber's corpus") {
        regression_cases(&[("regression/tonumber_as_go_parses.lua", "obj/minimal.json", Expect::Success)]);
    }
}

/// gopher-lua reads numbers as Go does: a string in arithmetic and a numeral in the source
/// through its parseNumber (Go's syntax, "017" octal; NaN for a numeral it cannot read), a
/// numeric `for` of numbers only, decimal escapes to their low byte.
#[test]
fn regression_numbers_as_gopher_lua_reads_them() {
    if pinned_or_skip("the number corpus") {
        regression_cases(&[("regression/numbers_as_gopher_lua_reads_them.lua", "obj/minimal.json", Expect::Success)]);
    }
}

/// gopher-lua's `unpack` range in 64 bits (a range past an int once crashed this engine),
/// `table.remove` positions in Go's wrapping int, `table.concat` returning a lone value as it is;
/// Go's shortest float text on ties and float verbs past Rust's largest precision (once an
/// abort).
#[test]
fn regression_library_ranges_and_float_text() {
    if pinned_or_skip("the range and float-text corpus") {
        regression_cases(&[
            ("regression/library_ranges_as_gopher_luas.lua", "obj/minimal.json", Expect::Success),
            ("regression/float_text_ties_and_precisions.lua", "obj/minimal.json", Expect::Success),
        ]);
    }
}

/// What gopher-lua's parser takes that Lua 5.1's refuses or reads otherwise (empty statements,
/// repeated table separators, `(` on a new line, `[[` in a long string, `local f = function`
/// seeing f, more than 60 upvalues) and what it refuses (a form feed, a `--[=` not opening a
/// comment, more than 200 registers in a function); arithmetic on numbers never giving -0,
/// division by 0 folded at compile time; a caught error closing every open upvalue;
/// `x = a and b or x` storing a false `a` in x first; pcall of more results than its frame.
#[test]
fn regression_syntax_and_negative_zero_as_gopher_luas() {
    if pinned_or_skip("the syntax corpus") {
        regression_cases(&[
            ("regression/syntax_as_gopher_lua_reads_it.lua", "obj/minimal.json", Expect::Success),
            ("regression/form_feed_is_no_space.lua", "obj/minimal.json", Expect::Failure),
            ("regression/long_comment_without_its_bracket.lua", "obj/minimal.json", Expect::Failure),
            ("regression/negative_zero_from_arithmetic.lua", "obj/minimal.json", Expect::Success),
            ("regression/caught_errors_close_upvalues.lua", "obj/minimal.json", Expect::Success),
            ("regression/and_or_into_a_local.lua", "obj/minimal.json", Expect::Success),
            ("regression/locals_past_gopher_luas_200_registers.lua", "obj/minimal.json", Expect::Failure),
            ("regression/arguments_past_gopher_luas_200_registers.lua", "obj/minimal.json", Expect::Failure),
            ("regression/pcall_of_many_results.lua", "obj/minimal.json", Expect::Success),
        ]);
    }
}

/// gopher-lua's limits on calls: 256 frames (a tail call takes none; what a library function
/// calls is part of its frame) and a registry of 5120 values for every frame's and push's
/// (one push failure per script: gopher-lua grows it by a value on some).
#[test]
fn regression_call_frames_and_registry() {
    if pinned_or_skip("the call-limit corpus") {
        regression_cases(&[
            ("regression/call_frames_as_gopher_luas.lua", "obj/minimal.json", Expect::Success),
            ("regression/registry_frames_as_gopher_luas.lua", "obj/minimal.json", Expect::Success),
            ("regression/registry_unpack_as_gopher_luas.lua", "obj/minimal.json", Expect::Success),
            ("regression/registry_string_byte_as_gopher_luas.lua", "obj/minimal.json", Expect::Success),
            ("regression/registry_table_concat_as_gopher_luas.lua", "obj/minimal.json", Expect::Success),
            ("regression/registry_vararg_call_as_gopher_luas.lua", "obj/minimal.json", Expect::Success),
        ]);
    }
}

/// Where gopher-lua places errors (a library function's at the script's line, a level past a lost
/// tail call at the chunk's), a library function tail-called keeping the script's frame, and
/// unpack reading the array part only.
#[test]
fn regression_positions_levels_and_unpack() {
    if pinned_or_skip("the error-position corpus") {
        regression_cases(&[(
            "regression/positions_levels_and_unpack_as_gopher_luas.lua",
            "obj/minimal.json",
            Expect::Success,
        )]);
    }
}

/// gopher-lua's metamethods: only functions are called, __unm with one operand, before a
/// string is read as a number; a nil key reaches __newindex; setmetatable of any value.
#[test]
fn regression_metamethods() {
    if pinned_or_skip("the metamethod corpus") {
        regression_cases(&[("regression/metamethods_as_gopher_luas.lua", "obj/minimal.json", Expect::Success)]);
    }
}

/// gopher-lua's library functions are Go functions, whose environment `setfenv` cannot change
/// (this engine writes some in Lua); its base library's two globals of its own.
#[test]
fn regression_library_functions_keep_their_environment() {
    if pinned_or_skip("the base library corpus") {
        regression_cases(&[(
            "regression/library_functions_keep_their_environment.lua",
            "obj/minimal.json",
            Expect::Success,
        )]);
    }
}

/// gopher-lua's string.format, string.upper, string.lower and tonumber, which Go's fmt, strings
/// and strconv do: generated formats on every kind of operand, and the argument errors.
#[test]
fn go_library_functions_agree() {
    if !pinned_or_skip("the Go library corpus") {
        return;
    }
    let mut corpus = Corpus::new("Go library functions");
    let obj = support::repo(&format!("{STRESS}/obj/minimal.json"));
    for script in files(&support::repo(&format!("{STRESS}/go_functions")), "lua") {
        corpus.add(&file_name(&script), &script, &obj, Expect::Success);
    }
    corpus.check();
}

/// Whether the oracle runs the gopher-lua the controller pins; if not, says that `what` is
/// skipped (the 2017 snapshot rejects numbers where strings are expected, and its table library
/// differs).
pub(crate) fn pinned_or_skip(what: &str) -> bool {
    if !oracle().pinned {
        support::skip(&format!("{what} needs the gopher-lua the controller pins, not {}", oracle().engine));
    }
    oracle().pinned
}

/// Whether the oracle runs where Go's math is what this engine reproduces: an x86-64 CPU with
/// AVX and FMA (Go's `math.Exp` takes another path on other x86-64 CPUs, and other code on other
/// architectures); if not, says that `what` is skipped.
fn amd64_with_fma_or_skip(what: &str) -> bool {
    #[cfg(target_arch = "x86_64")]
    let reproduced = std::arch::is_x86_feature_detected!("avx") && std::arch::is_x86_feature_detected!("fma");
    #[cfg(not(target_arch = "x86_64"))]
    let reproduced = false;
    if !reproduced {
        support::skip(&format!("{what} needs an x86-64 CPU with AVX and FMA, where Go computes as this engine does"));
    }
    reproduced
}

/// Compares (script, obj, what the controller does) cases named relative to tests/fixtures/lua.
fn regression_cases(cases: &[(&str, &str, Expect)]) {
    let mut corpus = Corpus::new("regressions");
    let dir = support::repo(STRESS);
    for (script, obj, expect) in cases {
        corpus.add(&format!("{script} on {obj}"), &dir.join(script), &dir.join(obj), *expect);
    }
    corpus.check();
}

// ---------------------------------------------------------------------------------------------
// Comparison

/// What the controller must do with a case; guards against a corpus that "agrees" only because
/// both engines reject a malformed input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Success,
    Failure,
}

struct Case {
    name: String,
    script: PathBuf,
    obj: PathBuf,
    expect: Expect,
}

/// The cases of one test, with a directory for the objs it generates.
struct Corpus {
    title: String,
    dir: TempDir,
    cases: Vec<Case>,
}

struct Run {
    success: bool,
    stdout: String,
    stderr: String,
}

impl Corpus {
    fn new(title: impl Into<String>) -> Corpus {
        Corpus { title: title.into(), dir: tempfile::tempdir().expect("temp dir"), cases: Vec::new() }
    }

    fn add(&mut self, name: &str, script: &Path, obj: &Path, expect: Expect) {
        self.cases.push(Case { name: name.into(), script: script.into(), obj: obj.into(), expect });
    }

    /// Writes `obj` to a file of its own and adds the case.
    fn add_obj(&mut self, name: &str, script: &Path, obj: &Value, expect: Expect) {
        let path = self.dir.path().join(format!("obj-{:04}.json", self.cases.len()));
        std::fs::write(&path, serde_json::to_string_pretty(obj).unwrap()).unwrap();
        self.add(name, script, &path, expect);
    }

    /// Runs every case on both engines (in parallel) and fails once, listing every problem.
    fn check(self) {
        assert!(!self.cases.is_empty(), "{}: no cases (fixtures missing?)", self.title);
        let reference = oracle();
        let started = Instant::now();
        let next = AtomicUsize::new(0);
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let mut problems: Vec<(usize, String)> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut found = Vec::new();
                        loop {
                            let index = next.fetch_add(1, Ordering::Relaxed);
                            let Some(case) = self.cases.get(index) else { break found };
                            if let Some(problem) = compare(case, &reference.path) {
                                found.push((index, problem));
                            }
                        }
                    })
                })
                .collect();
            workers.into_iter().flat_map(|worker| worker.join().unwrap()).collect()
        });
        let elapsed = started.elapsed();
        let failures = self.cases.iter().filter(|c| c.expect == Expect::Failure).count();
        println!(
            "differential, {}: {} comparisons ({failures} expected to fail) on {threads} threads in {:.2?}, against {}",
            self.title,
            self.cases.len(),
            elapsed,
            reference.engine
        );
        if problems.is_empty() {
            return;
        }
        problems.sort_by_key(|(index, _)| *index);
        let mut report = format!("{} of {} comparisons failed ({})\n", problems.len(), self.cases.len(), self.title);
        if self.cases.iter().any(|c| c.obj.starts_with(self.dir.path())) {
            let _ = writeln!(report, "generated objs are kept in {}", self.dir.keep().display());
        }
        for (_, problem) in &problems {
            report.push_str(problem);
        }
        panic!("{report}");
    }
}

/// Runs one case on both engines; `None` when they agree and the controller did what the case
/// expects.
fn compare(case: &Case, oracle: &Path) -> Option<String> {
    let output = Test::new().arg("eval").arg(&case.script).arg("--obj").arg(&case.obj).run();
    let engine = Run { success: output.status == 0, stdout: output.stdout, stderr: output.stderr };
    let run_oracle = || {
        Command::new(oracle)
            .arg(&case.script)
            .arg(&case.obj)
            .env_clear()
            .output()
            .unwrap_or_else(|e| panic!("running the oracle {}: {e}", oracle.display()))
    };
    // The oracle keeps the controller's 1 s limit, which a busy machine can make a script that
    // takes a fraction of it overrun: where the engine succeeded, a time-out of the oracle's is
    // run again (twice at most) before it counts; one that always times out still does.
    let timed_out = |out: &std::process::Output| {
        !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("context deadline exceeded")
    };
    let mut reference = run_oracle();
    for _ in 0..2 {
        if !(output.status == 0 && timed_out(&reference)) {
            break;
        }
        reference = run_oracle();
    }
    // The engine's stdout is a Rust string, hence UTF-8; compare the oracle's bytes as they are.
    let identical = engine.stdout.as_bytes() == reference.stdout.as_slice();
    let controller = Run {
        success: reference.status.success(),
        stdout: String::from_utf8_lossy(&reference.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&reference.stderr).into_owned(),
    };
    let verdict = match (engine.success, controller.success) {
        (true, true) if identical => None,
        (true, true) => Some(format!("outputs differ{}", first_difference(&engine.stdout, &controller.stdout))),
        (false, false) => None,
        (true, false) => Some("the engine succeeded where the controller fails".to_string()),
        (false, true) => Some("the engine failed where the controller succeeds".to_string()),
    };
    let verdict = verdict.or_else(|| match (case.expect, controller.success) {
        (Expect::Success, false) => Some("both fail, but the case expects success (corpus error)".into()),
        (Expect::Failure, true) => Some("both succeed, but the case expects failure (corpus error)".into()),
        _ => None,
    })?;
    let mut out =
        format!("\n--- {}: {verdict}\nscript: {}\nobj:    {}\n", case.name, case.script.display(), case.obj.display());
    for (who, run) in [("engine", &engine), ("controller", &controller)] {
        let status = if run.success { "ok" } else { "failed" };
        let _ = writeln!(out, "{who} ({status}): {}{}", run.stdout.trim_end(), run.stderr.trim_end());
    }
    Some(out)
}

/// Where two outputs part, with some context, since they are long single lines.
fn first_difference(a: &str, b: &str) -> String {
    let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let context = |s: &str| {
        let mut start = at.saturating_sub(40);
        while !s.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (at + 40).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        format!("{:?}", &s[start..end])
    };
    format!(" at byte {at}:\n  engine:     …{}…\n  controller: …{}…", context(a), context(b))
}

/// The files with `extension` directly in `dir`, sorted.
fn files(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == extension))
        .collect();
    found.sort();
    found
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

// ---------------------------------------------------------------------------------------------
// The oracle

/// The reference engine: the oracle binary and the gopher-lua it was built with.
pub(crate) struct Oracle {
    pub(crate) path: PathBuf,
    /// What build.sh says it built against.
    engine: String,
    /// Whether that is the gopher-lua the controller pins (rather than Debian's older one).
    pinned: bool,
}

/// The oracle, built once per test process; a build failure fails every differential test, since
/// CI must prove fidelity rather than skip it.
pub(crate) fn oracle() -> &'static Oracle {
    static ORACLE: OnceLock<Result<Oracle, String>> = OnceLock::new();
    match ORACLE.get_or_init(build_oracle) {
        Ok(oracle) => oracle,
        Err(message) => panic!("{message}"),
    }
}

/// Builds the vendored oracle into `<target>/oracle/oracle`.
fn build_oracle() -> Result<Oracle, String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| manifest.join("target"), |d| manifest.join(d));
    let dir = target.join("oracle");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    // Build under a name of our own and rename, so test runs in parallel never run half a binary.
    let partial = dir.join(format!("oracle.{}", std::process::id()));
    let script = support::repo("tests/oracle/build.sh");
    let output = Command::new("sh")
        .arg(&script)
        .arg(&partial)
        .output()
        .map_err(|e| format!("running {}: {e}", script.display()))?;
    if !output.status.success() {
        return Err(format!(
            "building the differential oracle with {} failed ({}); it needs Go, and gopher-lua in \
             ../shared/tools/oracle/third_party or Debian's golang-github-yuin-gopher-lua-dev\n{}{}",
            script.display(),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let binary = dir.join("oracle");
    std::fs::rename(&partial, &binary).map_err(|e| format!("moving the oracle to {}: {e}", binary.display()))?;
    let engine = String::from_utf8_lossy(&output.stdout).trim().to_string();
    // build.sh's wording for the pinned version.
    let pinned = engine.starts_with("the gopher-lua the controller pins");
    Ok(Oracle { path: binary, engine, pinned })
}

// ---------------------------------------------------------------------------------------------
// Generated inputs

/// splitmix64: a tiny seeded PRNG, so the generated corpus is the same on every run.
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `low..=high` (the modulo bias does not matter here).
    pub(crate) fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low + 1)
    }

    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.next() as usize % items.len()]
    }
}

const SERVICES: &[&str] = &["svc-demo", "reviews", "web-frontend"];
const LABEL_KEYS: &[&str] =
    &["app.kubernetes.io/name", "app.kubernetes.io/version", "istio.io/rev", "team", "example.com/a.b"];
const ANNOTATION_KEYS: &[&str] =
    &["kubectl.kubernetes.io/last-applied-configuration", "example.com/owner", "rollouts.kruise.io/note", "x.y.z/w"];
const TEXTS: &[&str] = &["demo", "v1.2.3", "a<b>&c", "日本語", "", "true", "50", "{\"json\":[1,2]}", "line\nbreak"];
const HEADER_NAMES: &[&str] = &["x-canary", "user-agent", "cookie", "x-user-id"];
const MATCH_TYPES: &[Option<&str>] = &[Some("Exact"), Some("RegularExpression"), Some("PathPrefix"), None];

/// The obj of one step, in the controller's shape, around the gateway object `original` builds
/// for the stable service.
fn step_obj(rng: &mut SplitMix64, original: impl Fn(&mut SplitMix64, &str) -> Value) -> Value {
    let stable = *rng.pick(SERVICES);
    let mut data = Map::new();
    data.insert("spec".into(), original(rng, stable));
    for (field, keys) in [("labels", LABEL_KEYS), ("annotations", ANNOTATION_KEYS)] {
        if rng.chance(60) {
            let map: Map<String, Value> =
                (0..rng.between(1, 3)).map(|_| (rng.pick(keys).to_string(), json!(rng.pick(TEXTS)))).collect();
            data.insert(field.into(), Value::Object(map));
        }
    }
    // -1 is a step without traffic (stable 101); otherwise the weights add up to 100.
    let canary_weight = match rng.between(0, 9) {
        0 => -1,
        1 => 0,
        _ => rng.between(1, 100) as i64,
    };
    let canary_service = if rng.chance(25) { stable.to_string() } else { format!("{stable}-canary") };
    let mut obj = json!({
        "data": data,
        "canaryWeight": canary_weight,
        "stableWeight": 100 - canary_weight,
        "canaryService": canary_service,
        "stableService": stable,
    });
    match rng.between(0, 3) {
        0 => obj["matches"] = json!([]),
        1 => obj["matches"] = Value::Array((0..rng.between(1, 3)).map(|_| route_match(rng)).collect()),
        _ => {}
    }
    if rng.chance(30) {
        obj["requestHeaderModifier"] = header_modifier(rng);
    }
    obj
}

/// A step's match: headers, query parameters and a path, each present or not.
fn route_match(rng: &mut SplitMix64) -> Value {
    let mut entry = Map::new();
    for field in ["headers", "queryParams"] {
        if rng.chance(50) {
            let list = (0..rng.between(1, 2))
                .map(|_| {
                    let entry = json!({"name": rng.pick(HEADER_NAMES), "value": rng.pick(TEXTS)});
                    typed(rng, entry)
                })
                .collect();
            entry.insert(field.into(), Value::Array(list));
        }
    }
    if rng.chance(40) {
        let mut path = json!({"value": rng.pick(&["/", "/api", "/v[0-9]+/.*"])});
        if rng.chance(15) {
            path = json!({});
        }
        entry.insert("path".into(), typed(rng, path));
    }
    Value::Object(entry)
}

/// Adds a random match `type`, or none.
fn typed(rng: &mut SplitMix64, mut value: Value) -> Value {
    if let Some(kind) = rng.pick(MATCH_TYPES) {
        value["type"] = json!(kind);
    }
    value
}

fn header_modifier(rng: &mut SplitMix64) -> Value {
    let mut modifier = Map::new();
    for action in ["set", "add"] {
        if rng.chance(60) {
            let headers = (0..rng.between(1, 2))
                .map(|_| json!({"name": rng.pick(HEADER_NAMES), "value": rng.pick(TEXTS)}))
                .collect();
            modifier.insert(action.into(), Value::Array(headers));
        }
    }
    if rng.chance(50) {
        modifier.insert("remove".into(), json!([rng.pick(HEADER_NAMES)]));
    }
    Value::Object(modifier)
}

/// A VirtualService spec with http, tcp and tls rules present or not.
fn virtual_service(rng: &mut SplitMix64, stable: &str) -> Value {
    let mut spec = Map::new();
    if rng.chance(80) {
        spec.insert("hosts".into(), json!(["demo.example.com", stable][..rng.between(1, 2) as usize]));
    }
    if rng.chance(30) {
        spec.insert("gateways".into(), json!(["istio-system/gateway", "mesh"]));
    }
    for (protocol, percent) in [("http", 85), ("tcp", 30), ("tls", 25)] {
        if rng.chance(percent) {
            let rules = (0..rng.between(0, 3)).map(|_| rule(rng, stable)).collect();
            spec.insert(protocol.into(), Value::Array(rules));
        }
    }
    Value::Object(spec)
}

/// A rule with or without `match`, and 1–3 routes whose weights are absent, add up to 100, or
/// do not.
fn rule(rng: &mut SplitMix64, stable: &str) -> Value {
    let count = rng.between(1, 3) as usize;
    let weights: Vec<Option<u64>> = match rng.between(0, 3) {
        0 => vec![None; count],
        1 => {
            let mut left = 100;
            (0..count)
                .map(|i| {
                    let weight = if i + 1 == count { left } else { rng.between(0, left) };
                    left -= weight;
                    Some(weight)
                })
                .collect()
        }
        2 => (0..count).map(|_| Some(rng.between(0, 100))).collect(),
        _ => (0..count).map(|_| rng.chance(50).then(|| rng.between(0, 100))).collect(),
    };
    let routes: Vec<Value> = weights
        .into_iter()
        .map(|weight| {
            let mut route = json!({"destination": destination(rng, stable)});
            if let Some(weight) = weight {
                route["weight"] = json!(weight);
            }
            route
        })
        .collect();
    let mut rule = json!({"route": routes});
    if rng.chance(30) {
        rule["match"] = json!([{"uri": {"prefix": "/admin"}}]);
    }
    if rng.chance(20) {
        rule["name"] = json!("primary");
    }
    rule
}

/// The stable service (bare or FQDN), another service, or either with a subset and port.
fn destination(rng: &mut SplitMix64, stable: &str) -> Value {
    let host = match rng.between(0, 3) {
        0 | 1 => stable.to_string(),
        2 => format!("{stable}.{}.svc.cluster.local", rng.pick(&["default", "shop"])),
        _ => rng.pick(&["other", "other.shop.svc.cluster.local"]).to_string(),
    };
    let mut destination = json!({"host": host});
    if rng.chance(25) {
        destination["subset"] = json!(rng.pick(&["v1", "canary"]));
    }
    if rng.chance(15) {
        destination["port"] = json!({"number": 8080});
    }
    destination
}

/// A DestinationRule spec with subsets present or not.
fn destination_rule(rng: &mut SplitMix64, stable: &str) -> Value {
    let mut spec = json!({"host": stable});
    if rng.chance(75) {
        let subsets: Vec<Value> = (0..rng.between(0, 3))
            .map(|i| json!({"name": format!("v{i}"), "labels": {"version": format!("v{i}")}}))
            .collect();
        spec["subsets"] = Value::Array(subsets);
    }
    if rng.chance(30) {
        spec["trafficPolicy"] = json!({"loadBalancer": {"simple": "ROUND_ROBIN"}, "connectionPool": {}});
    }
    spec
}
