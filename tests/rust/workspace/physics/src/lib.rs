//! A library crate whose function the binary crate differentiates: a chain of springs built as
//! a Vec of structs from an iterator (rustc keeps the Vec's address as an integer, with a
//! dangling constant for the empty case), freed before the function returns.
pub struct Spring {
    pub k: f64,
    pub rest: f64,
}

impl Spring {
    pub fn energy(&self, x: f64) -> f64 {
        0.5 * self.k * (x - self.rest).powi(2)
    }
}

#[no_mangle]
pub extern "C" fn chain_energy(x: *const f64, n: usize) -> f64 {
    let xs = unsafe { std::slice::from_raw_parts(x, n) };
    let springs: Vec<Spring> = (0..n).map(|i| Spring { k: 1.0 + i as f64, rest: 0.5 }).collect();
    xs.windows(2).zip(springs.iter()).map(|(w, s)| s.energy(w[1] - w[0])).sum::<f64>()
        + xs.iter().map(|v| v.sin()).sum::<f64>()
}
