//! Identifiers shared by sessions, turns and tool calls.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// A new random identifier with this kind's prefix.
            pub fn generate() -> Self {
                Self(format!(concat!($prefix, "_{}"), uuid::Uuid::new_v4().simple()))
            }

            /// The identifier as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                Self(value.to_owned())
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self(value)
            }
        }
    };
}

string_id!(
    /// Identifies a session (a conversation with its history).
    SessionId,
    "sess"
);
string_id!(
    /// Identifies one tool call within a session; models supply their own.
    ToolCallId,
    "call"
);
string_id!(
    /// Identifies one turn: the user's message, or one model response.
    TurnId,
    "turn"
);
