// DELETE /api/log/ keeps the audit trail (issue 39 point 3): an admin deletes consume and error rows only, root may
// name other types, and every deletion leaves a system row with who, what and how many, which an admin cannot delete.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { addUser, startConsole } from '../channels/fixture.js';

const TOPUP = 1;
const CONSUME = 2;
const MANAGE = 3;
const SYSTEM = 4;
const ERROR = 5;

await describeEachDb('log cleanup keeps the audit trail', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let admin: { client: ConsoleClient; id: number; username: string };
  const now = Math.floor(Date.now() / 1000);
  const future = now + 3600;

  beforeAll(async () => {
    ({ server, root } = await startConsole(kind));
    admin = await addUser(server, { role: 10 });
  });
  afterAll(async () => server?.close());

  /** one row of each type, an hour old */
  beforeEach(async () => {
    await server.ctx.logDb.deleteFrom('logs').execute();
    for (const type of [TOPUP, CONSUME, MANAGE, SYSTEM, ERROR]) {
      await server.ctx.logDb
        .insertInto('logs')
        .values({ user_id: 1, username: 'root', type, content: `type ${type}`, created_at: now - 3600, is_stream: false })
        .execute();
    }
  });

  const rows = async () =>
    (
      await server.ctx.logDb
        .selectFrom('logs')
        .select(['type', 'user_id', 'username', 'content', 'other'])
        .orderBy('id')
        .execute()
    ).map((r) => ({ ...r, type: Number(r.type), user_id: Number(r.user_id), other: r.other ?? '' }));
  const seeded = async () => (await rows()).filter((r) => r.content.startsWith('type ')).map((r) => r.type);
  const auditRows = async () => (await rows()).filter((r) => r.other.includes('log_cleanup'));

  it('an admin with a future cutoff deletes only consume and error rows, and the deletion is recorded', async () => {
    const res = await admin.client.delete(`/api/log/?target_timestamp=${future}`);
    expect(res.body).toEqual({ success: true, message: '', data: 2 });
    expect(await seeded()).toEqual([TOPUP, MANAGE, SYSTEM]);
    const audit = await auditRows();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      type: SYSTEM,
      user_id: admin.id,
      username: admin.username,
      content: `用户 ${admin.username}（ID ${admin.id}）删除了创建时间早于 ${future} 的日志 2 条，日志类型：2,5`,
    });
    expect(JSON.parse(audit[0]!.other)).toEqual({ log_cleanup: { cutoff: future, types: '2,5', deleted: 2 } });
  });

  it('root without a type deletes the same two types', async () => {
    const res = await root.delete(`/api/log/?target_timestamp=${future}`);
    expect(res.body.data).toBe(2);
    expect(await seeded()).toEqual([TOPUP, MANAGE, SYSTEM]);
  });

  it('an admin may name consume or error, never another type, nor every type; a refusal deletes nothing', async () => {
    expect((await admin.client.delete(`/api/log/?target_timestamp=${future}&type=5`)).body.data).toBe(1);
    expect(await seeded()).toEqual([TOPUP, CONSUME, MANAGE, SYSTEM]);
    for (const type of ['1', '3', '4', '2,4', '0']) {
      const res = await admin.client.delete(`/api/log/?target_timestamp=${future}&type=${type}`);
      expect(res.body).toEqual({ success: false, message: '只有超级管理员可以删除消费和错误以外的日志' });
    }
    expect(await seeded()).toEqual([TOPUP, CONSUME, MANAGE, SYSTEM]);
    expect(await auditRows()).toHaveLength(1);
  });

  it('an admin cannot delete the record of an earlier deletion', async () => {
    await root.delete(`/api/log/?target_timestamp=${future}&type=1`);
    expect(await auditRows()).toHaveLength(1);
    await admin.client.delete(`/api/log/?target_timestamp=${future}`);
    const audit = await auditRows();
    expect(audit.map((r) => [r.username, r.type])).toEqual([
      ['root', SYSTEM],
      [admin.username, SYSTEM],
    ]);
  });

  it('root may delete other types by number, or every type with type=0; its own record stays', async () => {
    const some = await root.delete(`/api/log/?target_timestamp=${future}&type=3,1`);
    expect(some.body.data).toBe(2);
    expect(await seeded()).toEqual([CONSUME, SYSTEM, ERROR]);
    expect((await auditRows())[0]!.content).toContain('日志 2 条，日志类型：1,3');

    const all = await root.delete(`/api/log/?target_timestamp=${future}&type=0`);
    // the three seeded rows left and the record of the first deletion
    expect(all.body.data).toBe(4);
    expect(await seeded()).toEqual([]);
    const audit = await auditRows();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ username: 'root', type: SYSTEM });
    expect(JSON.parse(audit[0]!.other)).toEqual({ log_cleanup: { cutoff: future, types: '0', deleted: 4 } });
  });

  it('the cutoff still applies: newer rows of the deleted types stay', async () => {
    expect((await root.delete(`/api/log/?target_timestamp=${now - 7200}&type=0`)).body.data).toBe(0);
    expect(await seeded()).toEqual([TOPUP, CONSUME, MANAGE, SYSTEM, ERROR]);
    expect((await auditRows())[0]!.content).toContain(`早于 ${now - 7200} 的日志 0 条`);
  });

  it('a malformed type is refused with nothing deleted', async () => {
    for (const type of ['x', '-1', '2;5', '1e3']) {
      const res = await root.delete(`/api/log/?target_timestamp=${future}&type=${encodeURIComponent(type)}`);
      expect(res.body).toEqual({ success: false, message: '日志类型无效' });
    }
    expect(await seeded()).toEqual([TOPUP, CONSUME, MANAGE, SYSTEM, ERROR]);
    expect(await auditRows()).toEqual([]);
  });
});
