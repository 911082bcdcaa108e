// The balance queries of OpenAI and the OpenAI-compatible vendors that have one (new-api's updateChannelBalance):
// USD, except DeepSeek (its CNY balance, as new-api) and Moonshot (CNY divided by the Price option, as new-api).
import type { ChannelFacts, UpstreamAccount } from '../channel-facts-contract.js';

type BalanceQuery = NonNullable<ChannelFacts['balance']>;

const isoDay = (d: Date) => d.toISOString().slice(0, 10);

/** OpenAI's billing endpoints: the hard limit less this month's usage (a paying account) or the last 100 days'. */
async function openaiBilling({ base, get }: UpstreamAccount): Promise<number> {
  const sub = await get(`${base}/v1/dashboard/billing/subscription`);
  const now = new Date();
  const start = sub.has_payment_method
    ? `${isoDay(now).slice(0, 8)}01`
    : isoDay(new Date(now.getTime() - 100 * 86400_000));
  const usage = await get(`${base}/v1/dashboard/billing/usage?start_date=${start}&end_date=${isoDay(now)}`);
  return Number(sub.hard_limit_usd ?? 0) - Number(usage.total_usage ?? 0) / 100;
}

async function siliconFlow({ base, get }: UpstreamAccount): Promise<number> {
  const j = await get(`${base}/v1/user/info`);
  if (j?.code !== undefined && j.code !== 20000) throw new Error(`code: ${j.code}, message: ${j.message ?? ''}`);
  return Number(j?.data?.totalBalance ?? 0);
}

async function deepSeek({ base, get }: UpstreamAccount): Promise<number> {
  const j = await get(`${base}/user/balance`);
  const cny = Array.isArray(j?.balance_infos) ? j.balance_infos.find((b: any) => b?.currency === 'CNY') : undefined;
  if (!cny) throw new Error('currency CNY not found');
  return Number(cny.total_balance);
}

async function openRouter({ base, get }: UpstreamAccount): Promise<number> {
  // the default base URL already ends in /api (https://openrouter.ai/api)
  const j = await get(`${base.replace(/\/api$/, '')}/api/v1/credits`);
  return Number(j?.data?.total_credits ?? 0) - Number(j?.data?.total_usage ?? 0);
}

const moonshot: BalanceQuery = async ({ base, get }, { price }) => {
  const j = await get(`${base}/v1/users/me/balance`);
  if (!j?.status || j.code !== 0)
    throw new Error(
      `failed to update moonshot balance, status: ${j?.status}, code: ${j?.code}, scode: ${j?.scode ?? ''}`,
    );
  return Number(j.data?.available_balance ?? 0) / (price > 0 ? price : 7.3);
};

/**
 * The balance query of an OpenAI-compatible type: OpenAI's billing for OpenAI, custom (its base URL, as new-api) and
 * the older OpenAI resellers; SiliconFlow (40), DeepSeek (43), OpenRouter (20) and Moonshot (25) their own.
 */
export function openaiBalance(type: number): BalanceQuery | undefined {
  if ([1, 6, 7, 8, 9, 10, 12, 13].includes(type)) return openaiBilling;
  const own: Record<number, BalanceQuery> = { 40: siliconFlow, 43: deepSeek, 20: openRouter, 25: moonshot };
  return own[type];
}
