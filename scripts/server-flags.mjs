// V8 flags of the server process, used by `npm start` (scripts/start.mjs) and `npm run bench` (bench/run.mjs).
//
// --max-semi-space-size=8 (MB, default 16 on 64-bit): the relay allocates fast and its objects die young; with 16 MB
// semi-spaces the young generation grew to ~48 MB and the heap to 90-125 MB under load (RSS 170-245 MB at 128
// connections); with 8 MB the heap stayed at 53-62 MB with the same throughput.
//
// --heap-growing-percent=30: the old generation may grow to 1.3x what survived the last full GC (V8 picks 1.1-4x by
// itself and, under a steady request load, chose large factors: RSS kept climbing to 180-215 MB at 128 connections).
// 60 first: RSS 138-151 MB instead of 181-192 MB in the perf harness (128 connections, 0-ms upstream), same RPS. At 60
// the old generation still grew from ~25 MB live to ~41 MB between mark-compacts; 30 holds it lower. `npm run bench`,
// two full runs each: peak RSS at 128 connections 156 / 157 MB at 60, 149 / 146 MB at 30, the 0-ms cells within the
// round-to-round noise (JSON 23.4-25.7 % vs 23.1-27.5 %, stream 38.8-39.9 % vs 38.0-42.3 %). The one-connection p99
// swings around 2 ms either way (three paired probe runs: JSON 1.47-2.41 vs 1.99-2.31 ms, stream 1.61-1.89 vs
// 1.90-2.20 ms).
//
// --no-allocation-site-pretenuring: at 128 connections a request lives about as long as one young-generation cycle,
// so its objects survive a scavenge at a high rate; V8 then starts allocating them straight in the old generation
// ("pretenuring"), where they die soon after and need full mark-compacts. The process fell into that mode in some
// runs and not in others. Measured with --trace-gc-nvp, stream at 128 connections, 0-ms upstream, 8 s: promoted
// 475 MB -> 36 MB, mark-compacts 61 -> 4, scavenge pauses 1,385 -> 840 ms, RPS 6.5k -> 8.4k; JSON unchanged.
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=30', '--no-allocation-site-pretenuring'];
