import { afterAll, beforeAll, expect, it } from 'vitest';
import bcrypt from 'bcryptjs';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { registerAndLogin, setupAndLoginRoot, uname, userWithRole } from './fixtures.js';

await describeEachDb('user admin', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let rootId: number;
  beforeAll(async () => {
    server = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
    root = await setupAndLoginRoot(server);
    rootId = root.userId!;
  });
  afterAll(async () => server?.close());

  it('keeps normal users out of admin routes and admins out of root routes', async () => {
    const user = await userWithRole(server, root, 1);
    const admin = await userWithRole(server, root, 10);
    const denied = { success: false, message: '无权进行此操作，权限不足' };
    expect((await user.client.get('/api/user/?p=1')).body).toEqual(denied);
    expect((await user.client.get('/api/group/')).body).toEqual(denied);
    expect((await admin.client.get('/api/option/')).body).toEqual(denied);
    expect((await admin.client.put('/api/option/', { key: 'SystemName', value: 'x' })).body).toEqual(denied);
    expect((await admin.client.get('/api/group/')).body).toEqual({
      success: true,
      message: '',
      data: ['default', 'vip', 'svip'],
    });
  });

  it('enforces the role rules on view, create, edit, manage and delete', async () => {
    const admin = await userWithRole(server, root, 10);
    const admin2 = await userWithRole(server, root, 10);
    const user = await userWithRole(server, root, 1);
    const a = admin.client;

    // view
    expect((await a.get(`/api/user/${user.id}`)).body.data).toMatchObject({ id: user.id, username: user.username });
    expect((await a.get(`/api/user/${user.id}`)).body.data).not.toHaveProperty('password');
    for (const id of [admin2.id, rootId]) {
      expect((await a.get(`/api/user/${id}`)).body).toEqual({
        success: false,
        message: '无权获取同级或更高等级用户的信息',
      });
    }
    expect((await root.get(`/api/user/${admin.id}`)).body.data.role).toBe(10);

    // create
    expect((await a.post('/api/user/', { username: '', password: 'password123' })).body).toEqual({
      success: false,
      message: '用户名和密码不能为空！',
    });
    expect((await a.post('/api/user/', { username: uname('c'), password: '' })).body).toEqual({
      success: false,
      message: '用户名和密码不能为空！',
    });
    expect((await a.post('/api/user/', { username: uname('c'), password: 'password123', role: 10 })).body).toEqual({
      success: false,
      message: '无法创建权限大于等于自己的用户',
    });
    const created = uname('c');
    expect(
      (await a.post('/api/user/', { username: created, password: 'password123', display_name: '新用户' })).body,
    ).toEqual({ success: true, message: '' });
    const createdRow = await server.ctx.db
      .selectFrom('users')
      .selectAll()
      .where('username', '=', created)
      .executeTakeFirstOrThrow();
    expect(createdRow).toMatchObject({ role: 1, display_name: '新用户', status: 1 });
    expect((await a.post('/api/user', { username: created, password: 'password123' })).body.message).toBe(
      '用户名已存在，或已注销',
    );
    const madeAdmin = uname('c');
    expect(
      (await root.post('/api/user', { username: madeAdmin, password: 'password123', role: 10 })).body.success,
    ).toBe(true);
    expect(
      (
        await server.ctx.db
          .selectFrom('users')
          .select('role')
          .where('username', '=', madeAdmin)
          .executeTakeFirstOrThrow()
      ).role,
    ).toBe(10);

    // edit
    const peerEdit = await a.put('/api/user/', { id: admin2.id, display_name: 'hacked' });
    expect(peerEdit.body).toEqual({ success: false, message: '无权更新同权限等级或更高权限等级的用户信息' });
    expect((await a.put('/api/user/', { id: rootId, quota: 1 })).body.success).toBe(false);
    expect((await a.put('/api/user/', { id: user.id, role: 10 })).body).toEqual({
      success: false,
      message: '无权将其他用户权限等级提升到大于等于自己的权限等级',
    });

    // manage
    const m = (id: number, action: string, c = a) => c.post('/api/user/manage', { id, action });
    expect((await m(user.id, 'promote')).body).toEqual({
      success: false,
      message: '普通管理员用户无法提升其他用户为管理员',
    });
    expect((await m(admin2.id, 'disable')).body).toEqual({
      success: false,
      message: '无权更新同权限等级或更高权限等级的用户信息',
    });
    expect((await m(rootId, 'disable')).body.success).toBe(false);
    expect((await m(rootId, 'disable', root)).body).toEqual({ success: false, message: '无法禁用超级管理员用户' });
    expect((await m(rootId, 'delete', root)).body).toEqual({ success: false, message: '无法删除超级管理员用户' });
    expect((await m(rootId, 'demote', root)).body).toEqual({ success: false, message: '无法降级超级管理员用户' });
    expect((await m(user.id, 'demote')).body).toEqual({ success: false, message: '该用户已经是普通用户' });
    expect((await m(admin2.id, 'promote', root)).body).toEqual({ success: false, message: '该用户已经是管理员' });
    expect((await m(user.id, 'explode')).body).toEqual({ success: false, message: '无效的参数' });
    expect((await m(999999, 'disable')).body).toEqual({ success: false, message: '用户不存在' });
    expect((await m(user.id, 'disable')).body).toEqual({ success: true, message: '', data: { role: 1, status: 2 } });
    expect((await m(user.id, 'enable')).body).toEqual({ success: true, message: '', data: { role: 1, status: 1 } });
    expect((await m(admin2.id, 'demote', root)).body).toEqual({
      success: true,
      message: '',
      data: { role: 1, status: 1 },
    });
    // demoted: admin2's sessions ended; logged in again, it is below admin and lacks the admin routes
    expect((await admin2.client.get('/api/user/')).status).toBe(401);
    expect((await admin2.client.login(admin2.username, admin2.password)).body.success).toBe(true);
    expect((await admin2.client.get('/api/user/')).body.message).toBe('无权进行此操作，权限不足');
    expect((await m(admin2.id, 'delete')).body).toEqual({ success: true, message: '', data: { role: 1, status: 1 } });
    expect((await m(admin2.id, 'enable')).body).toEqual({ success: false, message: '用户已注销' });
    const deleted = await a.get(`/api/user/${admin2.id}`);
    expect(deleted.body.data.DeletedAt).toBeTruthy();

    // hard delete
    expect((await a.delete(`/api/user/${rootId}`)).body).toEqual({
      success: false,
      message: '无权删除同权限等级或更高权限等级的用户',
    });
    expect((await a.delete(`/api/user/${user.id}`)).body).toEqual({ success: true, message: '' });
    expect(
      await server.ctx.db.selectFrom('users').select('id').where('id', '=', user.id).executeTakeFirst(),
    ).toBeUndefined();
    expect((await a.delete(`/api/user/${user.id}`)).body).toEqual({ success: false, message: '用户不存在' });
  });

  it('edits a user, applies a quota change as a delta and writes a manage log', async () => {
    const u = await registerAndLogin(server);
    const res = await root.put('/api/user/', {
      id: u.id,
      username: u.username,
      display_name: 'Edited',
      group: 'vip',
      quota: 1500000,
      password: 'brandnew123',
    });
    expect(res.body).toEqual({ success: true, message: '' });
    let row = await server.ctx.db.selectFrom('users').selectAll().where('id', '=', u.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ display_name: 'Edited', group: 'vip', quota: 1500000 });
    expect(await bcrypt.compare('brandnew123', row.password)).toBe(true);
    const logs = await server.ctx.logDb
      .selectFrom('logs')
      .selectAll()
      .where('user_id', '=', u.id)
      .where('type', '=', 3)
      .execute();
    expect(logs).toHaveLength(1);
    expect(logs[0].content).toBe('管理员将用户额度从 ＄0.000000 额度修改为 ＄3.000000 额度');
    expect(logs[0].username).toBe(u.username);

    // a partial edit leaves the other fields alone, with no new quota log
    expect((await root.put('/api/user', { id: u.id, display_name: 'Again' })).body.success).toBe(true);
    row = await server.ctx.db.selectFrom('users').selectAll().where('id', '=', u.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ display_name: 'Again', group: 'vip', quota: 1500000 });
    expect(
      await server.ctx.logDb
        .selectFrom('logs')
        .select('id')
        .where('user_id', '=', u.id)
        .where('type', '=', 3)
        .execute(),
    ).toHaveLength(1);

    expect((await root.put('/api/user/', { id: u.id, quota: 'lots' })).body).toEqual({
      success: false,
      message: '额度必须是整数',
    });
    expect((await root.put('/api/user/', { id: u.id, quota: -5 })).body).toEqual({
      success: false,
      message: '额度不能为负数',
    });
    expect((await root.put('/api/user/', { id: u.id, username: 'root' })).body).toEqual({
      success: false,
      message: '用户名已存在，或已注销',
    });
    expect((await root.put('/api/user/', { display_name: 'no id' })).body).toEqual({
      success: false,
      message: '无效的参数',
    });
  });

  it('publishes a user change after every write to a user row', async () => {
    const events: unknown[] = [];
    const off = server.ctx.changes.subscribe((ev) => events.push(ev));
    try {
      const u = await registerAndLogin(server);
      expect(events).toContainEqual({ kind: 'user', id: u.id });
      events.length = 0;
      await root.post('/api/user/manage', { id: u.id, action: 'disable' });
      expect(events).toContainEqual({ kind: 'user', id: u.id });
      events.length = 0;
      await root.put('/api/user/', { id: u.id, quota: 42 });
      expect(events).toContainEqual({ kind: 'user', id: u.id });
      events.length = 0;
      await root.delete(`/api/user/${u.id}`);
      expect(events).toContainEqual({ kind: 'user', id: u.id });
      expect(events).toContainEqual({ kind: 'token', userId: u.id });
    } finally {
      off();
    }
  });

  it('pages and searches users 1-based with {items,total,page,page_size}, never returning passwords', async () => {
    const prefix = `pg${Date.now() % 10000}`;
    const names: string[] = [];
    for (let i = 0; i < 5; i++) {
      const n = `${prefix}_${i}`;
      names.push(n);
      expect(
        (await root.post('/api/user/', { username: n, password: 'password123', display_name: `Disp${i}` })).body
          .success,
      ).toBe(true);
    }
    const total = Number(
      (
        await server.ctx.db
          .selectFrom('users')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    const p1 = await root.get('/api/user/?p=1&page_size=2');
    expect(p1.body.success).toBe(true);
    expect(p1.body.data).toMatchObject({ total, page: 1, page_size: 2 });
    expect(p1.body.data.items).toHaveLength(2);
    expect(p1.body.data.items[0].id).toBeGreaterThan(p1.body.data.items[1].id);
    for (const item of p1.body.data.items) {
      expect(item).not.toHaveProperty('password');
      expect(item).toHaveProperty('DeletedAt');
    }
    const p2 = await root.get('/api/user/?p=2&page_size=2');
    expect(p2.body.data.items[0].id).toBeLessThan(p1.body.data.items[1].id);
    const p0 = await root.get('/api/user/?p=0');
    expect(p0.body.data).toMatchObject({ page: 1, page_size: 10 });

    const search = await root.get(`/api/user/search?keyword=${prefix}&p=1&page_size=3`);
    expect(search.body.data).toMatchObject({ total: 5, page: 1, page_size: 3 });
    expect(search.body.data.items.map((x: any) => x.username)).toEqual([names[4], names[3], names[2]]);
    const page2 = await root.get(`/api/user/search?keyword=${prefix}&p=2&page_size=3`);
    expect(page2.body.data.items.map((x: any) => x.username)).toEqual([names[1], names[0]]);

    const byDisplay = await root.get('/api/user/search?keyword=Disp3');
    expect(byDisplay.body.data.items.some((x: any) => x.username === names[3])).toBe(true);
    const id = search.body.data.items[0].id;
    const byId = await root.get(`/api/user/search?keyword=${id}`);
    expect(byId.body.data.items.map((x: any) => x.id)).toContain(id);

    await server.ctx.db
      .updateTable('users')
      .set({ group: 'vip', email: `${prefix}@mail.test` })
      .where('username', '=', names[0])
      .execute();
    const byGroup = await root.get(`/api/user/search?keyword=${prefix}&group=vip`);
    expect(byGroup.body.data.items.map((x: any) => x.username)).toEqual([names[0]]);
    const byEmail = await root.get(`/api/user/search?keyword=${prefix}@mail`);
    expect(byEmail.body.data.items.map((x: any) => x.username)).toEqual([names[0]]);

    // soft-deleted users stay listed with DeletedAt set
    await root.post('/api/user/manage', { id: byEmail.body.data.items[0].id, action: 'delete' });
    const afterDelete = await root.get(`/api/user/search?keyword=${names[0]}`);
    expect(afterDelete.body.data.items[0].DeletedAt).toBeTruthy();
  });
});
