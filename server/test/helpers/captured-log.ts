// A pino logger whose JSON lines the test can read: for checking what a server writes to its structured log.
import { Writable } from 'node:stream';
import { pino } from 'pino';

export function capturedLogger() {
  const lines: Array<Record<string, any>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, sink) };
}
