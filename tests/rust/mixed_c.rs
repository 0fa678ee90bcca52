// Rust calling a C kernel (libkern.a, built by enzyme-cc) inside the differentiated function:
// one gradient through both languages, against central differences.
use std::ffi::c_void;
extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
    fn c_kernel(x: *const f64, n: i64, k: f64) -> f64;
}
#[no_mangle]
pub extern "C" fn total(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let squares: Vec<f64> = xs.iter().map(|v| v * v).collect();
    let c = unsafe { c_kernel(squares.as_ptr(), n as i64, 1.5) };
    c + xs.iter().map(|v| v.exp()).sum::<f64>()
}
fn main() {
    let x = [0.3, -0.6, 0.9];
    let mut dx = [0.0; 3];
    unsafe { __enzyme_autodiff(total as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(), enzyme_const, 3usize); }
    let mut failed = 0;
    for i in 0..3 {
        let (mut a, mut b) = (x, x);
        a[i] += 1e-6; b[i] -= 1e-6;
        let fd = (total(a.as_ptr(), 3) - total(b.as_ptr(), 3)) / 2e-6;
        let ok = (fd - dx[i]).abs() <= 1e-6 * (1.0 + fd.abs());
        println!("CHECK dx[{}] {:.12} {:.12}{}", i, dx[i], fd, if ok { "" } else { "  <-- FAILED" });
        failed += !ok as i32;
    }
    std::process::exit(failed);
}
