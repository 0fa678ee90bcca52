// Option / Result with ?, a custom error enum, and_then/map/unwrap_or/ok_or, iterators of Option,
// through the enzyme-cc crate's macros (a cargo project: Vec::from_iter stays a call here, where
// rustc alone inlines it). res_obj's error path reads the payload of `Err(NegativeLog(bad))` as
// integer bits joined by a phi with another field, then as a double: its derivative was silently
// dropped (-1.0 where central differences give -1.6) until a join of untyped loads counted as an
// untyped copy (ad/analysis/activity_memory.py `_joined_copies`).
mod check;
use check::*;
use enzyme_cc::{autodiff, fwddiff};

#[derive(Debug)]
enum MathErr { NegativeLog(f64), DivZero, Empty }

fn safe_ln(x: f64) -> Result<f64, MathErr> {
    if x <= 0.0 { Err(MathErr::NegativeLog(x)) } else { Ok(x.ln()) }
}
fn safe_div(a: f64, b: f64) -> Result<f64, MathErr> {
    if b == 0.0 { Err(MathErr::DivZero) } else { Ok(a / b) }
}
fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() { None } else { Some(xs.iter().sum::<f64>() / xs.len() as f64) }
}
fn log_ratio(xs: &[f64]) -> Result<f64, MathErr> {
    let m = mean(xs).ok_or(MathErr::Empty)?;
    let mut acc = 0.0;
    for &v in xs {
        let r = safe_div(v, m)?;
        acc += safe_ln(r * r + 0.5)?;
    }
    Ok(acc)
}
fn first_positive(xs: &[f64]) -> Option<(usize, f64)> {
    xs.iter().copied().enumerate().find(|&(_, v)| v > 0.0)
}

#[no_mangle]
pub extern "C" fn opt_obj(p: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(p, n) };
    let a = match log_ratio(xs) { Ok(v) => v, Err(MathErr::NegativeLog(v)) => v, Err(_) => -1.0 };
    let b = first_positive(xs).map(|(i, v)| v * (i as f64 + 1.0)).unwrap_or(0.0);
    let c = xs.iter().map(|&v| safe_ln(v).ok()).flatten().sum::<f64>();
    let d = 0.0;
    let e = xs.get(10).copied().unwrap_or(2.0) * xs.last().copied().unwrap_or(0.0);
    let f = mean(xs).and_then(|m| if m > 0.0 { Some(m.powi(3)) } else { None }).unwrap_or_default();
    a + b + c + d + e + f
}

/// an error path that is taken: returns NaN-free fallback with a different formula
#[no_mangle]
pub extern "C" fn res_obj(p: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(p, n) };
    let r: Result<Vec<f64>, MathErr> = xs.iter().map(|&v| safe_ln(v)).collect();
    match r {
        Ok(v) => v.iter().sum(),
        Err(MathErr::NegativeLog(bad)) => bad * bad + xs.iter().map(|v| v.abs()).sum::<f64>(),
        Err(_) => 0.0,
    }
}

fn main() {
    let p = [-0.3, 1.2, 0.7, 2.5, 0.9];
    let mut dp = [0.0; 5];
    autodiff!(opt_obj; Dup(&p, &mut dp), Const(5usize));
    let fd = fd_grad(|q| opt_obj(q.as_ptr(), 5), &p);
    cmp_vec("opt rev", &dp, &fd);
    let v = [0.3, -1.0, 0.5, 0.2, 1.0];
    let exp: f64 = fd.iter().zip(&v).map(|(a, b)| a * b).sum();
    cmp("opt fwd", fwddiff!(opt_obj; Dup(&p, &v), Const(5usize)), exp);
    // all-positive input too (other branches)
    let q = [0.3, 1.2, 0.7, 2.5, 0.9];
    let mut dq = [0.0; 5];
    autodiff!(opt_obj; Dup(&q, &mut dq), Const(5usize));
    let fd = fd_grad(|z| opt_obj(z.as_ptr(), 5), &q);
    cmp_vec("opt rev pos", &dq, &fd);
    // res_obj on the error path and on the ok path
    for (name, x) in [("res err", p), ("res ok", q)] {
        let mut dx = [0.0; 5];
        autodiff!(res_obj; Dup(&x, &mut dx), Const(5usize));
        let fd = fd_grad(|z| res_obj(z.as_ptr(), 5), &x);
        cmp_vec(name, &dx, &fd);
    }
    finish();
}
