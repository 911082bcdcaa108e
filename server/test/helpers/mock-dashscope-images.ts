// A strict mock of DashScope's image services on 127.0.0.1, answering with the recorded fixtures
// (relay/providers/ali/__fixtures__/image-*.json):
//   POST /api/v1/services/aigc/text2image/image-synthesis — only with `X-DashScope-Async: enable` (else DashScope's 403
//     AccessDenied) and the Bearer key (else 401 InvalidApiKey); the body must be DashScope's {model, input: {prompt},
//     parameters: {size W*H of the allowed ones, n 1–4}}; it answers a task id.
//   GET /api/v1/tasks/{id} — the key again; a task reads RUNNING once, then SUCCEEDED with n images (one only for a
//     prompt containing "partial", the others failed), or FAILED for a prompt containing "fail", or RUNNING for ever
//     for one containing "never"; the first read of a "flaky" one is a 500; an unknown id reads UNKNOWN.
//   POST /api/v1/services/aigc/multimodal-generation/generation — synchronous: refused with the async header, the
//     prompt in input.messages[0].content[0].text, answered with the images at once.
// `throttled`: every submit answers DashScope's 429 (a channel to retry away from).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const DASHSCOPE_KEY = 'sk-7c1e9a3b5d2f4e6a8b0c1d2e3f4a5b6c';
const SUBMIT = '/api/v1/services/aigc/text2image/image-synthesis';
const SYNC = '/api/v1/services/aigc/multimodal-generation/generation';
const TASKS = '/api/v1/tasks/';
const SIZES = new Set(['1024*1024', '720*1280', '1280*720', '768*1152']);

export const imageFixture = (name: string): any =>
  JSON.parse(
    readFileSync(new URL(`../../src/relay/providers/ali/__fixtures__/image-${name}.json`, import.meta.url), 'utf8'),
  );

export interface SeenCall {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

interface Task {
  prompt: string;
  n: number;
  reads: number;
}

export interface DashScopeMockOptions {
  throttled?: boolean;
  /** the URL of the i-th image of an answer (default: the recorded OSS URLs) */
  imageUrl?: (i: number) => string;
}

const requestId = () => `${Math.random().toString(16).slice(2, 10)}-mock`;

export class MockDashScopeImages {
  readonly calls: SeenCall[] = [];
  readonly refused: SeenCall[] = [];
  readonly tasks = new Map<string, Task>();
  private next = 0;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    /** read at every answer: a test may point the images elsewhere */
    readonly opts: DashScopeMockOptions,
  ) {}

  static async start(opts: DashScopeMockOptions = {}): Promise<MockDashScopeImages> {
    let mock: MockDashScopeImages | null = null;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => mock!.handle(req, Buffer.concat(chunks).toString('utf8'), res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    mock = new MockDashScopeImages(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, opts);
    return mock;
  }

  /** the reads of one task */
  readsOf(taskId: string): number {
    return this.calls.filter((c) => c.method === 'GET' && c.path === TASKS + taskId).length;
  }

  submits(): SeenCall[] {
    return this.calls.filter((c) => c.path === SUBMIT || c.path === SYNC);
  }

  private handle(req: http.IncomingMessage, raw: string, res: http.ServerResponse): void {
    let body: any = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = raw;
    }
    const path = new URL(req.url ?? '/', 'http://mock').pathname;
    const seen: SeenCall = { method: req.method ?? '', path, headers: req.headers, body };
    const send = (status: number, answer: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    };
    const refuse = (status: number, code: string, message: string) => {
      this.refused.push(seen);
      send(status, { code, message, request_id: requestId() });
    };
    if (req.headers.authorization !== `Bearer ${DASHSCOPE_KEY}`)
      return refuse(401, 'InvalidApiKey', 'Invalid API-key provided.');
    const async = req.headers['x-dashscope-async'];
    if (req.method === 'POST' && path === SUBMIT) {
      if (async !== 'enable') return refuse(403, 'AccessDenied', 'current user api does not support synchronous calls');
      const problem = this.checkSubmit(body);
      if (problem)
        return problem === 'size' ? this.refuseWith(seen, send, 'error') : refuse(400, 'InvalidParameter', problem);
      this.calls.push(seen);
      if (this.opts.throttled) return send(429, imageFixture('throttled'));
      const id = `task-${++this.next}-${Date.now().toString(16)}`;
      this.tasks.set(id, { prompt: body.input.prompt, n: body.parameters?.n ?? 1, reads: 0 });
      const receipt = imageFixture('submit');
      receipt.output.task_id = id;
      return send(200, receipt);
    }
    if (req.method === 'GET' && path.startsWith(TASKS)) {
      this.calls.push(seen);
      const id = path.slice(TASKS.length);
      const task = this.tasks.get(id);
      if (!task) return send(200, { request_id: requestId(), output: { task_id: id, task_status: 'UNKNOWN' } });
      task.reads += 1;
      // "flaky": the first read fails on DashScope's side, which says nothing about the task
      if (task.reads === 1 && task.prompt.includes('flaky'))
        return send(500, { code: 'InternalError', message: 'An internal error has occured.', request_id: requestId() });
      if (task.reads === 1 || task.prompt.includes('never')) return send(200, withId(imageFixture('pending'), id));
      if (task.prompt.includes('fail')) return send(200, withId(imageFixture('failed'), id));
      const done = withId(imageFixture('succeeded'), id);
      const template = done.output.results[0];
      // "partial": the first image drawn, the others failed as DashScope reports them (code and message, no url)
      const drawn = task.prompt.includes('partial') ? 1 : task.n;
      done.output.results = Array.from({ length: task.n }, (_, i) =>
        i < drawn
          ? { ...template, url: this.imageUrl(i, template.url) }
          : { code: 'InternalError.Algo', message: 'Algorithm process error.' },
      );
      done.output.task_metrics = { TOTAL: task.n, SUCCEEDED: drawn, FAILED: task.n - drawn };
      done.usage = { image_count: drawn };
      return send(200, done);
    }
    if (req.method === 'POST' && path === SYNC) {
      if (async !== undefined)
        return refuse(403, 'AccessDenied', 'current user api does not support asynchronous calls');
      const text = body?.input?.messages?.[0]?.content?.[0]?.text;
      if (typeof body?.model !== 'string' || typeof text !== 'string' || !text)
        return refuse(400, 'InvalidParameter', 'input.messages is required');
      this.calls.push(seen);
      const answer = imageFixture('sync');
      const n = body.parameters?.n ?? 1;
      const template = answer.output.choices[0];
      answer.output.choices = Array.from({ length: n }, (_, i) => ({
        ...template,
        message: { role: 'assistant', content: [{ image: this.imageUrl(i, template.message.content[0].image) }] },
      }));
      answer.usage.image_count = n;
      return send(200, answer);
    }
    this.refused.push(seen);
    send(404, { code: 'NotFound', message: `no route ${req.method} ${path}`, request_id: requestId() });
  }

  private refuseWith(seen: SeenCall, send: (status: number, answer: unknown) => void, name: string): void {
    this.refused.push(seen);
    send(400, imageFixture(name));
  }

  private imageUrl(i: number, recorded: string): string {
    return this.opts.imageUrl ? this.opts.imageUrl(i) : recorded;
  }

  /** DashScope's rules for an image-synthesis body: null when it passes, 'size' for a size it does not draw */
  private checkSubmit(body: any): string | null {
    if (typeof body?.model !== 'string' || !body.model) return 'Model not exist.';
    if (typeof body.input?.prompt !== 'string' || !body.input.prompt) return 'input.prompt is required';
    if (body.prompt !== undefined) return 'prompt belongs in input';
    const p = body.parameters ?? {};
    if (p.size !== undefined && !SIZES.has(p.size)) return 'size';
    if (p.n !== undefined && !(Number.isInteger(p.n) && p.n >= 1 && p.n <= 4)) return 'n must be between 1 and 4';
    return null;
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

function withId(answer: any, id: string): any {
  answer.output.task_id = id;
  return answer;
}
