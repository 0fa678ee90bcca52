//! `cargo run --release --example springs` (with enzyme-cc's cargo config): the gradient of a
//! chain of springs by reverse mode, checked against forward mode and central differences.
use enzyme_cc::{autodiff, fwddiff};

#[no_mangle]
pub extern "C" fn chain(x: *const f64, n: usize, k: f64) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    xs.windows(2).map(|w| 0.5 * k * (w[1] - w[0] - 0.5).powi(2)).sum::<f64>()
        + xs.iter().map(|v| v.sin()).sum::<f64>()
}

#[no_mangle]
pub extern "C" fn pair(a: f64, _n: usize, k: f64) -> f64 {
    (a * k).powi(2)
}

fn main() {
    let x = vec![0.1, 0.7, 1.6, 2.0];
    let n = x.len();
    let mut dx = vec![0.0; n];
    let dk = autodiff!(chain; Dup(&x[..], &mut dx[..]), Const(n), Active(1.5));
    let mut failed = 0;
    for i in 0..n {
        let h = 1e-6;
        let (mut a, mut b) = (x.clone(), x.clone());
        a[i] += h;
        b[i] -= h;
        let fd = (chain(a.as_ptr(), n, 1.5) - chain(b.as_ptr(), n, 1.5)) / (2.0 * h);
        let mut e = vec![0.0; n];
        e[i] = 1.0;
        let t = fwddiff!(chain; Dup(&x[..], &e[..]), Const(n), Dual(1.5, 0.0));
        let ok = (fd - dx[i]).abs() <= 1e-6 * (1.0 + fd.abs()) && (t - dx[i]).abs() <= 1e-12;
        println!("CHECK dx[{}] {:.12} {:.12}{}", i, dx[i], fd, if ok { "" } else { "  <-- FAILED" });
        failed += !ok as i32;
    }
    let fdk = (chain(x.as_ptr(), n, 1.5 + 1e-6) - chain(x.as_ptr(), n, 1.5 - 1e-6)) / 2e-6;
    let ok = (fdk - dk).abs() <= 1e-6 * (1.0 + fdk.abs());
    println!("CHECK dk[0] {:.12} {:.12}{}", dk, fdk, if ok { "" } else { "  <-- FAILED" });
    failed += !ok as i32;
    // two Active arguments: their adjoints as a tuple
    let (da, db) = autodiff!(pair; Active(0.4), Const(n), Active(1.5));
    let ok = (da - 2.0 * 0.4 * 1.5 * 1.5).abs() <= 1e-12 && (db - 2.0 * 0.4 * 0.4 * 1.5).abs() <= 1e-12;
    println!("CHECK d_pair {:.12} {:.12}{}", da, db, if ok { "" } else { "  <-- FAILED" });
    failed += !ok as i32;
    std::process::exit(failed);
}
