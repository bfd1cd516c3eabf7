use super::*;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

fn cache(dir: &Path, limit: u64) -> Cache {
    Cache { dir: dir.to_path_buf(), limit }
}

fn recipe<'a>(code: &'a str, params: &'a str) -> Recipe<'a> {
    Recipe { kind: "test-mesh", code, params }
}

/// (value, source) of `recipe`, counting builds in `builds`.
fn get(c: &Cache, r: Recipe, builds: &AtomicUsize, value: Vec<f64>) -> (Vec<f64>, Source) {
    c.get_or_build::<_, ()>(r, || {
        builds.fetch_add(1, Ordering::SeqCst);
        Ok(value)
    })
    .unwrap()
}

#[test]
fn a_parameter_or_code_change_misses_and_the_same_recipe_hits() {
    let dir = tempfile::tempdir().unwrap();
    let c = cache(dir.path(), u64::MAX);
    let builds = AtomicUsize::new(0);
    let v = vec![1.0, 2.5, f64::MIN_POSITIVE];
    assert_eq!(get(&c, recipe("code-1", "level=3"), &builds, v.clone()), (v.clone(), Source::Built));
    assert_eq!(get(&c, recipe("code-1", "level=3"), &builds, vec![]), (v.clone(), Source::Read), "read back, bit for bit");
    assert_eq!(get(&c, recipe("code-1", "level=4"), &builds, vec![4.0]).1, Source::Built, "another parameter");
    assert_eq!(get(&c, recipe("code-2", "level=3"), &builds, vec![5.0]), (vec![5.0], Source::Built), "another generator");
    assert_eq!(builds.load(Ordering::SeqCst), 3);
    // The parts of a key cannot run into each other.
    assert_ne!(Recipe { kind: "ab", code: "c", params: "" }.key(), Recipe { kind: "a", code: "bc", params: "" }.key());
    assert_eq!(c.entries().len(), 3);
    assert_eq!(c.entries()[0].1.as_ref().map(|a| a.params.as_str()), Some("level=3"), "the last used first, described");
    assert_eq!(c.clear(), 3);
    assert!(c.entries().is_empty());
}

#[test]
fn a_corrupt_or_truncated_entry_is_built_again() {
    let dir = tempfile::tempdir().unwrap();
    let c = cache(dir.path(), u64::MAX);
    let builds = AtomicUsize::new(0);
    let v: Vec<f64> = (0..1000).map(|i| i as f64 / 7.0).collect();
    get(&c, recipe("c", "p"), &builds, v.clone());
    let bin = c.entries()[0].0.clone();
    let mut bytes = std::fs::read(&bin).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&bin, &bytes).unwrap();
    assert_eq!(get(&c, recipe("c", "p"), &builds, v.clone()), (v.clone(), Source::Built), "a flipped bit");
    let len = std::fs::metadata(&bin).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&bin).unwrap().set_len(len - 8).unwrap();
    assert_eq!(get(&c, recipe("c", "p"), &builds, v.clone()), (v.clone(), Source::Built), "a truncated file");
    std::fs::write(&bin, b"FBPREP01").unwrap();
    assert_eq!(get(&c, recipe("c", "p"), &builds, v.clone()).1, Source::Built, "a header only");
    assert_eq!(get(&c, recipe("c", "p"), &builds, v.clone()), (v, Source::Read));
    assert_eq!(builds.load(Ordering::SeqCst), 4);
}

#[test]
fn concurrent_builders_build_an_entry_once() {
    let dir = tempfile::tempdir().unwrap();
    let builds = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..6)
        .map(|_| {
            let (dir, builds) = (dir.path().to_path_buf(), builds.clone());
            std::thread::spawn(move || {
                // Each worker opens its own lock file, as a separate process does.
                cache(&dir, u64::MAX)
                    .get_or_build::<_, ()>(recipe("c", "shared"), || {
                        builds.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(300));
                        Ok(vec![7u32; 100_000])
                    })
                    .unwrap()
            })
        })
        .collect();
    let got: Vec<(Vec<u32>, Source)> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    assert_eq!(builds.load(Ordering::SeqCst), 1, "one build, the others waited and read it");
    assert_eq!(got.iter().filter(|g| g.1 == Source::Built).count(), 1);
    assert!(got.iter().all(|g| g.0 == vec![7u32; 100_000]));
}

#[test]
fn the_least_recently_used_entries_go_beyond_the_limit_and_a_failed_build_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // Room for two entries of 8000 bytes, not three.
    let c = cache(dir.path(), 20_000);
    let builds = AtomicUsize::new(0);
    for p in ["a", "b"] {
        get(&c, recipe("c", p), &builds, vec![1.0; 1000]);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    get(&c, recipe("c", "a"), &builds, vec![]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    get(&c, recipe("c", "c"), &builds, vec![1.0; 1000]);
    let kept: Vec<String> = c.entries().iter().filter_map(|e| e.1.as_ref().map(|a| a.params.clone())).collect();
    assert_eq!(kept, ["c", "a"], "b was used least recently");
    assert!(c.get_or_build::<Vec<f64>, &str>(recipe("c", "d"), || Err("no mesh")).is_err());
    assert_eq!(c.entries().len(), 2);
}

#[test]
fn settings_parse() {
    assert_eq!("off".parse::<Setting>(), Ok(Setting::Off));
    assert_eq!("/tmp/p".parse::<Setting>(), Ok(Setting::Dir("/tmp/p".into())));
    assert!("".parse::<Setting>().is_err());
}
