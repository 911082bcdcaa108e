// Channel facts of iFlytek Spark (channel type 18): the key is `APPID|APISecret|APIKey` (new-api's order), `other` the
// API version (v1.1, v2.1, v3.1, v3.5, v4.0) for models that do not name one. A key without its three parts, or a
// version Spark does not have, is refused on save. Spark lists no models: the console offers the built-in list.
import { plainFacts, type ChannelFacts, type FieldProblem } from '../channel-facts-contract.js';

export const SPARK_MODELS: readonly string[] = [
  'SparkDesk',
  'SparkDesk-v1.1',
  'SparkDesk-v2.1',
  'SparkDesk-v3.1',
  'SparkDesk-v3.5',
  'SparkDesk-v4.0',
];

/** Spark's versions and the `domain` each takes (its API documentation's table). */
export const SPARK_DOMAINS: Record<string, string> = {
  'v1.1': 'lite',
  'v2.1': 'generalv2',
  'v3.1': 'generalv3',
  'v3.5': 'generalv3.5',
  'v4.0': '4.0Ultra',
};

export function splitSparkKey(key: string): { appId: string; apiSecret: string; apiKey: string } | null {
  const parts = key.trim().split('|');
  if (parts.length !== 3) return null;
  const [appId, apiSecret, apiKey] = parts.map((p) => p.trim());
  return appId && apiSecret && apiKey ? { appId, apiSecret, apiKey } : null;
}

const KEY_FORMAT = '讯飞星火的密钥格式应为 APPID|APISecret|APIKey，三部分都不能为空';

function problem(key: string, other: string | undefined): FieldProblem | null {
  if (key && !splitSparkKey(key)) return { field: 'key', message: KEY_FORMAT };
  const version = other?.trim();
  if (version && !SPARK_DOMAINS[version])
    return { field: 'other', message: `星火版本 ${version} 无效，应为 ${Object.keys(SPARK_DOMAINS).join('、')} 之一` };
  return null;
}

export const sparkChannelFacts = (): ChannelFacts =>
  plainFacts({
    keyHint: 'APPID|APISecret|APIKey',
    other: { kind: 'spark_version', hint: 'v3.5' },
    check: ({ key, other }) => problem(key, other),
    models: { fixed: SPARK_MODELS },
  });
