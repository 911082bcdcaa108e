// Rows on their way to the SQLite writer worker, as bytes rather than JS values. A busy gateway's log rows wait in the
// worker up to a second to be written grouped (log-row-grouping.ts); held as JS arrays and strings, every row
// survived the worker's young-generation collections, which made V8 grow that isolate's new space to the process-wide
// maximum (scripts/server-flags.mjs sets it; V8 lets the flag win over the worker's own resourceLimits). As bytes in
// an ArrayBuffer handed over (transferred, not copied), a waiting row lives outside the V8 heap; its values become JS
// values only when the writer binds them, and die young. Why and what it saved: docs/perf/since-7c6c68e.md.
// Imported by the worker too: it must stay free of anything that opens the database or pulls in the application.

/** value tags: null, a 32-bit integer, any other number, a UTF-8 string */
const NULL = 0;
const INT = 1;
const NUM = 2;
const STR = 3;

/** Values appended one after the other (a row's values in its statement's order), handed over by take(). */
export class RowBytesWriter {
  private buf: Buffer;
  private at = 0;
  /** rows written since the last take() (the caller counts them: push() knows no row boundaries) */
  rows = 0;

  constructor(initialBytes = 16 * 1024) {
    this.buf = Buffer.allocUnsafeSlow(initialBytes);
  }

  get empty(): boolean {
    return this.at === 0;
  }

  /** Appends one value: null/undefined, a boolean (as 0/1), a number or a string; anything else as its string. */
  push(v: unknown): void {
    if (typeof v === 'number') {
      if ((v | 0) === v) {
        this.room(5);
        this.buf[this.at] = INT;
        this.buf.writeInt32LE(v, this.at + 1);
        this.at += 5;
      } else {
        this.room(9);
        this.buf[this.at] = NUM;
        this.buf.writeDoubleLE(v, this.at + 1);
        this.at += 9;
      }
    } else if (v === null || v === undefined) {
      this.room(1);
      this.buf[this.at++] = NULL;
    } else if (typeof v === 'boolean') this.push(v ? 1 : 0);
    else {
      const s = typeof v === 'string' ? v : String(v);
      // a UTF-16 unit becomes at most 3 UTF-8 bytes
      this.room(5 + s.length * 3);
      const n = this.buf.write(s, this.at + 5, 'utf8');
      this.buf[this.at] = STR;
      this.buf.writeUInt32LE(n, this.at + 1);
      this.at += 5 + n;
    }
  }

  /** The bytes so far, in an ArrayBuffer of their own (to transfer to the worker); the writer starts empty again. */
  take(): Uint8Array {
    const out = new Uint8Array(this.at);
    out.set(this.buf.subarray(0, this.at));
    this.at = 0;
    this.rows = 0;
    return out;
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }
}

/** A view of handed-over bytes that reads values back. */
export class RowBytesReader {
  private readonly buf: Buffer;

  constructor(bytes: Uint8Array) {
    this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get length(): number {
    return this.buf.length;
  }

  /** Reads `n` values from byte `at` into `out` from index `into`; returns the byte after them. */
  read(at: number, n: number, out: unknown[], into = 0): number {
    const buf = this.buf;
    for (let i = 0; i < n; i++) {
      const tag = buf[at];
      if (tag === INT) {
        out[into + i] = buf.readInt32LE(at + 1);
        at += 5;
      } else if (tag === STR) {
        const len = buf.readUInt32LE(at + 1);
        out[into + i] = buf.toString('utf8', at + 5, at + 5 + len);
        at += 5 + len;
      } else if (tag === NUM) {
        out[into + i] = buf.readDoubleLE(at + 1);
        at += 9;
      } else {
        out[into + i] = null;
        at += 1;
      }
    }
    return at;
  }

  /** The number value `skip` values after byte `at` (the value must be a number), without reading the others. */
  numberAt(at: number, skip: number): number {
    at = this.skip(at, skip);
    const tag = this.buf[at];
    return tag === INT ? this.buf.readInt32LE(at + 1) : tag === NUM ? this.buf.readDoubleLE(at + 1) : 0;
  }

  /** The byte after `n` values from byte `at`, without reading them. */
  skip(at: number, n: number): number {
    const buf = this.buf;
    for (let i = 0; i < n; i++) {
      const tag = buf[at];
      at += tag === INT ? 5 : tag === NUM ? 9 : tag === STR ? 5 + buf.readUInt32LE(at + 1) : 1;
    }
    return at;
  }
}

/** Values of rows given as JS values (`cols` per row, one row after the other) as handed-over bytes. */
export function rowBytesOf(values: readonly unknown[]): Uint8Array {
  const w = new RowBytesWriter(Math.max(1024, values.length * 16));
  for (const v of values) w.push(v);
  return w.take();
}

/** Every value of handed-over bytes, in order (the main thread's way back when the worker is gone; tests). */
export function valuesOfRowBytes(bytes: Uint8Array): unknown[] {
  const r = new RowBytesReader(bytes);
  const out: unknown[] = [];
  let at = 0;
  while (at < r.length) at = r.read(at, 1, out, out.length);
  return out;
}
