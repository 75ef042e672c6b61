mod clients;
mod fixtures;
mod odd_chunks;
mod robustness;
