//! A layer that sees a span made, recorded and closed, but not entered and left.
//!
//! A chat's future is instrumented with its span, so the span is entered and left at each poll:
//! once per chunk the model streams. The OpenTelemetry layer only notes the time at each exit
//! (the span's end, should it close without another), taking a lock to do so. Its span ends at
//! its close instead: the same moment for a span that closes when its future is done, at a
//! fraction of the cost on a busy instance. Wrapped around the layer's filter, it also spares
//! the filter's look-up of the span at each entry and exit.

use std::any::TypeId;
use tracing::span;
use tracing::subscriber::Interest;
use tracing::{Dispatch, Event, Metadata, Subscriber};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::{Context, Layer};

/// `L` with every notice but a span's entries and exits.
pub(super) struct Unentered<L>(pub(super) L);

impl<S: Subscriber, L: Layer<S>> Layer<S> for Unentered<L> {
    fn on_register_dispatch(&self, subscriber: &Dispatch) {
        self.0.on_register_dispatch(subscriber);
    }

    fn on_layer(&mut self, subscriber: &mut S) {
        self.0.on_layer(subscriber);
    }

    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        self.0.register_callsite(metadata)
    }

    fn enabled(&self, metadata: &Metadata<'_>, ctx: Context<'_, S>) -> bool {
        self.0.enabled(metadata, ctx)
    }

    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        self.0.on_new_span(attrs, id, ctx);
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        self.0.max_level_hint()
    }

    fn on_record(&self, span: &span::Id, values: &span::Record<'_>, ctx: Context<'_, S>) {
        self.0.on_record(span, values, ctx);
    }

    fn on_follows_from(&self, span: &span::Id, follows: &span::Id, ctx: Context<'_, S>) {
        self.0.on_follows_from(span, follows, ctx);
    }

    fn event_enabled(&self, event: &Event<'_>, ctx: Context<'_, S>) -> bool {
        self.0.event_enabled(event, ctx)
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        self.0.on_event(event, ctx);
    }

    fn on_close(&self, id: span::Id, ctx: Context<'_, S>) {
        self.0.on_close(id, ctx);
    }

    fn on_id_change(&self, old: &span::Id, new: &span::Id, ctx: Context<'_, S>) {
        self.0.on_id_change(old, new, ctx);
    }

    // The wrapped layer answers for its own type and the types it hands out (the OpenTelemetry
    // layer's span context, say).
    #[allow(unsafe_code)]
    unsafe fn downcast_raw(&self, id: TypeId) -> Option<*const ()> {
        if id == TypeId::of::<Self>() {
            return Some(self as *const Self as *const ());
        }
        // SAFETY: the caller's contract (a pointer to a value of type `id`, living as long as
        // `self`) is passed on whole to the layer `self` owns.
        unsafe { self.0.downcast_raw(id) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::layer::SubscriberExt;

    /// A layer that writes down what it is told of spans and events.
    #[derive(Clone, Default)]
    struct Notices(Arc<Mutex<Vec<&'static str>>>);

    impl<S: Subscriber> Layer<S> for Notices {
        fn on_new_span(&self, _: &span::Attributes<'_>, _: &span::Id, _: Context<'_, S>) {
            self.0.lock().unwrap().push("new");
        }
        fn on_record(&self, _: &span::Id, _: &span::Record<'_>, _: Context<'_, S>) {
            self.0.lock().unwrap().push("record");
        }
        fn on_event(&self, _: &Event<'_>, _: Context<'_, S>) {
            self.0.lock().unwrap().push("event");
        }
        fn on_enter(&self, _: &span::Id, _: Context<'_, S>) {
            self.0.lock().unwrap().push("enter");
        }
        fn on_exit(&self, _: &span::Id, _: Context<'_, S>) {
            self.0.lock().unwrap().push("exit");
        }
        fn on_close(&self, _: span::Id, _: Context<'_, S>) {
            self.0.lock().unwrap().push("close");
        }
    }

    #[test]
    fn the_wrapped_layer_hears_of_everything_but_entries_and_exits() {
        let notices = Notices::default();
        let subscriber = tracing_subscriber::registry().with(Unentered(notices.clone()));
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("chat", tokens = tracing::field::Empty);
            for _ in 0..3 {
                span.in_scope(|| tracing::info!("inside"));
            }
            span.record("tokens", 3);
        });
        assert_eq!(
            *notices.0.lock().unwrap(),
            ["new", "event", "event", "event", "record", "close"]
        );
    }
}
