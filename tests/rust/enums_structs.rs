// Ordinary numerical Rust: Vec<Vec<f64>>, an enum with float payloads (rustc copies them
// through i64 slots: their derivative was silently dropped), Option and fold, a sorted copy
// with windows, a Vec of structs with an array field, f64 methods (powi, powf, hypot, exp, ln,
// atan2); an interpreter's value enum whose integer variant is computed on (the payload's bytes
// are an i64 on one arm and an f64 on another: refused as bit manipulation of a float until the
// arms were told apart by the tag). Reverse mode against central differences.
use std::ffi::c_void;
extern "C" { fn __enzyme_autodiff(f: *const c_void, ...) -> f64; static enzyme_dup: i32; static enzyme_const: i32; }
#[derive(Clone, Copy)]
enum Shape { Circle(f64), Rect(f64, f64) }
impl Shape { fn area(&self) -> f64 { match *self { Shape::Circle(r) => std::f64::consts::PI * r * r, Shape::Rect(a, b) => a * b } } }
struct Particle { pos: [f64; 3], mass: f64 }
#[no_mangle]
pub extern "C" fn f(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    // Vec<Vec<f64>>
    let grid: Vec<Vec<f64>> = (0..3).map(|i| xs.iter().map(|v| v * (i as f64 + 1.0)).collect()).collect();
    let mut s = 0.0;
    for row in &grid { s += row.iter().map(|v| v.powi(2)).sum::<f64>(); }
    // enums and Option
    let shapes: Vec<Shape> = xs.chunks(2).map(|c| if c.len() == 2 { Shape::Rect(c[0], c[1]) } else { Shape::Circle(c[0]) }).collect();
    s += shapes.iter().map(|sh| sh.area()).sum::<f64>();
    let best = xs.iter().cloned().fold(None, |acc: Option<f64>, v| match acc { None => Some(v), Some(a) => Some(if v > a { v } else { a }) });
    s += best.unwrap_or(0.0) * 2.0;
    // sort a copy
    let mut sorted = xs.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    s += sorted.windows(2).map(|w| (w[1] - w[0]).hypot(0.5)).sum::<f64>();
    // structs
    let ps: Vec<Particle> = xs.iter().enumerate().map(|(i, &v)| Particle { pos: [v, v.exp(), (i as f64).atan2(v)], mass: 1.0 + v * v }).collect();
    let com: f64 = ps.iter().map(|p| p.mass * (p.pos[0] + p.pos[1].ln() + p.pos[2])).sum::<f64>();
    s + com + xs.iter().map(|v| v.abs().powf(1.5)).sum::<f64>()
}
#[derive(Clone, Copy)]
enum Value { Num(f64), Int(i64), Pair(f64, f64), Nil }
#[inline(never)]
fn eval(v: Value, w: f64) -> Value {
    match v {
        Value::Num(a) => Value::Num(a * w + a.exp() * 0.1),
        Value::Int(i) => Value::Int(i * 3 - 1),
        Value::Pair(a, b) => Value::Pair(a * b, a - b * w),
        Value::Nil => Value::Nil,
    }
}
#[inline(never)]
fn halve(v: &mut Value) { match v { Value::Int(i) => *i /= 2, Value::Num(a) => *a *= 0.5, _ => {} } }
#[no_mangle]
pub extern "C" fn g(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let mut v = vec![Value::Num(xs[0]), Value::Int(5), Value::Pair(xs[1], xs[2]), Value::Nil, Value::Num(xs[3])];
    for _ in 0..2 { for e in v.iter_mut() { *e = eval(*e, xs[0]); halve(e); } }
    v.iter().map(|e| match e { Value::Num(a) => *a, Value::Int(i) => *i as f64 * 0.01, Value::Pair(a, b) => a * b, Value::Nil => 1.0 }).sum()
}
fn check(name: &str, h: extern "C" fn(*const f64, usize) -> f64, x: &[f64]) -> i32 {
    let n = x.len();
    let mut dx = vec![0.0f64; n];
    unsafe { __enzyme_autodiff(h as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(), enzyme_const, n); }
    let mut bad = 0;
    for i in 0..n {
        let (mut p, mut m) = (x.to_vec(), x.to_vec()); p[i] += 1e-6; m[i] -= 1e-6;
        let fd = (h(p.as_ptr(), n) - h(m.as_ptr(), n)) / 2e-6;
        let ok = (fd - dx[i]).abs() <= 1e-6 * (1.0 + fd.abs());
        println!("CHECK {} dx[{}] {:.9} {:.9}{}", name, i, dx[i], fd, if ok { "" } else { "  <-- FAILED" });
        bad += !ok as i32;
    }
    bad
}
fn main() {
    let bad = check("f", f, &[0.5, 1.5, -2.0, 3.0, 0.25]) + check("g", g, &[0.4, 0.9, -0.3, 1.2]);
    std::process::exit(bad);
}
