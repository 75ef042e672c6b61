mod cancellation;
mod concurrency;
mod executor;
mod fixtures;
mod permissions;
mod sessions;
mod stop_reasons;
mod support;
