// Spark's signed websocket URL: the query carries `authorization` (base64 of `api_key="…", algorithm="hmac-sha256",
// headers="host date request-line", signature="…"`), `date` (RFC 1123) and `host`; the signature is HMAC-SHA256 with
// the APISecret over `host: <host>\ndate: <date>\nGET <path> HTTP/1.1`. iFlytek refuses a date more than 300 s away.
// The host is the channel's base URL's (new-api signs spark-api.xf-yun.com whatever the base URL).
import { createHmac } from 'node:crypto';

export function sparkSignedQuery(o: {
  host: string;
  path: string;
  date: Date;
  apiKey: string;
  apiSecret: string;
}): string {
  const date = o.date.toUTCString();
  const signed = `host: ${o.host}\ndate: ${date}\nGET ${o.path} HTTP/1.1`;
  const signature = createHmac('sha256', o.apiSecret).update(signed).digest('base64');
  const authorization = Buffer.from(
    `api_key="${o.apiKey}", algorithm="hmac-sha256", headers="host date request-line", signature="${signature}"`,
  ).toString('base64');
  return new URLSearchParams({ authorization, date, host: o.host }).toString();
}
