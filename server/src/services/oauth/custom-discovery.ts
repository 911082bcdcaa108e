// The OpenID discovery document fetched on the operator's behalf (POST /api/custom-oauth-provider/discovery), so
// the settings drawer can fill in the endpoints. The URL is typed into the console and its answer is shown back, so
// it is fetched like any user-chosen URL (lib/safe-fetch.ts): public addresses only, no redirects, a size and a time
// limit. An identity provider on a private network is entered by hand instead.
import type { AppContext } from '../../context.js';
import type { LineLog } from '../../lib/request-log.js';
import { ForbiddenAddressError, userUrlFetch } from '../../lib/safe-fetch.js';
import { UserFacingError } from '../users.js';

const DISCOVERY_TIMEOUT_MS = 20_000;
const DISCOVERY_MAX_BYTES = 256 * 1024;
const WELL_KNOWN_SUFFIX = '/.well-known/openid-configuration';

export interface DiscoveryResult {
  well_known_url: string;
  discovery: Record<string, unknown>;
}

const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

/** The document's address: the one given, or the issuer's well-known path. */
export function discoveryUrl(body: Record<string, unknown>): string {
  const wellKnown = text(body.well_known_url);
  const issuer = text(body.issuer_url);
  if (!wellKnown && !issuer) throw new UserFacingError('请先填写 Discovery URL 或 Issuer URL');
  const target = wellKnown || `${issuer.replace(/\/+$/, '')}${WELL_KNOWN_SUFFIX}`;
  let u: URL;
  try {
    u = new URL(target);
  } catch {
    throw new UserFacingError('Discovery URL 无效，仅支持 http/https');
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname)
    throw new UserFacingError('Discovery URL 无效，仅支持 http/https');
  return target;
}

/** The document's text, refused past DISCOVERY_MAX_BYTES (a discovery document is a few kB). */
export async function readLimited(body: AsyncIterable<unknown>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > DISCOVERY_MAX_BYTES) throw new UserFacingError('获取 Discovery 配置失败: 文档过大');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function fetchDiscovery(
  ctx: AppContext,
  body: Record<string, unknown>,
  log: LineLog,
): Promise<DiscoveryResult> {
  const url = discoveryUrl(body);
  let status: number;
  let raw: string;
  try {
    const res = await userUrlFetch(ctx).get(url, { accept: 'application/json' }, DISCOVERY_TIMEOUT_MS);
    status = res.statusCode;
    raw = await readLimited(res.body);
  } catch (err) {
    if (err instanceof UserFacingError) throw err;
    const reason =
      err instanceof ForbiddenAddressError || (err as { code?: string }).code === 'ERR_FORBIDDEN_ADDRESS'
        ? '该地址指向本机、内网或保留地址，不允许访问'
        : (err as Error).message || '请求失败';
    log.warn({ err, url }, 'custom oauth discovery failed');
    throw new UserFacingError(`获取 Discovery 配置失败: ${reason}`);
  }
  if (status !== 200) {
    const snippet = raw.slice(0, 512).trim();
    throw new UserFacingError(`获取 Discovery 配置失败: ${snippet || `HTTP ${status}`}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch (err) {
    throw new UserFacingError(`解析 Discovery 配置失败: ${(err as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw new UserFacingError('解析 Discovery 配置失败: 不是 JSON 对象');
  return { well_known_url: url, discovery: doc as Record<string, unknown> };
}
