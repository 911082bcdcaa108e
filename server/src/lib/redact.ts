// Hiding known secret strings in a text that came from elsewhere (an upstream's error body, a library's error message)
// before it is shown to anyone. The caller names the secrets; this module adds the encodings an echo may use (base64
// and base64url, percent-encoding, JSON's escaped slash) and replaces every occurrence, longest first, so a secret
// that contains another leaves no piece of itself behind.

export const REDACTED = '[redacted]';

/** Shorter strings are not treated as secrets: replacing them would garble ordinary words and numbers. */
export const MIN_SECRET_LENGTH = 6;

/** A JSON Web Token (three base64url parts, a JSON header first): a signed grant or an access token. */
const JWT = /eyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]{8,}/g;

export type Redact = (text: string) => string;

/** The forms a secret may take once echoed: itself, base64 (padding dropped), base64url, URL-encoded, JSON-escaped. */
export function echoForms(secret: string): string[] {
  const forms = [secret];
  const b64 = Buffer.from(secret, 'utf8').toString('base64').replace(/=+$/, '');
  forms.push(b64, b64.replace(/\+/g, '-').replace(/\//g, '_'));
  const encoded = encodeURIComponent(secret);
  if (encoded !== secret) forms.push(encoded);
  if (secret.includes('/')) forms.push(secret.replace(/\//g, '\\/'));
  return forms;
}

/**
 * A function replacing each of `secrets` (in each echo form) and every JWT with "[redacted]". Built once per error
 * text, so the success path never pays for it.
 */
export function redactor(secrets: Iterable<string>): Redact {
  const all = new Set<string>();
  for (const s of secrets) {
    if (s.length < MIN_SECRET_LENGTH) continue;
    for (const form of echoForms(s)) if (form.length >= MIN_SECRET_LENGTH) all.add(form);
  }
  const ordered = [...all].sort((a, b) => b.length - a.length);
  return (text) => {
    if (!text) return text;
    let out = text;
    for (const s of ordered) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return out.replace(JWT, REDACTED);
  };
}
