// Local Vecs holding active data: `vec![0.0; n]` scratch buffers (rustc keeps their address as
// an integer: the allocation's, or a dangling 8 when empty, joined by a phi) written and read in
// the differentiated function. Reverse mode against central differences.
use std::ffi::c_void;
extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

#[no_mangle]
pub extern "C" fn smoothed(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let mut a = vec![0.0; n];
    let mut b = vec![0.0; n];
    for i in 0..n {
        a[i] = xs[i] * xs[i] + 0.5 * xs[(i + 1) % n];
    }
    for i in 0..n {
        b[i] = a[i].sin() * a[(i + 2) % n];
    }
    let sq: Vec<f64> = b.iter().map(|v| v * v).collect();
    sq.iter().sum::<f64>() + b.iter().sum::<f64>()
}

fn main() {
    let x = [0.1, 0.7, 1.6, 2.0, -0.4];
    let mut dx = [0.0; 5];
    unsafe {
        __enzyme_autodiff(smoothed as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(),
                          enzyme_const, 5usize);
    }
    let mut failed = 0;
    for i in 0..5 {
        let (mut p, mut m) = (x, x);
        p[i] += 1e-6;
        m[i] -= 1e-6;
        let fd = (smoothed(p.as_ptr(), 5) - smoothed(m.as_ptr(), 5)) / 2e-6;
        let ok = (fd - dx[i]).abs() <= 1e-6 * (1.0 + fd.abs());
        println!("CHECK dx[{}] {:.12} {:.12}{}", i, dx[i], fd, if ok { "" } else { "  <-- FAILED" });
        failed += !ok as i32;
    }
    std::process::exit(failed);
}
