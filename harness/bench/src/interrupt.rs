//! Ctrl-C (SIGINT) and SIGTERM during a run. The first ends the run after the case in hand: its
//! rows are written, nothing finished is lost, and the run says how to resume. A second ends the
//! process at once and leaves the case in hand as not run (its started marker removed), so that
//! `--resume` runs it again instead of recording it as crashed.
//!
//! Only the command line installs the handler; without it (tests, a library user) nothing here
//! changes how a run behaves.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};

static REQUESTED: AtomicBool = AtomicBool::new(false);
static IN_HAND: Mutex<Option<PathBuf>> = Mutex::new(None);
static INSTALL: Once = Once::new();

/// Starts the thread that receives SIGINT and SIGTERM for this process.
pub fn install() {
    INSTALL.call_once(|| {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
            eprintln!("warning: could not install the interrupt handler; Ctrl-C ends the run at once");
            return;
        };
        std::thread::spawn(move || {
            for _ in signals.forever() {
                if !REQUESTED.swap(true, Ordering::SeqCst) {
                    eprintln!(
                        "\ninterrupted: the case in hand finishes and its rows are kept, then the run stops (Ctrl-C again stops at once)"
                    );
                    continue;
                }
                if let Some(marker) = IN_HAND.lock().unwrap_or_else(|e| e.into_inner()).take() {
                    let _ = std::fs::remove_file(marker);
                }
                eprintln!("\nstopped at once: the case in hand is left as not run; `harness run --resume <run folder>` runs it");
                std::process::exit(130);
            }
        });
    });
}

/// Whether an interrupt asked the run to stop.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// The started marker of the case in hand (None between cases): a second interrupt removes it.
pub fn set_in_hand(marker: Option<PathBuf>) {
    *IN_HAND.lock().unwrap_or_else(|e| e.into_inner()) = marker;
}

/// Asks the run to stop after the case in hand, as a first interrupt does (for tests).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Clears a request (for tests that run again in the same process).
pub fn clear() {
    REQUESTED.store(false, Ordering::SeqCst);
}
