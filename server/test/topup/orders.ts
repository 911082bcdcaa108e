// Reads the top-up tests share: a user's quota, an order row, the number of orders and a user's top-up log rows.
// `server` is a getter because the suites start their server in beforeAll.
import type { TestServer } from '../helpers/server.js';

export function orderProbe(server: () => TestServer) {
  return {
    quotaOf: async (id: number) =>
      Number(
        (await server().ctx.db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow())
          .quota,
      ),
    order: (tradeNo: string) =>
      server().ctx.db.selectFrom('top_ups').selectAll().where('trade_no', '=', tradeNo).executeTakeFirstOrThrow(),
    orderCount: async () =>
      Number(
        (
          await server()
            .ctx.db.selectFrom('top_ups')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    topupLogs: (userId: number) =>
      server()
        .ctx.logDb.selectFrom('logs')
        .select(['content', 'type'])
        .where('user_id', '=', userId)
        .where('type', '=', 1)
        .execute(),
  };
}
