mod aws_frames;
mod bedrock;
mod clients;
mod eventstream;
mod fixtures;
mod odd_chunks;
mod robustness;
mod sigv4;
