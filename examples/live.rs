use bidtb::{graph::Graph, index::Index, kernel::Kernel};
fn main() {
    let board = "8x8".parse().unwrap();
    let index = Index::new(board);
    let graph = Graph::new(&index);
    let mut k = Kernel::new(&graph, 8);
    println!("edges {}", graph.edge_count());
    for _ in 0..300 {
        k.ensure_capacity();
        k.step(|_| false);
        if k.iteration() % 50 == 0 {
            println!("{} live {:?}", k.iteration(), k.live_options());
        }
    }
}
