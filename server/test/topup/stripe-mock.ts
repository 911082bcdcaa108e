// A fake Stripe API on 127.0.0.1:<ephemeral> speaking what the gateway uses of it: POST /v1/checkout/sessions with a
// form-encoded body and a Bearer secret key. Like Stripe, it refuses a wrong key (401), an unknown price or a missing
// field (400), and answers a Checkout session whose subtotal is the price's unit amount × quantity (a price id's, or
// an inline `price_data`'s in its own currency).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CreatedSession {
  id: string;
  url: string;
  client_reference_id: string;
  amount_subtotal: number;
  amount_total: number;
  currency: string;
  /** the decoded form fields as Stripe received them */
  form: Record<string, string>;
}

export interface StripeMock {
  url: string;
  sessions: CreatedSession[];
  close(): Promise<void>;
}

const stripeError = (status: number, message: string, param?: string) => ({
  status,
  body: { error: { type: 'invalid_request_error', message, param } },
});

/** `prices`: price id → unit amount in cents (in `currency`). */
export async function startStripeMock(
  secretKey: string,
  prices: Record<string, number>,
  currency = 'usd',
): Promise<StripeMock> {
  const sessions: CreatedSession[] = [];
  let seq = 0;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      const answer = handle(req, raw);
      res.writeHead(answer.status, { 'content-type': 'application/json', 'request-id': `req_mock${seq}` });
      res.end(JSON.stringify(answer.body));
    });
  });

  function handle(req: http.IncomingMessage, raw: string): { status: number; body: unknown } {
    const auth = req.headers.authorization ?? '';
    if (auth !== `Bearer ${secretKey}`) {
      return stripeError(401, `Invalid API Key provided: ${auth.replace(/^Bearer /, '').slice(0, 8)}***`);
    }
    if (req.method !== 'POST' || req.url !== '/v1/checkout/sessions') {
      return stripeError(404, `Unrecognized request URL (${req.method}: ${req.url}).`);
    }
    if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
      return stripeError(400, 'Invalid request: the body must be form-encoded.');
    }
    const form = Object.fromEntries(new URLSearchParams(raw));
    const mode = form.mode;
    if (mode !== 'payment' && mode !== 'subscription' && mode !== 'setup') {
      return stripeError(400, 'Missing required param: mode.', 'mode');
    }
    if (!form.success_url && form.ui_mode !== 'embedded') {
      return stripeError(400, 'Missing required param: success_url.', 'success_url');
    }
    const price = form['line_items[0][price]'];
    const inline = form['line_items[0][price_data][unit_amount]'];
    const quantity = Number(form['line_items[0][quantity]']);
    let unit: number;
    let sessionCurrency = currency;
    if (inline !== undefined) {
      // an inline price: its own currency and amount, and a product name
      const p = 'line_items[0][price_data]';
      if (!form[`${p}[currency]`]) return stripeError(400, `Missing required param: ${p}[currency].`, `${p}[currency]`);
      if (!form[`${p}[product_data][name]`]) {
        return stripeError(400, `Missing required param: ${p}[product_data][name].`, `${p}[product_data][name]`);
      }
      unit = Number(inline);
      if (!Number.isInteger(unit) || unit < 0) return stripeError(400, 'Invalid integer: unit_amount.', p);
      sessionCurrency = form[`${p}[currency]`];
    } else {
      if (!price) return stripeError(400, 'Missing required param: line_items[0][price].', 'line_items[0][price]');
      if (!(price in prices)) return stripeError(400, `No such price: '${price}'`, 'line_items[0][price]');
      unit = prices[price];
    }
    if (!Number.isInteger(quantity) || quantity < 1) {
      return stripeError(400, 'Invalid integer: quantity.', 'line_items[0][quantity]');
    }
    seq += 1;
    const id = `cs_test_mock${seq}`;
    const subtotal = unit * quantity;
    const session: CreatedSession = {
      id,
      url: `https://checkout.stripe.com/c/pay/${id}`,
      client_reference_id: form.client_reference_id ?? '',
      amount_subtotal: subtotal,
      amount_total: subtotal,
      currency: sessionCurrency,
      form,
    };
    sessions.push(session);
    return {
      status: 200,
      body: {
        id,
        object: 'checkout.session',
        mode,
        status: 'open',
        payment_status: 'unpaid',
        url: session.url,
        client_reference_id: session.client_reference_id || null,
        customer_email: form.customer_email ?? null,
        amount_subtotal: subtotal,
        amount_total: subtotal,
        currency: sessionCurrency,
        success_url: form.success_url,
        cancel_url: form.cancel_url ?? null,
        allow_promotion_codes: form.allow_promotion_codes === 'true',
        livemode: false,
      },
    };
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sessions,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
