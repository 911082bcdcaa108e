// Channel facts of Tencent Hunyuan (channel type 23): the key is `AppId|SecretId|SecretKey` (new-api's format; the
// AppId is not part of the signature), `other` an optional region (ap-guangzhou when empty). A key without its three
// parts, or a region that is not one, is refused on save. Hunyuan's API lists no models: the console offers the
// built-in list.
import { plainFacts, type ChannelFacts, type FieldProblem } from '../channel-facts-contract.js';

export const HUNYUAN_MODELS: readonly string[] = [
  'hunyuan-lite',
  'hunyuan-standard',
  'hunyuan-standard-256K',
  'hunyuan-pro',
  'hunyuan-turbo',
];

export const HUNYUAN_DEFAULT_REGION = 'ap-guangzhou';
const REGION = /^[a-z]{2}-[a-z]+(-[a-z0-9]+)*$/;

export function splitHunyuanKey(key: string): { appId: string; secretId: string; secretKey: string } | null {
  const parts = key.trim().split('|');
  if (parts.length !== 3) return null;
  const [appId, secretId, secretKey] = parts.map((p) => p.trim());
  return appId && secretId && secretKey ? { appId, secretId, secretKey } : null;
}

/** The channel's region: `other` when it is one, else Guangzhou. */
export function hunyuanRegion(other: string): string {
  const region = other.trim();
  return REGION.test(region) ? region : HUNYUAN_DEFAULT_REGION;
}

const KEY_FORMAT = '腾讯混元的密钥格式应为 AppId|SecretId|SecretKey，三部分都不能为空';

function problem(key: string, other: string | undefined): FieldProblem | null {
  if (key && !splitHunyuanKey(key)) return { field: 'key', message: KEY_FORMAT };
  if (other?.trim() && !REGION.test(other.trim()))
    return { field: 'other', message: `地域 ${other.trim()} 无效，例如：ap-guangzhou` };
  return null;
}

export const hunyuanChannelFacts = (): ChannelFacts =>
  plainFacts({
    keyHint: 'AppId|SecretId|SecretKey',
    other: { kind: 'region_or_model_map', hint: HUNYUAN_DEFAULT_REGION },
    check: ({ key, other }) => problem(key, other),
    models: { fixed: HUNYUAN_MODELS },
  });
