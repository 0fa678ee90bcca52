// Parameters looked up by name in a BTreeMap<&str, f64> built inside the differentiated function,
// in the dev profile (opt-level 0 with debug info): the map's insert moves each `&str` key as a
// pointer and an `i64` length through a generic routine over the key type, which says nothing of
// the length's kind by itself; the debug record of the value (`#dbg_value`, the length as the
// second half of the variable `key: &str`) does. It was refused ("cannot deduce whether this
// integer copy between differentiated memory moves float data"). Against the analytic gradient.
// (Keys of different lengths are still refused in this profile: insert's Entry keeps the key's
// length and the node's address in one integer slot, read back through inttoptr.)
use std::collections::BTreeMap;
use std::ffi::c_void;

extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
}

#[no_mangle]
pub extern "C" fn energy(p: *const f64) -> f64 {
    let p = unsafe { std::slice::from_raw_parts(p, 2) };
    let mut m: BTreeMap<&str, f64> = BTreeMap::new();
    m.insert("k", p[0]);
    m.insert("r", p[1]);
    m["k"] * m["r"] * m["r"]
}

fn main() {
    let p = [2.0, 0.7];
    let mut dp = [0.0; 2];
    unsafe {
        __enzyme_autodiff(energy as *const c_void, enzyme_dup, p.as_ptr(), dp.as_mut_ptr());
    }
    let want: [f64; 2] = [p[1] * p[1], 2.0 * p[0] * p[1]];
    let mut failed: i32 = 0;
    for i in 0..2 {
        let ok = (dp[i] - want[i]).abs() <= 1e-12 * (1.0 + want[i].abs());
        println!("CHECK dp[{}] {:.12} {:.12}{}", i, dp[i], want[i], if ok { "" } else { "  <-- FAILED" });
        failed += !ok as i32;
    }
    std::process::exit(failed);
}
