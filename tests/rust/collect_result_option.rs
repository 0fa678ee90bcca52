// Collecting an iterator of Result<f64, E> into Result<Vec<f64>, E> and of Option<f64> into
// Option<Vec<f64>>: the vector is built in a local and copied into the caller's slot, whose
// other variant keeps the error's f64 where the vector keeps its length (a union). Reverse mode
// on both variants against central differences.
use std::ffi::c_void;
extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

enum E {
    Neg(f64),
    Zero,
}

fn safe_ln(x: f64) -> Result<f64, E> {
    if x < 0.0 {
        Err(E::Neg(x))
    } else if x == 0.0 {
        Err(E::Zero)
    } else {
        Ok(x.ln())
    }
}

#[no_mangle]
pub extern "C" fn logs(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let r: Result<Vec<f64>, E> = xs.iter().map(|&v| safe_ln(v)).collect();
    match r {
        Ok(v) => v.iter().map(|a| a * a).sum(),
        Err(E::Neg(b)) => b * b * b,
        Err(E::Zero) => 0.0,
    }
}

#[no_mangle]
pub extern "C" fn roots(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let o: Option<Vec<f64>> = xs.iter().map(|&v| if v > 0.0 { Some(v.sqrt() * v) } else { None }).collect();
    match o {
        Some(v) => v.iter().zip(xs).map(|(a, b)| a * b).sum(),
        None => xs.iter().map(|v| v.sin()).sum(),
    }
}

fn check(name: &str, f: extern "C" fn(*const f64, usize) -> f64, x: [f64; 3]) -> usize {
    let mut dx = [0.0; 3];
    unsafe {
        __enzyme_autodiff(f as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(),
                          enzyme_const, 3usize);
    }
    let mut failed = 0;
    for i in 0..3 {
        let (mut p, mut m) = (x, x);
        p[i] += 1e-6;
        m[i] -= 1e-6;
        let fd = (f(p.as_ptr(), 3) - f(m.as_ptr(), 3)) / 2e-6;
        let ok = (fd - dx[i]).abs() <= 1e-6 * (1.0 + fd.abs());
        failed += !ok as usize;
        println!("CHECK {} {:?} dx[{}] {:.12} {:.12}{}", name, x, i, dx[i], fd,
                 if ok { "" } else { "  <-- FAILED" });
    }
    failed
}

fn main() {
    let mut failed = 0;
    failed += check("logs", logs, [0.5, 2.0, 1.5]);
    failed += check("logs", logs, [0.5, -0.3, 1.5]);
    failed += check("roots", roots, [0.5, 2.0, 1.5]);
    failed += check("roots", roots, [0.5, -2.0, 1.5]);
    std::process::exit(failed as i32);
}
