//! The write stage: a finished job's tables on disk, atomically, and the [`TableStore`]
//! that the command line's driver keeps finished jobs in. Later jobs read their exits'
//! values back from those tables (memory-mapped), so a run of many materials holds one
//! material's work in memory at a time.

use std::collections::HashMap;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use super::driver::{Reader, Store, Writer, Written};
use super::report::{self, MaterialRecord, Summary};
use super::{Glance, Known, Solution, Solved};
use crate::atomic;
use crate::error::Error;
use crate::geometry::Board;
use crate::material::Material;
use crate::table::{self, Decode, ReadOnce, Table};
use crate::value::Value;

/// Write the table file of every material of a job, unless it has no certificate or a
/// failed one that was not accepted. All files of the job or none: a failure (a full
/// disk) leaves the previous tables intact. Returns how many files were written.
pub fn write_tables(sol: &Solution, dir: &Path, accept_failed: bool) -> Result<usize, Error> {
    write_job(sol, dir, accept_failed, true, Vec::new())
}

/// [`write_tables`], with other files of the job (its materials' records) in the same
/// group, put in place before the tables: a run stopped between two renames leaves no
/// table without its record (a continued run keeps a table it finds and reads its record).
fn write_job(
    sol: &Solution,
    dir: &Path,
    accept_failed: bool,
    means: bool,
    first: Vec<(PathBuf, Vec<u8>)>,
) -> Result<usize, Error> {
    let Some(contents) = report::table_contents(sol, means) else {
        return Ok(0);
    };
    if !sol.certified() && !accept_failed {
        return Ok(0);
    }
    // Each file streams from the values (a table of 8x8 KBvKN is about 7 GB: assembled in
    // memory beside the values, it did not fit in 24 GB).
    let paths: Vec<PathBuf> = contents
        .iter()
        .map(|c| dir.join(table::file_name(c.material)))
        .collect();
    let mut files: Vec<(&Path, atomic::Filler<'_>)> = first
        .iter()
        .map(|(path, bytes)| {
            let fill: atomic::Filler<'_> = Box::new(move |f| f.write_all(bytes));
            (path.as_path(), fill)
        })
        .collect();
    files.extend(paths.iter().zip(&contents).map(|(path, c)| {
        let fill: atomic::Filler<'_> = Box::new(move |f| table::encode_to(c, f));
        (path.as_path(), fill)
    }));
    atomic::write_all_atomic_with(files)?;
    Ok(paths.len())
}

/// An account of a failed certificate: what failed, how often, the first few positions.
pub fn certificate_failures(sol: &Solution) -> Option<String> {
    let cert = sol.certificate.as_ref().filter(|_| !sol.certified())?;
    let beta_cert = sol.beta_certificate().unwrap_or(cert);
    let mut text = String::new();
    for (what, list) in [
        ("Richman equations fail", &cert.violations),
        (
            "positions with s > 0 lie outside White's closure (alpha = s unproved)",
            &cert.alpha_failures,
        ),
        (
            "positions with s < 1 lie outside Black's closure (beta = s unproved)",
            &beta_cert.beta_failures,
        ),
    ] {
        if list.is_empty() {
            continue;
        }
        let first: Vec<String> = list
            .iter()
            .take(5)
            .map(|&p| {
                let pos = sol.index.position(p as usize);
                format!("{} {}", pos.material(), crate::fen::write(sol.board, &pos))
            })
            .collect();
        text += &format!("{} {what}; first: {}\n", list.len(), first.join(", "));
    }
    Some(text)
}

/// An open table to answer exits from: the mapped table and its whole dictionary are
/// shared by the jobs reading it, a dictionary read value by value is each job's own.
struct Opened {
    table: Arc<Table>,
    dictionary: Dictionary,
}

/// How an open table's dictionary is read.
enum Dictionary {
    /// Every value decoded once, before the first job, when the dictionary holds at most
    /// [`DECODED_DICTIONARY`] bytes.
    Whole(Arc<Vec<Value>>),
    /// Values decoded as exits ask for them, each once while a job reads its exits (None
    /// once they are read: the job's terminals hold what it needs).
    ByValue(RwLock<Option<ReadOnce>>),
}

impl Dictionary {
    /// Read value by value, ready for a job's exits.
    fn by_value(table: &Table) -> Dictionary {
        Dictionary::ByValue(RwLock::new(Some(ReadOnce::new(table))))
    }
}

impl Opened {
    /// Dictionary entry `rank`.
    fn value(&self, rank: u32) -> Result<Value, Error> {
        let k = rank as usize;
        match &self.dictionary {
            Dictionary::Whole(values) => values.get(k).cloned().ok_or_else(|| Error::Table {
                path: self.table.path().display().to_string(),
                reason: format!("no dictionary entry {k}"),
            }),
            Dictionary::ByValue(read) => match read.read().as_deref() {
                Ok(Some(once)) => once.value(&self.table, k),
                _ => self.table.dictionary_value_as_stored(k),
            },
        }
    }

    /// The shadow of dictionary entry `rank`, its digits not kept: from the shadows found
    /// once where the table stores means ([`ReadOnce::ready_to_glance`]), else read as
    /// stored (not through the cache of values read once).
    fn shadow(&self, rank: u32) -> Result<f64, Error> {
        match &self.dictionary {
            Dictionary::Whole(_) => Ok(self.value(rank)?.to_f64()),
            Dictionary::ByValue(read) => match read.read().as_deref() {
                Ok(Some(once)) => once.shadow(&self.table, rank as usize),
                _ => Ok(self
                    .table
                    .dictionary_value_as_stored(rank as usize)?
                    .to_f64()),
            },
        }
    }

    /// The same table for another job: the whole dictionary shared, one read value by
    /// value started afresh.
    fn for_a_job(&self) -> Opened {
        Opened {
            table: self.table.clone(),
            dictionary: match &self.dictionary {
                Dictionary::Whole(values) => Dictionary::Whole(values.clone()),
                Dictionary::ByValue(_) => Dictionary::by_value(&self.table),
            },
        }
    }

    /// The job's exits are read: let go of what was decoded and of the mapped pages.
    fn release(&self) {
        self.table.release_pages();
        if let Dictionary::ByValue(read) = &self.dictionary
            && let Ok(mut read) = read.write()
        {
            *read = None;
        }
    }
}

/// The largest dictionary decoded whole before a job: a job's exits ask for many values of
/// a small dictionary again and again (three-piece tables: thousands of values for
/// millions of exits), but only a few of a large one. Decoded whole, 8x8 KBvKN's dictionary
/// (2.4 million values of up to 5,632 digits) took 11 GB, and stopped KBvKP, which reads
/// it through one promotion, before its solve began.
const DECODED_DICTIONARY: usize = 256 << 20;

/// The file of material `m`'s record in the board's directory `dir`, beside its table.
fn record_path(dir: &Path, m: Material) -> PathBuf {
    dir.join(format!("{m}.json"))
}

/// Tables on disk in `DIR/FxR`: each finished job's tables are written there at once,
/// and later jobs read their exits from them. It also gathers what the run reports.
pub struct TableStore {
    dir: PathBuf,
    board: Board,
    accept_uncertified: bool,
    opened: HashMap<Material, Opened>,
    /// Tables found on disk and checked whole by [`Store::has`], kept open for
    /// [`Store::prepare`] (their blocks need not be checked again).
    checked: Mutex<HashMap<Material, Table>>,
    /// The summary of the jobs kept so far.
    pub summary: Summary,
    /// Per material noted so far: its lines of `quiescent.txt` and of
    /// `alpha-below-beta.txt` (in the run's order once [`Store::arrange`]d).
    lists: Vec<(Material, String, String)>,
    /// Materials whose record is in the summary.
    recorded: Vec<Material>,
    /// Table files written so far.
    pub written: usize,
    /// The iteration's record of the last job, where the iterate method ran
    /// (`convergence.csv`).
    pub convergence: Option<String>,
    /// Dictionaries of at most this many bytes are decoded whole before a job
    /// ([`DECODED_DICTIONARY`]); larger ones value by value.
    pub decoded_dictionary: usize,
    /// Store long values as the mean of two others (format version 8; the default, `--whole`
    /// turns it off).
    pub means: bool,
}

impl TableStore {
    /// A store in `dir` (the board's directory) for a run of `summary`'s method.
    pub fn new(dir: &Path, board: Board, accept_uncertified: bool, summary: Summary) -> TableStore {
        TableStore {
            dir: dir.to_path_buf(),
            board,
            accept_uncertified,
            opened: HashMap::new(),
            checked: Mutex::new(HashMap::new()),
            summary,
            lists: Vec::new(),
            recorded: Vec::new(),
            written: 0,
            convergence: None,
            decoded_dictionary: DECODED_DICTIONARY,
            means: true,
        }
    }

    fn path(&self, m: Material) -> PathBuf {
        self.dir.join(table::file_name(m))
    }

    /// The file of a material's record, beside its table.
    fn record_path(&self, m: Material) -> PathBuf {
        record_path(&self.dir, m)
    }

    /// Add a material's record to what the run reports.
    fn note(&mut self, m: Material, record: &MaterialRecord) {
        if self.recorded.contains(&m) {
            return;
        }
        self.recorded.push(m);
        self.summary.add_record(record);
        self.lists
            .push((m, record.quiescent.clone(), record.alpha_below_beta.clone()));
    }

    /// The lines of `quiescent.txt` (no heading line).
    pub fn quiescent(&self) -> String {
        self.lists.iter().map(|l| l.1.as_str()).collect()
    }

    /// The lines of `alpha-below-beta.txt` (no heading line).
    pub fn alpha_below_beta(&self) -> String {
        self.lists.iter().map(|l| l.2.as_str()).collect()
    }

    /// The table of `m` if it opens and is a certified table of `m` on this board.
    fn usable(&self, m: Material) -> Result<Table, Error> {
        Table::open_certified(self.path(m), self.board, m)
    }
}

/// The tables a job reads its exits from: its own view of the store's open tables (see
/// [`Store::reader`]), so that jobs side by side read without a lock and each its own
/// dictionaries value by value.
pub struct Tables {
    opened: HashMap<Material, Opened>,
}

impl Tables {
    /// The open table of `material` and the index of its position with key `key`.
    fn find(&self, material: Material, key: u64) -> Result<(&Opened, usize), Error> {
        let o = self.opened.get(&material).ok_or_else(|| {
            Error::Usage(format!("{material}'s table was not opened before the job"))
        })?;
        let i = o.table.find(key)?.ok_or_else(|| Error::Table {
            path: o.table.path().display().to_string(),
            reason: format!("no position with key {key}"),
        })?;
        Ok((o, i))
    }
}

/// An open table's values, decoded as its dictionary is read ([`Dictionary`]).
impl Decode for Opened {
    fn value(&self, _: &Table, rank: usize) -> Result<Value, Error> {
        Opened::value(self, rank as u32)
    }

    fn shadow(&self, _: &Table, rank: usize) -> Result<f64, Error> {
        Opened::shadow(self, rank as u32)
    }
}

impl Solved for Tables {
    fn known(&self, material: Material, key: u64) -> Result<Known, Error> {
        let (o, i) = self.find(material, key)?;
        o.table.known(i, o)
    }

    fn glance(&self, material: Material, key: u64) -> Result<Glance, Error> {
        let (o, i) = self.find(material, key)?;
        o.table.glance(i, o)
    }

    fn ready(&self) -> Result<(), Error> {
        for o in self.opened.values() {
            if let Dictionary::ByValue(read) = &o.dictionary
                && let Ok(Some(once)) = read.read().as_deref()
            {
                once.ready_to_glance(&o.table)?;
            }
        }
        Ok(())
    }

    fn release(&self) {
        for o in self.opened.values() {
            o.release();
        }
    }
}

/// A table that is there but cannot be opened now (`source`): why, and that it is kept.
fn cannot_open(path: &str, source: &std::io::Error) -> Error {
    Error::Table {
        path: path.to_string(),
        reason: format!(
            "cannot be opened: {source} (the file is kept, not made again; with too little \
             address space or too many open files, see `ulimit -v` and `ulimit -n`, and run \
             again)"
        ),
    }
}

impl Store for TableStore {
    fn free_disk(&self) -> Option<u64> {
        crate::resources::free_disk_bytes(&self.dir)
    }
    fn has(&self, m: Material) -> Result<bool, Error> {
        // A table found on disk is kept only if every checksum holds (opening a table
        // checks only the sections a query reads first). One that is absent, or present
        // and unusable (damaged, another material's, uncertified), is made (again); one
        // that cannot be opened for now (too little address space to map it, too many
        // open files) is an error: a valid table must not be remade for that.
        let table = match self.usable(m) {
            Ok(table) => table,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(false);
            }
            Err(Error::Io { path, source }) => return Err(cannot_open(&path, &source)),
            Err(_) => return Ok(false),
        };
        if table.check_all().is_err() {
            return Ok(false);
        }
        // Its pages stay in the page cache, not in this process's memory, until a job
        // reads the table.
        table.release_pages();
        let mut checked = self.checked.lock().unwrap_or_else(|e| e.into_inner());
        checked.insert(m, table);
        Ok(true)
    }

    fn prepare(&mut self, needed: &[Material]) -> Result<(), Error> {
        self.opened.retain(|m, _| needed.contains(m));
        for &m in needed {
            if self.opened.contains_key(&m) {
                continue;
            }
            let checked = self.checked.get_mut().unwrap_or_else(|e| e.into_inner());
            let table = checked.remove(&m).map_or_else(|| self.usable(m), Ok);
            let table = table.map_err(|e| match e {
                Error::Io { ref source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                    Error::MissingTable {
                        path: self.path(m).display().to_string(),
                        board: self.board.to_string(),
                        dir: self
                            .dir
                            .parent()
                            .unwrap_or(Path::new("."))
                            .display()
                            .to_string(),
                        material: m.to_string(),
                    }
                }
                Error::Io { path, source } => cannot_open(&path, &source),
                other => other,
            })?;
            // As stored: the generator stores lowest terms (`bidtb verify` checks it), and
            // nothing here relies on it (the certificate compares values exactly).
            let started = std::time::Instant::now();
            let dictionary = if table.dictionary_size_bytes() <= self.decoded_dictionary {
                Dictionary::Whole(Arc::new(table.dictionary_values()?))
            } else {
                table.advise_random();
                Dictionary::by_value(&table)
            };
            self.summary.stage_seconds.boundary += started.elapsed().as_secs_f64();
            let table = Arc::new(table);
            self.opened.insert(m, Opened { table, dictionary });
        }
        Ok(())
    }

    fn reuse(&mut self, m: Material) -> Result<(), Error> {
        let path = self.record_path(m);
        let record = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str::<MaterialRecord>(&text).ok())
            .filter(|r| r.material == m.to_string());
        if let Some(record) = record {
            self.note(m, &record);
        }
        self.summary.reused.push(m.to_string());
        Ok(())
    }

    fn arrange(&mut self, order: &[Material]) {
        let place = |m: &Material| order.iter().position(|o| o == m);
        self.lists.sort_by_key(|l| place(&l.0));
        let place_named = |name: &String| name.parse().ok().and_then(|m| place(&m));
        self.summary.materials.sort_by_key(place_named);
    }

    fn reader(&self, needed: &[Material]) -> Reader<'_> {
        let opened = needed
            .iter()
            .filter_map(|m| Some((*m, self.opened.get(m)?.for_a_job())))
            .collect();
        Reader::Own(Box::new(Tables { opened }))
    }

    fn reads_apart(&self) -> bool {
        true
    }

    fn writer(&self) -> Writer {
        let (dir, accept, means) = (self.dir.clone(), self.accept_uncertified, self.means);
        Arc::new(move |sol: &Solution| {
            let started = std::time::Instant::now();
            let records = report::records(sol);
            let mut texts = Vec::with_capacity(records.len());
            for record in &records {
                let m: Material = record.material.parse()?;
                let text = serde_json::to_string_pretty(record).expect("a record serialises");
                texts.push((record_path(&dir, m), text.into_bytes()));
            }
            let files = write_job(sol, &dir, accept, means, texts)?;
            Ok(Written {
                records,
                files,
                seconds: started.elapsed().as_secs_f64(),
            })
        })
    }

    fn keep(&mut self, sol: Solution, written: Written) -> Result<(), Error> {
        // A failed certificate stops the run: no later material may read from it.
        let failed = sol.converged() && !sol.certified();
        let Written {
            records,
            files: written,
            seconds,
        } = written;
        self.summary.stage_seconds.write += seconds;
        self.written += written;
        self.summary.add_job(&sol);
        for record in records {
            let m: Material = record.material.parse()?;
            self.recorded.retain(|r| *r != m);
            self.note(m, &record);
        }
        if let Some(it) = sol.iteration() {
            let classes = sol.classes.iter().map(|(m, _)| m.to_string()).collect();
            self.convergence =
                Some(crate::iterate::convergence::Convergence::of(classes, it).to_csv());
        }
        // Tables just written replace any opened before under the same name.
        for (m, _) in &sol.classes {
            self.opened.remove(m);
        }
        if failed && !self.accept_uncertified {
            let what = sol
                .classes
                .iter()
                .map(|(m, _)| m.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            let mut text = format!(
                "the certificate of {what} on {} failed; pass --allow-uncertified to accept it",
                self.board
            );
            if let Some(failures) = certificate_failures(&sol) {
                text = format!("{failures}{text}");
            }
            return Err(Error::Uncertified(text));
        }
        // The job's tables are written: its checkpoint, if it saved one, is of no more use
        // (a resumed run keeps the tables), and on large boards it holds hundreds of
        // megabytes, which a long run would otherwise keep to its end.
        if written > 0 {
            let materials: Vec<Material> = sol.classes.iter().map(|(m, _)| *m).collect();
            let _ = std::fs::remove_file(crate::solve::checkpoint::path(&self.dir, &materials));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::driver::{self, Driven};
    use crate::generate::{Method, Options};
    use crate::progress::{Control, Silent};

    /// The tables of 4x4 up to four men, each job's exits answered from dictionaries
    /// decoded whole (`whole`) or value by value.
    fn tables(dir: &Path, whole: bool) -> Vec<(String, Vec<u8>)> {
        let board = Board::new(4, 4).unwrap();
        let board_dir = dir.join("4x4");
        std::fs::create_dir_all(&board_dir).unwrap();
        let mut store =
            TableStore::new(&board_dir, board, false, Summary::new(board, Method::Solve));
        if !whole {
            store.decoded_dictionary = 0;
        }
        let mut options = Options::solve(board);
        options.materials = Material::all_up_to(4);
        let driven = driver::run(&options, &Silent, &Control::default(), &mut store).unwrap();
        assert!(matches!(driven, Driven::Finished(_, ref skipped) if skipped.is_empty()));
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&board_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "bidtb"))
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read(&p).unwrap())
            })
            .collect();
        files.sort();
        files
    }

    #[test]
    fn exits_read_value_by_value_make_the_same_tables() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let whole = tables(a.path(), true);
        let by_value = tables(b.path(), false);
        assert_eq!(whole.len(), 36);
        assert!(whole == by_value, "the tables differ");
    }

    /// A glance at an exit (its shadows) decodes its values without keeping them: only
    /// the exits read in full fill the cache of values read once.
    #[test]
    fn shadows_are_read_without_keeping_the_digits() {
        let dir = tempfile::tempdir().unwrap();
        tables(dir.path(), false);
        let table = Table::open(dir.path().join("4x4").join("KNvKN.bidtb")).unwrap();
        let o = Opened {
            dictionary: Dictionary::by_value(&table),
            table: Arc::new(table),
        };
        let held = || match &o.dictionary {
            Dictionary::ByValue(read) => read.read().unwrap().as_ref().unwrap().decoded(),
            Dictionary::Whole(_) => unreachable!(),
        };
        let len = o.table.info().dictionary_len as u32;
        assert!(len > 10, "{len}");
        for k in 0..len {
            let shadow = o.shadow(k).unwrap();
            assert_eq!(
                shadow,
                o.table
                    .dictionary_value_as_stored(k as usize)
                    .unwrap()
                    .to_f64()
            );
        }
        assert_eq!(held(), 0);
        o.value(3).unwrap();
        o.value(3).unwrap();
        assert_eq!(held(), 1);
    }
}
