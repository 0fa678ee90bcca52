// The standard library's collections and text as numerical Rust uses them inside a
// differentiated function, where rustc's IR (no type-based alias metadata) does not say which
// data are integers: an index Vec<usize> sorted by a float key (a recursive merge sort moving
// the indices through a scratch buffer as i64), a HashMap<usize, f64> (hashbrown: SSE2 groups
// of control bytes beside the buckets), an unstable float sort, BTreeMap, VecDeque, nested Vecs,
// f64 methods, Result<f64, String> whose error is formatted with format!, and eprintln!
// (formatting and printing carry no derivative). Reverse mode against central differences,
// forward mode against reverse. At opt-level 0 with debug info (cargo's dev profile), the element
// copies of VecDeque's growth and of the sorts are typed by their copy routine's type parameter.
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ffi::c_void;
extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    fn __enzyme_fwddiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

/// An unstable sort of floats (pdqsort), rev, position, chunks.
fn f1(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_unstable_by(|a, b| b.partial_cmp(a).unwrap());
    let med = v[v.len() / 2];
    let pos = v.iter().rev().position(|&t| t > med).unwrap_or(0) as f64;
    let mut s = med * (1.0 + pos);
    for c in xs.chunks(2) { s += c.iter().product::<f64>(); }
    s + v.iter().rev().enumerate().map(|(i, t)| t * (i as f64)).sum::<f64>()
}
/// A BTreeMap<usize, f64> and a VecDeque<f64> used as a bounded queue.
fn f2(xs: &[f64]) -> f64 {
    let mut m: BTreeMap<usize, f64> = BTreeMap::new();
    for (i, &x) in xs.iter().enumerate() { *m.entry(i % 2).or_insert(1.0) *= x * x + 2.0; }
    let mut q: VecDeque<f64> = VecDeque::new();
    for &x in xs { q.push_back(x.exp()); if q.len() > 3 { let a = q.pop_front().unwrap(); q.push_back(a * 0.5); } }
    m.values().map(|v| v.ln()).sum::<f64>() + q.iter().sum::<f64>()
}
/// A Vec<Vec<f64>> matrix times a vector; clamp, max, min, atan2, hypot, powf, sinh.
fn f3(xs: &[f64]) -> f64 {
    let n = xs.len();
    let a: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| xs[(i + j) % n] * if i == j { 2.0 } else { 0.5 }).collect()).collect();
    let mut y = vec![0.0; n];
    for i in 0..n { for j in 0..n { y[i] += a[i][j] * xs[j]; } }
    y.iter().zip(xs).map(|(p, q)| p.clamp(-3.0, 3.0).max(q.min(1.0)) + p.atan2(*q + 4.0) + p.hypot(*q) + q.abs().powf(1.5) + q.sinh()).sum()
}
/// Result<f64, String> with a formatted error (never taken), a closure moved in,
/// iter::successors, Box<[f64]>, reduce(f64::max); and a line printed to stderr.
fn f4(xs: &[f64]) -> f64 {
    let b: Box<[f64]> = xs.iter().map(|x| x * x).collect();
    let scale = xs[0];
    let g = move |t: f64| -> Result<f64, String> { if t >= 0.0 { Ok(t.sqrt() * scale) } else { Err(format!("neg {}", t)) } };
    let s: f64 = b.iter().map(|&t| g(t).unwrap_or(0.0)).sum();
    let it: f64 = std::iter::successors(Some(xs[1]), |&t| if t.abs() < 100.0 { Some(t * 1.7 + 0.1) } else { None }).take(6).sum();
    eprintln!("f4: s = {:.3}, it = {:.3}", s, it);
    s + it + xs.iter().copied().reduce(f64::max).unwrap() + xs.iter().fold(0.0f64, |a, &t| a.max(t.tanh()))
}
/// Weights the squares by their rank: sum_r (r + 1) * x[idx[r]]^2.
#[no_mangle]
pub extern "C" fn ranked(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| xs[a].partial_cmp(&xs[b]).unwrap());
    idx.iter().enumerate().map(|(r, &i)| (r as f64 + 1.0) * xs[i] * xs[i]).sum()
}

/// Records with a usize field beside f64 fields, moved by a sort and read by a variable index:
/// the field's declared type, not the array's doubles, says the `id` load is an integer.
#[derive(Clone, Copy)]
struct Particle { x: f64, v: f64, m: f64, id: usize }
fn f5(xs: &[f64]) -> f64 {
    let mut ps: Vec<Particle> = xs.iter().enumerate()
        .map(|(i, &a)| Particle { x: a, v: a * 0.5, m: 1.0 + i as f64, id: i }).collect();
    for p in ps.iter_mut() { p.x += 0.1 * p.v; p.v -= 0.1 * p.x / p.m; }
    ps.sort_by(|a, b| a.x.partial_cmp(&b.x).unwrap());
    ps.iter().map(|p| p.m * p.v * p.v + p.x * (p.id as f64)).sum()
}

/// Squares summed into buckets i % 3, then the buckets' sines weighted by their key.
#[no_mangle]
pub extern "C" fn bucketed(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let mut h: HashMap<usize, f64> = HashMap::new();
    for (i, v) in xs.iter().enumerate() {
        *h.entry(i % 3).or_insert(0.0) += v * v;
    }
    (0..3).map(|k| (k as f64 + 1.0) * h[&k].sin()).sum()
}

/// Squares summed into buckets keyed by floor(v + 0.25), the keys collected and sorted, each
/// bucket's sine weighted by its rank (once refused at -O).
#[cfg(not(no_hashmap))]
#[no_mangle]
pub extern "C" fn binned(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let mut bins: HashMap<i64, f64> = HashMap::new();
    for &v in xs {
        *bins.entry((v + 0.25).floor() as i64).or_insert(0.0) += v * v;
    }
    let mut keys: Vec<i64> = bins.keys().copied().collect();
    keys.sort();
    keys.iter().enumerate().map(|(r, k)| (r as f64 + 1.0) * bins[k].sin()).sum()
}

macro_rules! ext {
    ($name:ident, $f:ident) => {
        #[no_mangle]
        pub extern "C" fn $name(x: *const f64, n: usize) -> f64 {
            $f(unsafe { std::slice::from_raw_parts(x, n) })
        }
    };
}
ext!(sorted, f1);
ext!(maps, f2);
ext!(matrix, f3);
ext!(results, f4);
ext!(particles, f5);

macro_rules! check {
    ($f:ident, $failed:ident) => {{
        let x = [0.5, 1.5, -2.0, 3.0, 0.25, 1.1];
        let v = [1.0, -0.5, 0.25, 2.0, 0.0, 0.7];
        let n = x.len();
        let mut dx = [0.0; 6];
        unsafe {
            __enzyme_autodiff($f as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(),
                              enzyme_const, n);
        }
        let jv = unsafe {
            __enzyme_fwddiff($f as *const c_void, enzyme_dup, x.as_ptr(), v.as_ptr(),
                             enzyme_const, n)
        };
        let mut dot = 0.0;
        for i in 0..n {
            let (mut p, mut m) = (x, x);
            p[i] += 1e-6;
            m[i] -= 1e-6;
            let fd = ($f(p.as_ptr(), n) - $f(m.as_ptr(), n)) / 2e-6;
            let ok = (fd - dx[i]).abs() <= 1e-6 * (1.0 + fd.abs());
            println!("CHECK {} dx[{}] {:.12} {:.12}{}", stringify!($f), i, dx[i], fd,
                     if ok { "" } else { "  <-- FAILED" });
            $failed += !ok as i32;
            dot += v[i] * dx[i];
        }
        let ok = (jv - dot).abs() <= 1e-9 * (1.0 + dot.abs());
        println!("CHECK {} tangent {:.12} {:.12}{}", stringify!($f), jv, dot,
                 if ok { "" } else { "  <-- FAILED" });
        $failed += !ok as i32;
    }};
}

fn main() {
    let mut failed = 0;
    check!(sorted, failed);
    check!(maps, failed);
    check!(matrix, failed);
    check!(results, failed);
    check!(ranked, failed);
    check!(particles, failed);
    #[cfg(not(no_hashmap))] // (opt-level 0: hashbrown moves its buckets as bytes, refused)
    {
        check!(bucketed, failed);
        check!(binned, failed);
    }
    std::process::exit(failed);
}
