//! The GMM objective of bench/src/gmm.h (ADBench's Gaussian mixture with a Wishart prior),
//! written in idiomatic Rust: Vecs, slices, iterators and closures. bench/rust_gmm.py builds it
//! with rustc and enzyme-cc as the link step and times the primal and the gradient beside the C++
//! version, on the same data (the same generator in both).
use std::ffi::c_void;
use std::time::Instant;

extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...);
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

fn logsumexp(x: &[f64]) -> f64 {
    let mx = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    x.iter().map(|v| (v - mx).exp()).sum::<f64>().ln() + mx
}

fn log_gamma_distrib(a: f64, p: usize) -> f64 {
    let pf = p as f64;
    (1..=p).fold(0.25 * pf * (pf - 1.0) * std::f64::consts::PI.ln(), |acc, j| {
        acc + libm_lgamma(a + 0.5 * (1.0 - j as f64))
    })
}

extern "C" {
    #[link_name = "lgamma"]
    fn c_lgamma(x: f64) -> f64;
}
fn libm_lgamma(x: f64) -> f64 {
    unsafe { c_lgamma(x) }
}

/// The objective with the d, k, n sizes and the constant data in a struct.
#[repr(C)]
pub struct Problem {
    d: usize,
    k: usize,
    n: usize,
    x: *const f64,
    gamma: f64,
    m: usize,
}

#[no_mangle]
pub extern "C" fn gmm_objective(prob: *const Problem, alphas: *const f64, means: *const f64,
                                icf: *const f64) -> f64 {
    let p = unsafe { &*prob };
    let (d, k, n) = (p.d, p.k, p.n);
    let icf_sz = d * (d + 1) / 2;
    let alphas = unsafe { std::slice::from_raw_parts(alphas, k) };
    let means = unsafe { std::slice::from_raw_parts(means, k * d) };
    let icf = unsafe { std::slice::from_raw_parts(icf, k * icf_sz) };
    let x = unsafe { std::slice::from_raw_parts(p.x, n * d) };
    // (collected from ranges, whose length is known: a Vec that may grow inside the
    // differentiated function is refused, the growth's copy carrying no element type)
    let sum_qs: Vec<f64> = (0..k).map(|ik| icf[ik * icf_sz..ik * icf_sz + d].iter().sum())
        .collect();
    let qdiags: Vec<f64> = (0..k * d).map(|i| icf[(i / d) * icf_sz + i % d].exp()).collect();
    let mut xc = vec![0.0; d];
    let mut qx = vec![0.0; d];
    let mut main_term = vec![0.0; k];
    let mut slse = 0.0;
    for xi in x.chunks(d) {
        for ik in 0..k {
            for (c, (a, b)) in xc.iter_mut().zip(xi.iter().zip(&means[ik * d..(ik + 1) * d])) {
                *c = a - b;
            }
            let qd = &qdiags[ik * d..(ik + 1) * d];
            let lt = &icf[ik * icf_sz + d..(ik + 1) * icf_sz];
            for id in 0..d {
                qx[id] = qd[id] * xc[id];
            }
            let mut li = 0;
            for i in 0..d {
                for j in i + 1..d {
                    qx[j] += lt[li] * xc[i];
                    li += 1;
                }
            }
            main_term[ik] = alphas[ik] + sum_qs[ik] - 0.5 * qx.iter().map(|v| v * v).sum::<f64>();
        }
        slse += logsumexp(&main_term);
    }
    let constant = -(n as f64) * d as f64 * 0.5 * (2.0 * std::f64::consts::PI).ln();
    let nn = p.m + d + 1;
    let c = nn as f64 * d as f64 * (p.gamma.ln() - 0.5 * 2f64.ln())
        - log_gamma_distrib(0.5 * nn as f64, d);
    let prior: f64 = (0..k).map(|ik| {
        let fro = qdiags[ik * d..(ik + 1) * d].iter().map(|v| v * v).sum::<f64>()
            + icf[ik * icf_sz + d..(ik + 1) * icf_sz].iter().map(|v| v * v).sum::<f64>();
        0.5 * p.gamma * p.gamma * fro - p.m as f64 * sum_qs[ik]
    }).sum::<f64>() - k as f64 * c;
    constant + slse - n as f64 * logsumexp(alphas) + prior
}

/// The data: a linear congruential generator shared with the C++ driver.
fn lcg(state: &mut u64) -> f64 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    ((*state >> 11) as f64) / ((1u64 << 53) as f64)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    let (d, k, n, reps) = (args[0], args[1], args[2], args[3]);
    let icf_sz = d * (d + 1) / 2;
    let mut s = 42u64;
    let alphas: Vec<f64> = (0..k).map(|_| lcg(&mut s) - 0.5).collect();
    let means: Vec<f64> = (0..k * d).map(|_| lcg(&mut s) * 2.0 - 1.0).collect();
    let icf: Vec<f64> = (0..k * icf_sz).map(|_| lcg(&mut s) * 0.2 - 0.1).collect();
    let x: Vec<f64> = (0..n * d).map(|_| lcg(&mut s) * 2.0 - 1.0).collect();
    let prob = Problem { d, k, n, x: x.as_ptr(), gamma: 1.0, m: 0 };
    let mut e = 0.0;
    let primal = median((0..reps).map(|_| {
        let t = Instant::now();
        e = gmm_objective(&prob, alphas.as_ptr(), means.as_ptr(), icf.as_ptr());
        t.elapsed().as_secs_f64()
    }).collect());
    let (mut da, mut dm, mut di) = (vec![0.0; k], vec![0.0; k * d], vec![0.0; k * icf_sz]);
    let grad = median((0..reps).map(|_| {
        da.iter_mut().chain(dm.iter_mut()).chain(di.iter_mut()).for_each(|v| *v = 0.0);
        let t = Instant::now();
        unsafe {
            __enzyme_autodiff(gmm_objective as *const c_void, enzyme_const, &prob as *const Problem,
                              enzyme_dup, alphas.as_ptr(), da.as_mut_ptr(),
                              enzyme_dup, means.as_ptr(), dm.as_mut_ptr(),
                              enzyme_dup, icf.as_ptr(), di.as_mut_ptr());
        }
        t.elapsed().as_secs_f64()
    }).collect());
    let norm: f64 = da.iter().chain(&dm).chain(&di).map(|v| v * v).sum::<f64>().sqrt();
    println!("objective {:.15e}", e);
    println!("gradient norm {:.15e} first {:.15e} last {:.15e}", norm, da[0], di[k * icf_sz - 1]);
    println!("primal {:.6e} s gradient {:.6e} s ratio {:.2}", primal, grad, grad / primal);
}
