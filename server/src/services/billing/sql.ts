// The SQL texts of reservations, refunds and settlements on each database, and the handling of the errors they
// answer with (a refusal by division by zero on PostgreSQL, deadlock victims).
import { CompiledQuery } from 'kysely';
import { pgPrepared } from '../../db/connect.js';
import { HOLD_CONFLICT_PG, HOLD_INSERT } from '../quota-holds.js';

export type Stmt = (params: unknown[]) => CompiledQuery;

/**
 * What each settlement statement writes: its params are one value per column, in this order, then the row's id.
 * `-` subtracts the value, `+` adds it, `=` sets it. One row per statement on SQLite (settleRowSql), many on
 * PostgreSQL / MySQL (settleManyQuery).
 */
export const SETTLE_COLUMNS = {
  settleToken: {
    table: 'tokens',
    cols: [
      ['remain_quota', '-'],
      ['used_quota', '+'],
      ['accessed_time', '='],
    ],
  },
  settleUser: {
    table: 'users',
    cols: [
      ['quota', '-'],
      ['used_quota', '+'],
      ['request_count', '+'],
    ],
  },
  settleChannel: { table: 'channels', cols: [['used_quota', '+']] },
} as const satisfies Record<string, { table: string; cols: ReadonlyArray<readonly [string, '-' | '+' | '=']> }>;
export type SettleStmt = keyof typeof SETTLE_COLUMNS;

/** The single-row form of a settlement statement, with `?` placeholders. */
export function settleRowSql(stmt: SettleStmt): string {
  const { table, cols } = SETTLE_COLUMNS[stmt];
  return `UPDATE ${table} SET ${cols.map(([c, op]) => (op === '=' ? `${c} = ?` : `${c} = ${c} ${op} ?`)).join(', ')} WHERE id = ?`;
}

/** A user's reservation on PostgreSQL, with the node's hold; $1 pre, $2 user id, $3 node, $4 token id (one row or none). */
const RESERVE_USER_PG = pgPrepared(
  'WITH u AS (UPDATE users SET quota = quota - $1::bigint WHERE id = $2::bigint AND quota >= $1::bigint RETURNING id) ' +
    `${HOLD_INSERT} SELECT $3::varchar, $2::bigint, $4::bigint, $1::bigint, 0 FROM u ${HOLD_CONFLICT_PG}`,
);

/** reserveBoth on PostgreSQL (see there); $1 pre, $2 token id, $3 user id, $4 node */
const RESERVE_BOTH_PG = pgPrepared(
  'WITH t AS (UPDATE tokens SET remain_quota = remain_quota - $1::bigint WHERE id = $2::bigint AND remain_quota >= $1::bigint RETURNING id), ' +
    'u AS (UPDATE users SET quota = quota - $1::bigint WHERE id = $3::bigint AND quota >= $1::bigint AND EXISTS (SELECT 1 FROM t) RETURNING id), ' +
    `h AS (${HOLD_INSERT} SELECT $4::varchar, $3::bigint, $2::bigint, $1::bigint, $1::bigint FROM u ${HOLD_CONFLICT_PG}) ` +
    'SELECT CASE WHEN (SELECT count(*) FROM t) = 0 THEN 0 ELSE 1 / (SELECT count(*) FROM u) END AS reserved',
);

/**
 * Reservations taken together on PostgreSQL (BatchedReservations), as ONE statement: each limited token's and each user's
 * reservations summed, locked tokens first then users, each by id (the order of every other quota statement), and
 * taken only if every sum fits: a token or user short of its sum divides by zero (22012), which rolls the whole
 * statement back. Whoever fits the sum fits each of its parts one after the other, so a success is what reserving
 * them one by one would have done; after a refusal they are reserved one by one.
 * $1 token ids, $2 their sums, $3 user ids, $4 their sums; the node's holds: $5 node, $6 user ids, $7 token ids, $8 user
 * amounts, $9 token amounts (one per pair, in pair order), written after the users' UPDATE.
 */
export const RESERVE_MANY_PG = pgPrepared(
  'WITH tv AS (SELECT * FROM unnest($1::bigint[], $2::bigint[]) AS tv(id, pre)), ' +
    'uv AS (SELECT * FROM unnest($3::bigint[], $4::bigint[]) AS uv(id, pre)), ' +
    'lt AS (SELECT x.id FROM tokens x JOIN tv ON tv.id = x.id ORDER BY x.id FOR UPDATE OF x), ' +
    't AS (UPDATE tokens x SET remain_quota = x.remain_quota - tv.pre FROM tv JOIN lt ON lt.id = tv.id ' +
    'WHERE x.id = tv.id AND x.remain_quota >= tv.pre RETURNING x.id), ' +
    // the users' locks only once the tokens' UPDATE is done (it is read first)
    'lu AS (SELECT y.id FROM users y JOIN uv ON uv.id = y.id WHERE (SELECT count(*) FROM t) >= 0 ORDER BY y.id FOR UPDATE OF y), ' +
    'u AS (UPDATE users y SET quota = y.quota - uv.pre FROM uv JOIN lu ON lu.id = uv.id ' +
    'WHERE y.id = uv.id AND y.quota >= uv.pre RETURNING y.id), ' +
    `h AS (${HOLD_INSERT} SELECT $5::varchar, hv.u, hv.t, hv.uq, hv.tq ` +
    'FROM unnest($6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[]) AS hv(u, t, uq, tq) ' +
    `WHERE (SELECT count(*) FROM u) >= 0 ORDER BY hv.u, hv.t ${HOLD_CONFLICT_PG}) ` +
    'SELECT 1 / ((SELECT count(*) FROM t) = cardinality($1::bigint[]) AND (SELECT count(*) FROM u) = cardinality($3::bigint[]))::int AS reserved',
);

export function statements(kind: string) {
  const q = (text: string): Stmt => {
    let i = 0;
    const compiled = kind === 'postgres' ? pgPrepared(text.replace(/\?/g, () => `$${++i}`)) : text;
    return (params) => CompiledQuery.raw(compiled, params);
  };
  return {
    reserveUser: q('UPDATE users SET quota = quota - ? WHERE id = ? AND quota >= ?'),
    reserveToken: q('UPDATE tokens SET remain_quota = remain_quota - ? WHERE id = ? AND remain_quota >= ?'),
    refundUser: q('UPDATE users SET quota = quota + ? WHERE id = ?'),
    refundToken: q('UPDATE tokens SET remain_quota = remain_quota + ? WHERE id = ?'),
    settleUser: q(settleRowSql('settleUser')),
    settleToken: q(settleRowSql('settleToken')),
    settleChannel: q(settleRowSql('settleChannel')),
    tokenRemain: q('SELECT remain_quota FROM tokens WHERE id = ?'),
    userQuota: q('SELECT quota FROM users WHERE id = ?'),
    /**
     * A limited token and its user in one atomic statement (PostgreSQL / MySQL): either both are reserved or neither,
     * in one round trip, the token's row locked before the user's (the order settlement and refunds use too).
     *   PostgreSQL: the user's UPDATE runs only when the token's did (EXISTS on its RETURNING). When the token was
     *   reserved but the user is short, the statement divides by zero (error 22012, PG_REFUSED): the error
     *   rolls the whole statement back, token included. `reserved` is 1 when both were taken, 0 when the token is short.
     *   MySQL / MariaDB: a three-table UPDATE (with the hold's row) changes all rows or none (3 or 0 affected rows).
     * Both add the amounts to the node's hold (services/quota-holds.ts). Params: pre, tokenId, userId, node.
     */
    reserveBoth: ((params: unknown[]) => {
      const [pre, tokenId, userId, node] = params;
      return kind === 'postgres'
        ? CompiledQuery.raw(RESERVE_BOTH_PG, [pre, tokenId, userId, node])
        : CompiledQuery.raw(
            'UPDATE tokens STRAIGHT_JOIN users STRAIGHT_JOIN quota_holds SET tokens.remain_quota = tokens.remain_quota - ?, users.quota = users.quota - ?, ' +
              'quota_holds.user_quota = quota_holds.user_quota + ?, quota_holds.token_quota = quota_holds.token_quota + ? ' +
              'WHERE tokens.id = ? AND tokens.remain_quota >= ? AND users.id = ? AND users.quota >= ? ' +
              'AND quota_holds.node = ? AND quota_holds.user_id = ? AND quota_holds.token_id = ?',
            [pre, pre, pre, pre, tokenId, pre, userId, pre, node, userId, tokenId],
          );
    }) as Stmt,
    /**
     * A user's reservation with the node's hold, in one statement (PostgreSQL / MySQL): params pre, userId, node,
     * tokenId. One row on PostgreSQL (the hold's upsert), two on MySQL (the user's and the hold's) when reserved.
     * On MySQL the hold's row must exist (PgMysqlReservations.ensureHoldRow).
     */
    reserveUserHeld: ((params: unknown[]) => {
      const [pre, userId, node, tokenId] = params;
      return kind === 'postgres'
        ? CompiledQuery.raw(RESERVE_USER_PG, [pre, userId, node, tokenId])
        : CompiledQuery.raw(
            'UPDATE users STRAIGHT_JOIN quota_holds SET users.quota = users.quota - ?, quota_holds.user_quota = quota_holds.user_quota + ? ' +
              'WHERE users.id = ? AND users.quota >= ? AND quota_holds.node = ? AND quota_holds.user_id = ? AND quota_holds.token_id = ?',
            [pre, pre, userId, pre, node, userId, tokenId],
          );
    }) as Stmt,
  };
}

/**
 * PostgreSQL's division_by_zero: how reserveBoth (the user was short) and RESERVE_MANY_PG (a sum did not fit) refuse;
 * the error rolls the statement back, so nothing was changed.
 */
export const PG_REFUSED = '22012';

/** A deadlock victim (PostgreSQL 40P01, MySQL/MariaDB 1213) was rolled back whole and can run again. */
function isDeadlock(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown };
  return e?.code === '40P01' || e?.errno === 1213 || e?.code === 'ER_LOCK_DEADLOCK';
}

/** Runs `fn` again (up to 3 tries) when the database picked it as a deadlock victim; `onRetry` hears of each. */
export async function retryDeadlock<T>(fn: () => Promise<T>, onRetry: (err: unknown) => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= 3 || !isDeadlock(err)) throw err;
      onRetry(err);
    }
  }
}

export type StmtName = keyof ReturnType<typeof statements>;

/**
 * PostgreSQL / MySQL: the settlement of many rows of one table as ONE statement (`rows` are the single-row statement's
 * params), locking the rows in id order — the order reservations, refunds and other nodes' flushes take them in, so
 * none of them can wait on another in a cycle. One statement per row cost a round trip each: with many active tokens
 * that was more round trips than requests.
 *   PostgreSQL: the values travel as one array per column (unnest); a CTE locks the rows (`FOR UPDATE`, by id)
 *   before the UPDATE joins them.
 *   MySQL / MariaDB: one CASE per column and `ORDER BY id`, which a single-table UPDATE takes as its lock order.
 *   SQLite uses it only on its Kysely path (its flushes otherwise run prepared single-row statements synchronously).
 */
export function settleManyQuery(kind: string, stmt: SettleStmt, rows: unknown[][]): CompiledQuery {
  const { table, cols } = SETTLE_COLUMNS[stmt];
  const n = cols.length;
  if (kind === 'postgres') {
    const arrays: unknown[][] = Array.from({ length: n + 1 }, () => []);
    for (const r of rows) {
      arrays[0].push(r[n]);
      for (let j = 0; j < n; j++) arrays[j + 1].push(r[j]);
    }
    const vcols = cols.map((_, j) => `d${j}`);
    const sets = cols.map(([c, op], j) => `${c} = ${op === '=' ? `v.d${j}` : `t.${c} ${op} v.d${j}`}`).join(', ');
    // the same text for any number of rows: a named statement
    return CompiledQuery.raw(
      pgPrepared(
        `WITH v AS (SELECT * FROM unnest(${arrays.map((_, j) => `$${j + 1}::bigint[]`).join(', ')}) AS v(id, ${vcols.join(', ')})), ` +
          `l AS (SELECT x.id FROM ${table} x JOIN v ON v.id = x.id ORDER BY x.id FOR UPDATE OF x) ` +
          `UPDATE ${table} t SET ${sets} FROM v JOIN l ON l.id = v.id WHERE t.id = v.id`,
      ),
      arrays,
    );
  }
  const params: unknown[] = [];
  const sets = cols.map(
    ([c, op], j) =>
      `${c} = ${op === '=' ? '' : `${c} ${op} `}${caseById(
        rows.map((r) => [r[n], r[j]]),
        params,
      )}`,
  );
  const ids = idList(
    rows.map((r) => r[n]),
    params,
  );
  // SQLite (its Kysely path, while a transaction holds the raw connection) has one writer and no row locks
  const order = kind === 'mysql' ? ' ORDER BY id' : '';
  return CompiledQuery.raw(`UPDATE ${table} SET ${sets.join(', ')} WHERE id IN ${ids}${order}`, params);
}

/** `CASE id WHEN ? THEN ? … END` for (id, value) pairs, their values pushed onto `params` (MySQL / SQLite). */
export function caseById(pairs: Iterable<readonly [unknown, unknown]>, params: unknown[]): string {
  const whens: string[] = [];
  for (const [id, v] of pairs) {
    params.push(id, v);
    whens.push('WHEN ? THEN ?');
  }
  return `CASE id ${whens.join(' ')} END`;
}

/** `(?, ?, …)` for `ids`, pushed onto `params`. */
export function idList(ids: Iterable<unknown>, params: unknown[]): string {
  const marks: string[] = [];
  for (const id of ids) {
    params.push(id);
    marks.push('?');
  }
  return `(${marks.join(', ')})`;
}

/**
 * `col = col - CASE id WHEN … END` for every id of `sums` whose row still holds its amount, locked by id (the
 * single-table UPDATE's ORDER BY is its lock order). MySQL / MariaDB.
 */
export function takeSumsMysql(table: 'tokens' | 'users', col: string, sums: Map<number, number>): CompiledQuery {
  const params: unknown[] = [];
  const set = `${col} = ${col} - ${caseById(sums, params)}`;
  const cond = `${col} >= ${caseById(sums, params)}`;
  return CompiledQuery.raw(
    `UPDATE ${table} SET ${set} WHERE ${cond} AND id IN ${idList(sums.keys(), params)} ORDER BY id`,
    params,
  );
}

export const affected = (r: { numAffectedRows?: bigint; numUpdatedOrDeletedRows?: bigint }) =>
  Number(r.numAffectedRows ?? r.numUpdatedOrDeletedRows ?? 0);
