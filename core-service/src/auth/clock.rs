//! Time as the authentication code sees it, injectable so tests can move it.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> Instant;
}

#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that moves only when told to.
#[derive(Debug, Clone)]
pub struct ManualClock {
    base: Instant,
    offset: Arc<Mutex<Duration>>,
}

impl Default for ManualClock {
    fn default() -> Self {
        Self {
            base: Instant::now(),
            offset: Arc::default(),
        }
    }
}

impl ManualClock {
    pub fn advance(&self, by: Duration) {
        let mut offset = self
            .offset
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *offset += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        let offset = *self
            .offset
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.base + offset
    }
}
