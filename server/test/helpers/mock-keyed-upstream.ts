// An OpenAI upstream that accounts per key (multi-key channel tests): it knows which keys are valid, records the key
// of every request in order, and answers a key it does not accept as OpenAI does, 401 invalid_api_key.
import { MockUpstream, chatCompletion, type RecordedRequest } from './mock-upstream.js';

export class KeyedUpstream {
  /** the key of each request, in the order they arrived */
  readonly used: string[] = [];
  /** keys answered 401 (revoked at the vendor) */
  readonly revoked = new Set<string>();
  /** keys answered 429 (over their rate limit) */
  readonly limited = new Set<string>();

  private constructor(
    readonly mock: MockUpstream,
    readonly valid: Set<string>,
  ) {
    mock.behave = (req) => this.answer(req);
  }

  static async start(keys: string[]): Promise<KeyedUpstream> {
    return new KeyedUpstream(await MockUpstream.start(), new Set(keys));
  }

  get url(): string {
    return this.mock.url;
  }

  private answer(req: RecordedRequest) {
    const auth = String(req.headers.authorization ?? '');
    const key = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    this.used.push(key);
    if (!this.valid.has(key) || this.revoked.has(key)) {
      const shown = key.length > 8 ? `${key.slice(0, 3)}*****${key.slice(-4)}` : key;
      return {
        kind: 'json' as const,
        status: 401,
        body: {
          error: {
            message: `Incorrect API key provided: ${shown}. You can find your API key at https://platform.openai.com/account/api-keys.`,
            type: 'invalid_request_error',
            param: null,
            code: 'invalid_api_key',
          },
        },
      };
    }
    if (this.limited.has(key))
      return {
        kind: 'json' as const,
        status: 429,
        body: {
          error: {
            message: 'Rate limit reached for requests',
            type: 'requests',
            param: null,
            code: 'rate_limit_exceeded',
          },
        },
      };
    if (!req.body || !Array.isArray(req.body.messages) || typeof req.body.model !== 'string')
      return {
        kind: 'json' as const,
        status: 400,
        body: { error: { message: 'missing messages', type: 'invalid_request_error', param: null, code: null } },
      };
    return { kind: 'json' as const, body: chatCompletion(req.body.model, `answered with ${key}`) };
  }

  /** How many requests each key got. */
  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const k of this.used) out[k] = (out[k] ?? 0) + 1;
    return out;
  }

  reset(): void {
    this.used.length = 0;
    this.mock.reset();
    this.mock.behave = (req) => this.answer(req);
  }

  close(): Promise<void> {
    return this.mock.close();
  }
}
