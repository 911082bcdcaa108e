// Outgoing email over the SMTP options (new-api-compat.md §9.5): implicit TLS on port 465 or when SMTPSSLEnabled,
// otherwise STARTTLS when the server offers it. Several recipients are separated by ';'.
import type { AppContext } from '../context.js';

export class MailNotConfiguredError extends Error {
  constructor() {
    super('SMTP 服务器未配置');
  }
}

export async function sendEmail(ctx: AppContext, subject: string, receiver: string, html: string): Promise<void> {
  const o = ctx.options;
  const server = o.get('SMTPServer');
  const account = o.get('SMTPAccount');
  if (!server || !account) throw new MailNotConfiguredError();
  const port = o.num('SMTPPort', 587) || 587;
  // Loaded on first use: most instances never send mail.
  const nodemailer = (await import('nodemailer')).default;
  const transport = nodemailer.createTransport({
    host: server,
    port,
    secure: port === 465 || o.bool('SMTPSSLEnabled'),
    // A relay without a password (a local MTA) gets no AUTH at all.
    auth: o.get('SMTPToken') ? { user: account, pass: o.get('SMTPToken') } : undefined,
    // new-api skips certificate verification for implicit TLS; keep self-hosted relays working the same way.
    tls: { rejectUnauthorized: false },
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 30_000,
  });
  try {
    await transport.sendMail({
      from: `${o.get('SystemName') || 'New API'} <${o.get('SMTPFrom') || account}>`,
      to: receiver
        .split(';')
        .map((s) => s.trim())
        .filter(Boolean),
      subject,
      html,
    });
  } finally {
    transport.close();
  }
}
