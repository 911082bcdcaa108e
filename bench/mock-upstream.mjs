// Benchmark upstream: an OpenAI-compatible mock on 127.0.0.1 with a fixed JSON answer and a 20-chunk SSE stream
// (plus a usage chunk). The response delay can be changed at run time with POST /__mock/config {"delayMs": N}.
// Prints "MOCK_PORT=<port>" once listening. With MOCK_TLS_CERT and MOCK_TLS_KEY (PEM files) it serves https instead
// (`BENCH_TLS=1 npm run bench`: real upstreams are https, so the relay's upstream calls then pay for TLS as they do there).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';

const cfg = { delayMs: Number(process.env.MOCK_DELAY_MS ?? 0), chunks: 20 };
const WORDS = ['Hello', ' from', ' the', ' bench', ' upstream', '.', ' A', ' fixed', ' streamed', ' answer'];
const text = Array.from({ length: 20 }, (_, i) => WORDS[i % WORDS.length]).join('');
let seq = 0;

function usage(promptChars, completion) {
  const prompt = Math.max(1, Math.ceil(promptChars / 4));
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function send(res, status, obj) {
  const body = JSON.stringify(obj);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const tls =
  process.env.MOCK_TLS_CERT && process.env.MOCK_TLS_KEY
    ? { cert: readFileSync(process.env.MOCK_TLS_CERT), key: readFileSync(process.env.MOCK_TLS_KEY) }
    : null;
const handler = (req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(parts).toString();
    if (req.url === '/__mock/config') {
      Object.assign(cfg, JSON.parse(raw || '{}'));
      return send(res, 200, { ok: true, cfg });
    }
    if (!req.url.endsWith('/chat/completions'))
      return send(res, 404, { error: { message: 'not found', type: 'invalid_request_error' } });
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      return send(res, 400, { error: { message: 'invalid JSON', type: 'invalid_request_error' } });
    }
    const promptChars = (body.messages ?? []).reduce((n, m) => n + String(m.content ?? '').length, 0);
    const id = 'chatcmpl-bench' + (++seq).toString(36);
    const created = Math.floor(Date.now() / 1000);
    const model = body.model;
    const respond = () => {
      if (!body.stream) {
        return send(res, 200, {
          id,
          object: 'chat.completion',
          created,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
          usage: usage(promptChars, 20),
        });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const base = { id, object: 'chat.completion.chunk', created, model };
      const frame = (o) => `data: ${JSON.stringify(o)}\n\n`;
      let out = frame({
        ...base,
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      });
      for (let i = 0; i < cfg.chunks; i++)
        out += frame({
          ...base,
          choices: [{ index: 0, delta: { content: WORDS[i % WORDS.length] }, finish_reason: null }],
        });
      out += frame({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
      if (body.stream_options?.include_usage)
        out += frame({ ...base, choices: [], usage: usage(promptChars, cfg.chunks) });
      res.end(out + 'data: [DONE]\n\n');
    };
    if (cfg.delayMs > 0) setTimeout(respond, cfg.delayMs);
    else respond();
  });
};
const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.MOCK_PORT ?? 0), '127.0.0.1', () => {
  console.log(`MOCK_PORT=${server.address().port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
