//! The progress line of `rudder invoke --calls N` on a terminal: `call 4200/100000: 4195 ok, 5
//! failed`, rewritten in place at most every 200 ms and wiped before any other stderr line, so a
//! long run shows it is alive. Never written when stderr is not a terminal (a pipe or a file gets
//! only the lines of failed calls and the summary).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// The shortest time between two redraws.
const EVERY: Duration = Duration::from_millis(200);

/// The progress line's state.
#[derive(Debug)]
pub(crate) struct Progress {
    enabled: bool,
    last: Option<Instant>,
    shown: bool,
}

impl Progress {
    /// A progress line for `calls` calls: only for several calls, with stderr a terminal.
    pub(crate) fn new(calls: usize) -> Progress {
        Progress {
            enabled: calls > 1 && std::io::stderr().is_terminal(),
            last: None,
            shown: false,
        }
    }

    /// After call `number` of `calls`: redraws the line when the last redraw is old enough (the
    /// first call always draws it).
    pub(crate) fn tick(&mut self, number: usize, calls: usize, ok: usize, failed: usize) {
        if !self.enabled || self.last.is_some_and(|at| at.elapsed() < EVERY) {
            return;
        }
        self.last = Some(Instant::now());
        self.shown = true;
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[Kcall {number}/{calls}: {ok} ok, {failed} failed"
        );
        let _ = err.flush();
    }

    /// Wipes the line, before another stderr line is written.
    pub(crate) fn clear(&mut self) {
        if std::mem::take(&mut self.shown) {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}
