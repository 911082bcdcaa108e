// EPay ("易支付") protocol pieces (new-api-compat.md §9.1): the MD5 signature, the purchase form and the notify check.
// Signature: every parameter except sign and sign_type, empty values left out (the EPay rule), sorted by name,
// joined as k=v&k=v, the merchant key appended directly, then lowercase md5 hex.
import { createHash, timingSafeEqual } from 'node:crypto';

export interface EpayConfig {
  /** gateway base address (PayAddress) */
  address: string;
  /** merchant id (EpayId) */
  pid: string;
  /** merchant key (EpayKey) */
  key: string;
}

export const EPAY_TRADE_SUCCESS = 'TRADE_SUCCESS';

export function epaySign(params: Record<string, string>, key: string): string {
  const text = Object.keys(params)
    .filter(
      (k) => k !== 'sign' && k !== 'sign_type' && params[k] !== '' && params[k] !== undefined && params[k] !== null,
    )
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
  return createHash('md5')
    .update(text + key, 'utf8')
    .digest('hex');
}

export function epayVerify(params: Record<string, string>, key: string): boolean {
  const given = typeof params.sign === 'string' ? params.sign.toLowerCase() : '';
  if (!/^[0-9a-f]{32}$/.test(given)) return false;
  const expected = epaySign(params, key);
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

/** The submit.php endpoint under the gateway address. */
export function epaySubmitUrl(address: string): string {
  return address.replace(/\/+$/, '') + '/submit.php';
}

export interface PurchaseArgs {
  type: string;
  tradeNo: string;
  name: string;
  money: string;
  notifyUrl: string;
  returnUrl: string;
}

/** The signed form the browser posts to the gateway, and where to post it. */
export function epayPurchase(cfg: EpayConfig, args: PurchaseArgs): { url: string; params: Record<string, string> } {
  const params: Record<string, string> = {
    pid: cfg.pid,
    type: args.type,
    out_trade_no: args.tradeNo,
    notify_url: args.notifyUrl,
    return_url: args.returnUrl,
    name: args.name,
    money: args.money,
    device: 'pc',
  };
  params.sign = epaySign(params, cfg.key);
  params.sign_type = 'MD5';
  return { url: epaySubmitUrl(cfg.address), params };
}
