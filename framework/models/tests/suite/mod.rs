mod clients;
mod eventstream;
mod fixtures;
mod odd_chunks;
mod robustness;
mod sigv4;
