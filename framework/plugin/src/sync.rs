//! Small helpers for shared state and panics, used by the framework, its providers and its
//! front-ends alike.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks a mutex, going on past a panic of another holder: every mutex of agentry guards data
/// that stays consistent between statements, so a poisoned one is still usable.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The message a panic carried (`panic!("…")` gives a `&str` or a `String`), or `no message`.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_mutex_is_still_locked_and_panics_say_what_they_carried() {
        let mutex = std::sync::Arc::new(Mutex::new(1));
        let holder = mutex.clone();
        let panic = std::thread::spawn(move || {
            let _guard = holder.lock();
            panic!("held {}", 1);
        })
        .join()
        .unwrap_err();
        assert!(mutex.is_poisoned());
        *lock(&mutex) += 1;
        assert_eq!(*lock(&mutex), 2);
        assert_eq!(panic_message(panic.as_ref()), "held 1");
        let fixed = std::panic::catch_unwind(|| panic!("fixed")).unwrap_err();
        assert_eq!(panic_message(fixed.as_ref()), "fixed");
        let other = std::panic::catch_unwind(|| std::panic::panic_any(7)).unwrap_err();
        assert_eq!(panic_message(other.as_ref()), "no message");
    }
}
