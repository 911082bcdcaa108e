// V8 flags of the server process, used by `npm start` (scripts/start.mjs) and `npm run bench` (bench/run.mjs).
//
// --max-semi-space-size=8 (MB, default 16 on 64-bit): the relay allocates fast and its objects die young; with 16 MB
// semi-spaces the young generation grew to ~48 MB and the heap to 90-125 MB under load (RSS 170-245 MB at 128
// connections); with 8 MB the heap stayed at 53-62 MB with the same throughput.
//
// --heap-growing-percent=60: the old generation may grow to 1.6x what survived the last full GC (V8 picks 1.1-4x by
// itself and, under a steady request load, chose large factors: RSS kept climbing to 180-215 MB at 128 connections).
// Measured with the perf harness at 128 connections, 0-ms upstream: RSS 138-151 MB instead of 181-192 MB, with the
// same RPS within the run-to-run noise (JSON 7.0-8.3k vs 7.1-7.3k, stream 4.6-5.1k vs 4.2k).
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=60'];
