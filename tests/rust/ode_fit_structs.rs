// A user's ODE fit in ordinary Rust: a State struct {Vec<f64>, f64} derived Clone, a model
// struct with a method building the right-hand side by `collect`, a generic RK4 taking a
// closure, `to_vec`, a history of cloned states, `windows`, `powi`, `fold`. Refused before:
// the clone's length (an integer stored beside the f64 field, used to size the copy), the
// Vec header returned into the struct's front (its f64 field outside the copy), the elements
// reached through the header's buffer pointer; with -g at opt-level 0, the closure's captures
// moved with its iterator (typed by the local's #dbg_declare). Reverse mode against central
// differences, forward mode against reverse; prints CHECK lines.
use std::ffi::c_void;
extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    fn __enzyme_fwddiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

#[derive(Clone, Debug)]
struct State { y: Vec<f64>, t: f64 }

struct Model { k: Vec<f64>, coupling: f64 }

impl Model {
    fn rhs(&self, s: &State) -> Vec<f64> {
        let n = s.y.len();
        (0..n).map(|i| {
            let left = if i > 0 { s.y[i - 1] } else { 0.0 };
            let right = if i + 1 < n { s.y[i + 1] } else { 0.0 };
            -self.k[i % self.k.len()] * s.y[i] + self.coupling * (left - 2.0 * s.y[i] + right) + (s.t * 0.3).sin()
        }).collect()
    }
}

fn axpy(y: &[f64], a: f64, x: &[f64]) -> Vec<f64> { y.iter().zip(x).map(|(yi, xi)| yi + a * xi).collect() }

fn rk4<F: Fn(&State) -> Vec<f64>>(f: F, s: &State, h: f64) -> State {
    let k1 = f(s);
    let s2 = State { y: axpy(&s.y, 0.5 * h, &k1), t: s.t + 0.5 * h };
    let k2 = f(&s2);
    let s3 = State { y: axpy(&s.y, 0.5 * h, &k2), t: s.t + 0.5 * h };
    let k3 = f(&s3);
    let s4 = State { y: axpy(&s.y, h, &k3), t: s.t + h };
    let k4 = f(&s4);
    let y = s.y.iter().enumerate().map(|(i, yi)| yi + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])).collect();
    State { y, t: s.t + h }
}

#[no_mangle]
pub extern "C" fn loss(params: *const f64, y0: *const f64, n: usize, steps: usize) -> f64 {
    let p = unsafe { std::slice::from_raw_parts(params, 3) };
    let y0 = unsafe { std::slice::from_raw_parts(y0, n) };
    let model = Model { k: vec![p[0], p[1]], coupling: p[2] };
    let mut s = State { y: y0.to_vec(), t: 0.0 };
    let mut history: Vec<State> = Vec::new();
    for _ in 0..steps {
        s = rk4(|st| model.rhs(st), &s, 0.05);
        history.push(s.clone());
    }
    let target: Vec<f64> = (0..n).map(|i| (i as f64 * 0.2).cos()).collect();
    let misfit: f64 = s.y.iter().zip(&target).map(|(a, b)| (a - b).powi(2)).sum();
    let smooth: f64 = history.iter().map(|h| h.y.windows(2).map(|w| (w[1] - w[0]).abs().sqrt()).sum::<f64>()).sum();
    misfit + 1e-2 * smooth + s.y.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
}

fn main() {
    let n = 6usize; let steps = 8usize;
    let p = vec![0.7, 1.3, 0.4];
    let y0: Vec<f64> = (0..n).map(|i| 0.5 + 0.1 * i as f64).collect();
    let mut dp = vec![0.0; 3]; let mut dy0 = vec![0.0; n];
    unsafe { __enzyme_autodiff(loss as *const c_void, enzyme_dup, p.as_ptr(), dp.as_mut_ptr(), enzyme_dup, y0.as_ptr(), dy0.as_mut_ptr(), enzyme_const, n, enzyme_const, steps); }
    let mut fails = 0;
    let h = 1e-6;
    for i in 0..3 {
        let mut pp = p.clone(); pp[i] += h; let mut pm = p.clone(); pm[i] -= h;
        let fd = (loss(pp.as_ptr(), y0.as_ptr(), n, steps) - loss(pm.as_ptr(), y0.as_ptr(), n, steps)) / (2.0 * h);
        let bad = (fd - dp[i]).abs() > 1e-6 * (1.0 + fd.abs());
        println!("CHECK dp[{}] {} {}{}", i, dp[i], fd, if bad { "  <-- FAILED" } else { "" });
        fails += bad as i32;
    }
    for i in 0..n {
        let mut yp = y0.clone(); yp[i] += h; let mut ym = y0.clone(); ym[i] -= h;
        let fd = (loss(p.as_ptr(), yp.as_ptr(), n, steps) - loss(p.as_ptr(), ym.as_ptr(), n, steps)) / (2.0 * h);
        let bad = (fd - dy0[i]).abs() > 1e-6 * (1.0 + fd.abs());
        println!("CHECK dy0[{}] {} {}{}", i, dy0[i], fd, if bad { "  <-- FAILED" } else { "" });
        fails += bad as i32;
    }
    let vp = vec![0.3, -0.2, 0.5]; let vy: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
    let fw = unsafe { __enzyme_fwddiff(loss as *const c_void, enzyme_dup, p.as_ptr(), vp.as_ptr(), enzyme_dup, y0.as_ptr(), vy.as_ptr(), enzyme_const, n, enzyme_const, steps) };
    let rv: f64 = (0..3).map(|i| vp[i] * dp[i]).sum::<f64>() + (0..n).map(|i| vy[i] * dy0[i]).sum::<f64>();
    let bad = (fw - rv).abs() > 1e-8 * (1.0 + rv.abs());
    println!("CHECK fwd {} {}{}", fw, rv, if bad { "  <-- FAILED" } else { "" });
    fails += bad as i32;
    std::process::exit(fails);
}
