// Shared finite-difference checking helpers.
#![allow(dead_code)]
pub static mut FAILS: i32 = 0;

pub fn cmp(name: &str, got: f64, exp: f64) {
    let tol = 1e-5 * (1.0 + exp.abs());
    let ok = (got - exp).abs() <= tol && got.is_finite();
    println!("{} {}: got {:.10e} expected {:.10e}", if ok { "PASS" } else { "FAIL" }, name, got, exp);
    if !ok { unsafe { FAILS += 1; } }
}

/// central differences of f over the slice x
pub fn fd_grad<F: Fn(&[f64]) -> f64>(f: F, x: &[f64]) -> Vec<f64> {
    let h = 1e-6;
    (0..x.len()).map(|i| {
        let mut a = x.to_vec(); a[i] += h;
        let mut b = x.to_vec(); b[i] -= h;
        (f(&a) - f(&b)) / (2.0 * h)
    }).collect()
}

pub fn cmp_vec(name: &str, got: &[f64], exp: &[f64]) {
    for i in 0..exp.len() { cmp(&format!("{}[{}]", name, i), got[i], exp[i]); }
}

pub fn finish() {
    let f = unsafe { FAILS };
    println!("TOTAL FAILS {}", f);
    std::process::exit(if f > 0 { 1 } else { 0 });
}
