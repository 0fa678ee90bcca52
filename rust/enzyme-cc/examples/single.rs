//! `cargo run --release --example single` (with enzyme-cc's cargo config): a function of `f32`
//! differentiated in `f32`, with `Vec` arguments passed by reference and `Const` arguments of
//! every kind (a `&Vec`, a slice, an `f32` widened, a `u32`), and forward mode of a function
//! that returns nothing (`fwddiff_void!`), checked against analytic derivatives.
use enzyme_cc::{autodiff, fwddiff, fwddiff_void};

// sum_i s * w_i * x_i^2 over the first n elements
#[no_mangle]
pub extern "C" fn weighted(x: *const f32, w: *const f32, n: u32, s: f32) -> f32 {
    let xs = unsafe { std::slice::from_raw_parts(x, n as usize) };
    let ws = unsafe { std::slice::from_raw_parts(w, n as usize) };
    xs.iter().zip(ws).map(|(a, b)| s * b * a * a).sum()
}

#[no_mangle]
pub extern "C" fn cube(a: f32, b: f32) -> f32 {
    a * a * a + b
}

// y_i = x_i^2 + 1, written through a pointer
#[no_mangle]
pub extern "C" fn square_into(x: *const f32, y: *mut f32, n: usize) {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let ys = unsafe { std::slice::from_raw_parts_mut(y, n) };
    for (y, x) in ys.iter_mut().zip(xs) {
        *y = x * x + 1.0;
    }
}

fn check(name: &str, got: f64, want: f64) -> i32 {
    let ok = (got - want).abs() <= 1e-5 * (1.0 + want.abs());
    println!("CHECK {} {:.6} {:.6}{}", name, got, want, if ok { "" } else { "  <-- FAILED" });
    !ok as i32
}

fn main() {
    let x: Vec<f32> = vec![1.0, 2.0, 3.0];
    let w: Vec<f32> = vec![0.5, 1.0, 2.0];
    let mut dx = vec![0.0f32; 3];
    let ds = autodiff!(weighted; Dup(&x, &mut dx), Const(&w), Const(3u32), Active(2.0f32));
    let mut failed = 0;
    for i in 0..3 {
        failed += check(&format!("dx[{}]", i), dx[i] as f64, (2.0 * 2.0 * w[i] * x[i]) as f64);
    }
    let want: f32 = x.iter().zip(&w).map(|(a, b)| b * a * a).sum();
    failed += check("ds", ds, want as f64);
    let t = fwddiff!(weighted; Dup(&x, &vec![1.0f32, 0.0, 0.0]), Const(&w[..]), Const(3u32),
                     Dual(2.0f32, 0.0f32));
    failed += check("tangent", t, dx[0] as f64);
    let da = autodiff!(cube; Active(2.0f32), Const(1.0f32 as f64));
    failed += check("dcube", da, 12.0);
    // forward mode of a function writing its result: the tangent lands in dy
    let (mut y, mut dy) = (vec![0.0f32; 3], vec![0.0f32; 3]);
    let v = vec![1.0f32, -1.0, 0.5];
    fwddiff_void!(square_into; Dup(&x, &v), Dup(&mut y, &mut dy), Const(3usize));
    for i in 0..3 {
        failed += check(&format!("dy[{}]", i), dy[i] as f64, (2.0 * x[i] * v[i]) as f64);
    }
    std::process::exit(failed);
}
