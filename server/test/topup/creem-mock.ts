// A fake Creem API on 127.0.0.1:<ephemeral> speaking what the gateway uses of it: POST /v1/checkouts with a JSON
// body and the `x-api-key` header. Like Creem, it refuses a wrong key (403), an unknown product or a missing
// request_id (400), and answers a checkout with its URL.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CreatedCheckout {
  id: string;
  checkout_url: string;
  product_id: string;
  request_id: string;
  /** the JSON body as Creem received it */
  body: Record<string, unknown>;
}

export interface CreemMock {
  url: string;
  checkouts: CreatedCheckout[];
  close(): Promise<void>;
}

/** `products`: the product ids the mock's store knows. */
export async function startCreemMock(apiKey: string, products: string[]): Promise<CreemMock> {
  const checkouts: CreatedCheckout[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      const answer = handle(req, raw);
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
  });

  function handle(req: http.IncomingMessage, raw: string): { status: number; body: unknown } {
    if (req.headers['x-api-key'] !== apiKey) return { status: 403, body: { message: 'Forbidden' } };
    if (req.method !== 'POST' || req.url !== '/v1/checkouts') return { status: 404, body: { message: 'Not Found' } };
    if (!String(req.headers['content-type']).startsWith('application/json')) {
      return { status: 400, body: { message: ['body must be JSON'] } };
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return { status: 400, body: { message: ['body must be JSON'] } };
    }
    if (typeof body.product_id !== 'string' || !products.includes(body.product_id)) {
      return { status: 400, body: { message: ['product not found'] } };
    }
    if (typeof body.request_id !== 'string' || body.request_id === '') {
      return { status: 400, body: { message: ['request_id must be a string'] } };
    }
    const id = `ch_mock${checkouts.length + 1}`;
    const checkout: CreatedCheckout = {
      id,
      checkout_url: `https://checkout.creem.io/${id}`,
      product_id: body.product_id,
      request_id: body.request_id,
      body,
    };
    checkouts.push(checkout);
    return {
      status: 200,
      body: { id, object: 'checkout', mode: 'test', status: 'pending', ...body, checkout_url: checkout.checkout_url },
    };
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    checkouts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
