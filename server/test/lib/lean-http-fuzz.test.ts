// Corrupted request heads against the lean HTTP front: answered at once with Node's 400 (not held until the head
// timeout), and a seeded differential fuzz: mutated requests go to a server with the front and to Node's server
// alone, and both must frame them the same way, i.e. give the application the same requests (method, url, headers,
// body) and the client the same answers. FUZZ_SEED / FUZZ_CASES override the fixed seed and the number of cases.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeanHttpFront } from '../../src/lib/lean-http/front.js';

const ROUTE = '/fast';

/** what the application saw of a request */
interface Seen {
  method: string;
  url: string;
  headers: Record<string, unknown>;
  /** null: Node's server gave the request to the application but the connection ended before its `end` event */
  body: string | null;
  /** Node's request: whether its parser read the whole message */
  req?: http.IncomingMessage;
}

/** the requests each server's application received, by the client's port (one connection per case) */
const seen = { lean: new Map<number, Seen[]>(), plain: new Map<number, Seen[]>() };

function record(into: Map<number, Seen[]>, port: number, s: Seen): void {
  const list = into.get(port);
  if (list) list.push(s);
  else into.set(port, [s]);
}

function nodeHandler(into: Map<number, Seen[]>) {
  return (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const parts: Buffer[] = [];
    const s: Seen = { method: req.method!, url: req.url!, headers: req.headers, body: null, req };
    record(into, req.socket.remotePort!, s);
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      s.body = Buffer.concat(parts).toString('latin1');
      res.end(JSON.stringify({ url: req.url }));
    });
  };
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

let lean: http.Server;
let plain: http.Server;
let leanPort = 0;
let plainPort = 0;
/** requests the front served itself (the rest went to Node's server behind it) */
let servedByFront = 0;

beforeAll(async () => {
  lean = http.createServer(nodeHandler(seen.lean));
  const front = LeanHttpFront.install(lean, {
    isRoute: (url) => url === ROUTE,
    bodyLimit: 1024 * 1024,
    handle: (req, res) => {
      servedByFront++;
      const body = req.body.toString('latin1');
      record(seen.lean, req.socket.remotePort!, { method: 'POST', url: req.url, headers: { ...req.headers }, body });
      res.end(JSON.stringify({ url: req.url }));
    },
  });
  expect(front).not.toBeNull();
  plain = http.createServer(nodeHandler(seen.plain));
  [leanPort, plainPort] = await Promise.all([listen(lean), listen(plain)]);
});

afterAll(async () => {
  for (const s of [lean, plain]) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

interface Outcome {
  /** every byte the server sent, Date headers blanked */
  answer: string;
  /** the server closed the connection (false: still open when the wait ended) */
  closed: boolean;
  ms: number;
  /** the requests the application received on this connection */
  seen: Seen[] | undefined;
}

/** Sends `bytes` on a new connection and collects the answer until the server closes it or `waitMs` pass. */
function exchange(port: number, bytes: Buffer, waitMs: number, into: Map<number, Seen[]>): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    let local = 0;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const answer = Buffer.concat(chunks)
        .toString('latin1')
        .replace(/\r\nDate: [^\r]*/g, '\r\nDate: -');
      // taken at once: a later connection may get the same client port once the server has closed this one
      const got = into.get(local);
      into.delete(local);
      resolve({ answer, closed, ms: Date.now() - started, seen: got });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('connect', () => (local = socket.localPort!));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => finish(true));
    socket.on('error', () => undefined);
    socket.write(bytes);
  });
}

/**
 * The requests the application received whole. Node's server parses everything it has read at once: a bad request
 * later in the same read destroys the connection, and the good requests before it, which its application was given,
 * never see their `end` (nor get their answers out). The front answers a request before it parses the next. Such a
 * request counts with its body unknown (`?`): its head, Content-Length included, is compared, and Node's parser did
 * read the whole message, so both took the same bytes as its body.
 */
function received(list: Seen[] | undefined): string {
  return JSON.stringify(
    (list ?? []).filter((s) => !s.req || s.req.complete).map((s) => ({ ...s, req: undefined, body: s.body ?? '?' })),
  );
}

function sameRequests(front: Seen[] | undefined, node: Seen[] | undefined): boolean {
  const a = JSON.parse(received(front)) as Seen[];
  const b = JSON.parse(received(node)) as Seen[];
  return (
    a.length === b.length &&
    a.every(
      (x, i) =>
        x.method === b[i].method &&
        x.url === b[i].url &&
        JSON.stringify(x.headers) === JSON.stringify(b[i].headers) &&
        (x.body === b[i].body || x.body === '?' || b[i].body === '?'),
    )
  );
}

/** the statuses of the answers other than 200 (Node may drop the 200s of requests before a bad one: see below) */
const errorStatuses = (answer: string) =>
  [...answer.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]).filter((s) => s !== '200');

describe('lean HTTP front: corrupted request heads', () => {
  const head = 'POST /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n';
  const cases: Array<[string, string]> = [
    ['a bad character in the method', 'PO\x01T /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello'],
    ['a bad character in a header name', 'POST /fast HTTP/1.1\r\nHo(st: x\r\nContent-Length: 5\r\n\r\nhello'],
    ['a header line without a colon', `${head}Broken\r\n\r\nhello`],
    ['a non-numeric Content-Length', 'POST /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 5x\r\n\r\nhello'],
    ['a bare CR in a value', `POST /fast HTTP/1.1\r\nHost: x\ry\r\nContent-Length: 5\r\n\r\nhello`],
    ['a bare CR ending the head', `${head}\rXhello`],
    ['a NUL in a value', `POST /fast HTTP/1.1\r\nHost: x\x00\r\nContent-Length: 5\r\n\r\nhello`],
    ['a folded header line', `${head}X-A: 1\r\n folded\r\n\r\nhello`],
    ['Content-Length with Transfer-Encoding', `${head}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`],
    ['two different Content-Lengths', `${head}Content-Length: 6\r\n\r\nhello!`],
    [
      'an invalid chunk size',
      'POST /fast HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n',
    ],
    ['a control character in the url', 'POST /fa\x7fst HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello'],
    ['a bad HTTP version', 'POST /fast HTTP/1.x\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello'],
  ];
  it.each(cases)('answers %s with 400 at once and closes, as Node’s server does', async (_name, request) => {
    const bytes = Buffer.from(request, 'latin1');
    const [front, node] = await Promise.all([
      exchange(leanPort, bytes, 10_000, seen.lean),
      exchange(plainPort, bytes, 10_000, seen.plain),
    ]);
    expect(node.answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(received(front.seen)).toBe('[]');
    expect(front.answer).toBe(node.answer);
    expect(front.closed).toBe(true);
    // Node answers these as soon as it reads them; the front used to hold some until its head timeout
    expect(front.ms).toBeLessThan(1000);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// differential fuzz

/** mulberry32: a small seeded PRNG, so a failing case can be replayed from its seed */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BASES = [
  `POST ${ROUTE} HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello`,
  `POST ${ROUTE} HTTP/1.1\r\nHost: gw.example\r\nAuthorization: Bearer sk-abc\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"model":1}`,
  `POST ${ROUTE} HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nX-Trace: a, b\r\nContent-Length: 2\r\n\r\nokPOST ${ROUTE} HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc`,
  `POST ${ROUTE} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
  `GET /other HTTP/1.1\r\nHost: x\r\n\r\n`,
  `POST ${ROUTE} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
];
/** bytes that matter to an HTTP parser, picked more often than random ones */
const INTERESTING = [...'\r\n\t :,;-+0159aAzZ/?%\x00\x01\x7f\x80\xff"(){}'].map((c) => c.charCodeAt(0));
/** ends every case: a request that asks to close, so a well-framed exchange ends without waiting */
const SENTINEL = `GET /end HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;

function mutate(rand: () => number, input: string): Buffer {
  let b = Buffer.from(input, 'latin1');
  const pick = (n: number) => Math.floor(rand() * n);
  const byte = () => (rand() < 0.7 ? INTERESTING[pick(INTERESTING.length)] : pick(256));
  const ops = 1 + pick(3);
  for (let i = 0; i < ops; i++) {
    const at = pick(b.length + 1);
    switch (pick(7)) {
      case 0: // replace a byte
        if (b.length) b[Math.min(at, b.length - 1)] = byte();
        break;
      case 1: // insert bytes
        b = Buffer.concat([b.subarray(0, at), Buffer.from(Array.from({ length: 1 + pick(3) }, byte)), b.subarray(at)]);
        break;
      case 2: // delete bytes
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + pick(3))]);
        break;
      case 3: {
        // duplicate a header line, or give it a second value
        const text = b.toString('latin1');
        const lines = text.split('\r\n');
        const headerLines = lines.slice(1, lines.indexOf(''));
        if (!headerLines.length) break;
        const line = headerLines[pick(headerLines.length)];
        const copy = rand() < 0.5 ? line : line.replace(/:.*/, `: ${pick(20)}`);
        b = Buffer.from(text.replace(line + '\r\n', `${line}\r\n${copy}\r\n`), 'latin1');
        break;
      }
      case 4: {
        // a line ending changed: CRLF to LF, CR, LF CR, or doubled
        const text = b.toString('latin1');
        const ends = [...text.matchAll(/\r\n/g)].map((m) => m.index!);
        if (!ends.length) break;
        const e = ends[pick(ends.length)];
        const by = ['\n', '\r', '\n\r', '\r\n\r\n', '\r\r\n'][pick(5)];
        b = Buffer.from(text.slice(0, e) + by + text.slice(e + 2), 'latin1');
        break;
      }
      case 5: {
        // an odd Content-Length value
        const text = b.toString('latin1');
        const v = ['-1', '+5', '5 5', '0x5', '05', ' 3', '3,3', '99999999999999999999', '', '1e1', '4'][pick(11)];
        b = Buffer.from(text.replace(/Content-Length:[^\r\n]*/i, `Content-Length: ${v}`), 'latin1');
        break;
      }
      case 6: // an extra header with a random name or value
        b = Buffer.concat([
          b.subarray(0, Math.max(0, b.indexOf('\r\n') + 2)),
          Buffer.from(`X-${String.fromCharCode(byte())}: v${String.fromCharCode(byte())}\r\n`, 'latin1'),
          b.subarray(Math.max(0, b.indexOf('\r\n') + 2)),
        ]);
        break;
    }
  }
  return b;
}

/**
 * The error answers of an exchange in which the application received no request. Once it received one, whether
 * Node's 400 for bad bytes after it goes out depends on how the bytes were read: the answer to the good request may
 * be pending (Node destroys the connection with it) or sent with `Connection: close` (Node does not write the 400
 * then), and after a request that asked to close the front does not read on. The requests received and the end of
 * the connection say what matters there.
 */
function errorsOf(answer: string, list: Seen[] | undefined): string {
  return received(list) === '[]' ? errorStatuses(answer).join() : '-';
}

describe('lean HTTP front: differential fuzz against Node’s parser', () => {
  const seed = Number(process.env.FUZZ_SEED ?? 0x5eed1e55);
  const total = Number(process.env.FUZZ_CASES ?? 3000);

  it(`frames ${total} mutated requests as Node's server does (seed ${seed})`, { timeout: 120_000 }, async () => {
    const rand = prng(seed);
    // most cases end with the sentinel; the others end where the mutation left them, which is how a head that can
    // never complete shows (one the front used to hold until its head timeout, while Node answered it at once)
    const cases = Array.from({ length: total }, () => {
      const bytes = mutate(rand, BASES[Math.floor(rand() * BASES.length)]);
      return rand() < 0.85 ? Buffer.concat([bytes, Buffer.from(SENTINEL)]) : bytes;
    });
    const mismatches: string[] = [];
    let open = 0;
    let next = 0;
    const frontBefore = servedByFront;
    // a case still open after the wait (a body that never completes) must be open on both sides
    const WAIT_MS = 1500;
    const worker = async () => {
      while (next < cases.length) {
        const i = next++;
        const [front, node] = await Promise.all([
          exchange(leanPort, cases[i], WAIT_MS, seen.lean),
          exchange(plainPort, cases[i], WAIT_MS, seen.plain),
        ]);
        if (!node.closed) open++;
        // what must agree: the requests the application receives (see `received`), the error answers, and whether
        // the connection ends
        const got = { front: front.seen, node: node.seen };
        if (
          !sameRequests(got.front, got.node) ||
          errorsOf(front.answer, got.front) !== errorsOf(node.answer, got.node) ||
          front.closed !== node.closed
        ) {
          mismatches.push(
            `case ${i}: ${JSON.stringify(cases[i].toString('latin1'))}\n  front (${front.closed ? 'closed' : 'open'}): ${received(got.front)} ${JSON.stringify(front.answer)}\n  node  (${node.closed ? 'closed' : 'open'}): ${received(got.node)} ${JSON.stringify(node.answer)}`,
          );
        }
      }
    };
    await Promise.all(Array.from({ length: 48 }, worker));
    expect(
      mismatches,
      `seed ${seed} (FUZZ_SEED=${seed} replays it): ${mismatches.length} mismatches\n${mismatches.slice(0, 8).join('\n')}`,
    ).toEqual([]);
    // the mutations leave plenty of requests well-formed (served by the front itself) and make plenty of others bad
    expect(servedByFront - frontBefore).toBeGreaterThan(total / 20);
    expect(open).toBeLessThan(total / 4);
  });
});
