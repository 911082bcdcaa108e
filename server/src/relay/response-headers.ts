// The upstream's response headers on a relayed non-stream answer (new-api-compat.md §4.7: new-api passes them through,
// so clients that read `x-request-id` or the `x-ratelimit-*` headers keep working), except those that describe the
// upstream's connection or body rather than the answer, and those that would act on the gateway's own origin or name
// the operator's upstream account:
//   - hop-by-hop and framing: connection, keep-alive, transfer-encoding, te, trailer, upgrade, proxy-*; content-length
//     and content-encoding (the body is re-sent, possibly converted, with its own length); content-type and date
//     (set by the response itself);
//   - set-cookie (the upstream's cookies, e.g. a CDN's, are for the channel's session, not the caller's), alt-svc
//     (would send browsers to the upstream's HTTP/3 port on our host), strict-transport-security, server;
//   - openai-organization and openai-project (the channel's account; new-api leaks them);
//   - what the gateway sets itself: x-oneapi-request-id and the CORS headers.
// A header the upstream sends more than once keeps its first value (as new-api).

const DROPPED = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'content-length',
  'content-encoding',
  'content-type',
  'date',
  'set-cookie',
  'alt-svc',
  'strict-transport-security',
  'server',
  'openai-organization',
  'openai-project',
  'x-oneapi-request-id',
]);

/** `name` (lower case) may be copied from the upstream's answer into ours, which does not have it yet. */
function passes(name: string, into: Record<string, string>): boolean {
  return (
    !DROPPED.has(name) && !name.startsWith('access-control-') && name !== '__proto__' && !Object.hasOwn(into, name)
  );
}

/** Adds the upstream's passable headers (undici's raw name/value pairs) to `into`, names in lower case. */
export function addUpstreamHeaders(raw: readonly Buffer[], into: Record<string, string>): Record<string, string> {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toString('latin1').toLowerCase();
    if (passes(name, into)) into[name] = raw[i + 1].toString('latin1');
  }
  return into;
}

/** The same from a parsed header object (lower-case names, a repeated header as an array: relay/passthrough.ts). */
export function addUpstreamHeaderObject(
  headers: Record<string, string | string[] | undefined>,
  into: Record<string, string>,
): Record<string, string> {
  for (const [name, v] of Object.entries(headers)) {
    const value = Array.isArray(v) ? v[0] : v;
    if (value !== undefined && passes(name, into)) into[name] = value;
  }
  return into;
}
