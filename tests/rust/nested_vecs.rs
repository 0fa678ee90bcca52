// Matrices as Vec<Vec<f64>>. `vec![vec![0.0; n]; n]` clones a zeroed row with untyped copies and
// moves the row itself in as the last one, through an address kept as an integer: at -O that row
// had a null shadow (a segfault in the derivative), then once it had one, the untyped copies out
// of it were refused (they copy the zeros of its allocation: any type will do). A product of
// rows built by `collect`. Reverse mode against central differences.
use std::ffi::c_void;
extern "C" { fn __enzyme_autodiff(f: *const c_void, ...) -> f64; static enzyme_dup: i32; static enzyme_const: i32; }
#[no_mangle]
pub extern "C" fn rows(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let mut c = vec![vec![0.0; n]; n];
    for i in 0..n { for j in 0..n { c[i][j] = xs[i] * xs[(j + 1) % n] + xs[j].sin(); } }
    c.iter().enumerate().map(|(i, r)| r[(i + 2) % n] * (i as f64 + 1.0)).sum::<f64>() + c[n - 1][0]
}
#[no_mangle]
pub extern "C" fn matmul(p: *const f64, n: usize) -> f64 {
    let ps = unsafe { std::slice::from_raw_parts(p, n) };
    let a: Vec<Vec<f64>> = ps.chunks(2).map(|r| r.to_vec()).collect();
    let (n, m) = (a.len(), a[0].len());
    let mut c: Vec<Vec<f64>> = (0..n).map(|_| vec![0.0; m]).collect();
    for i in 0..n { for j in 0..m { for l in 0..n { c[i][j] += a[i][l] * a[l][j]; } } }
    c[0][0] + 2.0 * c[0][1] + 3.0 * c[1][0] + 4.0 * c[1][1]
}
fn check(name: &str, h: extern "C" fn(*const f64, usize) -> f64, x: &[f64]) -> i32 {
    let n = x.len();
    let mut dx = vec![0.0f64; n];
    unsafe { __enzyme_autodiff(h as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(), enzyme_const, n); }
    let mut bad = 0;
    for i in 0..n {
        let (mut p, mut m) = (x.to_vec(), x.to_vec()); p[i] += 1e-6; m[i] -= 1e-6;
        let fd = (h(p.as_ptr(), n) - h(m.as_ptr(), n)) / 2e-6;
        let ok = (fd - dx[i]).abs() <= 1e-6 * (1.0 + fd.abs());
        println!("CHECK {} dx[{}] {:.9} {:.9}{}", name, i, dx[i], fd, if ok { "" } else { "  <-- FAILED" });
        bad += !ok as i32;
    }
    bad
}
fn main() {
    let bad = check("rows", rows, &[0.3, -1.1, 0.7]) + check("matmul", matmul, &[0.1, 2.0, 0.5, 3.0]);
    std::process::exit(bad);
}
