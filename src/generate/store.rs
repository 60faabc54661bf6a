//! Where a run's finished materials go and where later jobs read their exits from: the
//! [`Store`] (tables on disk for the command line, solutions in memory for the library and
//! the tests), what its writer reports ([`Written`]), and the store in memory
//! ([`InMemory`]).

use super::report::MaterialRecord;
use super::{Known, Solution, Solved};
use crate::error::Error;
use crate::material::Material;
use std::sync::Arc;

/// Where finished materials go and where later jobs read their exits from.
pub trait Store: Send {
    /// Whether the store holds material `m`, finished and usable; an error where that
    /// cannot be told (a table present that cannot be opened for now: too little address
    /// space, too many open files), which must not make the run make it again.
    fn has(&self, m: Material) -> Result<bool, Error>;
    /// Get ready to read the materials `needed`, those the job's moves lead to (open their
    /// tables, let go of the others); called before each job.
    fn prepare(&mut self, _needed: &[Material]) -> Result<(), Error> {
        Ok(())
    }
    /// What a job reads the materials `needed` (opened by [`Store::prepare`]) through.
    fn reader(&self, needed: &[Material]) -> Reader<'_>;
    /// The bytes free where the store writes its tables, if it writes any and that can be
    /// told: a job whose table cannot fit there is skipped before it starts.
    fn free_disk(&self) -> Option<u64> {
        None
    }
    /// Whether [`Store::reader`] gives readers of their own ([`Reader::Own`]), so that
    /// jobs may run side by side; the store's own jobs run one at a time otherwise.
    fn reads_apart(&self) -> bool {
        false
    }
    /// What writes a finished job's files (the slow part of keeping it, which needs
    /// nothing of the store's state): run on the job's own thread, so that the other jobs
    /// go on meanwhile. Writes nothing by default.
    fn writer(&self) -> Writer {
        Arc::new(|_| Ok(Written::default()))
    }
    /// Keep a finished job whose files `written` made (remember its values, note its
    /// records).
    fn keep(&mut self, solution: Solution, written: Written) -> Result<(), Error>;
    /// A material of the request that the store holds already and the run reuses.
    fn reuse(&mut self, _m: Material) -> Result<(), Error> {
        Ok(())
    }
    /// Put what the store reports in the run's order, `order` (the materials in
    /// dependency order): jobs side by side are kept in the order they finish.
    fn arrange(&mut self, _order: &[Material]) {}
}

/// What a job reads its exits through ([`Store::reader`]).
pub enum Reader<'a> {
    /// A reader of its own that holds nothing of the store: the job may run on a thread
    /// of its own, beside others.
    Own(Box<dyn Solved + Send>),
    /// The store itself: its jobs run one at a time, on the driver's thread.
    Store(&'a dyn Solved),
}

impl Reader<'_> {
    /// The values read.
    pub fn solved(&self) -> &dyn Solved {
        match self {
            Reader::Own(own) => &**own,
            Reader::Store(store) => *store,
        }
    }
}

/// What a [`Store::writer`] wrote of a finished job.
#[derive(Debug, Default)]
pub struct Written {
    /// The records of its materials.
    pub records: Vec<MaterialRecord>,
    /// Table files written.
    pub files: usize,
    /// Seconds it took.
    pub seconds: f64,
}

/// Writes a finished job's files: see [`Store::writer`].
pub type Writer = Arc<dyn Fn(&Solution) -> Result<Written, Error> + Send + Sync>;

/// Solutions kept in memory.
#[derive(Default)]
pub struct InMemory {
    /// The finished jobs, in order.
    pub solutions: Vec<Solution>,
}

impl Solved for InMemory {
    fn known(&self, material: Material, key: u64) -> Result<Known, Error> {
        for sol in &self.solutions {
            if let Some(c) = sol.index.class_number(material) {
                let local = sol.index.classes()[c].find(key).ok_or_else(|| {
                    Error::Usage(format!("{material} has no position with key {key}"))
                })?;
                let g = sol.index.class_range(c).start + local;
                let level = |cert: Option<&crate::certificate::Certificate>, white: bool| {
                    cert.map_or(crate::certificate::UNREACHED, |c| {
                        if white {
                            c.white_levels[g]
                        } else {
                            c.black_levels[g]
                        }
                    })
                };
                return Ok(Known {
                    alpha: sol.values.value(g).clone(),
                    beta: sol.beta_values().value(g).clone(),
                    level_white: level(sol.certificate.as_ref(), true),
                    level_black: level(sol.beta_certificate(), false),
                });
            }
        }
        Err(Error::Usage(format!("{material} has not been solved")))
    }
}

impl Store for InMemory {
    fn has(&self, m: Material) -> Result<bool, Error> {
        Ok(self
            .solutions
            .iter()
            .any(|s| s.index.class_number(m).is_some()))
    }
    fn reader(&self, _needed: &[Material]) -> Reader<'_> {
        Reader::Store(self)
    }
    fn keep(&mut self, solution: Solution, _written: Written) -> Result<(), Error> {
        self.solutions.push(solution);
        Ok(())
    }
}
