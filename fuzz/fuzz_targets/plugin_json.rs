//! The JSON messages of the plugin ABI, as a host and a plugin read each other's.
#![no_main]

use agentry_plugin_abi::wire::{CallEnd, CallRequest, PrepareRequest, Prepared};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = serde_json::from_slice::<PrepareRequest>(data);
    let _ = serde_json::from_slice::<Prepared>(data);
    let _ = serde_json::from_slice::<CallRequest>(data);
    let _ = serde_json::from_slice::<CallEnd>(data);
    let _ = serde_json::from_slice::<agentry_plugin::tool::ToolProgress>(data);
});
