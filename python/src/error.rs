//! The library's errors as Python exceptions, saying what the command line says: bad input
//! (FEN, position, board, material, arguments) is a `ValueError`; a missing table is a
//! `bidtb.MissingTableError` naming the material and the command that makes it; file
//! errors are `OSError`s (`FileNotFoundError`, `PermissionError`); a stopped run is a
//! `KeyboardInterrupt`; everything else (a corrupt table or checkpoint, a failed
//! certificate, too little memory) is a `bidtb.BidtbError`. The exception classes of the
//! package are defined in Python (`bidtb/_errors.py`), so that they print their message
//! as given.

use bidtb::Error;
use pyo3::exceptions::{
    PyFileNotFoundError, PyKeyboardInterrupt, PyNotADirectoryError, PyOSError, PyPermissionError,
    PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

static MISSING: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static BIDTB_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// An exception class of `bidtb._errors`.
fn class<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    name: &str,
) -> PyResult<Bound<'py, PyType>> {
    let class = cell.get_or_try_init(py, || -> PyResult<Py<PyType>> {
        let module = py.import("bidtb._errors")?;
        Ok(module.getattr(name)?.cast_into::<PyType>()?.unbind())
    })?;
    Ok(class.bind(py).clone())
}

/// The class `bidtb.MissingTableError`.
pub fn missing_table_class(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    class(py, &MISSING, "MissingTableError")
}

/// A `bidtb.MissingTableError` with its message and the material, board and file it names.
pub fn missing_table(
    py: Python<'_>,
    message: String,
    material: &str,
    board: &str,
    path: Option<&str>,
) -> PyErr {
    match missing_table_class(py) {
        Ok(cls) => match cls.call1((message, material, board, path)) {
            Ok(exc) => PyErr::from_value(exc),
            Err(e) => e,
        },
        Err(e) => e,
    }
}

/// A `bidtb.BidtbError` with a message.
pub fn bidtb_error(py: Python<'_>, message: String) -> PyErr {
    match class(py, &BIDTB_ERROR, "BidtbError") {
        Ok(cls) => match cls.call1((message,)) {
            Ok(exc) => PyErr::from_value(exc),
            Err(e) => e,
        },
        Err(e) => e,
    }
}

/// The Python exception for a library error.
pub fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let text = e.to_string();
    match e {
        Error::BoardSize(_)
        | Error::Position(_)
        | Error::Fen { .. }
        | Error::Material(_)
        | Error::Usage(_) => PyValueError::new_err(text),
        Error::MissingTable {
            path,
            board,
            material,
            ..
        } => missing_table(py, text, &material, &board, Some(&path)),
        Error::Io { source, .. } => match source.kind() {
            std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(text),
            std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(text),
            std::io::ErrorKind::NotADirectory => PyNotADirectoryError::new_err(text),
            _ => PyOSError::new_err(text),
        },
        Error::Interrupted(_) => PyKeyboardInterrupt::new_err(text),
        Error::Table { .. }
        | Error::Corrupt { .. }
        | Error::Checkpoint { .. }
        | Error::Report { .. }
        | Error::Resources(_)
        | Error::Scheduler(_)
        | Error::Busy(_)
        | Error::Pending(_)
        | Error::MissingChips(_)
        | Error::Uncertified(_) => bidtb_error(py, text),
    }
}

/// Turn a library result into a Python one.
pub trait IntoPy<T> {
    /// The value, or the Python exception for the error.
    fn py(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, Error> {
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e))
    }
}
