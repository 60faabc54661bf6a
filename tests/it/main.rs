//! The integration tests, in one crate (one binary to build and link): one module per
//! area, the shared helpers in [`common`] and the independent reference solver in
//! [`reference`], compiled once for every module that compares with it.

mod common;
mod reference;

mod alpha_beta_tables;
mod architecture;
mod atlas;
mod brute_force;
mod certificate;
mod chips;
mod chips_reference;
mod cli;
mod cluster;
mod docs;
mod explorer;
mod fuzz;
mod hardening;
mod load;
mod means;
mod memory_skip;
mod men;
mod plan;
mod play;
mod play_api;
mod play_page;
mod reference_8x8;
mod resources;
mod resume;
mod retire;
mod server;
mod solve;
mod tables;
mod upgrade;
