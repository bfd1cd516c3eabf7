//! A run folder's upkeep: one writer at a time (its lock), joining rows files (compaction),
//! and writing files whole.

use std::fs;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::{hostname, io, write_file_atomic, ResultsError, RunDir};

/// The exclusive hold of one process on a run folder, released when dropped (or when the
/// process ends, however it ends: the operating system drops the lock with the file handle).
#[derive(Debug)]
pub struct RunLock {
    _file: fs::File,
}

impl RunDir {
    /// Takes this run folder for this process alone (an advisory lock on `<run>/lock`, which
    /// names its holder): a second writer is refused, naming the first.
    pub fn lock(&self) -> Result<RunLock, ResultsError> {
        use std::io::Write as _;
        let path = self.path.join("lock");
        let mut file = fs::OpenOptions::new().create(true).truncate(false).read(true).write(true).open(&path).map_err(io(&path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                let holder = fs::read_to_string(&path).unwrap_or_default().trim().to_string();
                let holder = if holder.is_empty() { "holder unknown".to_string() } else { holder };
                return Err(ResultsError::Locked { path: self.path.clone(), holder });
            }
            Err(fs::TryLockError::Error(e)) => return Err(ResultsError::Io { path, source: e }),
        }
        let holder = format!("pid {} on host {}", std::process::id(), hostname());
        file.set_len(0).and_then(|_| file.write_all(holder.as_bytes())).map_err(io(&path))?;
        Ok(RunLock { _file: file })
    }

    /// Joins each experiment's per-case rows files into one (`000000.parquet`, zstd), for a run
    /// that is published or kept: the same rows in far fewer bytes. A compacted run reports,
    /// compares and resumes like any other. Refused while a case is marked as started (a run in
    /// progress, or one that crashed and has not been resumed). Returns the files removed.
    pub fn compact(&self) -> Result<usize, ResultsError> {
        let _lock = self.lock()?;
        let mut removed = 0;
        for exp in self.experiment_ids()? {
            let dir = self.rows_dir(&exp);
            let files = parquet_files(&dir)?;
            if fs::read_dir(&dir).map_err(io(&dir))?.filter_map(|e| e.ok()).any(|e| e.file_name().to_string_lossy().starts_with("started-"))
            {
                return Err(ResultsError::Io {
                    path: dir,
                    source: std::io::Error::other("a case is marked as started: resume or finish the run first"),
                });
            }
            if files.len() < 2 {
                continue;
            }
            let Some(mut df) = self.read_experiment(&exp)? else { continue };
            let mut bytes = Vec::new();
            ParquetWriter::new(&mut bytes)
                .with_compression(ParquetCompression::Zstd(None))
                .finish(&mut df)
                .map_err(|source| ResultsError::Polars { path: dir.clone(), source })?;
            let joined = dir.join("joined.parquet.part");
            write_file_atomic(&joined, &bytes)?;
            for f in &files {
                fs::remove_file(f).map_err(io(f))?;
                removed += 1;
            }
            let target = dir.join("000000.parquet");
            fs::rename(&joined, &target).map_err(io(&target))?;
        }
        Ok(removed)
    }

    /// The experiments with a rows folder in this run.
    fn experiment_ids(&self) -> Result<Vec<String>, ResultsError> {
        let dir = self.path.join("rows");
        let mut ids: Vec<String> = fs::read_dir(&dir)
            .map_err(io(&dir))?
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        ids.sort();
        Ok(ids)
    }
}

/// The `.parquet` files of a folder, sorted.
fn parquet_files(dir: &Path) -> Result<Vec<PathBuf>, ResultsError> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("parquet"))
        .collect();
    files.sort();
    Ok(files)
}
