// A Result<f64, String> whose error's pointer shares the float's i64 slot: on the error path
// the slot goes back to a pointer that is freed (once refused as integer arithmetic on a
// float's bits), beside f32 data, a recursive helper, an early loop exit and a max_by.
// Reverse mode against central differences, forward mode against reverse.
use std::ffi::c_void;
extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    fn __enzyme_fwddiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}
fn fib_like(a: f64, d: u32) -> f64 { if d == 0 { a } else { fib_like(a * 0.9, d - 1) + a.sin() } }
#[no_mangle]
pub extern "C" fn g(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let fs: Vec<f32> = xs.iter().map(|&t| t as f32).collect();
    let s32: f32 = fs.iter().map(|t| t * t).sum();
    let mut acc = 0.0;
    let mut i = 0;
    while i < n { if xs[i] > 1.5 { break; } acc += fib_like(xs[i], 3); i += 1; }
    let r: Result<f64, String> = if acc > 100.0 { Err("big".to_string()) } else { Ok(acc) };
    let best = xs.iter().cloned().enumerate().max_by(|a, b| a.1.partial_cmp(&b.1).unwrap()).map(|(_, v)| v).unwrap();
    r.unwrap_or(0.0) + s32 as f64 + best.powf(2.5) * 0.1
        + xs.iter().map(|t| t.mul_add(2.0, 1.0).hypot(0.5)).product::<f64>()
}
fn main() {
    let x = [0.5f64, -1.2, 0.8, 1.7, -0.3, 0.9];
    let n = x.len();
    let mut dx = [0.0f64; 6];
    unsafe { __enzyme_autodiff(g as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(), enzyme_const, n); }
    let mut bad = 0;
    for i in 0..n {
        // (a wide step: the f32 part rounds a smaller one away)
        let (mut p, mut m) = (x, x); p[i] += 1e-3; m[i] -= 1e-3;
        let fd = (g(p.as_ptr(), n) - g(m.as_ptr(), n)) / 2e-3;
        let ok = (fd - dx[i]).abs() <= 1e-4 * (1.0 + fd.abs());
        println!("CHECK dx[{}] {:.9} {:.9}{}", i, dx[i], fd, if ok { "" } else { "  <-- FAILED" });
        bad += !ok as i32;
    }
    let v = [1.0, 0.5, -0.25, 0.3, 0.7, -0.1];
    let t = unsafe { __enzyme_fwddiff(g as *const c_void, enzyme_dup, x.as_ptr(), v.as_ptr(), enzyme_const, n) };
    let dot: f64 = (0..n).map(|i| dx[i] * v[i]).sum();
    let ok = (t - dot).abs() <= 1e-9 * (1.0 + dot.abs());
    println!("CHECK tangent {:.9} {:.9}{}", t, dot, if ok { "" } else { "  <-- FAILED" });
    bad += !ok as i32;
    std::process::exit(bad);
}
