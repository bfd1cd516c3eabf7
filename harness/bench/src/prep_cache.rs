//! The prepared-problem cache on disk: host work that many cases, shards, resumed runs and later
//! runs need (meshes, operators, f64 references) is built once per machine and read back after.
//!
//! - **Keys.** An entry is named by the SHA-256 of what it is made from: its kind, the
//!   fingerprint of the code that makes it (a hash of that code's source files, made at build
//!   time) and its parameters. A change to either misses.
//! - **Writing.** An entry is written whole to a temporary file and renamed into place; a reader
//!   never sees half an entry. Its payload carries a SHA-256: an entry that is corrupt or
//!   truncated is reported, removed and built again.
//! - **Concurrency.** A process that builds an entry holds its lock file; another process that
//!   wants it waits, then reads what the first wrote (it never builds it a second time).
//! - **Upkeep.** Entries are read in place; each read marks the entry as used, and after each
//!   write the least recently used entries go until the folder is within its limit.
//!   `harness cache list|clear` shows and empties it.
//!
//! The folder is `$XDG_CACHE_HOME/fembench/prepared` (else `~/.cache/fembench/prepared`);
//! `harness run --prep-cache DIR|off` or `FEMBENCH_PREP_CACHE=DIR|off` overrides it, and
//! `FEMBENCH_PREP_CACHE_GB` sets its limit (default 32 GiB).

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Instant, SystemTime};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

const MAGIC: &[u8; 8] = b"FBPREP01";
const DEFAULT_LIMIT_GB: f64 = 32.0;

/// Where the cache lives, or that it is off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    Off,
    Dir(PathBuf),
}

impl std::str::FromStr for Setting {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "" => Err("--prep-cache takes a folder or `off`".into()),
            "off" => Ok(Setting::Off),
            d => Ok(Setting::Dir(PathBuf::from(d))),
        }
    }
}

impl Setting {
    /// `FEMBENCH_PREP_CACHE`, else the user's cache folder (off where no home is known).
    pub fn from_env() -> Setting {
        if let Some(s) = std::env::var_os("FEMBENCH_PREP_CACHE").and_then(|v| v.to_str().and_then(|s| s.parse().ok())) {
            return s;
        }
        fembench_device::kernel_cache::fembench_cache_home().map_or(Setting::Off, |c| Setting::Dir(c.join("prepared")))
    }
    /// The value that hands this setting to a worker process (`--prep-cache`).
    pub fn arg(&self) -> String {
        match self {
            Setting::Off => "off".into(),
            Setting::Dir(d) => d.display().to_string(),
        }
    }
}

static SETTING: OnceLock<Setting> = OnceLock::new();

/// Sets the process's cache (the command line's `--prep-cache`); the first call wins.
pub fn configure(setting: Setting) {
    let _ = SETTING.set(setting);
}

/// The process's cache.
pub fn setting() -> &'static Setting {
    SETTING.get_or_init(Setting::from_env)
}

/// The folder under the cache where the Python peers' libraries keep what they compile
/// ([`crate::peer_worker`]); None where the cache is off. `clear` empties it with the entries.
pub fn compiled_dir() -> Option<PathBuf> {
    match setting() {
        Setting::Dir(d) => Some(d.join(COMPILED)),
        Setting::Off => None,
    }
}

/// The subfolder of the libraries' compile caches (it holds no entries).
pub const COMPILED: &str = "compiled";

/// Bytes of the files under `dir`, at any depth.
pub fn folder_bytes(dir: &Path) -> u64 {
    let Ok(items) = std::fs::read_dir(dir) else { return 0 };
    items
        .flatten()
        .map(|f| match f.file_type() {
            Ok(t) if t.is_dir() => folder_bytes(&f.path()),
            Ok(_) => f.metadata().map_or(0, |m| m.len()),
            Err(_) => 0,
        })
        .sum()
}

/// Entries read from and built into the disk cache by this process, counted since start:
/// the runner puts a case's share on its rows (`prep_read`, `prep_built`).
static READ: AtomicU64 = AtomicU64::new(0);
static BUILT: AtomicU64 = AtomicU64::new(0);

/// (read, built) so far in this process.
pub fn counts() -> (u64, u64) {
    (READ.load(Ordering::Relaxed), BUILT.load(Ordering::Relaxed))
}

/// What an entry is made from. `code` is the fingerprint of the code that makes it (see
/// `fembench::prep_code`), `params` everything else it depends on, written out in full.
#[derive(Debug, Clone, Copy)]
pub struct Recipe<'a> {
    pub kind: &'a str,
    pub code: &'a str,
    pub params: &'a str,
}

impl Recipe<'_> {
    /// The entry's name: the SHA-256 of kind, code and parameters, each length-prefixed (as the
    /// kernel cache names its entries).
    pub fn key(&self) -> String {
        fembench_device::kernel_cache::key(&[self.kind.as_bytes(), self.code.as_bytes(), self.params.as_bytes()])
    }
}

/// What `harness cache list` shows of an entry (its sidecar `.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct About {
    pub kind: String,
    pub params: String,
    pub bytes: u64,
    pub build_s: f64,
    pub created: String,
}

/// Where the value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Built,
    Read,
}

/// The value of `recipe`, read from the process's cache or built by `build` (and written).
/// A build's error is returned and nothing is written.
pub fn get_or_build<T, E>(recipe: Recipe, build: impl FnOnce() -> Result<T, E>) -> Result<(T, Source), E>
where
    T: Serialize + DeserializeOwned,
{
    match setting() {
        Setting::Off => build().map(|v| (v, Source::Built)),
        Setting::Dir(d) => Cache { dir: d.clone(), limit: limit_bytes() }.get_or_build(recipe, build),
    }
}

/// [`get_or_build`] for a build that cannot fail.
pub fn cached<T: Serialize + DeserializeOwned>(recipe: Recipe, build: impl FnOnce() -> T) -> T {
    get_or_build::<T, std::convert::Infallible>(recipe, || Ok(build())).unwrap_or_else(|e| match e {}).0
}

/// The SHA-256 of a file's contents: the parameter that stands for an input file in a recipe.
pub fn file_fingerprint(path: &Path) -> std::io::Result<String> {
    let mut h = Sha256::new();
    std::io::copy(&mut File::open(path)?, &mut h)?;
    Ok(format!("{:x}", h.finalize()))
}

/// The limit on the folder's size: `FEMBENCH_PREP_CACHE_GB` GiB, default 32.
pub fn limit_bytes() -> u64 {
    let gb = std::env::var("FEMBENCH_PREP_CACHE_GB").ok().and_then(|s| s.parse::<f64>().ok()).unwrap_or(DEFAULT_LIMIT_GB);
    (gb.max(0.0) * (1u64 << 30) as f64) as u64
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_fixed_int_encoding()
}

/// One cache folder and its size limit.
pub struct Cache {
    pub dir: PathBuf,
    pub limit: u64,
}

impl Cache {
    fn paths(&self, recipe: &Recipe) -> (PathBuf, String) {
        let kind: String = recipe.kind.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
        (self.dir.join(kind), recipe.key())
    }

    pub fn get_or_build<T, E>(&self, recipe: Recipe, build: impl FnOnce() -> Result<T, E>) -> Result<(T, Source), E>
    where
        T: Serialize + DeserializeOwned,
    {
        let (folder, key) = self.paths(&recipe);
        let bin = folder.join(format!("{key}.bin"));
        if let Some(v) = read::<T>(&bin) {
            READ.fetch_add(1, Ordering::Relaxed);
            return Ok((v, Source::Read));
        }
        // The builder's lock: a second process waits here for the first's entry. Without a
        // folder to lock in, the value is built and not kept.
        let lock = std::fs::create_dir_all(&folder).and_then(|_| File::create(folder.join(format!("{key}.lock"))));
        let _held = lock.as_ref().ok().filter(|f| f.lock().is_ok());
        if let Some(v) = read::<T>(&bin) {
            READ.fetch_add(1, Ordering::Relaxed);
            return Ok((v, Source::Read));
        }
        let t = Instant::now();
        let v = build()?;
        let build_s = t.elapsed().as_secs_f64();
        BUILT.fetch_add(1, Ordering::Relaxed);
        if lock.is_ok() {
            match write(&bin, &v) {
                Ok(bytes) => {
                    let about = About {
                        kind: recipe.kind.into(),
                        params: recipe.params.into(),
                        bytes,
                        build_s,
                        created: crate::results::now_string(),
                    };
                    let _ = std::fs::write(folder.join(format!("{key}.json")), serde_json::to_vec_pretty(&about).unwrap_or_default());
                    self.trim(&bin);
                }
                Err(e) => eprintln!("warning: the prepared-problem cache could not keep {} ({}): {e}", recipe.kind, bin.display()),
            }
        }
        Ok((v, Source::Built))
    }

    /// Every entry: its file, what it is, and when it was last used.
    pub fn entries(&self) -> Vec<(PathBuf, Option<About>, u64, SystemTime)> {
        let mut out = Vec::new();
        for kind in std::fs::read_dir(&self.dir).into_iter().flatten().flatten() {
            for f in std::fs::read_dir(kind.path()).into_iter().flatten().flatten() {
                let p = f.path();
                if p.extension().is_some_and(|e| e == "bin") {
                    let Ok(md) = f.metadata() else { continue };
                    let about = std::fs::read(p.with_extension("json")).ok().and_then(|b| serde_json::from_slice(&b).ok());
                    out.push((p, about, md.len(), md.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
                }
            }
        }
        out.sort_by_key(|e| std::cmp::Reverse(e.3));
        out
    }

    /// Removes every entry with its sidecars and lock files; how many entries went.
    pub fn clear(&self) -> usize {
        let n = self.entries().len();
        for kind in std::fs::read_dir(&self.dir).into_iter().flatten().flatten() {
            let _ = std::fs::remove_dir_all(kind.path());
        }
        n
    }

    /// The least recently used entries go until the folder is within its limit (`keep` stays).
    fn trim(&self, keep: &Path) {
        let mut entries = self.entries();
        let mut total: u64 = entries.iter().map(|e| e.2).sum();
        while total > self.limit {
            let Some((p, _, bytes, _)) = entries.pop() else { break };
            if p != keep {
                remove(&p);
                total -= bytes;
            }
        }
    }
}

/// `t` as local `YYYY-MM-DD HH:MM`.
pub fn local_time(t: SystemTime) -> String {
    chrono::DateTime::<chrono::Local>::from(t).format("%Y-%m-%d %H:%M").to_string()
}

fn remove(bin: &Path) {
    let _ = std::fs::remove_file(bin);
    let _ = std::fs::remove_file(bin.with_extension("json"));
}

/// The entry at `bin`, or None where there is none; a corrupt one is reported and removed.
fn read<T: DeserializeOwned>(bin: &Path) -> Option<T> {
    let mut f = File::open(bin).ok()?;
    match decode(&mut f) {
        Ok(v) => {
            // Used now: the limit drops the least recently used first.
            let _ = File::options().append(true).open(bin).and_then(|f| f.set_modified(SystemTime::now()));
            Some(v)
        }
        Err(why) => {
            eprintln!("warning: prepared-problem cache entry {} is corrupt ({why}); building it again", bin.display());
            remove(bin);
            None
        }
    }
}

fn decode<T: DeserializeOwned>(f: &mut File) -> Result<T, String> {
    let mut head = [0u8; 8 + 8 + 32];
    f.read_exact(&mut head).map_err(|e| format!("header: {e}"))?;
    if &head[..8] != MAGIC {
        return Err("not an entry of this cache".into());
    }
    let len = u64::from_le_bytes(head[8..16].try_into().unwrap_or_default()) as usize;
    let mut payload = Vec::new();
    f.read_to_end(&mut payload).map_err(|e| e.to_string())?;
    if payload.len() != len {
        return Err(format!("{} bytes of {len}", payload.len()));
    }
    if Sha256::digest(&payload).as_slice() != &head[16..] {
        return Err("checksum mismatch".into());
    }
    bincode::serde::decode_from_slice(&payload, config()).map(|(v, _)| v).map_err(|e| e.to_string())
}

/// Writes the entry whole (a temporary file renamed into place); its payload's size.
fn write<T: Serialize>(bin: &Path, v: &T) -> std::io::Result<u64> {
    let payload = bincode::serde::encode_to_vec(v, config()).map_err(std::io::Error::other)?;
    let tmp = bin.with_extension(format!("tmp{}", std::process::id()));
    let mut f = File::create(&tmp)?;
    f.write_all(MAGIC)?;
    f.write_all(&(payload.len() as u64).to_le_bytes())?;
    f.write_all(&Sha256::digest(&payload))?;
    f.write_all(&payload)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, bin)?;
    Ok(payload.len() as u64)
}

#[cfg(test)]
#[path = "prep_cache_tests.rs"]
mod tests;
