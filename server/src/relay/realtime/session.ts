// One realtime session once both websockets are open: frames copied both ways as they come, and the session billed
// once (docs/decisions/0014-realtime-billing.md). The reservation taken at the opening covers one turn; each
// `response.done` adds its usage to the session's sum, the price of the sum so far is kept out of the node's holds
// (Billing.keep: a crash loses no completed turn) and the reservation grows to cover the next turn. A client that asks
// for a turn the balance cannot cover gets a realtime `error` event and the turn is not sent. When either side ends,
// the session is settled once from the summed usage with one consume log row; a session without a completed turn is
// given its reservation back.
import type WebSocket from 'ws';
import { QuotaError } from '../../services/billing/index.js';
import {
  addRealtimeUsage,
  emptyRealtimeUsage,
  realtimeInputTokens,
  realtimeOutputTokens,
  realtimeQuota,
  type RealtimeUsage,
} from '../../services/pricing/realtime.js';
import type { CachedChannel } from '../../services/cache/channel-cache.js';
import { consumeLogRow } from '../consume-log.js';
import { modelRateLimit } from '../rate-limit.js';
import { releaseLimits } from '../pipeline/limit.js';
import { refund, settleLimits } from '../pipeline/settle.js';
import type { RelayState } from '../pipeline/state.js';
import type { UpstreamSocket } from '../transport/websocket.js';

/** client events that start (or, with the server's voice detection, may start) a turn */
const TURN_EVENTS = new Set(['response.create', 'input_audio_buffer.append', 'input_audio_buffer.commit']);

/** client frames waiting for the upstream before the client's socket stops being read */
const CLIENT_BACKLOG = 64;

/** how long a refused balance is not asked again */
const SHORT_RETRY_MS = 1000;

/** websocket close codes: the gateway stops (1001), a failure on the gateway's side (1011) */
export const GOING_AWAY = 1001;
const INTERNAL = 1011;

export class RealtimeSession {
  /** resolves once the session has settled */
  readonly done: Promise<void>;
  private readonly usage: RealtimeUsage = emptyRealtimeUsage();
  /** the price of the turns completed so far (all of it kept: Billing.keep) */
  private charged = 0;
  /** billing steps in order: grows, keeps and turn checks never interleave */
  private ops: Promise<unknown> = Promise.resolve();
  private backlog = 0;
  private ended = false;
  private frt = 0;
  private finish!: () => void;

  constructor(
    private readonly s: RelayState,
    private readonly client: WebSocket,
    private readonly upstream: UpstreamSocket,
    private readonly channel: CachedChannel,
    private readonly upstreamModel: string,
    /** what one turn may cost: the headroom the reservation keeps above the completed turns' price */
    private readonly turnAmount: number,
  ) {
    this.done = new Promise<void>((r) => (this.finish = r));
  }

  start(): void {
    this.s.svc.metrics.realtimeSessions++;
    this.client.on('message', (data: Buffer, binary: boolean) => this.fromClient(data, binary));
    this.client.once('close', () => this.end(null));
    this.client.on('error', () => this.end(null));
    void this.pumpUpstream();
  }

  /** Ends the session (the gateway stops, or one side left): both sockets closed, then the one settlement. */
  end(code: number | null, reason = ''): void {
    if (this.ended) return;
    this.ended = true;
    if (this.client.readyState === this.client.OPEN) this.client.close(code ?? 1000, reason);
    else this.client.terminate();
    this.upstream.close();
    // the billing steps queued so far run first
    this.ops = this.ops
      .then(() => this.settle())
      .finally(() => {
        this.s.svc.metrics.realtimeSessions--;
        this.finish();
      });
  }

  private fromClient(data: Buffer, binary: boolean): void {
    if (this.ended) return;
    const type = binary ? '' : eventType(data);
    this.backlog++;
    if (this.backlog >= CLIENT_BACKLOG) this.client.pause();
    this.ops = this.ops
      .then(async () => {
        if (this.ended) return;
        if (TURN_EVENTS.has(type) && !(await this.coverNextTurn())) return this.refuseTurn(data);
        await this.upstream.send(binary ? data : data.toString('utf8'));
      })
      .catch(() => this.end(INTERNAL))
      .finally(() => {
        if (--this.backlog < CLIENT_BACKLOG / 2) this.client.resume();
      });
  }

  private async pumpUpstream(): Promise<void> {
    try {
      for await (const f of this.upstream) {
        if (this.ended) break;
        if (!this.frt) this.frt = Date.now() - this.s.start;
        this.client.send(f.data, { binary: f.binary });
        if (!f.binary && f.data.includes('response.done')) this.onResponseDone(f.data);
      }
      this.end(1000);
    } catch {
      this.end(INTERNAL, 'upstream failed');
    }
  }

  /** A completed turn: its usage summed, its price kept, the reservation grown for the next one. */
  private onResponseDone(frame: Buffer): void {
    let ev: any;
    try {
      ev = JSON.parse(frame.toString('utf8'));
    } catch {
      return;
    }
    if (ev?.type !== 'response.done' || !addRealtimeUsage(this.usage, ev.response?.usage)) return;
    const before = this.charged;
    this.charged = this.quota();
    const delta = this.charged - before;
    const { billing } = this.s.svc;
    const held = this.s.reservation!;
    this.ops = this.ops
      .then(async () => {
        // the turn's price stops being a hold first, as far as the reservation covers it: a crash from here on gives
        // none of it back
        const before = { user: held.kept?.user ?? 0, token: held.kept?.token ?? 0 };
        const tokenDelta = held.token ? delta : 0;
        await billing.keep(held, delta, tokenDelta);
        // room for the next turn; short of that, at least the turns done (a refusal shows at the next turn's start)
        await this.grow(this.charged + this.turnAmount).catch(() => this.grow(this.charged).catch(() => undefined));
        // the rest of the turn, now that the reservation grew; what it still lacks is taken at settlement
        const restUser = delta - ((held.kept?.user ?? 0) - before.user);
        const restToken = tokenDelta - ((held.kept?.token ?? 0) - before.token);
        if (restUser > 0 || restToken > 0) await billing.keep(held, restUser, restToken);
      })
      .catch((err) => this.s.ctx.log.error({ err, reqId: this.s.req.id }, 'realtime hold failed'));
  }

  /** The session's price so far, from its summed usage. */
  private quota(): number {
    return realtimeQuota(this.s.price, this.usage, this.s.model, this.s.ctx.options.num('QuotaPerUnit', 500000));
  }

  /** The reservation grown to `target` when it holds less; throws QuotaError when the balance cannot give it. */
  private async grow(target: number): Promise<void> {
    const held = this.s.reservation!;
    const more = target - held.user;
    if (more <= 0) return;
    const { caller } = this.s;
    await this.s.svc.billing.grow(held, {
      userId: caller.user.id,
      tokenId: caller.token?.id ?? 0,
      tokenKey: caller.token?.key ?? '',
      tokenUnlimited: caller.token?.unlimited ?? true,
      cachedUserQuota: caller.user.quota,
      amount: more,
    });
  }

  /** The reservation covers the completed turns and one more; false when the balance cannot give it. */
  private async coverNextTurn(): Promise<boolean> {
    const target = this.charged + this.turnAmount;
    if (target <= this.s.reservation!.user) return true;
    // a refused balance is asked again at most once a second (audio appends come many times a second)
    if (this.shortBy && Date.now() - this.shortAt < SHORT_RETRY_MS) return false;
    try {
      await this.grow(target);
      this.shortBy = null;
      return true;
    } catch (e) {
      if (e instanceof QuotaError) {
        this.shortBy = e;
        this.shortAt = Date.now();
        return false;
      }
      throw e;
    }
  }

  /** the refusal of the last turn asked for, and when */
  private shortBy: QuotaError | null = null;
  private shortAt = 0;

  /** new-api's realtime error event (helper.WssError's shape) for a turn the balance cannot cover. */
  private refuseTurn(data: Buffer): void {
    const e = this.shortBy;
    this.client.send(
      JSON.stringify({
        type: 'error',
        event_id: `evt_${this.s.req.id}`,
        error: {
          type: 'insufficient_quota',
          code: e?.code ?? 'insufficient_user_quota',
          message: e?.message ?? 'user quota is not enough',
          param: null,
          event_id: clientEventId(data),
        },
      }),
    );
  }

  /** The one settlement: the summed usage's price with one log row, or the reservation back without a turn. */
  private async settle(): Promise<void> {
    const s = this.s;
    const held = s.reservation!;
    if (this.usage.turns === 0) {
      await refund(s, held);
      void releaseLimits(s);
      return;
    }
    const quota = this.quota();
    const u = this.usage;
    const prompt = realtimeInputTokens(u);
    const completion = realtimeOutputTokens(u);
    if (s.rateKey) modelRateLimit(s.ctx).success(s.rateKey, s.req.id);
    let row;
    try {
      row = consumeLogRow(s.svc, s.ctx, {
        caller: s.caller,
        group: s.group,
        model: s.model,
        channel: this.channel,
        price: s.price,
        usage: {
          prompt_tokens: prompt,
          completion_tokens: completion,
          cached_tokens: u.cachedTextIn + u.cachedAudioIn,
        },
        quota,
        start: s.start,
        frt: this.frt,
        isStream: true,
        upstreamModel: this.upstreamModel,
        used: s.used,
        audio: { textInput: u.textIn, textOutput: u.textOut, audioInput: u.audioIn, audioOutput: u.audioOut },
      });
    } catch (err) {
      s.ctx.log.error({ err, reqId: s.req.id }, 'consume log failed');
    }
    if (held.state === 'open') s.svc.metrics.reservationsHeld--;
    s.svc.billing.settle(held, { quota, channelId: this.channel.id, countRequest: true }, row);
    s.charged = { prompt, completion, quota, frt: this.frt, stream: true, clientLeft: false };
    if (s.limits || s.channel.setting) settleLimits(s, prompt + completion, quota);
    const after = s.quotaBefore - quota;
    if (s.svc.notifier.below(s.caller.user, after)) void s.svc.notifier.check(s.caller.user, after, s.req.id);
  }
}

/** A client event's type, read without parsing the whole frame when it is large (audio appends). */
function eventType(data: Buffer): string {
  const head = data.subarray(0, 256).toString('utf8');
  const m = /"type"\s*:\s*"([^"]+)"/.exec(head);
  if (m) return m[1];
  try {
    const t = (JSON.parse(data.toString('utf8')) as { type?: unknown }).type;
    return typeof t === 'string' ? t : '';
  } catch {
    return '';
  }
}

function clientEventId(data: Buffer): string | null {
  const m = /"event_id"\s*:\s*"([^"]+)"/.exec(data.subarray(0, 512).toString('utf8'));
  return m ? m[1] : null;
}
