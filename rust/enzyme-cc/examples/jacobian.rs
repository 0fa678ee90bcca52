//! `cargo run --release --example jacobian` (with enzyme-cc's cargo config): the Jacobian of a
//! small map R^3 -> R^2, three columns at once by vector forward mode (`fwddiff_n!`, width 3),
//! checked against reverse mode (one row per call) and central differences.
use enzyme_cc::{autodiff, fwddiff_n};

/// output i of the map: y0 = x0 x1 + sin(x2) k, y1 = exp(x0) - x1 x2^2 / k
#[no_mangle]
pub extern "C" fn component(x: *const f64, i: usize, k: f64) -> f64 {
    let x = unsafe { std::slice::from_raw_parts(x, 3) };
    if i == 0 {
        x[0] * x[1] + x[2].sin() * k
    } else {
        x[0].exp() - x[1] * x[2] * x[2] / k
    }
}

fn main() {
    let x = [0.4, -1.1, 0.8];
    let k = 1.7;
    let (e0, e1, e2) = ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]);
    let mut failed = 0;
    for i in 0..2 {
        // row i at once: the tangents of y_i along the three unit directions, and d y_i / d k
        let row: [f64; 3] = fwddiff_n!(component, 3; Dup(&x, [&e0, &e1, &e2]), Const(i),
                                       Const(k));
        let dk: [f64; 2] = fwddiff_n!(component, 2; Dup(&x, [&[0.0; 3], &[0.0; 3]]), Const(i),
                                      Dual(k, [1.0, 2.0]));
        let mut grad = [0.0; 3];
        autodiff!(component; Dup(&x, &mut grad), Const(i), Const(k));
        for j in 0..3 {
            let h = 1e-6;
            let (mut a, mut b) = (x, x);
            a[j] += h;
            b[j] -= h;
            let fd = (component(a.as_ptr(), i, k) - component(b.as_ptr(), i, k)) / (2.0 * h);
            let ok = (fd - row[j]).abs() <= 1e-6 * (1.0 + fd.abs())
                && (grad[j] - row[j]).abs() <= 1e-12 * (1.0 + fd.abs());
            println!("CHECK J[{}][{}] {:.12} {:.12}{}", i, j, row[j], fd,
                     if ok { "" } else { "  <-- FAILED" });
            failed += !ok as i32;
        }
        let fdk = (component(x.as_ptr(), i, k + 1e-6) - component(x.as_ptr(), i, k - 1e-6)) / 2e-6;
        let ok = (fdk - dk[0]).abs() <= 1e-6 * (1.0 + fdk.abs()) && (dk[1] - 2.0 * dk[0]).abs() <= 1e-12;
        println!("CHECK dk[{}] {:.12} {:.12}{}", i, dk[0], fdk, if ok { "" } else { "  <-- FAILED" });
        failed += !ok as i32;
    }
    std::process::exit(failed);
}
