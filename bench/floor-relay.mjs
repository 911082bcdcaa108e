// The stack's floor for `npm run bench`: the least a relay on this stack does (the gateway's lean HTTP front before
// Node's HTTP server, its upstream call (relay/upstream-call.ts) through the lean HTTP client, undici's pooled Agent
// with the gateway's settings for what that client does not take, the request and the JSON answer parsed and written
// again, stream chunks piped as they come), with no auth, pricing, billing or logs. Measured in the same run
// as the gateway, it tells what the machine allows: a share of direct RPS that this relay does not reach either is
// not the gateway's to win.
// Usage: node bench/floor-relay.mjs <upstream base URL>; prints FLOOR_PORT=<port> once listening.
import http from 'node:http';
// the gateway's own modules and settings (`npm run bench` builds server/dist first)
import { loadUndici, UPSTREAM_POOL } from '../server/dist/lib/undici.js';
import { LeanHttpFront } from '../server/dist/lib/lean-http/front.js';
import { LeanHttpClient } from '../server/dist/lib/lean-http/client.js';
import { UpstreamCall } from '../server/dist/relay/upstream-call.js';
import { directTransport } from '../server/dist/relay/transport/index.js';

const upstream = new URL(process.argv[2]);
const { Agent } = await loadUndici();
const agent = new Agent(UPSTREAM_POOL);
const lean = new LeanHttpClient({ keepAliveTimeout: UPSTREAM_POOL.keepAliveTimeout });
// the gateway's transport for channels without a proxy: the lean client first, undici's pool for what it does not take
const transport = directTransport(agent, lean);
const ROUTE = '/v1/chat/completions';

async function relay(raw, authorization, res) {
  try {
    const body = JSON.parse(raw.toString());
    const call = new UpstreamCall(body.stream === true);
    await call.send(transport, {
      origin: upstream.origin,
      path: `${upstream.pathname.replace(/\/+$/, '')}${ROUTE}`,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: authorization ?? '' },
      body: Buffer.from(JSON.stringify(body)),
      headersTimeout: 300_000,
      bodyTimeout: 300_000,
    });
    const type = call.contentType || 'application/json';
    if (body.stream) {
      res.writeHead(call.statusCode, { 'content-type': type });
      // piped as they come, with backpressure
      await new Promise((resolve) =>
        call.consume((chunk) => {
          if (!res.write(chunk)) {
            call.pause();
            res.once('drain', () => call.resume());
          }
        }, resolve),
      );
      return res.end();
    }
    const text = call.body().toString();
    JSON.parse(text); // the usage a gateway reads
    res.writeHead(call.statusCode, { 'content-type': type, 'content-length': String(Buffer.byteLength(text)) });
    res.end(text);
  } catch (err) {
    res.writeHead(502, {});
    res.end(String(err));
  }
}

const server = http.createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => relay(Buffer.concat(parts), req.headers.authorization, res));
});
LeanHttpFront.install(server, {
  isRoute: (url) => url === ROUTE,
  bodyLimit: 64 * 1024 * 1024,
  handle: (req, res) => relay(req.body, req.headers.authorization, res),
});
server.listen(0, '127.0.0.1', () => console.log(`FLOOR_PORT=${server.address().port}`));
