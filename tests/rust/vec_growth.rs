// Vecs that grow inside the differentiated function: `push` onto an empty Vec<f64> and
// Vec<Particle> (a struct of floats and an integer) reallocates through the alloc crate's
// type-erased finish_grow, whose realloc sees no typed access to the block. Reverse mode
// against central differences, forward mode against reverse.
use std::ffi::c_void;
extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    fn __enzyme_fwddiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

struct Particle {
    x: f64,
    id: i32,
    w: f32,
}

#[no_mangle]
pub extern "C" fn energy(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let mut sq: Vec<f64> = Vec::new();
    let mut ps: Vec<Particle> = Vec::new();
    for (i, v) in xs.iter().enumerate() {
        sq.push(v * v + 1.0);
        ps.push(Particle { x: v.sin(), id: i as i32, w: (*v as f32) * 0.5 });
    }
    let mut s = 0.0;
    for (i, (a, p)) in sq.iter().zip(ps.iter()).enumerate() {
        s += a * (i as f64 + 1.0) + p.x * (p.id as f64) + (p.w as f64) * 1e-3;
    }
    s
}

fn main() {
    let x = [0.5, 1.5, -2.0, 3.0, 0.25, 1.0, 2.0, -0.5, 4.0];
    let n = x.len();
    let mut dx = [0.0; 9];
    let v = [1.0, -0.5, 0.25, 2.0, 0.0, 0.7, -1.0, 0.3, 0.1];
    let mut failed = 0;
    unsafe {
        __enzyme_autodiff(energy as *const c_void, enzyme_dup, x.as_ptr(), dx.as_mut_ptr(),
                          enzyme_const, n);
    }
    let jv = unsafe {
        __enzyme_fwddiff(energy as *const c_void, enzyme_dup, x.as_ptr(), v.as_ptr(),
                         enzyme_const, n)
    };
    let mut dot = 0.0;
    for i in 0..n {
        let (mut p, mut m) = (x, x);
        p[i] += 1e-6;
        m[i] -= 1e-6;
        let fd = (energy(p.as_ptr(), n) - energy(m.as_ptr(), n)) / 2e-6;
        // (the f32 field's rounding shows in the differences at 1e-3 * 6e-8 / 2e-6)
        let ok = (fd - dx[i]).abs() <= 1e-4 * (1.0 + fd.abs());
        println!("CHECK dx[{}] {:.12} {:.12}{}", i, dx[i], fd, if ok { "" } else { "  <-- FAILED" });
        failed += !ok as i32;
        dot += v[i] * dx[i];
    }
    let ok = (jv - dot).abs() <= 1e-9 * (1.0 + dot.abs());
    println!("CHECK tangent {:.12} {:.12}{}", jv, dot, if ok { "" } else { "  <-- FAILED" });
    failed += !ok as i32;
    std::process::exit(failed);
}
