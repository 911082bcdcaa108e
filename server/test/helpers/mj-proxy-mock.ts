// A strict midjourney-proxy (novicezk/midjourney-proxy's API) on 127.0.0.1 for the Midjourney tests. It refuses a
// request without the right `mj-api-secret` (401) or carrying `Authorization` (400: the client's token must never
// reach the upstream), and, per the drawing options the test says are on, one with `notifyHook`, `accountFilter` or a
// --fast/--relax/--turbo flag that should have been dropped (422, also listed in `violations`). Submit answers are
// scripted per code; tasks move only when the test moves them (no timers). Images are served at /image/<id>.png,
// like a CDN: without the secret, and a request that carries it is refused (the key must not leak to image hosts).
import type http from 'node:http';
import { RecordingServer, sendJson, type RecordedRequest } from './mock-http.js';

export interface MjMockTask {
  id: string;
  action: string;
  prompt: string;
  promptEn: string;
  description: string;
  state: string;
  submitTime: number;
  startTime: number;
  finishTime: number;
  imageUrl: string;
  videoUrl: string;
  videoUrls: { url: string }[];
  status: string;
  progress: string;
  failReason: string;
  buttons: { customId: string; emoji: string; label: string; type: number; style: number }[];
  properties: Record<string, unknown>;
}

/** One scripted submit answer; the next submit takes the first. */
export interface MjScriptedAnswer {
  code: number;
  description?: string;
  /** the task id to answer with; a new task is created for codes 1, 21 and 22 unless it exists */
  result?: string | string[];
  properties?: Record<string, unknown>;
  /** HTTP status (200 by default, as midjourney-proxy answers even its refusals) */
  httpStatus?: number;
}

export interface MjMockOptions {
  secret: string;
  /** the options the gateway is configured with: what must have been removed from a submit's body */
  expect?: { notify?: boolean; accountFilter?: boolean; modeClear?: boolean };
  /** serve /mj-fast|relax|turbo/mj/... too (a proxy fork that reads the mode); off: such a path is a 404 */
  modePaths?: boolean;
}

// the smallest valid PNG (1×1, transparent)
export const MJ_MOCK_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

const ACTION_OF: Record<string, string> = {
  imagine: 'IMAGINE',
  describe: 'DESCRIBE',
  blend: 'BLEND',
  shorten: 'SHORTEN',
  modal: 'MODAL',
  video: 'VIDEO',
  edits: 'EDITS',
  swap: 'SWAP_FACE',
};

export class MjProxyMock {
  readonly tasks = new Map<string, MjMockTask>();
  readonly violations: string[] = [];
  private readonly script: MjScriptedAnswer[] = [];
  private nextId = 1_700_000_000_000_000;
  /** ms stamped on tasks; the test may set it */
  now = 1_700_000_000_000;
  /** ids list-by-condition adds to its answer though nobody asked (a stray task of the upstream's) */
  strayIds: string[] = [];

  private constructor(
    private readonly server: RecordingServer,
    private readonly options: MjMockOptions,
  ) {}

  static async start(options: MjMockOptions): Promise<MjProxyMock> {
    let self: MjProxyMock | undefined;
    const server = await RecordingServer.start(async (req, res) => self!.handle(req, res));
    self = new MjProxyMock(server, options);
    return self;
  }

  get url(): string {
    return this.server.url;
  }
  get requests(): RecordedRequest[] {
    return this.server.requests;
  }
  close(): Promise<void> {
    return this.server.close();
  }

  /** The next submits' answers, in order (each used once). */
  scriptSubmit(...answers: MjScriptedAnswer[]): void {
    this.script.push(...answers);
  }

  /** Adds a task as if submitted earlier. */
  addTask(fields: Partial<MjMockTask> & { id: string }): MjMockTask {
    const task: MjMockTask = {
      action: 'IMAGINE',
      prompt: '',
      promptEn: '',
      description: '/imagine',
      state: '',
      submitTime: this.now,
      startTime: 0,
      finishTime: 0,
      imageUrl: '',
      videoUrl: '',
      videoUrls: [],
      status: 'NOT_START',
      progress: '0%',
      failReason: '',
      buttons: [],
      properties: {},
      ...fields,
    };
    this.tasks.set(task.id, task);
    return task;
  }

  /** Sets any fields of a task (a state the steps below do not reach, such as MODAL). */
  update(id: string, fields: Partial<MjMockTask>): MjMockTask {
    const t = this.tasks.get(id);
    if (!t) throw new Error(`mj mock: no task ${id}`);
    return Object.assign(t, fields);
  }

  /**
   * Moves a task one step along NOT_START → SUBMITTED → IN_PROGRESS (50%) → SUCCESS (100%, an image and the four
   * U/V buttons), or to FAILURE when `fail` gives a reason. Returns the task.
   */
  advance(id: string, fail?: string): MjMockTask {
    const t = this.tasks.get(id);
    if (!t) throw new Error(`mj mock: no task ${id}`);
    if (fail !== undefined) {
      Object.assign(t, { status: 'FAILURE', failReason: fail, progress: '', finishTime: this.now });
      return t;
    }
    if (t.status === 'NOT_START') Object.assign(t, { status: 'SUBMITTED', progress: '0%' });
    else if (t.status === 'SUBMITTED') {
      Object.assign(t, { status: 'IN_PROGRESS', progress: '50%', startTime: this.now, promptEn: t.prompt });
      t.imageUrl = `${this.url}/image/${t.id}.png`;
    } else if (t.status === 'IN_PROGRESS') {
      Object.assign(t, { status: 'SUCCESS', progress: '100%', finishTime: this.now });
      t.imageUrl = `${this.url}/image/${t.id}.png`;
      t.properties = { finalPrompt: t.prompt, finalZhPrompt: '' };
      t.buttons = [1, 2, 3, 4].flatMap((i) => [
        { customId: `MJ::JOB::upsample::${i}::${t.id}`, emoji: '', label: `U${i}`, type: 2, style: 2 },
        { customId: `MJ::JOB::variation::${i}::${t.id}`, emoji: '', label: `V${i}`, type: 2, style: 2 },
      ]);
    }
    return t;
  }

  private async handle(req: RecordedRequest, res: http.ServerResponse): Promise<void> {
    const path = req.path.split('?')[0]!;
    const image = /^\/image\/([^/]+)\.png$/.exec(path);
    if (image) {
      if (req.headers['mj-api-secret'] !== undefined || req.headers.authorization !== undefined) {
        return sendJson(res, 400, { error: 'mock: credentials sent to the image host' });
      }
      if (req.method !== 'GET' || !this.tasks.has(image[1]!)) return sendJson(res, 404, { error: 'not found' });
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(MJ_MOCK_PNG.length) });
      res.end(MJ_MOCK_PNG);
      return;
    }
    if (req.headers.authorization !== undefined) {
      return sendJson(res, 400, { code: 4, description: 'mock: Authorization must not reach midjourney-proxy' });
    }
    if (req.headers['mj-api-secret'] !== this.options.secret) {
      return sendJson(res, 401, { code: 4, description: 'mock: wrong or missing mj-api-secret' });
    }
    const m = /^(?:\/mj-(?:fast|relax|turbo))?\/mj(\/.*)$/.exec(path);
    if (!m || (!this.options.modePaths && !path.startsWith('/mj/'))) return sendJson(res, 404, { error: 'no route' });
    const rest = m[1]!;
    const task = /^\/task\/([^/]+)\/(fetch|image-seed)$/.exec(rest);
    if (task && req.method === 'GET') {
      const t = this.tasks.get(task[1]!);
      if (task[2] === 'fetch') return t ? sendJson(res, 200, t) : sendJson(res, 404, null);
      return t
        ? sendJson(res, 200, { code: 1, description: '成功', result: `seed-${t.id}` })
        : sendJson(res, 200, { code: 3, description: '任务不存在' });
    }
    if (rest === '/task/list-by-condition' && req.method === 'POST') {
      const ids = (req.body as { ids?: unknown } | null)?.ids;
      if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string')) {
        return sendJson(res, 400, { code: 4, description: 'mock: ids must be a list of strings' });
      }
      const known = [...(ids as string[]), ...this.strayIds]
        .map((id) => this.tasks.get(id))
        .filter((t): t is MjMockTask => !!t);
      return sendJson(res, 200, known);
    }
    const submit = /^\/submit\/([a-z-]+)$/.exec(rest) ?? (rest === '/insight-face/swap' ? [rest, 'swap'] : null);
    if (submit && req.method === 'POST') return this.submit(submit[1]!, req, res);
    return sendJson(res, 404, { error: 'no route' });
  }

  private checkBody(body: Record<string, unknown>): string | null {
    const expect = this.options.expect ?? {};
    if (!expect.notify && 'notifyHook' in body) return 'notifyHook sent while MjNotifyEnabled is off';
    if (!expect.accountFilter && 'accountFilter' in body)
      return 'accountFilter sent while MjAccountFilterEnabled is off';
    if (expect.modeClear && typeof body.prompt === 'string' && /--(fast|relax|turbo)/.test(body.prompt)) {
      return 'a speed flag left in the prompt while MjModeClearEnabled is on';
    }
    return null;
  }

  /** midjourney-proxy's own checks (SubmitController), answered as it does: HTTP 200, code 4. */
  private validate(route: string, b: Record<string, unknown>): { action: string; error?: string } {
    const str = (v: unknown) => (typeof v === 'string' ? v : '');
    switch (route) {
      case 'imagine':
        return { action: 'IMAGINE', error: str(b.prompt) ? undefined : 'prompt不能为空' };
      case 'change': {
        const ok = ['UPSCALE', 'VARIATION', 'REROLL'].includes(str(b.action));
        if (!ok || !str(b.taskId)) return { action: str(b.action), error: 'action或taskId参数错误' };
        const idx = b.index;
        const needIndex = b.action !== 'REROLL';
        if (needIndex && !(typeof idx === 'number' && idx >= 1 && idx <= 4)) {
          return { action: str(b.action), error: 'index 参数错误' };
        }
        return { action: str(b.action) };
      }
      case 'simple-change': {
        const p = /^(\S+) ([UV][1-4]|R)$/i.exec(str(b.content).trim());
        if (!p) return { action: '', error: 'content参数错误' };
        const op = p[2]!.toUpperCase();
        return { action: op === 'R' ? 'REROLL' : op[0] === 'U' ? 'UPSCALE' : 'VARIATION' };
      }
      case 'describe':
        return { action: 'DESCRIBE', error: str(b.base64) || str(b.link) ? undefined : 'base64不能为空' };
      case 'blend': {
        const arr = b.base64Array;
        const ok = Array.isArray(arr) && arr.length >= 2 && arr.length <= 5;
        return { action: 'BLEND', error: ok ? undefined : 'base64List参数错误' };
      }
      case 'action':
        return { action: 'ACTION', error: str(b.customId) && str(b.taskId) ? undefined : 'customId或taskId不能为空' };
      case 'swap':
        return {
          action: 'SWAP_FACE',
          error: str(b.sourceBase64) && str(b.targetBase64) ? undefined : 'sourceBase64或targetBase64不能为空',
        };
      case 'upload-discord-images':
        return { action: 'UPLOAD' };
      default:
        return ACTION_OF[route] ? { action: ACTION_OF[route] } : { action: '', error: 'no route' };
    }
  }

  private submit(route: string, req: RecordedRequest, res: http.ServerResponse): void {
    if (!req.body || typeof req.body !== 'object' || Array.isArray(req.body)) {
      return sendJson(res, 400, { code: 4, description: 'mock: the body must be a JSON object' });
    }
    const body = req.body as Record<string, unknown>;
    const violation = this.checkBody(body);
    if (violation) {
      this.violations.push(violation);
      return sendJson(res, 422, { code: 4, description: `mock: ${violation}` });
    }
    const { action, error } = this.validate(route, body);
    if (error === 'no route') return sendJson(res, 404, { error: 'no route' });
    if (error) return sendJson(res, 200, { code: 4, description: error, result: null, properties: {} });
    const scripted = this.script.shift() ?? { code: 1 };
    if (route === 'upload-discord-images' && scripted.code === 1) {
      const n = Array.isArray(body.base64Array) ? body.base64Array.length : 0;
      const urls = Array.from({ length: n }, (_, i) => `${this.url}/image/upload-${i}.png`);
      return sendJson(res, scripted.httpStatus ?? 200, { code: 1, description: '提交成功', result: urls });
    }
    const result = scripted.result ?? String(this.nextId++);
    if ([1, 21, 22].includes(scripted.code) && typeof result === 'string' && !this.tasks.has(result)) {
      const prompt = typeof body.prompt === 'string' ? body.prompt : '';
      this.addTask({ id: result, action, prompt, description: `/${route} ${prompt}`.trim() });
    }
    const descriptions: Record<number, string> = {
      1: '提交成功',
      3: '无可用的账号实例',
      21: '任务已存在',
      22: '排队中，前面还有1个任务',
      23: '队列已满，请稍后尝试',
      24: '可能包含敏感词',
    };
    sendJson(res, scripted.httpStatus ?? 200, {
      code: scripted.code,
      description: scripted.description ?? descriptions[scripted.code] ?? '提交失败',
      result: scripted.code === 24 || scripted.code === 3 ? null : result,
      properties: scripted.properties ?? {},
    });
  }
}
