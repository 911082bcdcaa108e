// Crash recovery of reservations. A reservation takes quota from the user (and a limited token) before the upstream
// call, and settlement gives back or takes the difference afterwards. A process that dies in between (killed, out of
// memory, the machine lost) used to keep every reservation it held: users paid the reservation of each request in
// flight for nothing. Now each process ("node") records what it holds in `quota_holds`, one row per (node, user,
// token), changed in the same transaction as the quota it describes:
//   - a reservation adds its amounts (in the reservation's own statement or transaction, services/billing/);
//   - a refund subtracts them in the refund's transaction;
//   - settlement subtracts them in the transaction that writes the request's deltas and its consume-log row (the
//     flush's, or on SQLite the writer worker's: services/billing/). A crash before it gives the reservation back
//     and leaves no row, as for a request in flight; after it the request is charged and logged.
// Each node keeps a heartbeat in `quota_hold_nodes`. A node is dead when its heartbeat is older than HOLD_STALE_SEC, or
// at once when it ran on this host, in this PID namespace, and its process is gone (the node id names them, the pid and
// the process start; a restart on the same host outside containers recovers before it serves). Any live node gives a
// dead node's holds back to the users and tokens, in one transaction that first deletes the dead node's row (whoever
// deletes it does the recovery, so it happens once).
// What a crash still loses: requests answered whose settlement was not committed yet (the last 50 ms, or
// BATCH_UPDATE_INTERVAL, or on a busy SQLite gateway the worker's grouping second) are charged nothing (never twice).
// SQLite records the same changes differently: one `quota_hold_journal` row per commit that changes holds, holding its
// signed changes (HOLD_JOURNAL_INSERT). A reservation group commit of ~14 requests upserted ~14 pair rows spread over
// the table's pages, and a settlement flush ~400: on SQLite a statement costs per row and per page written to the WAL,
// on the relay's event loop, and the pair rows were ~4.5 % of the throughput at 0-ms upstreams. One appended row per
// commit costs one statement and a page or two. The journal is compacted in the settlement release's transaction
// (its rows summed into one) once it holds HOLD_JOURNAL_COMPACT rows. PostgreSQL and MySQL keep the pair rows: there
// the hold is one more part of the reservation's own statement (a CTE, a multi-table UPDATE), a round trip saved.
// A node's holds are the sums of both (readHolds), whatever wrote them.
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { CompiledQuery, sql, type Kysely, type RawBuilder } from 'kysely';
import type { AppContext } from '../context.js';
import type { DbKind } from '../config.js';
import { pgPrepared } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import { correctWindows } from './billing/plan-sql.js';
import type { Slot } from './subscriptions/windows.js';

/** A change of the quota one node holds for a (user, token) pair; token 0 is the playground (user quota only). */
export interface HoldChange {
  userId: number;
  tokenId: number;
  user: number;
  token: number;
}

/** Hold changes merged per (user, token), to be written together. */
export class HoldDeltas {
  private map = new Map<string, HoldChange>();

  add(userId: number, tokenId: number, user: number, token: number): void {
    const k = `${userId}:${tokenId}`;
    const d = this.map.get(k);
    if (d) {
      d.user += user;
      d.token += token;
    } else this.map.set(k, { userId, tokenId, user, token });
  }

  get size(): number {
    return this.map.size;
  }

  /** The merged changes by (user, token), which is the order rows are locked in; empties the set. */
  take(): HoldChange[] {
    const rows = [...this.map.values()].filter((r) => r.user || r.token);
    this.map = new Map();
    return rows.sort((a, b) => a.userId - b.userId || a.tokenId - b.tokenId);
  }
}

/**
 * Where a pid means one process: the host name and, on Linux, the PID namespace. Two containers that share the host's
 * name (`--network host`) each have their own namespace, where both may be pid 1: without it each would take the
 * other for a dead earlier start of itself.
 */
const HOST = `${hostname().slice(0, 24)}.${pidNamespace()}`;
/**
 * The state and start of a process of this PID namespace, from /proc/<pid>/stat: `start` is its start in clock ticks
 * since the host booted (a clock change does not move it). null: no such process; undefined: no /proc to read.
 */
export function procStat(pid: number): { state: string; start: number } | null | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ESRCH' ? (procReadable() ? null : undefined) : undefined;
  }
  // the command name (field 2) is in parentheses and may hold spaces or parentheses: the fields follow the last ')'
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (the state), so field 22 (the start time) is rest[19]
  return { state: rest[0], start: Number(rest[19]) };
}

let procOk: boolean | undefined;
/** /proc describes this namespace's processes (Linux) */
function procReadable(): boolean {
  if (procOk === undefined) {
    try {
      readFileSync('/proc/self/stat');
      procOk = true;
    } catch {
      procOk = false;
    }
  }
  return procOk;
}

/** A process start as node ids carry it: `k.` and its start in clock ticks (base 36), read from /proc. */
function startToken(start: number): string {
  return `k.${start.toString(36)}`;
}

/**
 * This process's start, which tells it from a later process given the same pid: its start in clock ticks since boot
 * where /proc has it, else its start in unix seconds (base 36). Ticks, because a wall-clock start moves with every
 * clock change and could no longer be compared with the process's own.
 */
const BOOT = (() => {
  const own = procStat(process.pid);
  return own && Number.isFinite(own.start)
    ? startToken(own.start)
    : Math.floor(Date.now() / 1000 - process.uptime()).toString(36);
})();

function pidNamespace(): string {
  try {
    const inode = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
    return inode ? Number(inode).toString(36) : '0';
  } catch {
    return '0'; // not Linux: no PID namespaces to tell apart
  }
}

/** A node id: host, pid, process start, and a random part (several nodes in one process: tests). At most 64 chars. */
export function newNodeId(): string {
  return `${HOST}-${process.pid}-${BOOT}-${randomBytes(4).toString('hex')}`;
}

/**
 * The node's process ran on this host, in this PID namespace, and is gone: its pid is ours but from an earlier start,
 * no process has its pid, the process with that pid is a zombie (exited, not yet reaped by its parent: signal 0 still
 * reaches it), or it started at another time than the node's (its pid was taken again). Without /proc (not Linux) a
 * pid taken again reads as alive, and the node waits for its heartbeat to go stale; so does a node of another
 * namespace (a container restarted gets a new one).
 */
export function processGone(node: string): boolean {
  const parts = node.split('-');
  if (parts.length < 4) return false;
  const pid = Number(parts[parts.length - 3]);
  const boot = parts[parts.length - 2];
  if (parts.slice(0, -3).join('-') !== HOST || !Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return boot !== BOOT;
  const stat = procStat(pid);
  if (stat === null) return true;
  if (stat) {
    // Z: exited, waiting for its parent to reap it; X: being reaped
    if (stat.state === 'Z' || stat.state === 'X') return true;
    // an id of an older version (wall-clock start) cannot be compared: alive
    return boot.startsWith('k.') && boot !== startToken(stat.start);
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** The start of every hold upsert: `${HOLD_INSERT} VALUES …` or `${HOLD_INSERT} SELECT …`, then the dialect's conflict clause. */
export const HOLD_INSERT = 'INSERT INTO quota_holds (node, user_id, token_id, user_quota, token_quota)';
/** PostgreSQL (reservation statements in services/billing/ use it too) */
export const HOLD_CONFLICT_PG =
  'ON CONFLICT (node, user_id, token_id) DO UPDATE SET user_quota = quota_holds.user_quota + excluded.user_quota, ' +
  'token_quota = quota_holds.token_quota + excluded.token_quota';
const HOLD_CONFLICT_MYSQL =
  'ON DUPLICATE KEY UPDATE user_quota = user_quota + VALUES(user_quota), token_quota = token_quota + VALUES(token_quota)';

const UPSERT_PG = pgPrepared(
  `${HOLD_INSERT} SELECT $1::varchar, v.u, v.t, v.uq, v.tq FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) AS v(u, t, uq, tq) ` +
    `ORDER BY v.u, v.t ${HOLD_CONFLICT_PG}`,
);

/**
 * Adds signed amounts to a node's holds: PostgreSQL / MySQL upsert the pair rows (`rows` in (user, token) order,
 * HoldDeltas.take), SQLite appends a journal row.
 */
export function addHoldsQuery(kind: DbKind, node: string, rows: HoldChange[]): CompiledQuery {
  if (kind === 'sqlite') return CompiledQuery.raw(HOLD_JOURNAL_INSERT, journalRow(node, flatHolds(rows)));
  if (kind === 'postgres') {
    return CompiledQuery.raw(UPSERT_PG, [
      node,
      rows.map((r) => r.userId),
      rows.map((r) => r.tokenId),
      rows.map((r) => r.user),
      rows.map((r) => r.token),
    ]);
  }
  const params: unknown[] = [];
  const values = rows.map((r) => {
    params.push(node, r.userId, r.tokenId, r.user, r.token);
    return '(?, ?, ?, ?, ?)';
  });
  return CompiledQuery.raw(`${HOLD_INSERT} VALUES ${values.join(', ')} ${HOLD_CONFLICT_MYSQL}`, params);
}

/** SQLite: one commit's hold changes (journalRow gives the parameters: node, seq, holds). */
export const HOLD_JOURNAL_INSERT = 'INSERT INTO quota_hold_journal (node, seq, holds) VALUES (?, ?, ?)';
/** journal rows after which the next settlement release compacts a node's journal into one row */
export const HOLD_JOURNAL_COMPACT = 256;

/** The next journal row's number: unique per node, since a node id names one process. */
let journalSeq = 0;

/**
 * HOLD_JOURNAL_INSERT's parameters for one commit's changes: `flat` holds (user id, token id, user amount, token
 * amount) quadruples, stored as one JSON array. The hot path builds `flat` itself rather than HoldChange objects.
 */
export function journalRow(node: string, flat: number[]): [string, number, string] {
  return [node, ++journalSeq, JSON.stringify(flat)];
}

/** HoldChange objects as journalRow's flat quadruples. */
export function flatHolds(rows: HoldChange[]): number[] {
  const flat: number[] = [];
  for (const r of rows) flat.push(r.userId, r.tokenId, r.user, r.token);
  return flat;
}

/** Adds a journal row's changes to `into`. */
export function addJournalText(into: HoldDeltas, text: string): void {
  const f = JSON.parse(text) as number[];
  for (let i = 0; i + 3 < f.length; i += 4) into.add(f[i], f[i + 1], f[i + 2], f[i + 3]);
}

/** Deletes every hold row of a node, in both tables (its holds are given back, or it holds nothing). */
async function forgetHolds(db: Kysely<Database>, node: string): Promise<void> {
  await db.deleteFrom('quota_holds').where('node', '=', node).execute();
  await db.deleteFrom('quota_hold_journal').where('node', '=', node).execute();
  await db.deleteFrom('subscription_holds').where('node', '=', node).execute();
}

/** A node's holds on subscriptions' window periods (services/billing/plan-ledger.ts), the empty ones left out. */
async function readPlanHolds(db: Kysely<Database>, node: string) {
  return (
    await db
      .selectFrom('subscription_holds')
      .select(['user_subscription_id', 'slot', 'period_end', 'amount'])
      .where('node', '=', node)
      .where('amount', '>', 0)
      .orderBy('user_subscription_id')
      .execute()
  ).map((h) => ({
    id: Number(h.user_subscription_id),
    slot: h.slot as Slot,
    end: Number(h.period_end),
    amount: Number(h.amount),
  }));
}

/** A node's hold on a (user, token) pair. */
export interface NodeHold extends HoldChange {
  node: string;
}

/**
 * What nodes hold, summed per (node, user, token) over pair rows and journal rows, without the pairs that hold nothing;
 * ordered by node, user, token.
 */
export async function readHolds(
  db: Kysely<Database>,
  where: { node?: string; userId?: number } = {},
): Promise<NodeHold[]> {
  let pairs = db.selectFrom('quota_holds').select(['node', 'user_id', 'token_id', 'user_quota', 'token_quota']);
  let journal = db.selectFrom('quota_hold_journal').select(['node', 'holds']);
  if (where.node !== undefined) {
    pairs = pairs.where('node', '=', where.node);
    journal = journal.where('node', '=', where.node);
  }
  if (where.userId !== undefined) pairs = pairs.where('user_id', '=', where.userId);
  const byNode = new Map<string, HoldDeltas>();
  const of = (node: string) => byNode.get(node) ?? byNode.set(node, new HoldDeltas()).get(node)!;
  for (const h of await pairs.execute())
    of(h.node).add(Number(h.user_id), Number(h.token_id), Number(h.user_quota), Number(h.token_quota));
  for (const j of await journal.execute()) addJournalText(of(j.node), j.holds);
  const out: NodeHold[] = [];
  for (const node of [...byNode.keys()].sort()) {
    for (const h of byNode.get(node)!.take())
      if (where.userId === undefined || h.userId === where.userId) out.push({ node, ...h });
  }
  return out;
}

/** Heartbeat period, and the age after which a node's heartbeat makes it dead. */
export const HOLD_HEARTBEAT_MS = 15_000;
export const HOLD_STALE_SEC = 120;
/**
 * Every this many heartbeats (10 minutes) a node deletes its rows that hold nothing: a (user, token) pair keeps its
 * row between requests, and a long-running node would otherwise keep one for every pair it ever served.
 */
export const HOLD_PRUNE_BEATS = 40;

export interface RecoveredHolds {
  node: string;
  users: number;
  tokens: number;
  /** quota given back to users */
  quota: number;
}

/** Timings of a node (tests shorten them): HOLD_HEARTBEAT_MS, HOLD_STALE_SEC, HOLD_PRUNE_BEATS. */
export interface HoldNodeOptions {
  heartbeatMs?: number;
  staleSec?: number;
  pruneBeats?: number;
}

/** One node's heartbeat, and the recovery of dead nodes' holds. */
export class HoldNodes {
  private timer: NodeJS.Timeout | undefined;
  private readonly db: Kysely<Database>;

  constructor(
    private readonly ctx: AppContext,
    readonly node: string,
    private readonly opts: HoldNodeOptions & {
      /** some of this node's rows were deleted (pruned, or recovered by another node) */
      onRowsGone?: () => void;
    } = {},
  ) {
    this.db = ctx.db;
  }

  /**
   * The database's clock (unix seconds): every node's heartbeat and every cutoff read one clock, so a node whose own
   * clock runs minutes ahead cannot take live nodes for dead.
   */
  private dbNow(): RawBuilder<number> {
    const kind = this.ctx.dbKind;
    return kind === 'postgres'
      ? sql<number>`CAST(EXTRACT(EPOCH FROM now()) AS BIGINT)`
      : kind === 'mysql'
        ? sql<number>`UNIX_TIMESTAMP()`
        : sql<number>`CAST(strftime('%s', 'now') AS INTEGER)`;
  }

  private get staleSec(): number {
    return this.opts.staleSec ?? HOLD_STALE_SEC;
  }

  /** Registers this node, recovers dead nodes, then keeps the heartbeat. */
  async start(): Promise<RecoveredHolds[]> {
    await this.db.insertInto('quota_hold_nodes').values({ node: this.node, seen_at: this.dbNow() }).execute();
    const recovered = await this.sweep();
    this.timer = setInterval(
      () => void this.beat().catch((err) => this.ctx.log.error({ err }, 'quota hold heartbeat failed')),
      this.opts.heartbeatMs ?? HOLD_HEARTBEAT_MS,
    );
    this.timer.unref();
    return recovered;
  }

  private beats = 0;

  private async beat(): Promise<void> {
    if (++this.beats % (this.opts.pruneBeats ?? HOLD_PRUNE_BEATS) === 0) {
      await this.db
        .deleteFrom('quota_holds')
        .where('node', '=', this.node)
        .where('user_quota', '=', 0)
        .where('token_quota', '=', 0)
        .execute();
      this.opts.onRowsGone?.();
    }
    const r = await this.db
      .updateTable('quota_hold_nodes')
      .set({ seen_at: this.dbNow() })
      .where('node', '=', this.node)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) {
      // another node took this one for dead (no heartbeat for HOLD_STALE_SEC: a stalled process) and gave its holds
      // back; the ones still open will be settled against amounts already returned. Register again and say so.
      this.ctx.log.error(
        { node: this.node },
        'this node was recovered as dead by another node; its open reservations were given back',
      );
      this.opts.onRowsGone?.();
      await this.db.insertInto('quota_hold_nodes').values({ node: this.node, seen_at: this.dbNow() }).execute();
    }
    await this.sweep();
  }

  /** Gives back the holds of dead nodes: a stale heartbeat, or a process of this host that is gone. */
  async sweep(): Promise<RecoveredHolds[]> {
    const cutoff =
      Number((await sql<{ t: number }>`SELECT ${this.dbNow()} AS t`.execute(this.db)).rows[0].t) - this.staleSec;
    const out: RecoveredHolds[] = [];
    const nodes = await this.db
      .selectFrom('quota_hold_nodes')
      .select(['node', 'seen_at'])
      .where('node', '<>', this.node)
      .execute();
    const registered = new Set(nodes.map((n) => n.node));
    // holds without a node row: left by a process that died before registering again (HoldNodes.beat)
    const held = [
      ...(await this.db.selectFrom('quota_holds').select('node').distinct().where('node', '<>', this.node).execute()),
      ...(await this.db
        .selectFrom('quota_hold_journal')
        .select('node')
        .distinct()
        .where('node', '<>', this.node)
        .execute()),
      ...(await this.db
        .selectFrom('subscription_holds')
        .select('node')
        .distinct()
        .where('node', '<>', this.node)
        .execute()),
    ];
    const unregistered = [...new Set(held.map((h) => h.node))].filter((node) => !registered.has(node));
    for (const { node, seen_at } of [...nodes, ...unregistered.map((node) => ({ node, seen_at: null }))]) {
      const gone = processGone(node);
      if (!gone && (seen_at === null || Number(seen_at) >= cutoff)) continue;
      const r = await this.recover(node, gone ? null : cutoff);
      if (r) out.push(r);
    }
    return out;
  }

  /** Gives one dead node's holds back, once: null when another node did it first or the node came back. */
  private async recover(node: string, cutoff: number | null): Promise<RecoveredHolds | null> {
    const result = await this.db.transaction().execute(async (trx) => {
      let del = trx.deleteFrom('quota_hold_nodes').where('node', '=', node);
      if (cutoff !== null) del = del.where('seen_at', '<', cutoff);
      const gone = Number((await del.executeTakeFirst()).numDeletedRows);
      if (cutoff !== null && gone === 0) return null;
      const users = new Map<number, number>();
      const tokens = new Map<number, number>();
      for (const h of await readHolds(trx, { node })) {
        users.set(h.userId, (users.get(h.userId) ?? 0) + h.user);
        if (h.tokenId > 0) tokens.set(h.tokenId, (tokens.get(h.tokenId) ?? 0) + h.token);
      }
      // tokens before users, each by id: the lock order of every quota statement
      const byId = (m: Map<number, number>) => [...m].filter(([, v]) => v > 0).sort((a, b) => a[0] - b[0]);
      const t = byId(tokens);
      const u = byId(users);
      for (const [id, v] of t)
        await trx
          .updateTable('tokens')
          .set((eb) => ({ remain_quota: eb('remain_quota', '+', v) }))
          .where('id', '=', id)
          .execute();
      for (const [id, v] of u)
        await trx
          .updateTable('users')
          .set((eb) => ({ quota: eb('quota', '+', v) }))
          .where('id', '=', id)
          .execute();
      // then the subscriptions' windows, each only while it is still in the period the hold was taken in
      const planHolds = await readPlanHolds(trx, node);
      for (const h of planHolds)
        await correctWindows(trx, this.ctx.dbKind, h.id, [{ slot: h.slot, end: h.end }], -h.amount);
      await forgetHolds(trx, node);
      return { node, users: u.map(([id]) => id), tokens: t.map(([id]) => id), quota: u.reduce((s, [, v]) => s + v, 0) };
    });
    if (!result) return null;
    for (const id of result.users) this.ctx.changes.publish({ kind: 'user', id });
    for (const id of result.tokens) this.ctx.changes.publish({ kind: 'token', id });
    if (result.users.length) {
      this.ctx.log.warn(
        { node, users: result.users.length, tokens: result.tokens.length, quota: result.quota },
        'gave back the reservations of a gateway process that stopped without settling them',
      );
    }
    return { node, users: result.users.length, tokens: result.tokens.length, quota: result.quota };
  }

  /**
   * Clean stop, after the final settlement flush: this node's rows go if it holds nothing. Anything still held (a
   * settlement that could not be written) stays with the node's row, for recovery once its heartbeat is stale.
   */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if ((await readHolds(this.db, { node: this.node })).length || (await readPlanHolds(this.db, this.node)).length) {
      this.ctx.log.error(
        { node: this.node },
        'stopping with reservations not settled; they will be given back by the next node',
      );
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      await forgetHolds(trx, this.node);
      await trx.deleteFrom('quota_hold_nodes').where('node', '=', this.node).execute();
    });
  }
}
