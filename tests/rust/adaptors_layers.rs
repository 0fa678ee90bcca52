// Iterator adaptors (scan, take_while, step_by, rev, flat_map), Vec push/pop/retain/truncate,
// split_at_mut and swap, a boxed slice (its empty case copies into Rust's dangling address, which
// no shadow needs: once refused), const generics, a Result<f64, String> whose error pointer
// shares the float's slot and is freed, and an enum whose u64 payload shares the f64's slot and
// is read as a number (both once refused as bit manipulation), and `[f32; 2]` passed and
// returned by value as one i64 (refused the same way). Reverse mode against central
// differences, forward mode against reverse.
use std::ffi::c_void;
extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    fn __enzyme_fwddiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

#[derive(Clone, Copy)]
struct Mat<const N: usize> { a: [[f64; N]; N] }
impl<const N: usize> Mat<N> {
    fn mul_vec(&self, v: &[f64; N]) -> [f64; N] {
        let mut out = [0.0; N];
        for i in 0..N { for j in 0..N { out[i] += self.a[i][j] * v[j]; } }
        out
    }
}
#[no_mangle]
pub extern "C" fn h_const_generic(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let m = Mat::<3> { a: [[xs[0], 1.0, xs[1]], [0.5, xs[2], 0.0], [xs[3], xs[4], 1.0]] };
    let v = [xs[5], 1.0, -0.5];
    let w = m.mul_vec(&v);
    let w2 = m.mul_vec(&w);
    w2.iter().zip(w.iter()).map(|(a, b)| a * b).sum()
}

#[no_mangle]
pub extern "C" fn h_adaptors(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let run: Vec<f64> = xs.iter().scan(0.0, |acc, &t| { *acc += t; Some(*acc) }).collect();
    let a: f64 = run.iter().take_while(|&&t| t < 2.0).map(|t| t * t).sum();
    let b: f64 = xs.iter().skip(1).step_by(2).rev().zip(run.iter()).map(|(p, q)| p * q).sum();
    let c: f64 = xs.chunks(2).flat_map(|c| c.iter().map(move |t| t * c.len() as f64)).sum();
    let mut v: Vec<f64> = Vec::with_capacity(2);
    for &t in xs { v.push(t * t); if v.len() > 3 { v.pop(); } }
    v.retain(|&t| t > 0.01);
    v.truncate(2);
    let (l, r) = v.split_at_mut(1);
    std::mem::swap(&mut l[0], &mut r[0]);
    let boxed: Box<[f64]> = xs.to_vec().into_boxed_slice();
    a + b + c + v.iter().enumerate().map(|(i, t)| t * (i as f64 + 2.0)).sum::<f64>() + boxed.iter().map(|t| t.cos()).sum::<f64>()
}

fn fib_like(a: f64, d: u32) -> f64 { if d == 0 { a } else { fib_like(a * 0.9, d - 1) + a.sin() } }
#[no_mangle]
pub extern "C" fn g(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let fs: Vec<f32> = xs.iter().map(|&t| t as f32).collect();
    let s32: f32 = fs.iter().map(|t| t * t).sum();
    let mut acc = 0.0;
    let mut i = 0;
    while i < n { if xs[i] > 1.5 { break; } acc += fib_like(xs[i], 3); i += 1; }
    let r: Result<f64, String> = if acc > 100.0 { Err("big".to_string()) } else { Ok(acc) };
    let best = xs.iter().cloned().enumerate().max_by(|a, b| a.1.partial_cmp(&b.1).unwrap()).map(|(_, v)| v).unwrap();
    r.unwrap_or(0.0) + s32 as f64 + best.powf(2.5) * 0.1
        + xs.iter().map(|t| t.mul_add(2.0, 1.0).hypot(0.5)).product::<f64>()
}
/// An enum whose f64 and u64 payloads share one i64 slot: the u64 read as a number on its
/// own path (once refused as bit manipulation of a double).
enum Slot { F(f64), U(u64) }
#[inline(never)]
fn slot(t: f64) -> Slot { if t > 0.0 { Slot::F(t * t) } else { Slot::U(3) } }
#[no_mangle]
pub extern "C" fn h_enum_slot(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    xs.iter().map(|&t| match slot(t) { Slot::F(v) => v * t, Slot::U(k) => k as f64 * t }).sum()
}

/// `[f32; 2]` passed and returned by value: Rust's ABI moves it as one i64 holding both floats'
/// bits (once refused as bit manipulation of a double).
#[inline(never)]
fn turn(v: [f32; 2], a: f32) -> [f32; 2] {
    let (s, c) = a.sin_cos();
    [c * v[0] - s * v[1], s * v[0] + c * v[1]]
}
#[inline(never)]
fn norm2(v: [f32; 2]) -> f32 { v[0] * v[0] + v[1] * v[1] }
#[no_mangle]
pub extern "C" fn h_f32_pairs(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let mut s = 0.0f32;
    for k in 0..n / 2 {
        let w = turn([xs[2 * k] as f32, xs[2 * k + 1] as f32], 0.3 * k as f32 + 0.1);
        s += norm2(w) * (k as f32 + 1.0) + w[0];
    }
    s as f64
}

fn check(name: &str, f: extern "C" fn(*const f64, usize) -> f64, h: f64) -> i32 {
    check_tol(name, f, h, 1e-9)
}

/// tt: the tangent's tolerance against the gradient's dot product (f32 code rounds each its way)
fn check_tol(name: &str, f: extern "C" fn(*const f64, usize) -> f64, h: f64, tt: f64) -> i32 {
    let x = [0.5, -1.2, 0.8, 1.7, -0.3, 0.9];
    let n = x.len();
    let mut dx = [0.0; 6];
    unsafe { __enzyme_autodiff(f as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(), enzyme_const, n); }
    let mut bad = 0;
    for i in 0..n {
        let (mut p, mut m) = (x, x);
        p[i] += h; m[i] -= h;
        let fd = (f(p.as_ptr(), n) - f(m.as_ptr(), n)) / (2.0 * h);
        let ok = (fd - dx[i]).abs() <= 1e-4 * (1.0 + fd.abs());
        println!("CHECK {} dx[{}] {:.9} {:.9}{}", name, i, dx[i], fd, if ok { "" } else { "  <-- FAILED" });
        bad += !ok as i32;
    }
    let v = [1.0, 0.5, -0.25, 0.3, 0.7, -0.1];
    let t = unsafe { __enzyme_fwddiff(f as *const c_void, enzyme_dup, x.as_ptr(), v.as_ptr(), enzyme_const, n) };
    let dot: f64 = (0..n).map(|i| dx[i] * v[i]).sum();
    let ok = (t - dot).abs() <= tt * (1.0 + dot.abs());
    println!("CHECK {} tangent {:.9} {:.9}{}", name, t, dot, if ok { "" } else { "  <-- FAILED" });
    bad + !ok as i32
}

fn main() {
    let mut bad = 0;
    bad += check("constgeneric", h_const_generic, 1e-6);
    bad += check("adaptors", h_adaptors, 1e-6);
    bad += check("result", g, 1e-3);
    bad += check("enumslot", h_enum_slot, 1e-6);     // (a wide step: the f32 part rounds a smaller one away)
    bad += check_tol("f32pairs", h_f32_pairs, 1e-2, 1e-5);
    std::process::exit(bad);
}
