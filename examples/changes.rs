use bidtb::generate::{Observer, Options, solve};
struct P;
impl Observer for P {
    fn iteration(&self, n: u32, changed: usize, _bits: usize) {
        if n % 25 == 0 || n < 20 {
            eprintln!("{n} {changed}");
        }
    }
}
fn main() {
    let mut o = Options::new("8x8".parse().unwrap());
    o.max_iterations = Some(std::env::args().nth(1).unwrap().parse().unwrap());
    let s = solve(&o, &P);
    let total: u64 = s
        .history
        .iter()
        .map(|h| h.changed.iter().map(|&c| c as u64).sum::<u64>())
        .sum();
    eprintln!("total changes {total}");
}
