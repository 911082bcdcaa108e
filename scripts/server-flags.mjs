import { availableParallelism } from 'node:os';

// V8 flags and environment of the server process, used by `npm start` (scripts/start.mjs) and `npm run bench` (bench/run.mjs).
//
// --max-semi-space-size=8 (MB, default 16 on 64-bit): the relay allocates fast and its objects die young; with 16 MB
// semi-spaces the young generation grew to ~48 MB and the heap to 90-125 MB under load (RSS 170-245 MB at 128
// connections); with 8 MB the heap stayed at 53-62 MB with the same throughput. The SQLite log worker
// asks for a smaller young generation through Worker resourceLimits, which this flag overrides (V8 gives the flag
// precedence); see WORKER_YOUNG_GENERATION_MB in server/src/services/sqlite-worker.ts.
//
// --heap-growing-percent=50 (60 until --single-threaded-gc below came; see there): the old generation may grow to 1.5x
// what survived the last full GC (V8 picks 1.1-4x by
// itself and, under a steady request load, chose large factors: RSS kept climbing to 180-215 MB at 128 connections).
// Measured with the perf harness at 128 connections, 0-ms upstream: RSS 138-151 MB instead of 181-192 MB, with the
// same RPS within the run-to-run noise (JSON 7.0-8.3k vs 7.1-7.3k, stream 4.6-5.1k vs 4.2k).
// 30 was tried: `npm run bench` peak RSS at 128 connections 145-149 MB instead of 156-157 MB (three and two full runs),
// the same throughput, but the one-connection stream p99 rose: 2.10-2.29 ms instead of 1.52-1.70 ms in the full runs,
// and in six paired probe-only runs it was higher every time (1.83-2.20 vs 0.75-1.89 ms). With the smaller factor
// major GCs come more often, and the incremental marking steps of each (50 steps, up to 3.3 ms, in one traced probe)
// land on requests. Latency at low concurrency was kept over ~10 MB at saturation.
// With --single-threaded-gc at 60, the peak went to 150-153 MB in three of four full runs (marking no longer runs
// beside the main thread, so a cycle ends later and the heap grows meanwhile); at 50: 145-146 MB in two runs, with
// the one-connection added p99 at 0.98-1.36 ms and the throughput of the runs at 60.
//
// --no-allocation-site-pretenuring: at 128 connections a request lives about as long as one young-generation cycle,
// so its objects survive a scavenge at a high rate; V8 then starts allocating them straight in the old generation
// ("pretenuring"), where they die soon after and need full mark-compacts. The process fell into that mode in some
// runs and not in others. Measured with --trace-gc-nvp, stream at 128 connections, 0-ms upstream, 8 s: promoted
// 475 MB -> 36 MB, mark-compacts 61 -> 4, scavenge pauses 1,385 -> 840 ms, RPS 6.5k -> 8.4k; JSON unchanged.
//
// --single-threaded-gc, on machines of two cores or fewer: V8's GC helper threads (parallel scavenge, concurrent
// marking and sweeping) take turns on the same two cores with the main thread, the SQLite log worker and whatever
// else runs there, and the main thread waits for them. Measured with wrk at 128 connections, 0-ms JSON upstream, a
// fresh gateway per run, alternating with the default: faster in 9 of 9 pairs (+2 to +27 %; gateway CPU per request
// 128-163 µs instead of 156-180), and no different beyond the noise at 32 connections (4 pairs, -5 to +6 %).
// --no-parallel-scavenge alone was slower, --no-concurrent-marking or --no-concurrent-sweeping alone no better.
// `npm run bench` peak RSS at 128 connections: 141-153 MB in four runs with it, 140 MB in one without (hence the heap
// growing factor of 50 above); one-connection added p99 0.87-1.49 ms either way. With more cores the helpers have cores
// of their own, and V8's default stays. All of this was measured on Node 20; on Node 26 the same flag made a spawned
// gateway's RSS grow more in the pre-auth memory test (37-49 MB against 28-30 MB without it, three runs each), so it
// is kept to the Node it was measured on until someone measures the newer one.
export const FEW_CORES_NODE_FLAGS = ['--single-threaded-gc'];
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
// The Dockerfile's CMD and the README's start command carry the flags other than FEW_CORES_NODE_FLAGS (the image does
// not know the cores of the host it will run on); server/test/ops/dockerfile.test.ts keeps them equal.
export const SERVER_NODE_FLAGS = [
  '--max-semi-space-size=8',
  '--heap-growing-percent=50',
  '--no-allocation-site-pretenuring',
  ...(availableParallelism() <= 2 && NODE_MAJOR < 22 ? FEW_CORES_NODE_FLAGS : []),
];

// glibc malloc settings of the server process (set only where the environment has none of its own).
//
// MALLOC_ARENA_MAX=2 (glibc's default on 64-bit: 8 per core, 16 here): besides the main thread and the SQLite log
// writer, V8 runs GC and compile helper threads that malloc short-lived work lists and compiler zones (compiling
// undici's llhttp WebAssembly alone peaks at ~40 MB), and glibc gave each its own arena. Freed memory stayed in those
// arenas: after four 6-s runs at 128 connections, malloc held 35.8 MB from the system with 9.9 MB in use (gdb:
// malloc_stats), and RSS ended at 150-152 MB. With two arenas: 135-140 MB (peaks of the same four runs, two paired
// runs each), the same RPS within the noise. Fixed mmap/trim thresholds saved ~5 MB more on their own and nothing
// measurable on top of two arenas; --max-semi-space-size=4 saved ~6 MB more but cost RPS in some runs.
export const SERVER_ENV = { MALLOC_ARENA_MAX: '2' };
