// Socket-level micro benchmark behind two choices of lib/lean-http/ (not a test, not `npm run bench`):
//   write: a 243-byte latin1 head and a 368-byte body per response, as cork() + two write() + uncork() ("cork")
//          or copied into one buffer and written once ("joined", write.ts);
//   read:  a 525-byte answer per round trip, through 'data' events ("data") or net's `onread` into one shared
//          buffer and copied out ("onread", client.ts).
// Each measurement runs in a child process of its own against a peer process, alternating the two ways, and prints
// the child's CPU time per operation. "joined" calls the server's own writeJoined (build first: npm run build -w
// server). Usage: node bench/socket-micro.mjs [rounds=5]
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { writeJoined } from '../server/dist/lib/lean-http/write.js';

const [role, ...args] = process.argv.slice(2);
const HEAD =
  'HTTP/1.1 200 OK\r\nX-Oneapi-Request-Id: 20261126112206419010420QE9sGKTm\r\nAccess-Control-Allow-Origin: *\r\n' +
  'Content-Type: application/json\r\nDate: Thu, 26 Nov 2026 11:22:06 GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 368\r\n\r\n';
const BODY = Buffer.alloc(368, 97);
const ANSWER = Buffer.alloc(525, 98);

const report = (label, n, c0) => {
  const c = process.cpuUsage(c0);
  console.log(`${label} ${((c.user + c.system) / n).toFixed(2)} µs CPU per operation`);
};

if (role === 'peer') {
  // sink: reads and drops; echo: answers ANSWER to every byte it reads
  const echo = args[0] === 'echo';
  const server = net.createServer((c) => {
    c.setNoDelay(true);
    c.on('data', echo ? () => c.write(ANSWER) : () => {});
  });
  server.listen(0, '127.0.0.1', () => console.log(server.address().port));
} else if (role === 'write') {
  const [port, mode, n] = [Number(args[0]), args[1], Number(args[2])];
  const sock = net.connect(port, '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  sock.setNoDelay(true);
  const cb = () => {};
  const one =
    mode === 'cork'
      ? () => {
          sock.cork();
          sock.write(HEAD, 'latin1');
          sock.write(BODY, cb);
          sock.uncork();
        }
      : () => writeJoined(sock, [HEAD, BODY], cb);
  const c0 = process.cpuUsage();
  let i = 0;
  // a few responses per event-loop turn, as a loaded server writes them
  const loop = () => {
    for (let k = 0; k < 4; k++) one();
    if ((i += 4) >= n) {
      report(`write ${mode}`, n, c0);
      return sock.end();
    }
    if (sock.writableLength > 1 << 20) sock.once('drain', () => setImmediate(loop));
    else setImmediate(loop);
  };
  loop();
} else if (role === 'read') {
  const [port, mode, n] = [Number(args[0]), args[1], Number(args[2])];
  const shared = Buffer.allocUnsafe(64 * 1024);
  let got = 0;
  let i = 0;
  let c0;
  const onChunk = (b) => {
    got += b.length;
    if (got < ANSWER.length) return;
    got -= ANSWER.length;
    if (++i >= n) {
      report(`read ${mode}`, n, c0);
      process.exit(0);
    }
    sock.write('x');
  };
  const opts = { port, host: '127.0.0.1' };
  if (mode === 'onread') {
    opts.onread = {
      buffer: shared,
      callback: (nread) => {
        const own = Buffer.allocUnsafe(nread);
        shared.copy(own, 0, 0, nread);
        onChunk(own);
        return true;
      },
    };
  }
  const sock = net.connect(opts);
  if (mode !== 'onread') sock.on('data', onChunk);
  sock.setNoDelay(true);
  sock.once('connect', () => {
    c0 = process.cpuUsage();
    sock.write('x');
  });
} else {
  const rounds = Number(role ?? 5);
  const me = new URL(import.meta.url).pathname;
  const peer = async (kind) => {
    const child = spawn(process.execPath, [me, 'peer', kind], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise((r) => child.stdout.once('data', (d) => r(Number(String(d).trim()))));
    return { child, port };
  };
  const run = (what, port, mode, n) =>
    process.stdout.write(
      spawnSync(process.execPath, [me, what, String(port), mode, String(n)], { encoding: 'utf8' }).stdout,
    );
  const sink = await peer('sink');
  const echo = await peer('echo');
  console.log(`Node ${process.version}; ${rounds} alternating rounds`);
  for (let r = 0; r < rounds; r++) {
    run('write', sink.port, 'cork', 300_000);
    run('write', sink.port, 'joined', 300_000);
  }
  for (let r = 0; r < rounds; r++) {
    run('read', echo.port, 'data', 100_000);
    run('read', echo.port, 'onread', 100_000);
  }
  sink.child.kill();
  echo.child.kill();
}
