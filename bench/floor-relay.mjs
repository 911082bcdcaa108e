// The stack's floor for `npm run bench`: the least a relay on this stack does (Node's HTTP server, undici's pooled
// Agent with the gateway's settings, the request and the JSON answer parsed and written again, stream chunks piped
// as they come), with no auth, pricing, billing or logs. Measured in the same run as the gateway, it tells what the
// machine allows: a share of direct RPS that this relay does not reach either is not the gateway's to win.
// Usage: node bench/floor-relay.mjs <upstream base URL>; prints FLOOR_PORT=<port> once listening.
import http from 'node:http';
// the gateway's own undici modules and pool settings (`npm run bench` builds server/dist first)
import { Agent, UPSTREAM_POOL } from '../server/dist/lib/undici.js';

const upstream = new URL(process.argv[2]);
const agent = new Agent(UPSTREAM_POOL);

const server = http.createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', async () => {
    try {
      const body = JSON.parse(Buffer.concat(parts).toString());
      const up = await agent.request({
        origin: upstream.origin,
        path: `${upstream.pathname.replace(/\/+$/, '')}/v1/chat/completions`,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
        body: JSON.stringify(body),
      });
      const type = up.headers['content-type'] ?? 'application/json';
      if (body.stream) {
        res.writeHead(up.statusCode, { 'content-type': type });
        for await (const chunk of up.body) res.write(chunk);
        return res.end();
      }
      const text = await up.body.text();
      JSON.parse(text); // the usage a gateway reads
      res.writeHead(up.statusCode, { 'content-type': type, 'content-length': Buffer.byteLength(text) }).end(text);
    } catch (err) {
      res.writeHead(502).end(String(err));
    }
  });
});
server.listen(0, '127.0.0.1', () => console.log(`FLOOR_PORT=${server.address().port}`));
