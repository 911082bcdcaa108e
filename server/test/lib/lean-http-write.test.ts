// writeJoined (lib/lean-http/write.ts): a head and its body as one socket write when small, written one after the
// other when large; either way the peer reads exactly the parts in order and the callback runs once.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { writeJoined } from '../../src/lib/lean-http/write.js';

let server: net.Server | null = null;

afterEach(async () => {
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = null;
});

/** A socket to a server that collects what it reads until the client ends; `received` resolves with it. */
async function pair(): Promise<{ socket: net.Socket; received: Promise<Buffer> }> {
  let done!: (b: Buffer) => void;
  const received = new Promise<Buffer>((r) => (done = r));
  server = net.createServer((c) => {
    const chunks: Buffer[] = [];
    c.on('data', (d) => chunks.push(d));
    c.on('end', () => {
      done(Buffer.concat(chunks));
      c.end();
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  return { socket, received };
}

it.each([
  ['small parts, copied into one buffer', 300],
  ['a body past the copy limit, written after its head', 100_000],
])('writes %s in order, latin1 heads byte for byte, and calls back once', async (_name, size) => {
  const { socket, received } = await pair();
  const writes: Array<Buffer | string> = [];
  const original = socket.write.bind(socket);
  socket.write = ((chunk: Buffer | string, ...rest: unknown[]) => {
    writes.push(chunk);
    return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof socket.write;
  const head = 'HTTP/1.1 200 OK\r\nX-Name: caf\u00e9\r\n\r\n';
  const body = Buffer.alloc(size, 0x61);
  let calls = 0;
  await new Promise<void>((resolve, reject) =>
    writeJoined(socket, [head, `${size.toString(16)}\r\n`, body, '\r\n'], (err) => {
      calls++;
      return err ? reject(err) : resolve();
    }),
  );
  socket.end();
  const got = await received;
  expect(
    got.equals(
      Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(`${size.toString(16)}\r\n`), body, Buffer.from('\r\n')]),
    ),
  ).toBe(true);
  // é (U+00E9) is one latin1 byte, as Node writes header text
  expect(got.indexOf(Buffer.from([0x63, 0x61, 0x66, 0xe9]))).toBeGreaterThan(0);
  expect(calls).toBe(1);
  expect(writes.length).toBe(size > 16 * 1024 ? 4 : 1);
});
