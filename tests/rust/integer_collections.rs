// Integer data beside float data, with no TBAA to tell them apart (rustc emits none): an index
// vector sorted by a float key (`Vec<usize>::sort_by`, whose merge sort is recursive and moves
// the indices through a scratch buffer as i64), a `HashMap<usize, f64>` (hashbrown: SSE2 groups
// of control bytes beside the buckets). Reverse mode against central differences, forward mode
// against reverse.
use std::collections::HashMap;
use std::ffi::c_void;
extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    fn __enzyme_fwddiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

/// Weights the squares by their rank: sum_r (r + 1) * x[idx[r]]^2.
#[no_mangle]
pub extern "C" fn ranked(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| xs[a].partial_cmp(&xs[b]).unwrap());
    idx.iter().enumerate().map(|(r, &i)| (r as f64 + 1.0) * xs[i] * xs[i]).sum()
}

/// Squares summed into buckets i % 3, then the buckets' sines weighted by their key.
#[no_mangle]
pub extern "C" fn bucketed(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let mut h: HashMap<usize, f64> = HashMap::new();
    for (i, v) in xs.iter().enumerate() {
        *h.entry(i % 3).or_insert(0.0) += v * v;
    }
    (0..3).map(|k| (k as f64 + 1.0) * h[&k].sin()).sum()
}

macro_rules! check {
    ($f:ident, $failed:ident) => {{
        let x = [0.5, 1.5, -2.0, 3.0, 0.25, 1.0, 2.0];
        let v = [1.0, -0.5, 0.25, 2.0, 0.0, 0.7, -1.0];
        let n = x.len();
        let mut dx = [0.0; 7];
        unsafe {
            __enzyme_autodiff($f as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(),
                              enzyme_const, n);
        }
        let jv = unsafe {
            __enzyme_fwddiff($f as *const c_void, enzyme_dup, x.as_ptr(), v.as_ptr(),
                             enzyme_const, n)
        };
        let mut dot = 0.0;
        for i in 0..n {
            let (mut p, mut m) = (x, x);
            p[i] += 1e-6;
            m[i] -= 1e-6;
            let fd = ($f(p.as_ptr(), n) - $f(m.as_ptr(), n)) / 2e-6;
            let ok = (fd - dx[i]).abs() <= 1e-6 * (1.0 + fd.abs());
            println!("CHECK {} dx[{}] {:.12} {:.12}{}", stringify!($f), i, dx[i], fd,
                     if ok { "" } else { "  <-- FAILED" });
            $failed += !ok as i32;
            dot += v[i] * dx[i];
        }
        let ok = (jv - dot).abs() <= 1e-9 * (1.0 + dot.abs());
        println!("CHECK {} tangent {:.12} {:.12}{}", stringify!($f), jv, dot,
                 if ok { "" } else { "  <-- FAILED" });
        $failed += !ok as i32;
    }};
}

fn main() {
    let mut failed = 0;
    check!(ranked, failed);
    check!(bucketed, failed);
    std::process::exit(failed);
}
