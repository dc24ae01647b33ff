//! A `tracing` layer that collects the message of every warning, for the tests of what
//! the plugin warns about.

use std::sync::{Arc, Mutex};

use bevy::log::tracing::{Event, Level, Subscriber, field};
use bevy::log::tracing_subscriber::layer::{Context, Layer};

/// Collects the message of every warning.
#[derive(Clone, Default)]
pub struct Warnings(pub Arc<Mutex<Vec<String>>>);

impl Warnings {
    /// The warnings so far whose message contains `text`.
    pub fn containing(&self, text: &str) -> Vec<String> {
        let all = self.0.lock().unwrap();
        all.iter().filter(|w| w.contains(text)).cloned().collect()
    }
}

struct MessageText(String);

impl field::Visit for MessageText {
    fn record_debug(&mut self, field: &field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl<S: Subscriber> Layer<S> for Warnings {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        if *event.metadata().level() == Level::WARN {
            let mut text = MessageText(String::new());
            event.record(&mut text);
            self.0.lock().unwrap().push(text.0);
        }
    }
}
