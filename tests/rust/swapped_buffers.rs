// Double buffering: two Vec<f64> swapped with `std::mem::swap` after each step of a time-step
// loop. At -O each Vec's address lives in an integer phi that takes the other's value every
// iteration; it was refused ("float data accessed through a pointer made from an integer") until
// such phis that feed each other count as addresses kept as integers. Reverse mode against
// central differences.
use std::ffi::c_void;
extern "C" { fn __enzyme_autodiff(f: *const c_void, ...) -> f64; static enzyme_dup: i32; static enzyme_const: i32; }
#[no_mangle]
pub extern "C" fn swapped(p: *const f64, n: usize) -> f64 {
    let ps = unsafe { std::slice::from_raw_parts(p, n) };
    let mut u = ps.to_vec();
    let mut v = vec![0.0; n];
    for _ in 0..30 {
        for i in 0..n { v[i] = 0.9 * u[i] + 0.1 * u[(i + 1) % n].sin(); }
        std::mem::swap(&mut u, &mut v);
    }
    u.iter().map(|x| x * x).sum()
}
fn main() {
    let x = [0.5, 1.0, -0.7, 0.3];
    let mut dx = [0.0; 4];
    unsafe { __enzyme_autodiff(swapped as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(), enzyme_const, 4usize); }
    let mut bad = 0;
    for i in 0..4 {
        let (mut a, mut b) = (x, x);
        a[i] += 1e-6; b[i] -= 1e-6;
        let fd = (swapped(a.as_ptr(), 4) - swapped(b.as_ptr(), 4)) / 2e-6;
        let ok = (fd - dx[i]).abs() <= 1e-6 * (1.0 + fd.abs());
        println!("CHECK swapped dx[{}] {:.9} {:.9}{}", i, dx[i], fd, if ok { "" } else { "  <-- FAILED" });
        bad += !ok as i32;
    }
    std::process::exit(bad);
}
