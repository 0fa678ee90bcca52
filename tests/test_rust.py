"""Rust with the stable rustc, through the link step (`-C linker-plugin-lto -C linker=enzyme-cc`
hands enzyme-cc the crate's and the standard library's bitcode). Skipped where no rustc on LLVM
22 is installed (rustup's stable toolchain has one; Debian's rustc does not)."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run

HERE = Path(__file__).resolve().parent / "rust"
BIN = Path(sys.executable).parent


def _rustc():
    rustc = shutil.which("rustc") or str(Path.home() / ".cargo" / "bin" / "rustc")
    try:
        out = subprocess.run([rustc, "-vV"], capture_output=True, text=True).stdout
    except OSError:
        return None
    m = re.search(r"LLVM version: (\d+)", out)
    return rustc if m and m.group(1) == "22" else None


RUSTC = _rustc()
CARGO = shutil.which("cargo", path=str(Path(RUSTC).parent)) if RUSTC else None
NO_RUSTC = "no rustc on LLVM 22 (rustup's stable toolchain)"
NO_CARGO = "no cargo with a rustc on LLVM 22 (rustup's stable toolchain)"


def _rustc_link(opt, src, *more, cwd, check=True):
    """rustc with enzyme-cc as the linker, the crate's bitcode handed to it; out: ./prog."""
    return run([RUSTC, opt, "-Clinker-plugin-lto", f"-Clinker={BIN / 'enzyme-cc'}", *more,
                str(src), "-o", "prog"], cwd=cwd, check=check)


def _cargo_project(src, dst, tmp_path):
    """A copy of cargo project src at dst with enzyme-cc's cargo config; the environment that
    builds it into tmp_path/target."""
    shutil.copytree(src, dst)
    (dst / ".cargo").mkdir(exist_ok=True)
    (dst / ".cargo" / "config.toml").write_text(
        run([str(BIN / "enzyme-cc"), "--print-cargo-config"]).stdout)
    return dict(os.environ, CARGO_TARGET_DIR=str(tmp_path / "target"))


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
@pytest.mark.parametrize("opt", ["-O", pytest.param("-Copt-level=0", marks=pytest.mark.slow)])
def test_rust_traits_and_iterators(tmp_path, opt):
    _rustc_link(opt, HERE / "traits_iterators.rs", cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    checks = [line for line in out.splitlines() if line.startswith("CHECK ")]
    assert len(checks) == 4 and "FAILED" not in out, out


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
@pytest.mark.parametrize("opt", ["-O", "-Copt-level=0"])
def test_rust_three_and_four_active_results(tmp_path, opt):
    """Three and four active f64 arguments: their derivatives go into rustc's byte-typed sret
    (a link error before; found by a new-user check)."""
    _rustc_link(opt, HERE / "three_active.rs", cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 7 and "FAILED" not in out, out


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
@pytest.mark.parametrize("opt", ["-O", pytest.param("-Copt-level=0", marks=pytest.mark.slow)])
def test_rust_split_mode_tape_in_a_repr_c_struct(tmp_path, opt):
    """__enzyme_augmentfwd returning #[repr(C)] {tape, primal} (rustc: {i64, double}) and a
    usize tape: an internal error before (found by a new-user check)."""
    _rustc_link(opt, HERE / "split_mode.rs", cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 8 and "FAILED" not in out, out


def test_print_cargo_config():
    out = run([str(BIN / "enzyme-cc"), "--print-cargo-config"]).stdout
    assert "[target.x86_64-unknown-linux-gnu]" in out
    assert f'linker = "{BIN / "enzyme-cc"}"' in out
    assert 'rustflags = ["-Clinker-plugin-lto"]' in out


@pytest.mark.skipif(CARGO is None, reason=NO_CARGO)
def test_cargo_workspace(tmp_path):
    """`cargo build --release` of a workspace (a library crate, a binary crate depending on it
    by path) with the .cargo/config.toml that `enzyme-cc --print-cargo-config` prints."""
    ws = tmp_path / "ws"
    env = _cargo_project(HERE / "workspace", ws, tmp_path)
    run([CARGO, "build", "--release", "--quiet", "--offline"], cwd=ws, env=env)
    out = run([str(tmp_path / "target" / "release" / "app")], cwd=ws).stdout
    assert out.count("CHECK ") == 4 and "FAILED" not in out, out


@pytest.mark.slow
@pytest.mark.skipif(CARGO is None, reason=NO_CARGO)
def test_cargo_error_payload_gradient(tmp_path):
    """A float carried in an `Err` payload that a call (Vec::from_iter, not inlined in a cargo
    build) writes as integer bits: its derivative was silently dropped (slow tier: a cargo
    build with the crate, about 30 s)."""
    proj = tmp_path / "err_payload"
    env = _cargo_project(HERE / "err_payload", proj, tmp_path)
    crate = (HERE.parent.parent / "rust" / "enzyme-cc").resolve()
    (proj / "Cargo.toml").write_text('[package]\nname = "err_payload"\nversion = "0.1.0"\n'
                                     'edition = "2021"\n[dependencies]\n'
                                     f'enzyme-cc = {{ path = "{crate}" }}\n')
    run([CARGO, "build", "--release", "--quiet", "--offline"], cwd=proj, env=env)
    out = run([str(tmp_path / "target" / "release" / "err_payload")], cwd=proj).stdout
    assert "TOTAL FAILS 0" in out and out.count("PASS ") >= 20, out


@pytest.mark.slow
@pytest.mark.skipif(CARGO is None, reason=NO_CARGO)
def test_cargo_workspace_test_and_rebuild(tmp_path):
    """The same workspace: `cargo test` of the library (its unit test and doc-test), and a
    rebuild after an edit (slow tier:
    three links of a program with the standard library's bitcode, about two minutes)."""
    ws = tmp_path / "ws"
    env = _cargo_project(HERE / "workspace", ws, tmp_path)
    cargo = CARGO
    run([cargo, "build", "--release", "--quiet", "--offline"], cwd=ws, env=env)
    first = run([str(tmp_path / "target" / "release" / "app")], cwd=ws).stdout
    assert first.count("CHECK ") == 4 and "FAILED" not in first, first
    # `cargo test`: the library's unit test takes the gradient inside the test harness's binary
    # (whose std pulls Rust's compiler_builtins, linked as native code as rustc does)
    out = run([cargo, "test", "--release", "--offline"], cwd=ws, env=env).stdout
    assert "test tests::gradient_matches_central_differences ... ok" in out, out
    # and the doc-test of chain_energy, linked by rustdoc with the config's rustdocflags (without
    # them its markers stayed undefined symbols)
    assert re.search(r"test physics/src/lib\.rs - chain_energy \(line \d+\) \.\.\. ok", out), out
    # an incremental rebuild after an edit of the library: the new function's gradient
    lib = ws / "physics" / "src" / "lib.rs"
    lib.write_text(lib.read_text().replace("k: 1.0 + i as f64", "k: 1.5 + i as f64"))
    run([cargo, "build", "--release", "--quiet", "--offline"], cwd=ws, env=env)
    edited = run([str(tmp_path / "target" / "release" / "app")], cwd=ws).stdout
    assert edited.count("CHECK ") == 4 and "FAILED" not in edited and edited != first, edited


@pytest.mark.slow           # (60 s on 2 cores: std's test harness linked through AD)
@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
def test_rust_gradient_inside_a_test_harness_beside_trait_objects(tmp_path):
    """`rustc --test` (cargo test --release): a #[test] takes the gradient of a function that
    drops boxed trait objects; the harness's closure holding the marker has the drop slot's
    signature and was differentiated as a possible target of it (tests/rust/test_harness_dyn.rs)."""
    _rustc_link("-O", HERE / "test_harness_dyn.rs", "--test", cwd=tmp_path)
    out = run([str(tmp_path / "prog"), "--nocapture"], cwd=tmp_path).stdout
    assert "CHECK chain gradient" in out and "1 passed" in out, out


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
def test_rust_history_of_structs_returned_by_pointer(tmp_path):
    """Release profile without debug info: Vec<State> (a Vec<f64> and an f64) of structs made by
    non-inlined functions returning them through a pointer; the slot's copies were refused
    (tests/rust/struct_history.rs)."""
    _rustc_link("-O", HERE / "struct_history.rs", cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count(" ok\n") == 2 and "FAILED" not in out, out


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
def test_rust_threads_refused_with_their_reason(tmp_path):
    """std::thread::scope in the differentiated function: refused, the message saying that the
    function starts threads (tests/rust/scoped_threads.rs)."""
    out = _rustc_link("-O", HERE / "scoped_threads.rs", cwd=tmp_path, check=False)
    assert out.returncode != 0
    text = out.stdout + out.stderr
    assert "enzyme-cc: error:" in text and "Traceback" not in text, text
    assert "note: 'par_energy' starts threads (pthread_create" in text, text
    assert "start the threads outside the differentiated function" in text, text


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
def test_rust_btreemap_of_str_keys_in_the_dev_profile(tmp_path):
    """opt-level 0 with debug info: a BTreeMap<&str, f64> built in the differentiated function,
    the keys' lengths typed by their #dbg_value records (tests/rust/btree_str_keys.rs)."""
    _rustc_link("-Copt-level=0", HERE / "btree_str_keys.rs", "-g", cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 2 and "FAILED" not in out, out


@pytest.mark.skipif(CARGO is None, reason=NO_CARGO)
def test_crate_example(tmp_path):
    """The enzyme-cc crate (rust/enzyme-cc): autodiff! with Dup, Const and Active (the adjoint
    of the active f64 returned), fwddiff! with Dual, in its example `springs` run by cargo;
    fwddiff_n! (vector forward mode) in its example `jacobian`.
    Its remainder loop's phi of an argument once crashed the link ('Param' object has no
    attribute 'block')."""
    crate = tmp_path / "enzyme-cc"
    env = _cargo_project(Path(__file__).resolve().parent.parent / "rust" / "enzyme-cc", crate,
                         tmp_path)
    cargo = CARGO
    out = run([cargo, "run", "--release", "--quiet", "--offline", "--example", "springs"],
              cwd=crate, env=env).stdout
    assert out.count("CHECK ") == 6 and "FAILED" not in out, out      # (two Active: a tuple)
    # vector forward mode (fwddiff_n!, widths 3 and 2: its result through rustc's byte-typed
    # sret, and in two registers) against reverse mode and central differences
    out = run([cargo, "run", "--release", "--quiet", "--offline", "--example", "jacobian"],
              cwd=crate, env=env).stdout
    assert out.count("CHECK ") == 8 and "FAILED" not in out, out
    # f32 arguments (Active, Dual, and Const widened to f64), `&Vec` shadows, `Const` of a
    # `&Vec`, a slice and a u32 (the `&Vec` forms did not compile), and fwddiff_void! of a
    # function writing its result (fwddiff! declares the marker f64: refused)
    out = run([cargo, "run", "--release", "--quiet", "--offline", "--example", "single"],
              cwd=crate, env=env).stdout
    assert out.count("CHECK ") == 9 and "FAILED" not in out, out


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
def test_rust_error_names_rust_path(tmp_path):
    """An error inside Rust code names the function by its Rust path (legacy mangling's hash
    left out), with the symbol after it."""
    (tmp_path / "opaque.c").write_text("double opaque_scale(double x) { return 3 * x; }\n")
    run(["clang-22", "-O2", "-c", "opaque.c", "-o", "opaque.o"], cwd=tmp_path)
    r = _rustc_link("-O", HERE / "opaque_call.rs", "-Clink-arg=opaque.o", cwd=tmp_path,
                    check=False)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert re.search(r"in function 'opaque_call::physics::energy' \(symbol _ZN\w+E\)",
                     r.stderr), r.stderr
    assert "no derivative rule for call to 'opaque_scale'" in r.stderr, r.stderr


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
def test_rust_calling_c(tmp_path):
    """Mixed Rust and C: a static library compiled by enzyme-cc (its objects carry bitcode),
    linked by rustc with `-l static=kern`; the gradient goes through both."""
    (tmp_path / "kern.c").write_text(
        "#include <math.h>\n"
        "double c_kernel(const double *x, long n, double k) {\n"
        "  double s = 0;\n"
        "  for (long i = 0; i < n; i++) s += k * sin(x[i]) * x[i];\n"
        "  return s;\n}\n")
    run([str(BIN / "enzyme-cc"), "-O2", "-c", "kern.c", "-o", "kern.o"], cwd=tmp_path)
    run(["llvm-ar-22", "rcs", "libkern.a", "kern.o"], cwd=tmp_path)
    _rustc_link("-O", HERE / "mixed_c.rs", "-L", ".", "-l", "static=kern", cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 3 and "FAILED" not in out, out


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
@pytest.mark.parametrize("opt", ["-O", pytest.param("-Copt-level=3", marks=pytest.mark.slow),
                                 pytest.param("-Copt-level=0", marks=pytest.mark.slow)])
def test_rust_vec_scratch(tmp_path, opt):
    """`vec![0.0; n]` scratch buffers holding active data: rustc joins the allocation's address
    and a dangling 8 as integers, then casts back to a pointer; the integer's shadow is carried
    beside it (once refused: 'float data accessed through a pointer made from an integer')."""
    _rustc_link(opt, HERE / "vec_scratch.rs", cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 5 and "FAILED" not in out, out


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
@pytest.mark.parametrize("opt", ["-O", pytest.param("-Copt-level=0", marks=pytest.mark.slow)])
def test_rust_vec_growth(tmp_path, opt):
    """`Vec::push` growing Vecs of f64 and of structs inside the differentiated function: the
    alloc crate's finish_grow reallocates without a typed access to the block (once refused:
    'cannot deduce the type of the data realloc moves'), and joins posix_memalign's result,
    reloaded from its out-parameter, with malloc's and realloc's; at opt-level 0 also
    __rust_realloc's over-aligned fallback (an untyped memcpy into a fresh block, the old one
    freed next), the dangling address of an empty Vec, and zipped iterators that keep their
    element pointers as integers in slots."""
    dump = tmp_path / "dump"
    run([RUSTC, opt, "-Clinker-plugin-lto", f"-Clinker={BIN / 'enzyme-cc'}",
         str(HERE / "vec_growth.rs"), "-o", "prog"], cwd=tmp_path,
        env=dict(os.environ, ENZYME_CC_DUMP_DIR=str(dump), ENZYME_CC_CACHE="0"))
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 10 and "FAILED" not in out, out
    # std, one 11 MB object that only calls the allocator shim AD reaches, keeps its compiled
    # code: the allocator is ours (rules/rust_alloc.c), a link of 3 s instead of 35
    before = (dump / "before-ad.ll").read_text()
    assert "__enzyme_cc_rust_rdl_alloc" in before and len(before) < 2_000_000, len(before)


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
@pytest.mark.parametrize("opt", ["-O", pytest.param("-Copt-level=0", marks=pytest.mark.slow)])
def test_rust_adaptors_layers_and_result_slot(tmp_path, opt):
    """Iterator adaptors, Vec editing, a boxed slice (its empty case copies into the dangling
    address: once refused), const generics, a Result<f64, String> whose error pointer shares
    the float's slot, an enum's u64 payload in the f64's slot read as a number (both once
    refused as bit manipulation), `[f32; 2]` passed and returned by value as one i64 (once
    refused the same way). (Trait objects: traits_iterators.rs; the internal error a dyn
    Trait's vtable targets once caused: test_ad_core's dispatcher test, in C.)"""
    _rustc_link(opt, HERE / "adaptors_layers.rs", cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 35 and "FAILED" not in out, out


# -O in the slow tier too (a minute a link on 2 cores): structs and generics are in
# traits_iterators, enums in std_collections_and_text's Option/Result paths
@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
@pytest.mark.parametrize("opt", [pytest.param("-O", marks=pytest.mark.slow),
                                 pytest.param("-Copt-level=0", marks=pytest.mark.slow)])
def test_rust_enums_and_structs(tmp_path, opt):
    """An enum whose float payloads rustc copies through i64 slots (the gradient through them
    was silently zero), and at opt-level 0 a frozen slice length kept as an integer (an
    internal error: its shadow integer was never made); a value enum whose integer variant is
    computed on in a match arm (refused as bit manipulation of a float before)."""
    _rustc_link(opt, HERE / "enums_structs.rs", cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 9 and "FAILED" not in out, out


# -O in the slow tier too (a minute a link): nested_vec_runtime covers a Vec of Vecs
@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
@pytest.mark.parametrize("opts", [pytest.param(("-O",), marks=pytest.mark.slow),
                                  pytest.param(("-Copt-level=0", "-g"), marks=pytest.mark.slow)],
                         ids=["O", "dev-profile"])
def test_rust_nested_vecs(tmp_path, opts):
    """`vec![vec![0.0; n]; n]` (a segfault at -O: the row moved in through an address kept as
    an integer had a null shadow) and a product of Vec<Vec<f64>> rows built by `collect`."""
    _rustc_link(opts[0], HERE / "nested_vecs.rs", *opts[1:], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 7 and "FAILED" not in out, out


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
def test_rust_swapped_buffers(tmp_path):
    """Two Vecs swapped with `std::mem::swap` in a time-step loop (refused at -O: each address
    an integer phi taking the other's value)."""
    _rustc_link("-O", HERE / "swapped_buffers.rs", cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 4 and "FAILED" not in out, out


@pytest.mark.slow
@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
def test_rust_boxed_closures_through_a_selected_marker(tmp_path):
    """Boxed closures capturing active values, differentiated (reverse and forward) through
    marker calls that rustc -O merges onto a select of two functions (refused: the pre-AD
    scope missed the function, its closure boxes had no shadow; slow tier, the mechanism is
    test_preopt_scope.py's test_marker_function_through_a_select)."""
    _rustc_link("-O", HERE / "boxed_closures_selected.rs", cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 12 and "FAILED" not in out, out


@pytest.mark.slow
@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
def test_rust_bytes_copied_by_type_erased_code_stay_refused(tmp_path):
    """hashbrown moves a HashMap's (usize, f64) buckets with `copy_nonoverlapping::<u8>` of the
    bucket size: `u8` says bytes, not integers (taken for integers, the derivative crashed). The
    refusal names the rehash (`reserve_rehash`, or `rehash_in_place` where the standard
    library's build inlines the copy there)."""
    r = _rustc_link("-Copt-level=0", HERE / "std_collections.rs", "-g", cwd=tmp_path, check=False)
    assert r.returncode != 0 and "cannot deduce the type of the memory being copied" in r.stderr \
        and ("reserve_rehash" in r.stderr or "rehash_in_place" in r.stderr), r.stderr


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
@pytest.mark.slow           # (36 s on 2 cores; tests/rust's smaller programs cover std's Vec)
@pytest.mark.parametrize("opts", [("-O",), ("-Copt-level=0", "-g", "--cfg", "no_hashmap")],
                         ids=["O", "dev-profile"])
def test_rust_std_collections_and_text(tmp_path, opts):
    """Integer data beside float data with no TBAA: an index Vec sorted by a float key (the
    recursive merge sort's summaries once assumed the worst for recursion, so the indices got a
    shadow and their i64 moves were refused) and a HashMap<usize, f64> (its SSE2 control bytes
    were taken for doubles: a crash at run time; its buckets' keys for doubles: refused), a
    HashMap<i64, f64> whose keys are collected and sorted (once refused at -O). An
    unstable float sort, BTreeMap, VecDeque, nested Vecs, Result<f64, String> with a formatted
    error and eprintln! (the formatter's buffers once got shadows through its vtable calls, and
    their untyped moves were refused). At opt-level 0 with debug info, as cargo's dev profile
    builds, VecDeque's growth and the index sort move elements untyped in functions of their own
    (once refused: 'cannot deduce the type of the memory being copied', 'cannot deduce whether
    this integer copy ... moves float data'): the debug info of `core::ptr::copy_nonoverlapping
    ::<T>` names T. The HashMap is left out there: hashbrown moves its buckets as bytes.
    Records with a usize field beside f64s, read by a variable index: at opt-level 0 the id was
    taken for a double (the array's other fields), refused as integer arithmetic on a float."""
    _rustc_link(opts[0], HERE / "std_collections.rs", *opts[1:], cwd=tmp_path)
    r = run([str(tmp_path / "prog")], cwd=tmp_path)
    checks = 56 if opts == ("-O",) else 42
    assert r.stdout.count("CHECK ") == checks and "FAILED" not in r.stdout, r.stdout
    assert "f4: s = " in r.stderr


@pytest.mark.slow          # (the AD core's form, test_ad_core's union-slot test, is fast)
@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
@pytest.mark.parametrize("opts", [("-Copt-level=0", "-Ccodegen-units=256"), ("-O",)],
                         ids=["dev-profile", "O"])
def test_rust_collect_into_result_and_option(tmp_path, opts):
    """`collect::<Result<Vec<f64>, E>>()` and `collect::<Option<Vec<f64>>>()`, both variants
    taken: in cargo's dev profile (256 codegen units keep Vec::from_iter a function of its own)
    the vector is copied out of a local into the caller's slot, where the error's f64 shares
    the length's offset (once refused: 'cannot deduce the type of the memory being copied'),
    and the caller indexes with the length read through the double's bits (then refused as
    bit manipulation). The AD core's form: test_ad_core's union-slot test."""
    _rustc_link(opts[0], HERE / "collect_result_option.rs", *opts[1:], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 12 and "FAILED" not in out, out


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
@pytest.mark.slow           # (the mechanism's fast test: test_ad_core's reference count test)
@pytest.mark.parametrize("opts", [("-O",), ("-Copt-level=0", "-g", "-Ccodegen-units=256")],
                         ids=["O", "dev-profile"])
def test_rust_rc_cell_beside_vec(tmp_path, opts):
    """`Rc<Cell<f64>>` next to a `Vec` push: the Rc's counts, stepped in place, were taken for
    the f64's bits and the link refused."""
    _rustc_link(opts[0], HERE / "rc_cell_vec.rs", *opts[1:], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 3 and "FAILED" not in out, out


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
@pytest.mark.slow           # (the mechanism's fast test is the C corpus's ops_table_slots.c)
@pytest.mark.parametrize("opts", [("-O",), ("-Copt-level=0", "-g", "-Ccodegen-units=256")],
                         ids=["O", "dev-profile"])
def test_rust_dyn_method_returning_str(tmp_path, opts):
    """`p.name()` (`fn(&self) -> &'static str`) through `Box<dyn Trait>`: the standard
    library's functions of that type returned shadow pointers where the trait's do not, and
    the call was refused; the vtable slot it reads narrows its targets (ad/api/vtables.py;
    the C form: tests/ad_programs/ops_table_slots.c)."""
    _rustc_link(opts[0], HERE / "dyn_str_method.rs", *opts[1:], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 3 and "FAILED" not in out, out


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
@pytest.mark.parametrize("opts", [("-Copt-level=0", "-g", "-Ccodegen-units=256"),
                                  pytest.param(("-O",), marks=pytest.mark.slow)],
                         ids=["dev-profile", "O"])
def test_rust_nested_vec_of_runtime_size(tmp_path, opts):
    """`vec![vec![0.0; ni]; no]` with run-time sizes in cargo's dev profile: the row moved into
    `vec::from_elem` had no shadow (its address, kept as an integer, escaped unseen) and the
    gradient crashed (found by a new-user check); with main also calling the function, the
    move of the row by `from_elem` (a header copy from its argument) was not reported to the
    caller and it still crashed (tests/ad_programs/record_moved_by_callee.c is its C form)."""
    _rustc_link(opts[0], HERE / "nested_vec_runtime.rs", *opts[1:], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 7 and "FAILED" not in out, out


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
def test_rust_recursive_enum_clone_refused(tmp_path):
    """Cloning a Vec of a recursive enum inside the differentiated function gave a zero
    gradient (the element copy moved as pointers, the only evidence being the recursive
    variant's Vec): refused now; the same enum without the recursive variant differentiates."""
    src = HERE / "recursive_enum_clone.rs"
    r = _rustc_link("-O", src, "--cfg", "clone", "--cfg", "rec", cwd=tmp_path, check=False)
    assert r.returncode != 0 and "cannot deduce the type of the memory being copied" in r.stderr, \
        r.stderr[-3000:]
    _rustc_link("-O", src, "--cfg", "clone", cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert "bad 0" in out, out


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
@pytest.mark.parametrize("opts", [("-O",), pytest.param(("-Copt-level=0", "-g"),
                                                        marks=pytest.mark.slow)],
                         ids=["O", "dev-profile"])
def test_rust_ode_fit_with_structs_of_vecs(tmp_path, opts):
    """A State {Vec<f64>, f64} cloned, returned and moved through an RK4 over closures (refused:
    the clone's length, the Vec header moved into the struct's front, the buffer reached
    through the header, the closure captures moved with an iterator)."""
    _rustc_link(opts[0], HERE / "ode_fit_structs.rs", *opts[1:], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 10 and "FAILED" not in out, out


@pytest.mark.skipif(RUSTC is None, reason=NO_RUSTC)
@pytest.mark.parametrize("opt", ["-O", pytest.param("-Copt-level=0", marks=pytest.mark.slow)])
def test_rust_boxed_list_returned_in_registers(tmp_path, opt):
    """`enum List { Cons(f64, Box<List>), Nil }` built and taken apart by functions kept as
    calls: rustc returns the variant as `{ ptr, double }`, whose pointer needs its shadow
    returned beside the float's adjoint (refused before). Against central differences."""
    _rustc_link(opt, HERE / "boxed_list.rs", cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 4 and "bad 0" in out, out
