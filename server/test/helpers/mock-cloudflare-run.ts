// A strict mock of Cloudflare Workers AI's model API on 127.0.0.1: `POST /client/v4/accounts/{account}/ai/run/{model}`
// for one account, the API token as a Bearer token (else Cloudflare's 401 `Authentication error`), each model taking
// its own input as Cloudflare documents it and refusing anything else with its `AiError` (code 5006):
//   @cf/black-forest-labs/flux-1-schnell          JSON {prompt, steps?}        → {result: {image: <base64 JPEG>}}
//   @cf/stabilityai/stable-diffusion-xl-base-1.0  JSON {prompt, width?, height?} → the PNG bytes (image/png)
//   @cf/openai/whisper                            the audio bytes (never JSON or a form) → {result: {text, vtt, …}}
//   @cf/openai/whisper-large-v3-turbo             JSON {audio: <base64>, language?, task?} → the same
// An unknown model gets Cloudflare's 400 `No such model`; a prompt with `fail` in it the recorded run-error.json.
// Answers come from relay/providers/cloudflare/__fixtures__/ (run-*.json, run-image.png).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RunRequest {
  model: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const fixture = (file: string) =>
  readFileSync(new URL(`../../src/relay/providers/cloudflare/__fixtures__/${file}`, import.meta.url));

const failure = (status: number, code: number, message: string) => ({
  status,
  body: JSON.stringify({ errors: [{ message, code }], success: false, result: null, messages: [] }),
});

const invalid = (why: string) =>
  failure(400, 5006, `AiError: AiError: Invalid or incomplete input for the model: ${why}`);

type Answer = { status: number; body: Buffer | string; type?: string };

function json(req: RunRequest): Record<string, any> | null {
  if (!String(req.headers['content-type']).startsWith('application/json')) return null;
  try {
    const j = JSON.parse(req.body.toString('utf8'));
    return j && typeof j === 'object' && !Array.isArray(j) ? j : null;
  } catch {
    return null;
  }
}

const isSide = (v: unknown) =>
  v === undefined || (Number.isInteger(v) && (v as number) >= 256 && (v as number) <= 2048);

function image(req: RunRequest, answer: () => Answer): Answer {
  const b = json(req);
  if (!b) return invalid('model returned: the input is not JSON');
  if (typeof b.prompt !== 'string' || !b.prompt) return invalid("required properties at '/' are 'prompt'");
  if (!isSide(b.width) || !isSide(b.height)) return invalid("'/width' and '/height' must be integers in [256, 2048]");
  if (b.prompt.includes('fail')) return { status: 400, body: fixture('run-error.json') };
  return answer();
}

const MODELS: Record<string, (req: RunRequest) => Answer> = {
  '@cf/black-forest-labs/flux-1-schnell': (req) =>
    image(req, () => {
      const steps = json(req)!.steps;
      if (steps !== undefined && (!Number.isInteger(steps) || steps > 8))
        return invalid("'/steps' must be an integer up to 8");
      return { status: 200, body: fixture('run-image.json') };
    }),
  '@cf/stabilityai/stable-diffusion-xl-base-1.0': (req) =>
    image(req, () => ({ status: 200, body: fixture('run-image.png'), type: 'image/png' })),
  '@cf/openai/whisper': (req) => {
    const b = req.body;
    // Whisper decodes the body as audio: JSON or a multipart form is no audio
    if (!b.length || b[0] === 0x7b || b.toString('latin1', 0, 2) === '--')
      return invalid('model returned: the body is not an audio file');
    return { status: 200, body: fixture('run-transcript.json') };
  },
  '@cf/openai/whisper-large-v3-turbo': (req) => {
    const b = json(req);
    if (!b || typeof b.audio !== 'string' || !/^[A-Za-z0-9+/]+=*$/.test(b.audio))
      return invalid("required properties at '/' are 'audio' (base64)");
    if (b.task !== undefined && !['transcribe', 'translate'].includes(b.task)) return invalid("'/task' is invalid");
    const recorded = JSON.parse(fixture('run-transcript.json').toString('utf8'));
    recorded.result = { transcription_info: { language: b.language ?? 'en' }, ...recorded.result };
    return { status: 200, body: JSON.stringify(recorded) };
  },
};

export class MockCloudflareRun {
  readonly requests: RunRequest[] = [];
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(account: string, apiToken: string): Promise<MockCloudflareRun> {
    const root = `/client/v4/accounts/${account}/ai/run/`;
    let mock: MockCloudflareRun | null = null;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const send = (a: Answer) => {
          res.writeHead(a.status, { 'content-type': a.type ?? 'application/json' });
          res.end(a.body);
        };
        const path = (req.url ?? '/').split('?')[0];
        if (req.method !== 'POST' || !path.startsWith(root))
          return send(failure(400, 7003, `Could not route to ${path}, perhaps your object identifier is invalid?`));
        if (req.headers.authorization !== `Bearer ${apiToken}`)
          return send({
            status: 401,
            body: JSON.stringify({ success: false, errors: [{ code: 10000, message: 'Authentication error' }] }),
          });
        const model = decodeURIComponent(path.slice(root.length));
        const seen = { model, headers: req.headers, body: Buffer.concat(chunks) };
        mock!.requests.push(seen);
        const run = MODELS[model];
        send(run ? run(seen) : failure(400, 5007, `No such model ${model} or task`));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    mock = new MockCloudflareRun(server, `http://127.0.0.1:${port}`);
    return mock;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
