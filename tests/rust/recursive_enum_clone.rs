// A Vec of a recursive enum (f64 payloads beside a Vec of itself) cloned inside the
// differentiated function: the clone copies each element with one memcpy, typed only by the
// recursive variant's Vec header there (a pointer), so the other variants' f64 adjoints were
// lost (a zero gradient, silently). Refused now (test_rust.py); without `--cfg rec` (an enum
// that is not recursive) it differentiates: the gradient against central differences.
use std::ffi::c_void;
extern "C" { fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
             static enzyme_dup: i32; }

#[derive(Clone, Debug)]
enum Term { Const(f64), Lin(f64, usize), Exp { a: f64, b: f64 }, #[cfg(rec)] Sum(Vec<Term>) }

fn eval(t: &Term, x: f64) -> f64 {
    match t {
        Term::Const(c) => *c,
        Term::Lin(c, i) => c * x * (*i as f64),
        Term::Exp { a, b } => a * (b * x).exp(),
        #[cfg(rec)]
        Term::Sum(ts) => ts.iter().map(|u| eval(u, x)).sum(),
    }
}

#[no_mangle]
pub extern "C" fn terms(p: *const f64) -> f64 {
    let p = unsafe { std::slice::from_raw_parts(p, 3) };
    let ts = vec![Term::Const(p[0]), Term::Lin(p[1], 2), Term::Exp { a: p[2], b: p[0] }];
    #[cfg(clone)]
    let ts = ts.clone();
    ts.iter().map(|t| eval(t, 0.5)).sum()
}
fn main() {
    let p = [0.5, -0.3, 0.8];
    let mut dp = [0.0; 3];
    unsafe { __enzyme_autodiff(terms as *const c_void, enzyme_dup, p.as_ptr(), dp.as_mut_ptr()); }
    let e = 0.5 * (0.5f64 * 0.5).exp();
    println!("dp = {:?}\nexpected [{}, 1.0, {}]", dp, 1.0 + 0.8 * e, e / 0.5);
    let h = 1e-6;
    let fd: Vec<f64> = (0..3).map(|i| { let mut a = p; a[i] += h; let mut b = p; b[i] -= h; (terms(a.as_ptr()) - terms(b.as_ptr())) / (2.0 * h) }).collect();
    println!("central differences {:?}", fd);
    let bad = (0..3).filter(|&i| (dp[i] - fd[i]).abs() > 1e-6 * (1.0 + fd[i].abs())).count();
    println!("bad {}", bad);
}
