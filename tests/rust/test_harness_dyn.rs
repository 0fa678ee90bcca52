// A gradient taken inside a `#[test]` (rustc --test, as `cargo test --release`) of a function
// that calls methods of `Vec<Box<dyn Bond>>`: dropping a box calls the vtable's drop slot, whose
// signature, `fn(*mut ())`, is also the test harness's closure that holds the marker call. That
// closure was taken for a possible target of the drop and differentiated with the marker in it
// (refused: "'__enzyme_autodiff' is used as a value"). Checked against the analytic gradient.
use std::ffi::c_void;

extern "C" {
    fn __enzyme_autodiff(f: *const c_void, ...) -> f64;
    static enzyme_dup: i32;
    static enzyme_const: i32;
}

pub trait Bond {
    fn energy(&self, r: f64) -> f64;
}
pub struct Harmonic {
    pub k: f64,
}
pub struct Morse {
    pub d: f64,
    pub a: f64,
    pub names: Vec<String>,
}
impl Bond for Harmonic {
    fn energy(&self, r: f64) -> f64 {
        0.5 * self.k * r * r
    }
}
impl Bond for Morse {
    fn energy(&self, r: f64) -> f64 {
        let e = 1.0 - (-self.a * r).exp();
        self.d * e * e
    }
}

#[no_mangle]
pub extern "C" fn chain_energy(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let bonds: Vec<Box<dyn Bond>> = vec![
        Box::new(Harmonic { k: 2.0 }),
        Box::new(Morse { d: 1.5, a: 0.7, names: vec!["O".to_string(), "H".to_string()] }),
    ];
    xs.windows(2).enumerate().map(|(i, w)| bonds[i % 2].energy(w[1] - w[0])).sum()
}

fn analytic(x: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; x.len()];
    for i in 0..x.len() - 1 {
        let r = x[i + 1] - x[i];
        let de = if i % 2 == 0 {
            2.0 * r
        } else {
            let e = (-0.7 * r).exp();
            2.0 * 1.5 * (1.0 - e) * 0.7 * e
        };
        g[i] -= de;
        g[i + 1] += de;
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradient_of_the_chain() {
        let x = [0.1, 0.9, 1.4, 2.6, 3.0];
        let mut dx = [0.0f64; 5];
        unsafe {
            __enzyme_autodiff(chain_energy as *const c_void, enzyme_dup, x.as_ptr(),
                              dx.as_mut_ptr(), enzyme_const, 5usize);
        }
        let want = analytic(&x);
        for i in 0..5 {
            assert!((dx[i] - want[i]).abs() < 1e-12 * (1.0 + want[i].abs()), "{:?} {:?}", dx, want);
        }
        println!("CHECK chain gradient {:?}", dx);
    }
}
