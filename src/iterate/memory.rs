//! The iterate method's memory model: what the α/β kernel, the guesses and the certificate
//! need, checked against the machine ([`crate::resources::check`]) before the run starts
//! and before each widening of the values.
//!
//! The estimate is calibrated on the 8x8 run (219,592 nodes, 4.48M options, 54 limbs at
//! the end: 689–817 MiB peak measured, 821 MiB estimated; the 15 % margin covers what the
//! allocator keeps): the kernel's two buffers of α and β rows and the guesses' fixed-point
//! images (5 rows of `width` limbs per node), the successor lists (the graph's and the
//! kernel's copy), the exact guesses with their cached prefixes, and the certificate that
//! the run builds when it looks for positions to retire.

/// Bytes a run needs with `nodes` nodes, `edges` options and `width` limbs per value.
pub fn estimate_bytes(nodes: usize, edges: usize, width: usize) -> u64 {
    let rows = 5 * nodes as u64 * width as u64 * 8;
    let lists = edges as u64 * 16;
    let exact = nodes as u64 * 600;
    // The certificate, built during the run to find positions to retire: the live game,
    // reversed lists and per-position greedy lists.
    let certify = edges as u64 * 8 + nodes as u64 * 160;
    (rows + lists + exact + certify) * 115 / 100
}

/// Bytes the iteration without guesses needs once its kernel holds `kernel_nodes` of the
/// graph's `nodes` nodes, at `width` limbs: [`estimate_bytes`] with rows (the kernel's two
/// buffers and the parents' images of the settling test, 6 rows a node) only for the
/// kernel's nodes, the rest for the whole graph.
pub fn estimate_compacted_bytes(
    kernel_nodes: usize,
    nodes: usize,
    edges: usize,
    width: usize,
) -> u64 {
    let rows = 6 * kernel_nodes as u64 * width as u64 * 8;
    let others =
        estimate_bytes(nodes, edges, width) * 100 / 115 - 5 * nodes as u64 * width as u64 * 8;
    (rows + others) * 115 / 100
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_matches_the_measured_8x8_peak() {
        let est = estimate_bytes(219_592, 4_480_000, 54);
        // Measured: 790–817 MiB peak (`/usr/bin/time -v`, with mimalloc and the
        // retirement looks), within 15 %.
        let measured = 817u64 << 20;
        assert!(
            est > measured * 85 / 100 && est < measured * 115 / 100,
            "{}",
            est >> 20
        );
    }
}
