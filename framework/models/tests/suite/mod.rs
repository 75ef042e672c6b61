mod clients;
mod fixtures;
mod robustness;
