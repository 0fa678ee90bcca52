// A trajectory history in the release profile (no debug info): `Vec<State>` of structs holding a
// `Vec<f64>` and an `f64`, each made by a non-inlined function that returns the struct through a
// `writeonly` pointer and pushed. The 32-byte copies of a State out of the caller's slot were
// refused ("cannot deduce the type of the memory being copied"), or typed all pointer from the
// caller's one typed access (the Vec's buffer), which drops the f64's adjoint: the callee's
// stores, a length counted with, a pointer and a double, say what the slot holds. Reverse mode
// against central differences; prints CHECK lines.
use std::ffi::c_void;

extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

#[derive(Clone)]
struct State {
    x: Vec<f64>,
    t: f64,
}

#[inline(never)]
fn step(s: &State) -> State {
    let mut n = s.clone();
    for v in n.x.iter_mut() {
        *v = v.sin() + s.t;
    }
    n.t += 0.1;
    n
}

#[no_mangle]
pub extern "C" fn history(x: *const f64, n: usize) -> f64 {
    let s0 = State { x: unsafe { std::slice::from_raw_parts(x, n) }.to_vec(), t: 0.0 };
    let mut hist = vec![s0];
    for _ in 0..3 {
        let s = step(hist.last().unwrap());
        hist.push(s);
    }
    hist.iter().map(|s| s.x.iter().sum::<f64>() * s.t).sum()
}

#[inline(never)]
fn make(v: &[f64], t: f64) -> State {
    State { x: v.iter().map(|a| a.sin()).collect(), t: t * t }
}

#[inline(never)]
fn total(h: &Vec<State>) -> f64 {
    h.iter().map(|s| s.x.iter().sum::<f64>() * s.t).sum()
}

// the f64 of each State is read only by `total`, through the Vec: nothing in `made` types it
#[no_mangle]
pub extern "C" fn made(x: *const f64, n: usize) -> f64 {
    let v = unsafe { std::slice::from_raw_parts(x, n) };
    let mut hist = Vec::new();
    for k in 0..3 {
        hist.push(make(&v[k..], v[k]));
    }
    total(&hist)
}

// (a macro, not a function: the marker's caller types x by its own stores, as a user's main)
macro_rules! check {
    ($name:expr, $f:ident, $x:expr) => {{
        let x = $x;
        let n = x.len();
        let mut dx = [0.0; 8];
        unsafe {
            __enzyme_autodiff($f as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(),
                              enzyme_const, n);
        }
        let mut worst: f64 = 0.0;
        for i in 0..n {
            let (mut p, mut m) = (x, x);
            p[i] += 1e-6;
            m[i] -= 1e-6;
            let fd = ($f(p.as_ptr(), n) - $f(m.as_ptr(), n)) / 2e-6;
            worst = worst.max((dx[i] - fd).abs() / fd.abs().max(1.0));
        }
        println!("CHECK {} {:.1e} {}", $name, worst, if worst < 1e-6 { "ok" } else { "FAILED" });
    }};
}

fn main() {
    check!("history", history, [0.3, -0.4, 1.1]);
    check!("made", made, [0.3, -0.4, 1.1, 0.7]);
}
