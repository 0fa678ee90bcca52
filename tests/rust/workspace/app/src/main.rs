//! The binary crate: the gradient of the library's function against central differences.
use std::ffi::c_void;

extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

fn main() {
    let x = vec![0.1, 0.7, 1.6, 2.0];
    let mut dx = vec![0.0; 4];
    unsafe {
        __enzyme_autodiff(physics::chain_energy as *const c_void, enzyme_dup, x.as_ptr(),
                          dx.as_mut_ptr(), enzyme_const, 4usize);
    }
    let mut failed = 0;
    for i in 0..4 {
        let h = 1e-6;
        let (mut a, mut b) = (x.clone(), x.clone());
        a[i] += h;
        b[i] -= h;
        let fd = (physics::chain_energy(a.as_ptr(), 4) - physics::chain_energy(b.as_ptr(), 4))
            / (2.0 * h);
        let ok = (fd - dx[i]).abs() <= 1e-6 * (1.0 + fd.abs());
        println!("CHECK dx[{}] {:.12} {:.12}{}", i, dx[i], fd, if ok { "" } else { "  <-- FAILED" });
        failed += !ok as i32;
    }
    std::process::exit(failed);
}
