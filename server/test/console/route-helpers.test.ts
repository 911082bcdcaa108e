// The console handlers' shared helpers on their own: which errors become the HTTP 200 `success:false` envelope,
// which stay errors (a 500, or lib/input.ts's 400), and how ids, bodies and numeric query fields are read.
import { describe, expect, it } from 'vitest';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bodyOf, guarded, idParam, queryInt, queryOf } from '../../src/api/route-helpers.js';
import { InputError } from '../../src/lib/input.js';
import { ChannelInputError } from '../../src/services/channels.js';
import { TokenInputError } from '../../src/services/tokens.js';
import { UserFacingError } from '../../src/services/users.js';

const req = (parts: Partial<Pick<FastifyRequest, 'body' | 'query' | 'params'>>) => parts as FastifyRequest;
const run = (handler: ReturnType<typeof guarded>, r = req({})) =>
  (handler as (r: FastifyRequest, reply: FastifyReply) => Promise<unknown>)(r, {} as FastifyReply);

describe('guarded', () => {
  it('answers every service input error as success:false with its message', async () => {
    for (const err of [
      new UserFacingError('用户不存在'),
      new TokenInputError('令牌名称过长'),
      new ChannelInputError('请至少选择一个模型！'),
    ]) {
      await expect(run(guarded(async () => Promise.reject(err)))).resolves.toEqual({
        success: false,
        message: err.message,
      });
    }
  });

  it('lets the 400 input error and unexpected errors through to the error handler', async () => {
    await expect(run(guarded(async () => Promise.reject(new InputError('数值超出范围'))))).rejects.toBeInstanceOf(
      InputError,
    );
    await expect(run(guarded(async () => Promise.reject(new Error('db down'))))).rejects.toThrow('db down');
  });

  it('passes the request and reply on and returns the answer as is', async () => {
    const r = req({ query: { a: '1' } });
    await expect(
      run(
        guarded(async (got) => ({ success: true, message: '', data: queryOf(got).a })),
        r,
      ),
    ).resolves.toEqual({ success: true, message: '', data: '1' });
  });
});

describe('request readers', () => {
  it('idParam takes plain decimal ids within 2^53 only', () => {
    expect(idParam(req({ params: { id: '42' } }))).toBe(42);
    for (const bad of ['', '-1', '+1', '0x10', '1e3', '1.0', ' 1', '9007199254740993', 'abc']) {
      expect(idParam(req({ params: { id: bad } }))).toBeNull();
    }
  });

  it('bodyOf gives no fields for a missing or scalar body', () => {
    expect(bodyOf(req({ body: { name: 'x' } }))).toEqual({ name: 'x' });
    expect(bodyOf(req({ body: [1] }))).toEqual([1]);
    for (const body of [undefined, null, 5, 'text', false]) expect(bodyOf(req({ body }))).toEqual({});
  });

  it('queryInt reads a leading safe integer, else 0', () => {
    expect(queryInt('12')).toBe(12);
    expect(queryInt('-3x')).toBe(-3);
    expect(queryInt(undefined)).toBe(0);
    expect(queryInt('abc')).toBe(0);
    expect(queryInt('99999999999999999999')).toBe(0);
  });
});
